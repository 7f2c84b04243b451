"""``mlrep align``: fast_align's command line, the helper subcommands, and bad input."""

import json

import pytest

from mlrep.cli import main


@pytest.fixture
def corpus(tmp_path, capsys):
    assert main(["align", "cipher", "--out", str(tmp_path), "--sentences", "300"]) == 0
    capsys.readouterr()
    return tmp_path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fast_align_command_line_prints_pharaoh_per_input_line(corpus, capsys, tmp_path):
    bitext = corpus / "bitext.txt"
    code, forward, err = _run(capsys, "align", "-i", bitext, "-d", "-o", "-v")
    assert code == 0 and "300 of 300 pairs aligned" in err
    code, reverse, _ = _run(capsys, "align", "-i", bitext, "-dovr", "--stats", tmp_path / "s.json")
    assert code == 0
    assert len(forward.splitlines()) == len(reverse.splitlines()) == 300
    assert forward != reverse
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["options"]["reverse"] and stats["aligned"] == 300 and stats["skipped"] == {}
    # The long spellings (what rules pass) mean the same as the short flags.
    code, _, _ = _run(
        capsys, "align", "-i", bitext, "--favor-diagonal", "true", "--optimize-tension",
        "true", "--variational-bayes", "true", "--reverse", "--out", tmp_path / "rev.txt",
        "--stats", tmp_path / "long.json",
    )  # fmt: skip
    assert json.loads((tmp_path / "long.json").read_text())["options"] == stats["options"]
    assert len((tmp_path / "rev.txt").read_text().splitlines()) == 300

    (tmp_path / "f").write_text(forward)
    (tmp_path / "r").write_text(reverse)
    code, merged, _ = _run(
        capsys, "align", "symmetrize", "--method", "grow-diag-final-and", tmp_path / "f",
        tmp_path / "r",
    )  # fmt: skip
    assert code == 0 and len(merged.splitlines()) == 300
    (tmp_path / "g").write_text(merged)
    code, scored, _ = _run(
        capsys, "align", "score", "--gold", corpus / "gold.txt", "--test", tmp_path / "g", "--json"
    )
    assert code == 0 and json.loads(scored)["aer"] < 0.4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a b ||| x y\n\xff\xfe ||| x\n", "bitext.txt:2: invalid UTF-8 at byte 0"),
        (b"a b ||| x y\na b x y\n", "bitext.txt:2: expected 'source ||| target'"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, content, message):
    path = tmp_path / "bitext.txt"
    path.write_bytes(content)
    code, _, err = _run(capsys, "align", "-i", path, "-d")
    assert code == 2
    assert message in err


def test_empty_and_overlong_pairs_are_skipped_and_counted(tmp_path, capsys):
    path = tmp_path / "bitext.txt"
    path.write_text("a b ||| x y\n ||| x\na a a a ||| x\nb ||| y\n")
    code, out, _ = _run(
        capsys, "align", "-i", path, "-d", "-o", "--max-length", "3", "--stats", tmp_path / "s"
    )
    assert code == 0
    assert out.split("\n")[1:3] == ["", ""]
    assert json.loads((tmp_path / "s").read_text())["skipped"] == {
        "empty_side": 1,
        "over_max_length": 1,
    }


def test_symmetrize_refuses_mismatched_directions(tmp_path, capsys):
    (tmp_path / "f").write_text("0-0\n1-1\n")
    (tmp_path / "r").write_text("0-0\n")
    code, _, err = _run(
        capsys, "align", "symmetrize", "--method", "union", tmp_path / "f", tmp_path / "r"
    )
    assert code == 2 and "has 2 lines but" in err


def test_bitext_joins_token_files_into_shards_and_checks_line_counts(tmp_path, capsys):
    # Tokens as the preprocessing rules write them (Moses escapes '|' as &#124;).
    (tmp_path / "s.en").write_text("Hello , world !\nA &#124; B\nThird  line .\n")
    (tmp_path / "t.ja").write_text("こんにちは 、 世界 !\nA &#124; B\n三 行 目 。\n")
    outs = [tmp_path / "b.0", tmp_path / "b.1"]
    argv = ["align", "bitext", "--source", tmp_path / "s.en", "--target", tmp_path / "t.ja"]
    code, _, err = _run(capsys, *argv, "--out", *outs)
    assert code == 0, err
    assert outs[0].read_text() == (
        "Hello , world ! ||| こんにちは 、 世界 !\nA &#124; B ||| A &#124; B\n"
    )
    assert outs[1].read_text() == "Third line . ||| 三 行 目 。\n"
    (tmp_path / "t.ja").write_text("こんにちは\n")
    code, _, err = _run(capsys, *argv, "--out", outs[0])
    assert code == 2 and "s.en has 3 lines but" in err and "t.ja has 1" in err
    (tmp_path / "t.ja").write_text("a\nb ||| c\nd\n")
    code, _, err = _run(capsys, *argv, "--out", outs[0])
    assert code == 2 and "t.ja:2: contains '|||'" in err


