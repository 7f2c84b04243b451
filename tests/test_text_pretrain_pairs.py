"""``mlrep text pretrain-pairs`` on real files: subwords, composites, bad input."""

import json

import pytest

from mlrep.cli import main
from mlrep.text import english
from mlrep.text.lines import TextInputError
from mlrep.text.pretrain_pairs import Sentence, make_pairs, read_sentences
from mlrep.text.pretrain_tasks import TaskError, TaskSettings
from mlrep.text.subwords import learn_bpe
from mlrep.text.tree import to_json
from tests.test_text_cli import meta, write
from tests.test_text_tree import COMMITTEE, WORDS

JA = [
    "ラブライブ ！ は ３ つ の プロジェクト から なる 。",
    "",
    "私 は 昨日 本 を 読ん だ 、 そして 寝 た 。",
]
JA_BUNSETSU = ["0:3 3:6 6:8 8:10", "", "0:2 2:3 3:5 5:8 8:10 10:12"]


def pairs(tmp_path, *args: str) -> tuple[list[str], list[str]]:
    source, target = tmp_path / "pairs.src", tmp_path / "pairs.tgt"
    argv = ["text", "pretrain-pairs", "--seed", "3", "--source", str(source)]
    assert main([*argv, "--target", str(target), *args]) == 0
    return source.read_text().splitlines(), target.read_text().splitlines()


def japanese(tmp_path, words=JA, spans=JA_BUNSETSU):
    return write(tmp_path / "words.ja", words), write(tmp_path / "bunsetsu.ja", spans)


def test_jass_writes_bmass_and_brss_pairs_shuffled_together(tmp_path):
    words, spans = japanese(tmp_path)
    args = ["--input", str(words), "--bunsetsu", str(spans), "--lang", "ja", "--tasks", "jass"]
    source, target = pairs(tmp_path, *args)
    assert len(source) == len(target) == 4  # two sentences, two tasks; the empty line none
    brss = [(s, t) for s, t in zip(source, target, strict=True) if s.startswith("[BRSS] [Ja] ")]
    assert ("[BRSS] [Ja] ラブライブ ！ は なる プロジェクト から ３ つ の 。", JA[0]) in brss
    assert len(brss) == 2
    counts = meta(tmp_path / "pairs.src")
    assert counts["lines"] == 4
    assert counts["extra"]["tasks"] == ["bmass", "brss.f"]
    assert counts["extra"]["pairs"] == {"bmass": 2, "brss.f": 2}
    assert counts["extra"]["empty_lines"] == 1
    assert pairs(tmp_path, *args) == (source, target)  # static: the seed fixes them


def test_adding_a_task_leaves_the_others_pairs_alone(tmp_path):
    words, spans = japanese(tmp_path)
    base = ["--input", str(words), "--bunsetsu", str(spans), "--lang", "ja", "--tasks"]
    alone = set(zip(*pairs(tmp_path, *base, "mass"), strict=True))
    both = set(zip(*pairs(tmp_path, *base, "mass", "deshuffle"), strict=True))
    assert alone < both


def test_bpe_pieces_of_a_masked_word_are_each_masked(tmp_path):
    corpus = write(tmp_path / "corpus.en", [" ".join(WORDS)] * 20 + ["unbelievably long words"])
    model = tmp_path / "bpe"
    model.mkdir()
    learn_bpe([corpus], model / "bpe.codes", merges=12)
    words = write(tmp_path / "words.en", ["unbelievably long words here"])
    args = ["--input", str(words), "--lang", "en", "--tasks", "mass", "--model", str(model)]
    settings = ["--mask-token-prob", "1", "--random-word-prob", "0"]
    (source,), (target,) = pairs(tmp_path, *args, *settings)
    pieces = target.split()
    assert any(p.endswith("@@") for p in pieces)  # BPE split some word
    assert len(source.split()) == len(pieces) + 2  # the tags
    for src, tgt in zip(source.split()[2:], pieces, strict=True):
        assert (src == "[M]") != (tgt == "[M]")  # each piece is predicted or given, not both
    assert source.split().count("[M]") > 1


def test_enss_reads_the_trees_of_the_same_words(tmp_path):
    words = write(tmp_path / "words.en", [" ".join(WORDS)])
    trees = write(tmp_path / "trees.en", [english.parse_line(WORDS, COMMITTEE)])
    args = ["--input", str(words), "--trees", str(trees), "--lang", "en", "--tasks", "enss"]
    source, target = pairs(tmp_path, *args)
    hfss = "[BRSS] [En] the committee yesterday the new budget approved"
    assert (hfss, " ".join(WORDS)) in zip(source, target, strict=True)
    assert sorted(s.split()[0] for s in source) == ["[BRSS]", "[MASS]"]


def test_a_sentence_without_a_tree_gets_no_tree_task_pair(tmp_path):
    words = write(tmp_path / "words.en", [" ".join(WORDS), "no tree here"])
    no_tree = english.parse_line(["no", "tree", "here"], None)
    trees = write(tmp_path / "trees.en", [english.parse_line(WORDS, COMMITTEE), no_tree])
    args = ["--input", str(words), "--trees", str(trees), "--lang", "en"]
    source, _ = pairs(tmp_path, *args, "--tasks", "pmass.s", "mass")
    assert len(source) == 3
    assert meta(tmp_path / "pairs.src")["extra"]["no_tree"] == 1


