"""Japanese words and bunsetsu (GiNZA, KNP output), Chinese (jieba), Korean (kiwi)."""

import pytest

from mlrep.text import segment
from mlrep.text.knp import read_knp
from mlrep.text.lines import TextInputError


def bunsetsu(sentence):
    (done,) = segment.japanese([sentence])
    return ["".join(done.words[a:b]) for a, b in done.bunsetsu]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # the thesis's Fig. 4.3 sentence, KNP-style bunsetsu
        (
            "ラブライブ！は３つのプロジェクトからなる。",
            ["ラブライブ！は", "３つの", "プロジェクトから", "なる。"],
        ),
        ("私は学校へ行きます。", ["私は", "学校へ", "行きます。"]),
        (
            "プログラムの終了日時を入力してください。",
            ["プログラムの", "終了日時を", "入力してください。"],
        ),
    ],
)
def test_ginza_bunsetsu_of_known_sentences(sentence, expected):
    assert bunsetsu(sentence) == expected


def test_bunsetsu_spans_tile_the_words_and_spaces_are_not_words():
    (done,) = segment.japanese(["ファイル  マスクは  どの ファイルにも"])
    assert all(w.strip() == w and w for w in done.words)
    ends = [0] + [b for _, b in done.bunsetsu]
    assert [a for a, _ in done.bunsetsu] == ends[:-1]
    assert ends[-1] == len(done.words)


def test_span_format_round_trip():
    spans = [(0, 3), (3, 6), (6, 8)]
    assert segment.parse_spans(segment.format_spans(spans)) == spans


KNP = """# S-ID:1 KNP:5.0
* 2D <BGH:ラブライブ>
+ 2D <BGH:ラブライブ>
ラブライブ らぶらいぶ ラブライブ 名詞 6 普通名詞 1 * 0 * 0 NIL
！ ！ ！ 特殊 1 記号 5 * 0 * 0 NIL
は は は 助詞 9 副助詞 2 * 0 * 0 NIL
* 2D <数量>
+ 2D
３ さん ３ 名詞 6 数詞 7 * 0 * 0 NIL
つ つ つ 接尾辞 14 名詞性名詞助数辞 3 * 0 * 0 NIL
の の の 助詞 9 接続助詞 3 * 0 * 0 NIL
* 3D
+ 3D
プロジェクト ぷろじぇくと プロジェクト 名詞 6 普通名詞 1 * 0 * 0 NIL
から から から 助詞 9 格助詞 1 * 0 * 0 NIL
@ から から から 助詞 9 接続助詞 3 * 0 * 0 NIL
* -1D
+ -1D
なる なる なる 動詞 2 * 0 子音動詞ラ行 10 基本形 2 NIL
。 。 。 特殊 1 句点 1 * 0 * 0 NIL
EOS
# S-ID:2
* -1D
+ -1D
* * * 特殊 1 記号 5 * 0 * 0 NIL
\\  \\  \\  特殊 1 空白 6 * 0 * 0 NIL
EOS
"""


def test_knp_reader_gives_words_and_bunsetsu(tmp_path):
    path = tmp_path / "out.knp"
    path.write_text(KNP, encoding="utf-8")
    first, second = list(read_knp(path))
    assert first.words == (
        "ラブライブ",
        "！",
        "は",
        "３",
        "つ",
        "の",
        "プロジェクト",
        "から",
        "なる",
        "。",
    )
    assert first.bunsetsu == ((0, 3), (3, 6), (6, 8), (8, 10))
    # a morpheme whose surface is "*" is a word, not a bunsetsu line; a blank is dropped
    assert second.words == ("*",)
    assert second.bunsetsu == ((0, 1),)


def test_knp_reader_rejects_juman_output_and_truncation(tmp_path):
    path = tmp_path / "juman.txt"
    path.write_text("私 わたし 私 名詞 6 普通名詞 1 * 0 * 0\nEOS\n", encoding="utf-8")
    with pytest.raises(TextInputError, match=r"juman.txt:1: morpheme before any bunsetsu"):
        list(read_knp(path))
    path.write_text(KNP.rsplit("EOS", 1)[0], encoding="utf-8")
    with pytest.raises(TextInputError, match="no EOS line"):
        list(read_knp(path))


def test_chinese_jieba_default_mode():
    (done,) = segment.chinese(["我来到北京清华大学"])
    assert done.words == ("我", "来到", "北京", "清华大学")


def test_korean_words_concatenate_back_to_the_surface():
    lines = ["아버지가방에들어가신다", "새로운 번역을 시작할 수 있는 권한이 없습니다."]
    for line, done in zip(lines, segment.korean(lines), strict=True):
        assert "".join(done.words) == line.replace(" ", "")
        assert len(done.words) > len(line.split())
