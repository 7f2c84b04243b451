"""``mlrep align lexicon | extract | one-to-one`` end to end on temporary files: what each
writes, what a recorded run keeps of the step it derives from, and the refusals."""

import json

import pytest
import yaml

from mlrep.cli import main

# tests/test_align_lexicon.py works out this bitext's lexicon: a -> Ab 4/15, Aa 2/15, B 0;
# b -> B 2/5, Ab 0, Aa 0.
SOURCE = "a b\na b\na b\nb\nb\n"
TARGET = "Ab B\nAa B\nAb B\nB\nB\n"


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def tokens(tmp_path):
    paths = [tmp_path / "train.en-xx.en", tmp_path / "train.en-xx.xx"]
    for path, text in zip(paths, (SOURCE, TARGET), strict=True):
        path.write_text(text)
        path.with_name(path.name + ".meta.json").write_text(
            json.dumps({"lines": 5, "extra": {"tool": "mosestokenizer 1.2.1"}})
        )
    return paths


def test_lexicon_then_extract_record_a_w2w_run_with_its_units(tmp_path, capsys, tokens):
    lexicon = tmp_path / "w2w/lexicon/lexicon.tsv"
    code, _, err = _run(
        capsys, "align", "lexicon", "--source", tokens[0], "--target", tokens[1], "--out", lexicon,
        "--translations", "2", "--record", "--scale", "tiny",
    )  # fmt: skip
    assert code == 0, err
    assert "4 entries for 2 source words" in err
    assert [line.split("\t")[:2] for line in lexicon.read_text().splitlines()] == [
        ["a", "Ab"],
        ["a", "Aa"],
        ["b", "B"],
        ["b", "Ab"],
    ]
    folder = lexicon.parent
    assert json.loads((folder / "stats.json").read_text()) == {
        "pairs": 5,
        "source_words": 2,
        "entries": 4,
    }
    config = yaml.safe_load((folder / "config.yaml").read_text())
    assert config["lexicon"] == {"translations": 2, "width": 100, "collocates": 5000}
    assert config["tokens"][str(tokens[1])]["tool"] == "mosestokenizer 1.2.1"
    assert json.loads((folder / "provenance.json").read_text())["step"] == "align lexicon"

    # b-B (2/5) first, then a-Ab (4/15) or a-Aa (2/15): consecutive on both sides, one phrase.
    run = tmp_path / "w2w/train"
    code, _, err = _run(
        capsys, "align", "extract", "--lexicon", lexicon, "--source", tokens[0],
        "--target", tokens[1], "--out", run / "links.txt", "--record", "--scale", "tiny",
    )  # fmt: skip
    assert code == 0, err
    phrase = "0-0 0-1 1-0 1-1"
    assert (run / "links.txt").read_text().splitlines() == [phrase] * 3 + ["0-0"] * 2
    stats = json.loads((run / "stats.json").read_text())
    assert (stats["links"], stats["units"], stats["units_per_pair"]) == (14, 5, 1.0)
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["lexicon"]["lexicon"]["translations"] == 2  # the lexicon's own record
    assert json.loads((run / "provenance.json").read_text())["step"] == "align extract"

    # without --record it prints the links and needs no record of the lexicon
    (folder / "config.yaml").unlink()
    code, out, _ = _run(
        capsys, "align", "extract", "--lexicon", lexicon, "--source", tokens[0],
        "--target", tokens[1],
    )  # fmt: skip
    assert code == 0 and out.splitlines()[3] == "0-0"
    code, _, err = _run(
        capsys, "align", "extract", "--lexicon", lexicon, "--source", tokens[0],
        "--target", tokens[1], "--out", run / "links.txt", "--record", "--scale", "tiny",
    )  # fmt: skip
    assert code == 2 and "lexicon/config.yaml: not the record of an mlrep alignment step" in err


def test_extract_refuses_a_malformed_lexicon_and_mismatched_token_files(tmp_path, capsys, tokens):
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text("a\tAb\t0.5\nb B 0.4\n")
    argv = ["align", "extract", "--lexicon", lexicon, "--source", tokens[0]]
    code, _, err = _run(capsys, *argv, "--target", tokens[1])
    assert code == 2 and "lexicon.tsv:2: expected 'source<TAB>target<TAB>score'" in err
    lexicon.write_text("a\tAb\t0.5\n")
    tokens[1].write_text("Ab\n")
    code, _, err = _run(capsys, *argv, "--target", tokens[1])
    assert code == 2 and "has 5 lines but" in err and "has 1" in err
    code, _, err = _run(
        capsys, "align", "lexicon", "--source", tokens[0], "--target", tokens[0], "--out",
        tmp_path / "l.tsv", "--record",
    )  # fmt: skip
    assert code == 2 and "--record needs --scale" in err


def test_one_to_one_filters_a_run_and_records_what_it_came_from(tmp_path, capsys):
    run = tmp_path / "fast_align.union"
    run.mkdir()
    (run / "links.txt").write_text("0-0 1-1 1-2 2-3\n\n0-1 1-0\n")
    (run / "config.yaml").write_text(yaml.safe_dump({"align": {"symmetrize": "union"}}))
    code, out, _ = _run(capsys, "align", "one-to-one", run / "links.txt")
    assert code == 0 and out == "0-0 2-3\n\n0-1 1-0\n"
    out_run = tmp_path / "fast_align.union.one-to-one"
    code, _, err = _run(
        capsys, "align", "one-to-one", run / "links.txt", "--out", out_run / "links.txt",
        "--record", "--scale", "tiny",
    )  # fmt: skip
    assert code == 0, err
    assert (out_run / "links.txt").read_text() == out
    stats = json.loads((out_run / "stats.json").read_text())
    assert (stats["pairs"], stats["links"], stats["units"]) == (3, 4, 4)
    config = yaml.safe_load((out_run / "config.yaml").read_text())
    assert config["filter"] == "one-to-one"
    assert config["run"] == {"align": {"symmetrize": "union"}}
    assert json.loads((out_run / "provenance.json").read_text())["step"] == "align one-to-one"
