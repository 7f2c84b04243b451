"""Chapter 6's zero-shot and cosine claims judged on results written as the chapter writes
them: BLOOMZ+3 zero-shot directions scored by `scoring.metrics`, so Table 6.6's ``overall``
cell and the per-sentence statistics the paired bootstrap resamples come from the same
hypotheses; a cosine analysis's per-layer deltas, which Fig 6.3 draws and its claim reads."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from mlrep.chapters.ch6_aligninstruct import scoring
from mlrep.chapters.ch6_aligninstruct.runs import B3
from mlrep.evaluate import mt
from mlrep.report import claims, fill, summary, tables
from mlrep.report.metrics import Results, collect, write
from mlrep.report.reference import load_all
from tests.conftest import REPO
from tests.report_helpers import REFERENCE, REFERENCES, SOURCES, degrade

PUBLISHED = load_all(REPO / "reports" / "reference")
TABLE = "thesis-table-6.6"
DEFINITION = tables.load(PUBLISHED)[TABLE]
CLAIMS = {c["id"]: c for c in claims.load() if c["chapter"] == scoring.CHAPTER}
CLAIM = CLAIMS["ch6-mt-align-helps-zero-shot"]
COSINE = CLAIMS["ch6-mtinstruct-raises-cosine"]
ANALYSIS = "bloomz-24/7b1-cosine"  # Fig 6.3's run
MT_ALIGN, MT = "bloomz-3/7b1-de-nl-ru-mt-align", "bloomz-3/7b1-de-nl-ru-mt"
ZERO_SHOT = ("de-nl", "nl-ru", "ru-fr")  # three of the 30, of two groups


def _entry(hyps: list[str], tgt: str) -> dict:
    """One direction's scores as `scoring.score` records them, its floor copying the source."""
    bleu = scoring.PROTOCOLS["bleu"]
    found, floor = (mt.score(bleu, h, REFERENCES, tgt) for h in (hyps, SOURCES))
    return {
        "score": found.score,
        "signature": found.signature,
        "kind": found.kind,
        "stats": found.stats,
        "lines": len(hyps),
        "floor": floor.score,
        "floor_stats": floor.stats,
    }


def _run(results: Path, run: str, rate: float | None) -> None:
    """`run`'s metrics.json at seed 1: the references with words dropped at `rate` (None: the
    empty lines a tiny stand-in decodes)."""
    rng = random.Random(1)
    hyps = {
        d: ["" if rate is None else degrade(r, rate, rng) for r in REFERENCES] for d in ZERO_SHOT
    }
    scored = {"opus": {"bleu": {d: _entry(h, d.split("-")[1]) for d, h in hyps.items()}}}
    out = results / scoring.CHAPTER / run / "seed1" / "metrics.json"
    write(out, scoring.CHAPTER, run, 1, "tiny", **scoring.metrics(scored, B3))


def _verdict(results: Path) -> claims.Verdict:
    filled = fill.fill(DEFINITION, PUBLISHED[TABLE], collect(results, "tiny"), (200, 1))
    return claims.evaluate(CLAIM, {TABLE: filled}, (200, 1))


def test_the_claim_holds_on_the_thesis_numbers():
    found = _verdict(Path("/nonexistent"))
    assert (found.published_a, found.published_b, found.published_holds) == (8.86, 8.38, True)
    assert found.outcome == claims.NOT_RUN


@pytest.mark.parametrize(
    ("align_rate", "mt_rate", "outcome"), [(0.1, 0.4, claims.HOLDS), (0.4, 0.1, claims.FAILS)]
)
def test_the_bootstrap_resamples_the_pooled_zero_shot_sentences(
    tmp_path, align_rate, mt_rate, outcome
):
    _run(tmp_path, MT_ALIGN, align_rate)
    _run(tmp_path, MT, mt_rate)
    found = _verdict(tmp_path)
    assert found.outcome == outcome, found.as_dict()
    sentences = len(ZERO_SHOT) * len(REFERENCES)
    assert found.statistic == f"paired bootstrap over {sentences} sentences in 3 test sets × 1 seed"


def test_empty_decodings_are_below_floor(tmp_path):
    """What the tiny stand-ins write: no words, so no side beats copying the source."""
    _run(tmp_path, MT_ALIGN, None)
    _run(tmp_path, MT, None)
    found = _verdict(tmp_path)
    assert (found.outcome, found.measured_a, found.measured_b) == (claims.BELOW_FLOOR, 0.0, 0.0)


