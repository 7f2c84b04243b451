"""OneAligner's report side on a synthetic results tree: its tables read the runs the chapter
writes (results/onealigner/<run>/seed<N>/metrics.json, as `mlrep.report.metrics.write` writes
them, with the metric names align-evaluate writes), the Top1 rows read the runs that are the
Top1 models, Figure 1 plots en-xx runs by their training pairs, and the claims are judged
both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep.report import claims, figures, fill, tables
from mlrep.report.metrics import FLOOR, UNTRAINED_SEED, Results, Scores, collect, write
from mlrep.report.reference import load_all
from tests.conftest import REPO

CHAPTER = "onealigner"
PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
CLAIMS = {c["id"]: c for c in claims.load() if c["chapter"] == CHAPTER}
# Tatoeba-36 by Tatoeba's codes, as align-evaluate names its metrics
TATOEBA_36 = [
    "afr",
    "ara",
    "ben",
    "bul",
    "cmn",
    "deu",
    "ell",
    "est",
    "eus",
    "fin",
    "fra",
    "heb",
    "hin",
    "hun",
    "ind",
    "ita",
    "jav",
    "jpn",
    "kat",
    "kaz",
    "kor",
    "mal",
    "mar",
    "nld",
    "pes",
    "por",
    "rus",
    "spa",
    "swh",
    "tam",
    "tel",
    "tgl",
    "tha",
    "tur",
    "urd",
    "vie",
]
BUCC = ("de", "fr", "ru", "zh")


def scores(score: float) -> dict[str, float]:
    """A run's metrics around `score`: each language its own offset (a cell reading another
    language's metric shows), offsets of mean 0."""
    spread = [i / 10 - 1.75 for i in range(36)]
    metrics = {f"tatoeba_{c}": score + d for c, d in zip(TATOEBA_36, spread, strict=True)}
    metrics |= {
        "tatoeba_avg": score,
        "new_tatoeba_eng": score - 1,
        "new_tatoeba_not_eng": score - 2,
    }
    metrics |= {FLOOR + name: 0.5 for name in list(metrics)}  # chance: 1/200 candidates
    return metrics | {f"bucc_{x}": score + d for x, d in zip(BUCC, (-1, 0, 0, 1), strict=True)}


def run(
    results: Path, name: str, score: float, seed: int = 1, scale: str = "tiny", **extra: float
) -> None:
    path = results / CHAPTER / name / f"seed{seed}" / "metrics.json"
    write(path, CHAPTER, name, seed, scale, scores(score) | extra)


def filled(table_id: str, results: Results) -> fill.FilledTable:
    return fill.fill(DEFINITIONS[table_id], PUBLISHED[table_id], results, (200, 1))


def test_tables_read_the_runs_the_chapter_writes(tmp_path):
    run(tmp_path, "unsup-xlmr-base-avg-norm", 40.0, seed=0)
    run(tmp_path, "unsup-mbert-bertscore-raw", 30.0, seed=0)
    for name, score in {"all": 60.0, "all-nobudget": 62.0, "en-es": 55.0, "en-de": 54.0}.items():
        run(tmp_path, name, score, train_pairs=1000.0 if name == "en-es" else 500.0)
    run(tmp_path, "ne-fr-es", 52.0)
    run(tmp_path, "top2", 57.0)
    results = collect(tmp_path, "tiny")
    t1 = filled("onealigner-table-1", results)
    assert t1.cell("avg.-acc.", "XLM-R-base Avg. Pooling norm.").measured == 40.0
    assert t1.cell("avg.-acc.", "mBERT BERT-score w/o norm.").measured == 30.0
    assert t1.cell("avg.-acc.", "XLM-R-large BERT-score norm.").status == fill.NOT_RUN
    t3 = filled("onealigner-table-3", results)
    assert t3.cell("onealigner", "de").measured == pytest.approx(60.0 - 1.25)  # tatoeba_deu
    assert t3.cell("onealigner", "zh").measured == pytest.approx(60.0 - 1.35)  # tatoeba_cmn
    assert t3.cell("onealigner", "tl").measured == pytest.approx(60.0 + 1.35)  # tatoeba_tgl
    assert t3.cell("onealigner-all", "Average").measured == pytest.approx(62.0)  # recomputed
    assert t3.cell("veco", "de").status == fill.CITED
    for table in ("onealigner-table-4", "onealigner-table-9"):
        single = filled(table, results)
        assert single.cell("en-es", "Avg. Acc.").measured == 55.0
        assert single.cell("en-fr", "Avg. Acc.").status == fill.NOT_RUN
    assert filled("onealigner-table-5", results).cell("ne-fr-es", "Avg. Acc.").measured == 52.0
    t6 = filled("onealigner-table-6", results)
    assert t6.cell("top1-eng", "Tatoeba-36").measured == 55.0  # en-es
    assert t6.cell("top1-not-eng", "New Tatoeba ¬ Eng").measured == 50.0  # ne-fr-es
    t7 = filled("onealigner-table-7", results)
    assert [t7.cell("avg.-acc.", c).measured for c in ("Top1", "Top2", "All")] == [55, 57, 60]
    assert t7.cell("avg.-acc.", "Top32").status == fill.NOT_RUN
    t8 = filled("onealigner-table-8", results)
    assert t8.cell("top1-eng", "de").measured == 54.0
    assert t8.cell("top1-not-eng", "Avg.").measured == pytest.approx(52.0)
    (panel,) = figures.scatter_panels(
        "onealigner-fig-1",
        figures.definitions()["onealigner-fig-1"],
        {"onealigner-table-9": filled("onealigner-table-9", results)},
        results,
    )
    assert sorted(panel.clouds[0].points) == [(500.0, 54.0, "en-de"), (1000.0, 55.0, "en-es")]