def fails(tmp_path, capsys, *args: str) -> str:
    argv = ["text", "pretrain-pairs", "--seed", "1", "--source", str(tmp_path / "s")]
    assert main([*argv, "--target", str(tmp_path / "t"), *args]) == 2
    assert not (tmp_path / "s").exists()
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "spans, problem",
    [
        ("0:3 3:6 6:8", "cover 8 words, the words line has 10"),
        ("0:3 3:6 6:8 8:11", "cover 11 words"),
        ("0:3 4:6 6:8 8:10", "4:6 does not follow the previous one"),
        ("0:3 2:6 6:8 8:10", "2:6 does not follow"),
        ("0:3 3:6 6:8 8-10", "not bunsetsu spans"),
    ],
)
def test_bunsetsu_that_do_not_cover_the_words_name_the_line(tmp_path, capsys, spans, problem):
    words, bunsetsu = japanese(tmp_path, spans=[spans, "", JA_BUNSETSU[2]])
    args = ["--input", str(words), "--bunsetsu", str(bunsetsu), "--lang", "ja"]
    err = fails(tmp_path, capsys, *args, "--tasks", "bmass")
    assert f"{bunsetsu}:1: " in err and problem in err
    assert "mlrep text segment --bunsetsu" in err


def test_a_bunsetsu_file_of_another_length_is_refused(tmp_path, capsys):
    words, bunsetsu = japanese(tmp_path, spans=JA_BUNSETSU[:1])
    args = ["--input", str(words), "--bunsetsu", str(bunsetsu), "--lang", "ja"]
    err = fails(tmp_path, capsys, *args, "--tasks", "brss.f")
    assert f"{bunsetsu}: 1 lines, the words file has 3" in err


def test_bunsetsu_tasks_need_the_spans(tmp_path, capsys):
    words, _ = japanese(tmp_path)
    err = fails(tmp_path, capsys, "--input", str(words), "--lang", "ja", "--tasks", "jass")
    assert "bmass, brss.f need bunsetsu spans (--bunsetsu)" in err


@pytest.mark.parametrize(
    "line, problem",
    [
        (english.parse_line(["a", "committee"], COMMITTEE), "the tree is of another sentence"),
        (json.dumps({"words": WORDS, "tree": to_json(COMMITTEE.left)}), "leaves are not"),
        ("not json", "not a parse line"),
    ],
)
def test_a_tree_that_does_not_match_its_sentence_names_the_line(tmp_path, capsys, line, problem):
    words = write(tmp_path / "words.en", ["x y", " ".join(WORDS)])
    trees = write(tmp_path / "trees.en", [english.parse_line(["x", "y"], None), line])
    args = ["--input", str(words), "--trees", str(trees), "--lang", "en"]
    err = fails(tmp_path, capsys, *args, "--tasks", "hfss")
    assert f"{trees}:2: " in err and problem in err
    assert "mlrep text parse --pretokenized" in err


def test_bunsetsu_tasks_refuse_a_sentence_without_spans():
    sentence = Sentence(("x", "y"))
    with pytest.raises(TaskError, match="bmass needs the bunsetsu spans of 'x y'"):
        make_pairs([sentence], ["jass"], "ja", 1, TaskSettings())


def test_reserved_tokens_in_the_corpus_are_refused(tmp_path):
    words = write(tmp_path / "words.en", ["fine", "a [M] here"])
    with pytest.raises(TextInputError, match=r"words.en:2: the words hold \[M\]"):
        read_sentences(words)


# sentences whose words are distinct, so a word's place can be read off the words themselves
REORDER_JA = [
    JA[0],
    "彼女 が 新しい 車 を 東京 で 買っ た 。",
    "この 論文 は 新しい 手法 を 提案 する 。",
    "学生 たち が 図書館 で 静か に 勉強 し て いる 。",
    "今日 は 雨 なので 、 試合 が 中止 に なっ た 。",
]
REORDER_SPANS = [
    JA_BUNSETSU[0],
    "0:2 2:3 3:5 5:7 7:10",
    "0:1 1:3 3:4 4:6 6:9",
    "0:3 3:5 5:7 7:12",
    "0:2 2:5 5:7 7:9 9:12",
]


def moved_ratio(source: list[str], target: list[str]) -> float:
    """Share of the words whose place differs between the two sides, read off the words."""
    moved = total = 0
    for src, tgt in zip(source, target, strict=True):
        reordered, original = src.split()[2:], tgt.split()  # the source's two tags off
        assert sorted(reordered) == sorted(original) and len(set(original)) == len(original)
        moved += sum(1 for a, b in zip(reordered, original, strict=True) if a != b)
        total += len(original)
    return moved / total


def test_the_moved_word_ratio_is_the_share_of_words_out_of_place(tmp_path):
    """The reordering statistic (thesis: BRSS 79.58%, Deshuffling 94.72% of the words move),
    against the words of the written pairs; BRSS keeps は, punctuation and each segment's
    last bunsetsu in place, so it moves fewer words than a random permutation."""
    words, spans = japanese(tmp_path, REORDER_JA, REORDER_SPANS)
    base = ["--input", str(words), "--bunsetsu", str(spans), "--lang", "ja", "--tasks"]
    ratios = {}
    for task in ("brss.f", "brss.r", "deshuffle"):
        source, target = pairs(tmp_path, *base, task)
        ratios[task] = meta(tmp_path / "pairs.src")["extra"]["moved_word_ratio"][task]
        assert ratios[task] == pytest.approx(moved_ratio(source, target), abs=5e-5)
    assert ratios["brss.f"] == ratios["brss.r"]
    assert ratios["brss.f"] < ratios["deshuffle"] - 0.1
    # the worked example by hand: ３つの and プロジェクトから and なる swap round, 6 of 10 words
    japanese(tmp_path, JA[:1], JA_BUNSETSU[:1])  # over the same two files
    source, target = pairs(tmp_path, *base, "brss.f")
    assert moved_ratio(source, target) == 0.6
    assert meta(tmp_path / "pairs.src")["extra"]["moved_word_ratio"] == {"brss.f": 0.6}
