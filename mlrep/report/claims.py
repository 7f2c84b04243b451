"""The claims ledger: headline claims as checks over table cells, measured and published.

Each claim (``claims.yaml``) compares two sides, each the mean of some cells of a defined
table. Over the published numbers the check shows that the claim is encoded as the thesis
states it; over the measured numbers it gives the verdict at the report's scale, in this
order:

* ``not run at this scale`` — a cell of either side has no result;
* ``floor not measured`` — a side's floor (``floor_<metric>``, `mlrep.report.metrics`) was
  not written, so whether its values mean anything is unknown: not judged;
* ``below floor`` — a side does not lie beyond its floor (chance for retrieval, copy-the-
  source BLEU) by the claim's own statistic at ``alpha``: a difference between such values is
  noise in length and tokens, not the finding;
* ``fails`` — the measured difference points the other way or misses the margin
  (``direction: within``: lies at or beyond ±margin);
* ``inconclusive`` — the point estimate agrees but the test's p is above ``alpha``
  (one seed cannot make a sign test significant: the thesis's three seeds give p = 0.125);
* ``holds`` — it agrees and p ≤ ``alpha``.

Directions: ``higher`` (a − b > margin), ``lower`` (b − a > margin) and ``within`` (two-sided,
|a − b| < margin: two one-sided tests, the larger p decides).

Statistics, of the very quantity the side prints (its mean over cells, each cell's mean over
directions, then over seeds): ``paired_bootstrap`` resamples test sentences within each test
set (a cell's direction) with the same indices for both sides and every seed, and recomputes
that mean (`mlrep.report.stats.SentenceSet`): BLEU from the sentences' sufficient statistics, a
mean-type metric such as an off-target rate from its per-sentence scores. Where a side lacks
them, or they do not reproduce the side's printed value, it falls back to ``sign_test`` over
the seeds both sides share (and says so in the statistic's description).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from mlrep.errors import MlrepError
from mlrep.report.fill import Bootstrap, Cell, FilledTable
from mlrep.report.stats import (
    Score,
    SentenceSet,
    corpus_bleu,
    corpus_chrf,
    corpus_mean,
    p_exceeds,
    p_within,
    paired_differences,
    quantity,
    sign_test,
    sign_test_within,
)

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "fails", "inconclusive", "not run at this scale"
BELOW_FLOOR, NO_FLOOR = "below floor", "floor not measured"
STATISTICS = ("paired_bootstrap", "sign_test")
DIRECTIONS = ("higher", "lower", "within")
_KEYS = {"id", "chapter", "claim", "a", "b", "direction", "statistic", "alpha", "margin", "cite"}
# per-sentence data of a cell and the corpus score it sums to (`Cell.test_sets`)
_KINDS: tuple[tuple[str, Score], ...] = (
    ("bleu_stats", corpus_bleu),
    ("chrf_stats", corpus_chrf),
    ("sentence_scores", corpus_mean),
)


class ClaimDefinitionError(MlrepError):
    """claims.yaml is malformed or names a cell that does not exist."""


@dataclass
class Verdict:
    claim: dict[str, Any]
    citation: str
    published_a: float | None
    published_b: float | None
    published_holds: bool | None
    measured_a: float | None = None
    measured_b: float | None = None
    outcome: str = NOT_RUN
    statistic: str = ""
    p_value: float | None = None
    seeds: list[int] = field(default_factory=list)
    floor_a: float | None = None
    floor_b: float | None = None
    floor_p: float | None = None  # the larger p of "side a / b is not beyond its floor"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.claim["id"],
            "chapter": self.claim["chapter"],
            "claim": self.claim["claim"],
            "citation": self.citation,
            "direction": self.claim["direction"],
            "margin": self.claim.get("margin", 0),
            "alpha": self.claim.get("alpha", 0.05),
            "published": {
                "a": self.published_a,
                "b": self.published_b,
                "holds": self.published_holds,
            },
            "measured": {"a": self.measured_a, "b": self.measured_b, "seeds": self.seeds},
            "floor": {"a": self.floor_a, "b": self.floor_b, "p": self.floor_p},
            "outcome": self.outcome,
            "statistic": self.statistic,
            "p_value": self.p_value,
        }


def load(path: Path | None = None) -> list[dict[str, Any]]:
    source = path or Path(str(resources.files("mlrep.report") / "claims.yaml"))
    claims = yaml.safe_load(source.read_text(encoding="utf-8")) or []
    seen = set()
    for index, claim in enumerate(claims):
        where = f"{source}: claim {index + 1} ({claim.get('id', '?')})"
        missing = {"id", "chapter", "claim", "a", "b", "direction", "statistic"} - set(claim)
        if missing or set(claim) - _KEYS:
            raise ClaimDefinitionError(
                f"{where}: missing {sorted(missing)} / unknown {sorted(set(claim) - _KEYS)}"
            )
        if claim["direction"] not in DIRECTIONS or claim["statistic"] not in STATISTICS:
            raise ClaimDefinitionError(
                f"{where}: direction must be one of {DIRECTIONS}, statistic one of {STATISTICS}"
            )
        if claim["direction"] == "within" and not float(claim.get("margin", 0)) > 0:
            raise ClaimDefinitionError(f"{where}: direction within needs a positive margin")
        if claim["id"] in seen:
            raise ClaimDefinitionError(f"{where}: duplicate id")
        seen.add(claim["id"])
    return claims


def _cells(
    side: dict[str, Any], tables: Mapping[str, FilledTable | None], claim_id: str
) -> list[Cell]:
    filled = tables.get(side["table"])
    if filled is None:
        raise ClaimDefinitionError(f"claim {claim_id}: no defined table {side['table']!r}")
    try:
        return [filled.cell(str(row), column) for row, column in _points(side)]
    except ValueError:
        raise ClaimDefinitionError(
            f"claim {claim_id}: {side['table']} has no cell {_points(side)}; rows {filled.row_keys}"
        ) from None


def _points(side: dict[str, Any]) -> list[tuple[Any, str]]:
    if "row" in side:
        return [(side["row"], c) for c in side["columns"]]
    return [(r, side["column"]) for r in side["rows"]]


def _orientation(side: dict[str, Any], filled: FilledTable, claim_id: str) -> int:
    """+1 where a side's metric is better higher (beyond its floor = above it), −1 where it is
    better lower (an off-target rate: beyond = below); the table's ``lower_is_better``."""
    lower = {column in filled.definition.lower_is_better for _, column in _points(side)}
    if len(lower) > 1:
        raise ClaimDefinitionError(f"claim {claim_id}: a side mixes higher- and lower-is-better")
    return -1 if lower.pop() else 1


