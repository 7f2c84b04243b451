"""``mlrep text …`` end to end on real files: shards, gather, subwords, bad input."""

import json

import pytest

from mlrep.cli import main
from mlrep.text import segment
from tests.conftest import REPO

PARAMS = ["--params", str(REPO / "params.yaml")]
EN = [
    "You don't have permission to start a new translation",
    "",
    "The file mask did not match any files.",
    "Attach calendar files only after the order has been paid.",
    "Show all",
]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def meta(path):
    return json.loads(path.with_name(path.name + ".meta.json").read_text())


def tokenize_en(source, output, *extra: str) -> int:
    args = ["text", "tokenize", *PARAMS, "--lang", "en", "--input", str(source)]
    return main([*args, "--output", str(output), *extra])


def test_sharded_tokenization_gathers_to_the_unsharded_output(tmp_path):
    source = write(tmp_path / "in.en", EN)
    whole = tmp_path / "whole.en"
    assert tokenize_en(source, whole) == 0
    parts = []
    for shard in range(3):
        part = tmp_path / f"part{shard}"
        assert tokenize_en(source, part, "--shard", str(shard), "--shards", "3") == 0
        parts.append(str(part))
    gathered = tmp_path / "gathered.en"
    assert main(["text", "gather", "--output", str(gathered), *parts]) == 0
    assert gathered.read_text() == whole.read_text()
    assert whole.read_text().splitlines()[0] == (
        "You don &apos;t have permission to start a new translation"
    )
    counts = meta(gathered)
    assert (counts["lines"], counts["empty"], counts["processed"]) == (5, 1, 4)
    assert counts["extra"]["tool"].startswith("mosestokenizer ")


def test_max_lines_keeps_the_first_lines_and_records_the_input_length(tmp_path, capsys):
    source = write(tmp_path / "in.en", EN)
    parts = [tmp_path / "p0", tmp_path / "p1"]
    for shard, part in enumerate(parts):
        flags = ["--max-lines", "3", "--shard", str(shard), "--shards", "2"]
        assert tokenize_en(source, part, *flags) == 0
        assert "kept the first 3 of 5 lines" in capsys.readouterr().err
    gathered = tmp_path / "gathered.en"
    assert main(["text", "gather", "--output", str(gathered), *map(str, parts)]) == 0
    assert len(gathered.read_text().splitlines()) == 3
    counts = meta(gathered)
    assert counts["lines"] == 3
    assert (counts["extra"]["input_lines"], counts["extra"]["max_lines"]) == (5, 3)


def test_subword_options_come_from_a_named_setting_or_every_flag(tmp_path, capsys):
    src = write(tmp_path / "train.en", ["a b c", "b c d"])
    args = ["text", "train-subwords", *PARAMS, "--input", str(src), "--out", str(tmp_path / "m")]
    assert main([*args, "--method", "subword_nmt"]) == 2
    assert "--setting and --model" in capsys.readouterr().err
    assert main([*args, "--setting", "nope", "--model", "en-ja"]) == 2
    assert "has no 'nope'" in capsys.readouterr().err


def test_invalid_utf8_is_one_clear_error(tmp_path, capsys):
    source = tmp_path / "bad.en"
    source.write_bytes(b"fine\n\xc3\x28 broken\n")
    assert tokenize_en(source, tmp_path / "out") == 2
    assert "bad.en:2: invalid UTF-8" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_overlong_lines_are_not_parsed_but_kept(tmp_path):
    source = write(tmp_path / "in.en", ["Show all", "word " * 30])
    parsed = tmp_path / "parse.en"
    assert (
        main(
            [
                "text",
                "parse",
                *PARAMS,
                "--max-chars",
                "100",
                "--input",
                str(source),
                "--output",
                str(parsed),
            ]
        )
        == 0
    )
    first, second = (json.loads(line) for line in parsed.read_text().splitlines())
    assert first["tree"] is not None and second["tree"] is None
    assert len(second["words"]) == 30
    assert meta(parsed)["overlong"] == 1
    hf = tmp_path / "hf.en"
    assert main(["text", "head-final", "--input", str(parsed), "--output", str(hf)]) == 0
    assert hf.read_text().splitlines() == ["all Show", ("word " * 30).strip()]
    assert meta(hf)["failed"] == 1


def test_head_final_rejects_a_file_that_is_not_a_parse(tmp_path, capsys):
    source = write(tmp_path / "plain.en", ["just words"])
    assert (
        main(["text", "head-final", "--input", str(source), "--output", str(tmp_path / "hf")]) == 2
    )
    assert "plain.en:1: not a parse line" in capsys.readouterr().err


def test_japanese_segmentation_writes_words_and_bunsetsu(tmp_path):
    source = write(tmp_path / "in.ja", ["私は学校へ行きます。", ""])
    words, spans = tmp_path / "w.ja", tmp_path / "b.ja"
    assert (
        main(
            [
                "text",
                "segment",
                *PARAMS,
                "--lang",
                "ja",
                "--input",
                str(source),
                "--output",
                str(words),
                "--bunsetsu",
                str(spans),
            ]
        )
        == 0
    )
    assert words.read_text() == "私 は 学校 へ 行き ます 。\n\n"
    assert spans.read_text() == "0:2 2:4 4:7\n\n"


