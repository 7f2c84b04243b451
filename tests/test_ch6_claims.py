"""Chapter 6's zero-shot claim judged on runs written as the chapter writes them: BLOOMZ+3
zero-shot directions scored by `scoring.metrics`, so Table 6.6's ``overall`` cell and the
per-sentence statistics the paired bootstrap resamples come from the same hypotheses."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mlrep.chapters.ch6_aligninstruct import scoring
from mlrep.chapters.ch6_aligninstruct.runs import B3
from mlrep.evaluate import mt
from mlrep.report import claims, fill, tables
from mlrep.report.metrics import collect, write
from mlrep.report.reference import load_all
from tests.conftest import REPO
from tests.report_helpers import REFERENCES, SOURCES, degrade

PUBLISHED = load_all(REPO / "reports" / "reference")
TABLE = "thesis-table-6.6"
DEFINITION = tables.load(PUBLISHED)[TABLE]
CLAIM = next(c for c in claims.load() if c["id"] == "ch6-mt-align-helps-zero-shot")
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