def test_gather_records_the_run_from_its_stats_and_token_metadata(tmp_path, capsys):
    bitext = tmp_path / "bitext.txt"
    bitext.write_text("a b ||| x y\n ||| x\nb ||| y\n")
    for direction in ("fwd", "rev"):
        flags = ["-r"] if direction == "rev" else []
        code, _, _ = _run(
            capsys, "align", "-i", bitext, "-d", "-o", *flags,
            "--out", tmp_path / f"{direction}.txt", "--stats", tmp_path / f"{direction}.json",
        )  # fmt: skip
        assert code == 0
    run = tmp_path / "fast_align.union"
    tokens = [tmp_path / "tok.en", tmp_path / "tok.de"]
    for path in tokens:  # one line per bitext line: gather checks the count
        path.write_text("x\n" * 3)
        path.with_name(path.name + ".meta.json").write_text(
            json.dumps({"lines": 3, "extra": {"tool": "mosestokenizer 1.2.1"}})
        )
    code, _, _ = _run(
        capsys, "align", "symmetrize", "--method", "union", tmp_path / "fwd.txt",
        tmp_path / "rev.txt", "--out", tmp_path / "sym.0.txt",
    )  # fmt: skip
    assert code == 0
    gather = ["align", "gather", tmp_path / "sym.0.txt", "--out", run / "links.txt"]
    code, _, err = _run(capsys, *gather, "--record", "--method", "union")
    assert code == 2 and "--record needs --stats, --tokens, --scale" in err
    code, _, err = _run(
        capsys, *gather, "--record", "--method", "union", "--stats", tmp_path / "fwd.json",
        tmp_path / "rev.json", "--tokens", *tokens, "--scale", "tiny",
    )  # fmt: skip
    assert code == 0, err
    stats = json.loads((run / "stats.json").read_text())
    assert stats["pairs"] == 3
    assert stats["directions"]["reverse"]["skipped"] == {"empty_side": 1}
    assert stats["links"] == len((run / "links.txt").read_text().split())
    assert 1 <= stats["units"] <= stats["links"] and stats["units_per_pair"] is not None
    config = (run / "config.yaml").read_text()
    assert "symmetrize: union" in config and "mosestokenizer 1.2.1" in config
    assert "favor_diagonal: true" in config and "reverse" not in config
    assert json.loads((run / "provenance.json").read_text())["step"] == "align gather"


def test_subwords_maps_links_and_names_the_bad_line(tmp_path, capsys):
    (tmp_path / "w").write_text("Hello world ||| Hallo Welt\n")
    (tmp_path / "p").write_text("▁Hel lo ▁world ||| ▁Hallo ▁Wel t\n")
    (tmp_path / "a").write_text("0-0 1-1\n")
    argv = ["align", "subwords", "--words", tmp_path / "w", "--pieces", tmp_path / "p"]
    code, out, _ = _run(capsys, *argv, "--alignments", tmp_path / "a")
    assert code == 0 and out == "0-0 1-0 2-1 2-2\n"
    (tmp_path / "p").write_text("▁Hel lo ▁word ||| ▁Hallo ▁Wel t\n")
    code, _, err = _run(capsys, *argv, "--alignments", tmp_path / "a")
    assert code == 2 and "p:1: piece '▁word'" in err


def test_diagonal_without_tension_optimization_says_it_runs_as_d_o(tmp_path, capsys):
    path = tmp_path / "bitext.txt"
    path.write_text("a b ||| x y\nb ||| y\n")
    code, out, err = _run(capsys, "align", "-i", path, "-d")
    assert code == 0 and len(out.splitlines()) == 2
    assert "running as -d -o" in err
    code, _, err = _run(capsys, "align", "-i", path, "--max-length", "2000")
    assert code == 2 and "at most 1024 words" in err


def test_gather_refuses_directions_aligned_with_different_settings(tmp_path, capsys):
    bitext = tmp_path / "bitext.txt"
    bitext.write_text("a b ||| x y\nb ||| y\n")
    for name, flags in (("fwd", ["-d", "-o"]), ("rev", ["-r", "-I", "2"])):
        code, _, _ = _run(
            capsys, "align", "-i", bitext, *flags, "--out", tmp_path / f"{name}.txt",
            "--stats", tmp_path / f"{name}.json",
        )  # fmt: skip
        assert code == 0
    tokens = [tmp_path / "tok.en", tmp_path / "tok.de"]
    code, _, err = _run(
        capsys, "align", "gather", tmp_path / "fwd.txt", "--out", tmp_path / "run/links.txt",
        "--record", "--method", "union", "--stats", tmp_path / "fwd.json", tmp_path / "rev.json",
        "--tokens", *tokens, "--scale", "tiny",
    )  # fmt: skip
    assert code == 2 and "rev.json: aligned with other settings than" in err
    assert not (tmp_path / "run").exists()