def test_knp_rules_are_a_setting_the_bunsetsu_metadata_names(tmp_path):
    """``preprocess.segment.knp_rules`` (on in params.yaml) moves GiNZA's bunsetsu toward
    KNP's (平成|２１年|５月に); ``--knp-rules false`` keeps GiNZA's own. The words are the
    same either way, and each file's metadata names the rules that made it."""
    source = write(tmp_path / "in.ja", ["平成２１年５月に開催された。"])
    made = {}
    for name, flags in (("rules", []), ("ginza", ["--knp-rules", "false"])):
        words, spans = tmp_path / f"w.{name}", tmp_path / f"b.{name}"
        args = ["text", "segment", *PARAMS, "--lang", "ja", "--input", str(source)]
        assert main([*args, "--output", str(words), "--bunsetsu", str(spans), *flags]) == 0
        made[name] = (words.read_text(), spans.read_text(), meta(spans)["extra"]["tool"])
    assert made["rules"][0] == made["ginza"][0] == "平成 ２１ 年 ５ 月 に 開催 さ れ た 。\n"
    assert (made["rules"][1], made["ginza"][1]) == ("0:1 1:3 3:6 6:11\n", "0:6 6:11\n")
    assert made["rules"][2] == segment.tool_version("ja", knp_rules=True)
    assert made["ginza"][2] == segment.tool_version("ja")


def test_knp_output_converts_to_the_same_files(tmp_path):
    knp = tmp_path / "in.knp"
    knp.write_text(
        "* 2D\n+ 2D\n私 わたし 私 名詞 6 普通名詞 1 * 0 * 0 NIL\n"
        "は は は 助詞 9 副助詞 2 * 0 * 0 NIL\n"
        "* -1D\n+ -1D\n行く いく 行く 動詞 2 * 0 子音動詞カ行促音便形 3 基本形 2 NIL\nEOS\n",
        encoding="utf-8",
    )
    words, spans = tmp_path / "w.ja", tmp_path / "b.ja"
    assert (
        main(
            [
                "text",
                "read-knp",
                "--input",
                str(knp),
                "--output",
                str(words),
                "--bunsetsu",
                str(spans),
            ]
        )
        == 0
    )
    assert (words.read_text(), spans.read_text()) == ("私 は 行く\n", "0:2 2:3\n")
    assert meta(words)["extra"]["tool"].startswith("KNP")