QUERIES = 200  # Tatoeba pairs per language in the claims' results: chance 0.5


def hit_run(results: Path, name: str, score: float, seed: int, scale: str) -> None:
    """A run of Tatoeba-36 P@1 `score` (to the half point) written as align-evaluate writes it:
    each language's queries' hits, the first ones hitting (a better run hits every query a
    worse one does), with the chance floors and the languages grouped under the average."""
    found, names = Scores(), [f"tatoeba_{code}" for code in TATOEBA_36]
    hit = round(score * QUERIES / 100)
    for metric in names:
        found.add(metric, 100 * hit / QUERIES, 100 / QUERIES, [1] * hit + [0] * (QUERIES - hit))
    found.mean("tatoeba_avg", names)
    path = results / CHAPTER / name / f"seed{seed}" / "metrics.json"
    write(
        path,
        CHAPTER,
        name,
        seed,
        scale,
        found.metrics,
        sentence_scores=found.sentence_scores,
        groups=found.groups,
    )


def _claim_results(
    results: Path, values: dict[str, float], scale: str = "full", seeds: int = 5
) -> dict:
    """The claims' tables over `seeds` seeds of each fine-tuned run at its value and one result
    (seed 0) of each unsupervised one, as the workflow writes them, at `scale` (full: the
    scale whose numbers compare with the paper's cited VECO)."""
    for name, score in values.items():
        for seed in [UNTRAINED_SEED] if name.startswith("unsup-") else range(1, seeds + 1):
            hit_run(results, name, score + seed / 10, seed, scale)
    found = collect(results, scale)
    ids = ("onealigner-table-1", "onealigner-table-3", "onealigner-table-7")
    return {t: filled(t, found) for t in ids}


UNSUP = ("mbert", "xlmr-base", "xlmr-large")
HOLDS = {  # the paper's pattern (Table 1's twelve cells, Table 7's Top1 and All)
    **{
        f"unsup-{encoder}-{scorer}": value
        for scorer, values in {
            "avg-raw": (37.1, 54.7, 47.0),
            "avg-norm": (45.1, 62.9, 42.6),
            "bertscore-raw": (42.9, 48.6, 57.5),
            "bertscore-norm": (55.1, 70.2, 72.1),
        }.items()
        for encoder, value in zip(UNSUP, values, strict=True)
    },
    "en-es": 92.4,
    "all": 94.4,
    "all-nobudget": 94.9,
}
CASES = {  # claim -> the runs changed from HOLDS so that it fails
    "onealigner-normalization-helps": {"unsup-xlmr-base-avg-norm": 50.0},
    "onealigner-bertscore-norm-beats-pooling": {
        f"unsup-{encoder}-bertscore-norm": 40.0 for encoder in UNSUP
    },
    "onealigner-bertscore-norm-beats-raw": {
        f"unsup-{encoder}-bertscore-raw": 80.0 for encoder in UNSUP
    },
    "onealigner-more-pairs-help": {"all": 90.0},
    "onealigner-one-pair-close-to-all": {"en-es": 85.0},
    "onealigner-beats-veco": {"all-nobudget": 80.0},
}


def test_every_chapter_claim_has_a_failing_case():
    assert set(CASES) == set(CLAIMS)


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_each_claim_holds_on_the_papers_pattern_and_fails_against_it(tmp_path, claim_id):
    claim = CLAIMS[claim_id]
    verdict = claims.evaluate(claim, _claim_results(tmp_path / "holds", HOLDS), (200, 1))
    assert verdict.outcome == claims.HOLDS, verdict.as_dict()
    # the bootstrap resamples each Tatoeba query's hit (not a fallback to the sign test)
    expected = {"paired_bootstrap": "paired bootstrap over ", "sign_test": "sign test over "}
    assert verdict.statistic.startswith(expected[claim["statistic"]]), verdict.statistic
    broken = _claim_results(tmp_path / "fails", HOLDS | CASES[claim_id])
    verdict = claims.evaluate(claim, broken, (200, 1))
    assert verdict.outcome == claims.FAILS, verdict.as_dict()


def test_a_cited_baseline_is_no_comparison_at_the_tiny_scale(tmp_path):
    claim = CLAIMS["onealigner-beats-veco"]
    verdict = claims.evaluate(claim, _claim_results(tmp_path, HOLDS, "tiny"), (200, 1))
    assert verdict.outcome == "not comparable at this scale"