def _cosine(results: Path, delta1: list[float], delta2: float = 0.5) -> Results:
    """The Fig 6.3 analysis's metrics.json (seed 1): Δ1 per layer as given, Δ2 at every layer
    `delta2` (the claim must not read it)."""
    metrics = {f"delta1_l{k}": v for k, v in enumerate(delta1, 1)}
    metrics |= {f"delta2_l{k}": delta2 for k in range(1, len(delta1) + 1)}
    out = results / scoring.CHAPTER / ANALYSIS / "seed1" / "metrics.json"
    write(out, scoring.CHAPTER, ANALYSIS, 1, "tiny", metrics)
    return collect(results, "tiny")


@pytest.mark.parametrize(
    ("delta1", "outcome", "p"),
    [
        ([0.02, 0.01, 0.03, 0.01, 0.02, -0.01], claims.INCONCLUSIVE, 7 / 64),
        ([0.02, 0.01, 0.03, 0.01, 0.02, 0.04], claims.HOLDS, 1 / 64),
        ([0.02, 0.01, 0.03, 0.01], claims.INCONCLUSIVE, 1 / 16),  # a 4-layer stand-in's best
        ([-0.02, -0.01, 0.01, -0.01], claims.FAILS, 15 / 16),
    ],
)
def test_the_cosine_claim_tests_fig_63s_delta1_layer_by_layer(tmp_path, delta1, outcome, p):
    found = claims.evaluate(COSINE, {}, (200, 1), _cosine(tmp_path, delta1, delta2=-0.5))
    assert (found.outcome, found.p_value) == (outcome, pytest.approx(p)), found.as_dict()
    assert found.statistic == f"sign test over {len(delta1)} layers of fig-6.3"
    assert (found.measured_a, found.measured_b) == (pytest.approx(sum(delta1) / len(delta1)), 0)
    assert found.seeds == [1] and found.floor_p is None
    assert claims.published_text(found) == "no numbers printed"
    assert found.citation == "seeds/000_cb6a70b2bb3d886f.txt:2382"


@pytest.mark.parametrize(
    ("changes", "outcome", "p"),
    [
        ({"b": 0.015}, claims.INCONCLUSIVE, 22 / 64),  # 4 of 6 layers above 0.015
        ({"direction": "lower"}, claims.FAILS, 1.0),
        ({"direction": "lower", "b": 0.05}, claims.HOLDS, 1 / 64),
        ({"direction": "within", "margin": 0.05}, claims.HOLDS, 1 / 64),
    ],
)
def test_a_figure_claim_tests_its_points_against_b(tmp_path, changes, outcome, p):
    results = _cosine(tmp_path, [0.02, 0.01, 0.03, 0.01, 0.02, 0.04])
    found = claims.evaluate(COSINE | changes, {}, (200, 1), results)
    assert (found.outcome, found.p_value) == (outcome, pytest.approx(p)), found.as_dict()
    assert found.measured_b == changes.get("b", 0)


def test_the_cosine_claim_is_not_run_without_its_analysis(tmp_path):
    for results in (None, Results("tiny")):
        found = claims.evaluate(COSINE, {}, (200, 1), results)
        assert (found.outcome, found.p_value, found.published_holds) == (claims.NOT_RUN, None, None)


def test_the_summary_judges_the_cosine_claim_and_reports_its_measured_side(tmp_path):
    _cosine(tmp_path, [0.02, 0.01, 0.03, 0.01, 0.02, 0.04])
    found = summary.summarise(tmp_path, REFERENCE, scoring.CHAPTER, "tiny", (200, 1))
    assert found["claims"][COSINE["id"]] == {
        "a": pytest.approx(0.0217, abs=1e-4),
        "verdict": "holds",
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"statistic": "paired_bootstrap"}, "statistic sign_test"),
        ({"a": {"figure": "fig-6.3", "series": "Δ3"}}, "exactly one series labelled 'Δ3'"),
        ({"a": {"figure": "fig-D.1", "series": COSINE["a"]["series"]}}, "it has 3"),
        ({"a": {"figure": "fig-9.9", "series": "Δ1"}}, "no figure 'fig-9.9'"),
        ({"a": {**COSINE["a"], "row": "x"}}, "side a is exactly"),
        ({"b": "0"}, "side b of a figure claim is the number"),
        ({"a": CLAIM["a"]}, "sides are table cells"),
    ],
)
def test_a_malformed_figure_claim_is_refused(tmp_path, changes, message):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump([COSINE | changes], allow_unicode=True), encoding="utf-8")
    with pytest.raises(claims.ClaimDefinitionError, match=message):
        claims.load(path)