@pytest.mark.parametrize(
    ("flags", "model_file"),
    [
        (
            ["--method", "sentencepiece", "--model-type", "unigram", "--vocab-size", "40"],
            "spm.model",
        ),
        (["--method", "sentencepiece", "--model-type", "bpe", "--vocab-size", "40"], "spm.model"),
        (["--method", "subword_nmt", "--merges", "40"], "bpe.codes"),
    ],
)
def test_joint_subwords_train_and_encode(tmp_path, flags, model_file):
    text = [
        f"the {w} translation of the {w} file number {i}"
        for i, w in enumerate(["new", "old", "open", "closed", "shared", "private"] * 5)
    ]
    src = write(tmp_path / "train.en", text)
    tgt = write(tmp_path / "train.de", [t.replace("the", "die") for t in text])
    model = tmp_path / "model"
    assert (
        main(
            [
                "text",
                "train-subwords",
                *PARAMS,
                "--input",
                str(src),
                str(tgt),
                "--out",
                str(model),
                "--setting",
                "ch4_jass",
                "--model",
                "en-ja",
                *flags,
            ]
        )
        == 0
    )
    assert (model / model_file).exists() and (model / "provenance.json").exists()
    recorded = (model / "config.yaml").read_text()
    assert "setting: ch4_jass" in recorded and "model: en-ja" in recorded
    out = tmp_path / "sub.en"
    assert (
        main(
            [
                "text",
                "encode-subwords",
                *PARAMS,
                "--model",
                str(model),
                "--input",
                str(src),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    encoded = out.read_text().splitlines()
    assert len(encoded) == len(text)
    joined = [line.replace(" ", "").replace("@@", "").replace("\u2581", "") for line in encoded]
    assert joined == [line.replace(" ", "") for line in text]


def test_subword_vocabulary_too_large_is_a_clear_error(tmp_path, capsys):
    src = write(tmp_path / "train.en", ["a b c", "b c d"])
    code = main(
        [
            "text",
            "train-subwords",
            *PARAMS,
            "--input",
            str(src),
            "--out",
            str(tmp_path / "m"),
            "--method",
            "sentencepiece",
            "--model-type",
            "unigram",
            "--vocab-size",
            "5000",
            "--character-coverage",
            "1.0",
            "--merges",
            "10",
            "--scale",
            "tiny",
        ]
    )
    assert code == 2
    assert "lower --vocab-size" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_pretokenized_parse_keeps_the_given_words(tmp_path):
    source = write(tmp_path / "tok.en", ["You do n't have permission ."])
    parsed = tmp_path / "parse.en"
    assert (
        main(
            [
                "text",
                "parse",
                *PARAMS,
                "--pretokenized",
                "--input",
                str(source),
                "--output",
                str(parsed),
            ]
        )
        == 0
    )
    record = json.loads(parsed.read_text())
    assert record["words"] == ["You", "do", "n't", "have", "permission", "."]
    assert record["tree"] is not None


# The user's own KNP / Enju output of a corpus file (tests/fixtures/parses, hand-written in
# the tools' formats) replaces GiNZA / spaCy, lined up with the corpus lines.
EXTERNAL = REPO / "tests/fixtures/parses/tiny_corpus"
JA_PARSED = ["私は学校へ行きます。", "", "全件表示"]
EN_PARSED = ["The committee approved the new budget yesterday.", "", "Show all"]


def segment_with_knp(source, words, spans) -> int:
    knp = EXTERNAL / "knp/train.en-ja.ja.knp"
    args = ["text", "segment", *PARAMS, "--lang", "ja", "--input", str(source)]
    return main([*args, "--output", str(words), "--bunsetsu", str(spans), "--knp", str(knp)])


def test_segment_takes_words_and_bunsetsu_from_knp_output(tmp_path):
    source = write(tmp_path / "train.en-ja.ja", JA_PARSED)
    words, spans = tmp_path / "w.ja", tmp_path / "b.ja"
    assert segment_with_knp(source, words, spans) == 0
    assert words.read_text().splitlines() == ["私 は 学校 へ 行き ます 。", "", "全 件 表示"]
    assert spans.read_text().splitlines() == ["0:2 2:4 4:7", "", "0:3"]
    assert meta(words)["extra"]["tool"].startswith("KNP (read from its output ")
    assert (meta(spans)["lines"], meta(spans)["empty"]) == (3, 1)


def test_knp_output_of_other_lines_is_refused(tmp_path, capsys):
    source = write(tmp_path / "train.en-ja.ja", [JA_PARSED[0], JA_PARSED[2], ""])
    assert segment_with_knp(source, tmp_path / "w", tmp_path / "b") == 2
    assert "sentence 2 reads '' but corpus line 2 is '全件表示'" in capsys.readouterr().err
    # a corpus longer than the KNP file: the lines past its end have no analysis
    source = write(tmp_path / "long.ja", [*JA_PARSED, "新しい行"])
    assert segment_with_knp(source, tmp_path / "w", tmp_path / "b") == 2
    assert "not '新しい行'" in capsys.readouterr().err


def test_parse_takes_trees_and_arguments_from_enju_output(tmp_path):
    source = write(tmp_path / "train.en-ja.en", EN_PARSED)
    parsed, final = tmp_path / "parse.en", tmp_path / "hf.en"
    enju = EXTERNAL / "enju/train.en-ja.en.xml"
    args = ["text", "parse", *PARAMS, "--input", str(source), "--output", str(parsed)]
    assert main([*args, "--enju", str(enju)]) == 0
    assert meta(parsed)["extra"]["tool"].startswith("Enju (read from its XML output ")
    hf = ["text", "head-final", *PARAMS, "--input", str(parsed), "--output", str(final)]
    assert main(hf) == 0
    assert final.read_text().splitlines() == [
        "The committee yesterday the new budget approved .",
        "",
        "all Show",
    ]
    assert main([*hf, "--drop-articles", "true", "--pseudo-particles", "true"]) == 0
    assert final.read_text().splitlines()[::2] == [
        "committee va0 yesterday new budget va2 approved .",
        "all va2 Show",
    ]
    assert meta(final)["extra"]["pseudo_particles"] is True


def test_a_subword_model_learns_on_the_first_lines_only(tmp_path):
    """``--max-lines N``: a sample's BPE (Chapter 4's #0*) learns on the first N lines of each
    input, so a word only past them gets no merge."""
    src = write(tmp_path / "train.en", ["abc abc abc", "abc abc", "zyxw zyxw zyxw zyxw"])
    tgt = write(tmp_path / "train.ja", ["def def def", "def def", "vuts vuts vuts vuts"])
    argv = ["text", "train-subwords", *PARAMS, "--input", str(src), str(tgt)]
    argv += ["--method", "subword_nmt", "--model-type", "bpe", "--vocab-size", "100"]
    argv += ["--character-coverage", "1.0", "--merges", "50"]
    for lines, model in ((2, tmp_path / "sample"), (0, tmp_path / "all")):
        assert main([*argv, "--max-lines", str(lines), "--out", str(model)]) == 0
    codes = {
        p.name: (tmp_path / p.name / "bpe.codes").read_text()
        for p in (tmp_path / "sample", tmp_path / "all")
    }
    assert "a b" in codes["sample"] and "d e" in codes["sample"]
    assert "z y" not in codes["sample"] and "v u" not in codes["sample"]
    assert "z y" in codes["all"] and "v u" in codes["all"]
