"""Chapter 3's report side on a synthetic results tree: its tables read the runs the chapter
writes (results/ch3_lealla/<run>/seed<N>/metrics.json, as `mlrep.report.metrics.write` writes
them), sizes show in the millions they are printed in, the AMS-only ablations read the
architecture run that trained them, the tiny teacher's row says what it measures, and the
chapter's claims are judged both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep.report import claims, fill, render, tables
from mlrep.report.metrics import FLOOR, UNTRAINED_SEED, Results, collect, write
from mlrep.report.reference import load_all
from tests.conftest import REPO

CHAPTER = "ch3_lealla"
PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
CLAIMS = {c["id"]: c for c in claims.load() if c["chapter"] == CHAPTER}
UN, BUCC = ("es", "fr", "ru", "zh"), ("de", "fr", "ru", "zh")
SPREAD = (-0.3, -0.1, 0.1, 0.3)  # per-language offsets: their mean is the run's score
TINY_TEACHER = "(measured at scale tiny: the mUSE v3 teacher, not LaBSE)"


def scores(score: float) -> dict[str, float]:
    """A run's benchmark metrics around `score`, with the floors of its P@1 metrics (chance)."""
    metrics = {"tatoeba_avg": score, "un_avg": score, "bucc_avg": score}
    metrics |= {f"un_{x}": score + d for x, d in zip(UN, SPREAD, strict=True)}
    metrics |= {f"bucc_{x}": score + d for x, d in zip(BUCC, SPREAD, strict=True)}
    p_at_1 = ["tatoeba_avg", "un_avg", *(f"un_{x}" for x in UN)]
    return metrics | {FLOOR + name: 0.1 for name in p_at_1}


def run(results: Path, name: str, score: float, seed: int = 1, scale: str = "tiny", **extra):
    path = results / CHAPTER / name / f"seed{seed}" / "metrics.json"
    write(path, CHAPTER, name, seed, scale, scores(score) | extra)


def filled(table_id: str, results: Results) -> fill.FilledTable:
    return fill.fill(DEFINITIONS[table_id], PUBLISHED[table_id], results, (200, 1))


def line(markdown: str, start: str) -> str:
    return next(x for x in markdown.splitlines() if x.startswith(start))


def test_architecture_tables_read_the_teacher_and_arch_runs_with_sizes_in_millions(tmp_path):
    shape = {"layers": 4, "dim": 512, "ffn_dim": 2048, "heads": 8}
    run(tmp_path, "teacher", 60.0, **shape, parameters=68_912_345, encoder_parameters=12_600_000)
    run(tmp_path, "arch-8", 50.0, **shape, parameters=3_251_000, encoder_parameters=460_000)
    results = collect(tmp_path, "tiny")
    t31, a3 = filled("thesis-table-3.1", results), filled("thesis-table-A.3", results)
    for table in (t31, a3):
        assert table.cell("arch-0", "P").measured == 68_912_345
        assert table.cell("arch-8", "L").measured == 4 and table.cell("arch-8", "H").measured == 8
        assert table.cell("arch-9" if table is a3 else "arch-7", "Tatoeba").status == fill.NOT_RUN
    assert (t31.cell("arch-0", "UN").measured, t31.cell("arch-8", "BUCC").measured) == (60, 50)
    assert a3.cell("arch-8", "UN avg.").measured == pytest.approx(50.0)  # of un_es … un_zh
    assert a3.cell("arch-8", "d_ff").measured == 2048
    teacher = line(render.markdown(t31), "| LaBSE | 0 |")
    assert "| 4.0 / 12 | 512.0 / 768 | 8.0 / 12 | 68.9M / 471M | 12.6M / 85M |" in teacher
    assert "| 3.3M / 69M | 0.5M / 5M |" in line(
        render.markdown(a3), "| Thin-deep Architecture | 8 |"
    )
    assert not any(a3.cell(k, "P").bold_measured for k in ("arch-0", "arch-8"))  # sizes


def test_the_ams_ablations_read_the_architecture_run_that_trained_them(tmp_path):
    """The workflow trains lealla-small-ams once, as arch-8: no folder of its own is needed."""
    for name, score in {"arch-8": 70.0, "arch-6": 75.0, "lealla-small": 72.0}.items():
        run(tmp_path, name, score)
    run(tmp_path, "lealla-small-ld", 65.0, un_avg=2.0)
    results = collect(tmp_path, "tiny")
    a1, a4, t34 = (
        filled(t, results) for t in ("thesis-table-A.1", "thesis-table-A.4", "thesis-table-3.4")
    )
    for table in (a1, a4):
        assert table.cell("lealla-small-ams", "Tatoeba").measured == 70.0
        assert table.cell("lealla-large-ams", "UN avg.").measured == pytest.approx(75.0)
        assert table.cell("lealla-base-ams", "Tatoeba").status == fill.NOT_RUN  # arch-7
        assert (CHAPTER, "arch-8") in table.runs_used
    assert a4.cell("lealla-small", "Tatoeba").measured == 72.0  # L_ams + L_fd + L_ld
    assert t34.row_keys == ["all", "ams", "fd", "ld"]
    assert t34.cell("ams", "LEALLA-small Tatoeba").measured == 70.0
    assert t34.cell("ams", "LEALLA-large UN").measured == 75.0
    assert t34.cell("all", "LEALLA-small UN").measured == 72.0
    assert t34.cell("ld", "LEALLA-small UN").measured == 2.0
    assert t34.cell("fd", "LEALLA-small Tatoeba").status == fill.NOT_RUN


