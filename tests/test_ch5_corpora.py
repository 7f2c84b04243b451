"""Table 5.1's measured row of a pair (mlrep/chapters/ch5_wordcl/corpora.py), without
Snakemake: the alignment layer's counts of a hand-made pair whose numbers are known."""

from __future__ import annotations

import json

import pytest

from mlrep.align import od, runs
from mlrep.chapters.ch5_wordcl import corpora
from mlrep.cli import main
from mlrep.paths import Paths
from mlrep.report.metrics import read

# Three in-domain training lines, then two OD lines fast_align also aligned (the +od run).
# Symmetrized links: line 1 has a 2-to-1 cluster (1-1 2-1) and 0-0, line 2 two 1-to-1 links,
# line 3 none; the OD lines have 3 more 1-to-1 links that are not the pair's training lines.
FA_LINKS = ["0-0 1-1 2-1", "0-1 1-0", "", "0-0 1-1", "0-0"]
IN_DOMAIN, OUT_OF_DOMAIN = 3, 2
# w2w: line 1 a 2x2 phrase pair (4 links, one unit), line 2 nothing, line 3 one word pair
W2W_LINKS = ["0-0 0-1 1-0 1-1", "", "2-2"]
# by hand: N (w2w) = 1 + 0 + 1 units (not its 5 links); N (FA) = 1 (0-0; 1-1 and 2-1 share a
# word) + 2 + 0 = 3 one-to-one links of the in-domain lines (not the run's 5 links or 4
# units, not the 6 with the OD lines'); Size 3 lines (not 5 with OD); OD Size 2
EXPECTED = {
    "train_pairs": 3,
    "od_pairs": 2,
    "n_w2w": 2,
    "n_fa": 3,
    "w2w_per_sentence": 0.6667,
    "fa_per_sentence": 1.0,
}


def _direction_stats(folder, reverse):
    """What `mlrep align --stats` writes for one direction of the +od run (OD lines included)."""
    path = folder / f"{'rev' if reverse else 'fwd'}.0.json"
    total = IN_DOMAIN + OUT_OF_DOMAIN
    path.write_text(
        json.dumps(
            {
                "backend": "fast_align",
                "package": "mlrep",
                "max_length": 1024,
                "options": {"reverse": reverse},
                "pairs": total,
                "aligned": total,
                "skipped": {},
            }
        )
    )
    return path


@pytest.fixture
def stats(tmp_path, capsys):
    """The pair's three stats.json, written by the alignment layer's own writers and verbs."""
    paths = Paths.from_config(
        {
            "paths": {
                "results": str(tmp_path / "results"),
                "reports": str(tmp_path / "reports"),
                "resources": str(tmp_path / "resources"),
            }
        }
    )
    align = {
        "dataset": "thesis",
        "split": "train",
        "aligner": {"backend": "fast_align"},
        "symmetrize": "grow-diag-final-and",
    }
    files = {k: tmp_path / v for k, v in corpora.stats_files(align, paths, "en-kk").items()}
    # the w2w run of the training split (`mlrep align extract --record`'s counts)
    files["w2w"].parent.mkdir(parents=True)
    runs.write_link_stats(files["w2w"].parent, W2W_LINKS)
    # the +od run: its links cut to the in-domain lines (`mlrep align gather --record`)
    run = files["fa_run"].parent
    run.mkdir(parents=True)
    kept = od.cut(FA_LINKS, IN_DOMAIN, OUT_OF_DOMAIN, "test")
    (run / "links.txt").write_text("".join(f"{line}\n" for line in kept))
    (run / "config.yaml").write_text("scale: tiny\n")
    directions = [_direction_stats(run.parent, r) for r in (False, True)]
    runs.write_stats(run, directions, kept, OUT_OF_DOMAIN)
    # its 1-to-1 links (the verb itself)
    out = files["fa"].parent / "links.txt"
    argv = ["align", "one-to-one", run / "links.txt", "--out", out, "--record", "--scale", "tiny"]
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    return files


def test_a_pairs_row_counts_units_of_the_training_lines_only(stats):
    assert "/thesis+od/en-kk/" in str(stats["fa"]) and "/thesis/en-kk/w2w/" in str(stats["w2w"])
    assert corpora.corpus_row(stats["w2w"], stats["fa_run"], stats["fa"]) == EXPECTED


def test_the_verb_writes_the_row_as_the_pairs_run_at_seed_0(stats, tmp_path, capsys):
    out = tmp_path / "results" / "ch5_wordcl" / "corpora" / "en-kk" / "seed0" / "metrics.json"
    argv = ["ch5", "corpora", "--pair", "en-kk", "--w2w", stats["w2w"]]
    argv += ["--fa-run", stats["fa_run"], "--fa", stats["fa"], "--out", out, "--scale", "tiny"]
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    result = read(out)
    assert (result.chapter, result.run, result.seed) == ("ch5_wordcl", "corpora/en-kk", 0)
    assert result.metrics == EXPECTED


def test_counts_of_other_lines_are_refused(stats):
    other = json.loads(stats["fa"].read_text())
    stats["fa"].write_text(json.dumps({**other, "pairs": IN_DOMAIN + OUT_OF_DOMAIN}))
    with pytest.raises(corpora.CorpusStatsError, match="same lines"):
        corpora.corpus_row(stats["w2w"], stats["fa_run"], stats["fa"])


def test_the_rows_measured_are_the_pairs_of_the_systems_run():
    section = {
        "run_systems": ["222_en-ja"],
        "methods": ["mlsc"],
        "extra_runs": ["626_en-tr-ro-et-my-kk/mlsc-w2w"],  # a system trained outside the grid
        "datasets": {
            "222_en-ja": {"languages": ["en", "ja"]},
            "626_en-it-ja-nl-tr-vi": {"languages": ["en", "it", "ja", "nl", "tr", "vi"]},
            "626_en-tr-ro-et-my-kk": {"languages": ["en", "tr", "ro", "et", "my", "kk"]},
        },
    }
    assert corpora.run_pairs(section) == ["en-ja", "en-tr", "en-ro", "en-et", "en-my", "en-kk"]