def _mean(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else statistics.fmean(values)  # type: ignore[arg-type]


def _seed_means(cells: list[Cell]) -> dict[int, float]:
    common = set.intersection(*(set(c.seeds) for c in cells))
    return {s: statistics.fmean(c.seeds[s] for c in cells) for s in sorted(common)}


@dataclass(frozen=True)
class _Hypothesis:
    """What a p-value is against: x − y not above `margin` (one-sided), or not within
    ±`margin` (``within``)."""

    within: bool
    margin: float

    def bootstrap_p(self, differences: np.ndarray) -> float:
        if self.within:
            return p_within(differences, self.margin)
        return p_exceeds(differences, self.margin)

    def sign_p(self, differences: list[float]) -> float:
        if self.within:
            return sign_test_within(differences, self.margin)
        return sign_test([d - self.margin for d in differences])


def _sets(cells: list[Cell], seeds: list[int], kind: str) -> list[SentenceSet] | None:
    """A side's test sets: each cell's (`Cell.test_sets`), weighted by 1 / cells."""
    found = [c.test_sets(seeds, kind) for c in cells]
    if any(sets is None for sets in found):
        return None
    return [SentenceSet(t.data, t.weight / len(cells)) for sets in found for t in sets or []]


def _reproduces(sets: list[SentenceSet], score: Score, value: float) -> bool:
    """Whether the sets' own quantity is the side's printed value (over the same seeds)."""
    return math.isclose(quantity(sets, score), value, rel_tol=1e-6, abs_tol=1e-6)


def _compare(
    x: list[Cell],
    y: list[Cell],
    statistic: str,
    hypothesis: _Hypothesis,
    bootstrap: Bootstrap,
) -> tuple[float, str, list[int]]:
    """p of `hypothesis` on x − y (p, its description, the seeds used), by `statistic`."""
    x_seeds, y_seeds = _seed_means(x), _seed_means(y)
    seeds = sorted(set(x_seeds) & set(y_seeds))
    note = ""
    for kind, score in _KINDS if statistic == "paired_bootstrap" else ():
        x_sets, y_sets = _sets(x, seeds, kind), _sets(y, seeds, kind)
        if x_sets is None or y_sets is None:
            continue
        x_printed = statistics.fmean(x_seeds[s] for s in seeds)
        y_printed = statistics.fmean(y_seeds[s] for s in seeds)
        if not (_reproduces(x_sets, score, x_printed) and _reproduces(y_sets, score, y_printed)):
            note = f" ({kind} do not reproduce the printed values)"
            continue
        try:
            differences = paired_differences(x_sets, y_sets, score, *bootstrap)
        except ValueError:
            note = f" ({kind} are not of the same test sentences)"
            continue
        sentences = sum(t.sentences for t in x_sets)
        described = (
            f"paired bootstrap over {sentences} sentences in {len(x_sets)} test set"
            f"{'s' * (len(x_sets) > 1)} × {len(seeds)} seed{'s' * (len(seeds) > 1)}"
        )
        return hypothesis.bootstrap_p(differences), described, seeds
    differences = [x_seeds[s] - y_seeds[s] for s in seeds]
    return hypothesis.sign_p(differences), f"sign test over {len(seeds)} seeds{note}", seeds


def _beyond(
    cells: list[Cell], floors: list[Cell], orientation: int, statistic: str, bootstrap: Bootstrap
) -> float:
    """p that a side does not lie beyond its floor, by the claim's statistic."""
    x, y = (cells, floors) if orientation > 0 else (floors, cells)
    return _compare(x, y, statistic, _Hypothesis(within=False, margin=0.0), bootstrap)[0]


def _judged(direction: str, margin: float, difference: float) -> bool:
    """Whether a − b (= `difference`) agrees with the claim (no statistic: its point)."""
    if direction == "within":
        return abs(difference) < margin
    return (difference if direction == "higher" else -difference) > margin


def evaluate(
    claim: dict[str, Any], tables: dict[str, FilledTable], bootstrap: Bootstrap = (1000, 12345)
) -> Verdict:
    a_cells = _cells(claim["a"], tables, claim["id"])
    b_cells = _cells(claim["b"], tables, claim["id"])
    direction, margin = claim["direction"], float(claim.get("margin", 0))
    alpha = float(claim.get("alpha", 0.05))
    pub_a = _mean([c.published_value for c in a_cells])
    pub_b = _mean([c.published_value for c in b_cells])
    source = tables[claim["a"]["table"]].published.source
    verdict = Verdict(
        claim=claim,
        citation=claim.get("cite") or source.citation,
        published_a=pub_a,
        published_b=pub_b,
        published_holds=None
        if pub_a is None or pub_b is None
        else _judged(direction, margin, pub_a - pub_b),
    )
    verdict.measured_a = _mean([c.measured for c in a_cells])
    verdict.measured_b = _mean([c.measured for c in b_cells])
    if verdict.measured_a is None or verdict.measured_b is None:
        return verdict
    x, y = (b_cells, a_cells) if direction == "lower" else (a_cells, b_cells)
    hypothesis = _Hypothesis(within=direction == "within", margin=margin)
    verdict.p_value, verdict.statistic, verdict.seeds = _compare(
        x, y, claim["statistic"], hypothesis, bootstrap
    )
    floors = {t: f.floor for t, f in tables.items()}
    a_floor = _cells(claim["a"], floors, claim["id"])
    b_floor = _cells(claim["b"], floors, claim["id"])
    verdict.floor_a = _mean([c.measured for c in a_floor])
    verdict.floor_b = _mean([c.measured for c in b_floor])
    if verdict.floor_a is None or verdict.floor_b is None:
        verdict.outcome = NO_FLOOR
        return verdict
    verdict.floor_p = max(
        _beyond(
            cells,
            floor,
            _orientation(claim[side], tables[claim[side]["table"]], claim["id"]),
            claim["statistic"],
            bootstrap,
        )
        for side, cells, floor in (("a", a_cells, a_floor), ("b", b_cells, b_floor))
    )
    if verdict.floor_p > alpha:
        verdict.outcome = BELOW_FLOOR
    elif not _judged(direction, margin, verdict.measured_a - verdict.measured_b):
        verdict.outcome = FAILS
    elif verdict.p_value <= alpha:
        verdict.outcome = HOLDS
    else:
        verdict.outcome = INCONCLUSIVE
    return verdict


def ledger(
    claims: list[dict[str, Any]],
    tables: dict[str, FilledTable],
    bootstrap: Bootstrap = (1000, 12345),
) -> list[Verdict]:
    return [evaluate(claim, tables, bootstrap) for claim in claims]


FLOOR_NOTE = (
    "A claim is judged only where both of its sides lie beyond their floor (chance, "
    "1/candidates, for retrieval; copy-the-source BLEU for BLEU) by the statistic of the claim "
    "at its alpha. Outcome below floor: a side is indistinguishable from what needs no model, "
    "so any difference between the sides is noise in length and tokens, not the finding. "
    "Outcome floor not measured: the runs wrote no floor, so the claim is not judged."
)


def scale_note(scale: str) -> str:
    """What a verdict at `scale` can tell a reader: the floor rule, and below ``full`` that
    the models are toys."""
    if scale == "full":
        return FLOOR_NOTE
    return (
        f"At scale {scale} the models are toy-sized and trained for minutes on a few thousand "
        "sentences, so their scores sit near zero: a verdict here shows that the comparison and "
        "its statistic run end to end on real outputs, not whether the finding reproduces "
        f"(that needs scale full), and below floor is the expected outcome. {FLOOR_NOTE}"
    )


def markdown(verdicts: list[Verdict], scale: str) -> str:
    note = scale_note(scale)
    lines = [
        f"**Claims ledger at scale {scale}**",
        "",
        note,
        "",
        "| id | claim | source | published a / b | measured a / b | floor a / b (p) | outcome "
        "| statistic | p |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v in verdicts:
        lines.append(
            f"| {v.claim['id']} | {v.claim['claim']} | {v.citation} | "
            f"{number(v.published_a)} / {number(v.published_b)} | "
            f"{number(v.measured_a)} / {number(v.measured_b)} | {floor_text(v)} | {v.outcome} | "
            f"{v.statistic or '–'} | {'–' if v.p_value is None else f'{v.p_value:.3g}'} |"
        )
    return "\n".join(lines) + "\n"


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def floor_text(verdict: Verdict) -> str:
    """The floors of both sides and the p that decides whether they are beaten."""
    if verdict.floor_a is None and verdict.floor_b is None:
        return "–"
    p = "" if verdict.floor_p is None else f" ({verdict.floor_p:.3g})"
    return f"{number(verdict.floor_a)} / {number(verdict.floor_b)}{p}"
