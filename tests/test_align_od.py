"""Chapter 5's +FA run: fast_align trained on the in-domain lines followed by out-of-domain
(OD) corpora, its links cut back to the in-domain lines (mlrep/align/od.py), without Snakemake."""

import json

import pytest

from mlrep.align import cipher, od
from mlrep.align.pharaoh import read_alignments
from mlrep.align.runs import RunError
from mlrep.cli import main
from mlrep.paths import Paths
from mlrep.text.plan import PlanError

IN_DOMAIN, OUT_OF_DOMAIN = 100, 200


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _write_tokens(folder, name, pairs):
    """A line-aligned token pair as the preprocessing writes it (with its .meta.json)."""
    files = [folder / f"{name}.en", folder / f"{name}.de"]
    for path, side in zip(files, ("source", "target"), strict=True):
        path.write_text("".join(" ".join(getattr(p, side)) + "\n" for p in pairs))
        path.with_name(path.name + ".meta.json").write_text(
            json.dumps({"lines": len(pairs), "extra": {"tool": "mosestokenizer 1.2.1"}})
        )
    return files


@pytest.fixture
def corpora(tmp_path):
    """One cipher's pairs: the first IN_DOMAIN in-domain, the rest in two OD corpora."""
    pairs = cipher.generate(cipher.CipherSettings(sentences=IN_DOMAIN + OUT_OF_DOMAIN, seed=3))
    half = IN_DOMAIN + OUT_OF_DOMAIN // 2
    return (
        _write_tokens(tmp_path, "id", pairs[:IN_DOMAIN]),
        [
            *_write_tokens(tmp_path, "od1", pairs[IN_DOMAIN:half]),
            *_write_tokens(tmp_path, "od2", pairs[half:]),
        ],
    )


def _align_run(capsys, folder, tokens, od_tokens, shards=2):
    """bitext, both directions per shard, symmetrize, gather: the rules' commands in order."""
    bitexts = [folder / f"bitext.{k}.txt" for k in range(shards)]
    code, _, err = _run(
        capsys, "align", "bitext", "--source", tokens[0], "--target", tokens[1],
        "--od-tokens", *od_tokens, "--out", *bitexts,
    )  # fmt: skip
    assert code == 0, err
    stats, symmetrized = [], []
    for k, bitext in enumerate(bitexts):
        for direction in ("fwd", "rev"):
            flags = ["-r"] if direction == "rev" else []
            stats.append(folder / f"{direction}.{k}.json")
            code, _, err = _run(
                capsys, "align", "-i", bitext, "-d", "-o", "-v", *flags,
                "--out", folder / f"{direction}.{k}.txt", "--stats", stats[-1],
            )  # fmt: skip
            assert code == 0, err
        symmetrized.append(folder / f"sym.{k}.txt")
        code, _, err = _run(
            capsys, "align", "symmetrize", "--method", "grow-diag-final-and",
            folder / f"fwd.{k}.txt", folder / f"rev.{k}.txt", "--out", symmetrized[-1],
        )  # fmt: skip
        assert code == 0, err
    run = folder / "run"
    code, _, err = _run(
        capsys, "align", "gather", *symmetrized, "--out", run / "links.txt", "--record",
        "--method", "grow-diag-final-and", "--stats", *stats, "--tokens", *tokens,
        "--od-tokens", *od_tokens, "--scale", "tiny",
    )  # fmt: skip
    assert code == 0, err
    every = [line for path in symmetrized for line in path.read_text().splitlines()]
    return run, bitexts, every


def test_od_lines_follow_the_in_domain_ones_and_only_the_first_n_links_are_kept(
    tmp_path, capsys, corpora
):
    tokens, od_tokens = corpora
    run, bitexts, every = _align_run(capsys, tmp_path, tokens, od_tokens)
    bitext = [line for path in bitexts for line in path.read_text().splitlines()]
    assert len(bitext) == len(every) == IN_DOMAIN + OUT_OF_DOMAIN
    # The in-domain lines first, then each OD corpus in the order given.
    expected = [
        f"{a} ||| {b}"
        for source, target in (tokens, od_tokens[:2], od_tokens[2:])
        for a, b in zip(
            source.read_text().splitlines(), target.read_text().splitlines(), strict=True
        )
    ]
    assert bitext == expected
    # The kept links are those of the first N lines (not the last N, not re-aligned).
    links = (run / "links.txt").read_text().splitlines()
    assert links == every[:IN_DOMAIN] and links != every[-IN_DOMAIN:]
    assert len(read_alignments(run / "links.txt")) == IN_DOMAIN
    stats = json.loads((run / "stats.json").read_text())
    assert stats["pairs"] == IN_DOMAIN and stats["od_lines"] == OUT_OF_DOMAIN
    assert stats["directions"]["forward"]["pairs"] == IN_DOMAIN + OUT_OF_DOMAIN
    config = (run / "config.yaml").read_text()
    assert str(od_tokens[3]) in config and str(tokens[0]) in config