def test_table_a2_reads_the_teacher_and_its_reductions(tmp_path):
    """At scale tiny the teacher is 512-d and its ladder starts at 384: the 512 row is not run."""
    run(tmp_path, "teacher", 60.0)
    run(tmp_path, "reduce-384", 58.0)
    a2 = filled("thesis-table-A.2", collect(tmp_path, "tiny"))
    assert a2.row_keys[:3] == ["reduce-768", "reduce-512", "reduce-384"]
    assert a2.cell("reduce-768", "Tatoeba").measured == 60.0
    assert a2.cell("reduce-384", "UN avg.").measured == pytest.approx(58.0)
    assert a2.cell("reduce-512", "Tatoeba").status == fill.NOT_RUN


def test_table_3_3_measures_m_use_and_labels_the_tiny_teacher(tmp_path):
    sizes = {"languages": 16, "dim": 512, "parameters": 85_210_000}
    for scale in ("tiny", "full"):
        run(tmp_path / scale, "teacher", 60.0, scale=scale, **sizes)
        run(tmp_path / scale, "m-use", 55.0, scale=scale, **sizes)
    t33 = filled("thesis-table-3.3", collect(tmp_path / "tiny", "tiny"))
    m_use = t33.cell("m-use", "UN es")
    assert (m_use.status, m_use.measured, m_use.cited) == ("measured", 54.7, None)
    assert t33.cell("m-use", "Ttb.").measured == 55.0  # printed "-": its paper has none
    assert t33.cell("laser-12", "UN es").status == fill.CITED
    assert t33.cell("teacher", "UN avg.").measured == pytest.approx(60.0)
    md = render.markdown(t33)
    teacher = line(md, f"| LaBSE [54] {TINY_TEACHER} |")
    assert "| 16.0 / 109 | 512.0 / 768 | 85.2M / 471M |" in teacher
    assert "| 85.2M / 85M |" in line(md, "| m-USE [245] |")
    assert TINY_TEACHER in render.html_table(t33) and "mUSE v3 teacher" in render.latex(t33)
    full = render.markdown(filled("thesis-table-3.3", collect(tmp_path / "full", "full")))
    assert "| LaBSE [54] |" in full and "mUSE v3" not in full


def _claim_results(results: Path, values: dict[str, float], seeds: int = 5) -> dict:
    """Tables 3.3 and 3.4 over `seeds` seeds of each run at its value (a seed adds the same
    small amount to every run, so each seed orders the runs alike); the teacher, trained by
    no seed, has one result (seed 0), as the workflow writes it, standing at every seed."""
    run(results, "teacher", values["teacher"], UNTRAINED_SEED)
    for seed in range(1, seeds + 1):
        for name, score in values.items():
            extra = {"un_avg": score / 30} if name == "lealla-small-ld" else {}
            if name != "teacher":
                run(results, name, score + seed / 10, seed, **extra)
    found = collect(results, "tiny")
    return {t: filled(t, found) for t in ("thesis-table-3.3", "thesis-table-3.4")}


HOLDS = {
    "teacher": 75.0,
    "lealla-large": 74.6,
    "lealla-small": 73.0,
    "arch-8": 70.0,
    "lealla-small-ld": 60.0,
}
CASES = {  # claim -> the runs changed from HOLDS so that it fails
    "ch3-lealla-large-beats-small": {"lealla-large": 72.0},
    "ch3-all-losses-beat-ams-only": {"arch-8": 74.0},
    "ch3-ld-alone-fails-on-un": {"lealla-small-ld": 1860.0},  # UN 62: within 10 of AMS
    "ch3-lealla-small-close-to-labse": {"lealla-small": 70.0},
    "ch3-lealla-large-close-to-labse": {"lealla-large": 73.5},
}


def test_every_chapter_claim_has_a_failing_case():
    assert set(CASES) == set(CLAIMS)


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_each_claim_holds_on_the_thesis_pattern_and_fails_against_it(tmp_path, claim_id):
    claim = CLAIMS[claim_id]
    verdict = claims.evaluate(claim, _claim_results(tmp_path / "holds", HOLDS), (200, 1))
    assert verdict.published_holds is True
    assert verdict.outcome == claims.HOLDS, verdict.as_dict()
    assert verdict.seeds == [1, 2, 3, 4, 5]  # the teacher's one result at each
    broken = _claim_results(tmp_path / "fails", HOLDS | CASES[claim_id])
    verdict = claims.evaluate(claim, broken, (200, 1))
    assert verdict.outcome == claims.FAILS, verdict.as_dict()