def test_without_od_corpora_the_run_is_todays_plain_run(tmp_path, capsys, corpora):
    tokens, _ = corpora
    run, bitexts, every = _align_run(capsys, tmp_path, tokens, [])
    joined = [
        f"{a} ||| {b}"
        for a, b in zip(
            tokens[0].read_text().splitlines(), tokens[1].read_text().splitlines(), strict=True
        )
    ]
    assert [line for path in bitexts for line in path.read_text().splitlines()] == joined
    assert (run / "links.txt").read_text().splitlines() == every
    assert json.loads((run / "stats.json").read_text())["od_lines"] == 0


def test_cut_keeps_the_first_lines_and_refuses_a_count_mismatch():
    links = ["0-0", "1-1", "", "0-1 1-0"]
    assert od.cut(links, 1, 3, "here") == ["0-0"]
    assert od.cut(links, 4, 0, "here") == links
    with pytest.raises(RunError, match=r"shards: 4 link lines, but .* 2 in-domain \+ 1 out"):
        od.cut(links, 2, 1, "shards")
    with pytest.raises(RunError, match="rerun the bitext"):
        od.cut(links, 5, 0, "shards")


def test_gather_names_the_files_when_links_and_tokens_disagree(tmp_path, capsys, corpora):
    tokens, od_tokens = corpora
    links = tmp_path / "sym.0.txt"
    links.write_text("0-0\n" * (IN_DOMAIN + OUT_OF_DOMAIN - 1))
    argv = ["align", "gather", links, "--out", tmp_path / "run/links.txt", "--tokens", *tokens]
    code, _, err = _run(capsys, *argv, "--od-tokens", *od_tokens)
    assert code == 2 and str(links) in err and str(tokens[0]) in err
    assert f"{IN_DOMAIN} in-domain + {OUT_OF_DOMAIN} out-of-domain" in err
    assert not (tmp_path / "run/links.txt").exists()
    code, _, err = _run(capsys, *argv, "--od-tokens", *od_tokens[:3])
    assert code == 2 and "in pairs; got 3 files" in err
    code, _, err = _run(capsys, "align", "gather", links, "--out", tmp_path / "x", "--od-tokens")
    assert code == 0, err
    code, _, err = _run(
        capsys, "align", "gather", links, "--out", tmp_path / "x", "--od-tokens", *od_tokens
    )
    assert code == 2 and "--od-tokens needs --tokens" in err


def _config(od_corpora):
    return {
        "align": {"split": "train", "od_corpora": od_corpora},
        "preprocess": {
            "splits": ["train", "valid", "test"],
            "datasets": {
                "thesis": {"corpus": "tiny_corpus", "corpora": {}, "pairs": ["en-de"]},
                "od_a": {
                    "corpus": "opus_a",
                    "corpora": {"en-de": {"train": "opus_a/train.en-de"}},
                    "pairs": ["en-de"],
                },
                "od_test": {
                    "corpus": "opus_b",
                    "corpora": {"en-de": {"test": "opus_b/test.en-de"}},
                    "pairs": ["en-de"],
                },
            },
        },
    }


def test_od_tokens_are_the_train_tokens_of_the_named_datasets_in_od_runs_only(tmp_path):
    paths = Paths(tmp_path / "results", tmp_path / "reports", tmp_path / "resources")
    config = _config({"en-de": ["od_a"]})
    assert od.with_od("thesis") == "thesis+od" and od.in_domain("thesis+od") == "thesis"
    assert od.in_domain("thesis") == "thesis"
    for dataset in ("thesis", "thesis+od"):
        tokens = od.in_domain_tokens(config, paths, dataset, "en-de")
        assert tokens == paths.pair_tokens("thesis", "train", "en-de")
    assert od.od_tokens(config, paths, "thesis", "en-de") == []
    assert od.od_tokens(config, paths, "thesis+od", "en-fr") == []
    assert od.od_tokens(config, paths, "thesis+od", "en-de") == list(
        paths.pair_tokens("od_a", "train", "en-de")
    )
    with pytest.raises(PlanError, match="no 'od_b'"):
        od.od_tokens(_config({"en-de": ["od_b"]}), paths, "thesis+od", "en-de")
    with pytest.raises(PlanError, match=r"od_corpora.en-de names 'od_test'.*no train split"):
        od.od_tokens(_config({"en-de": ["od_test"]}), paths, "thesis+od", "en-de")


def test_a_bad_od_corpus_stops_the_bitext_before_any_shard_is_written(tmp_path, capsys, corpora):
    tokens, od_tokens = corpora
    outs = [tmp_path / "bitext.0.txt", tmp_path / "bitext.1.txt"]
    argv = ["align", "bitext", "--source", tokens[0], "--target", tokens[1], "--out", *outs]
    lines = od_tokens[3].read_text().splitlines()
    od_tokens[3].write_text("\n".join([lines[0], "a ||| b", *lines[2:]]) + "\n")
    code, _, err = _run(capsys, *argv, "--od-tokens", *od_tokens)
    assert code == 2 and f"{od_tokens[3]}:2: contains '|||'" in err
    assert not any(out.exists() for out in outs)
    od_tokens[3].write_text("x\n")
    code, _, err = _run(capsys, *argv, "--od-tokens", *od_tokens)
    assert code == 2 and f"{od_tokens[2]} has {OUT_OF_DOMAIN // 2} lines but" in err
    assert not any(out.exists() for out in outs)
