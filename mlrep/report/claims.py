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
* ``not comparable at this scale`` — a side is cited and the scale is not ``full``: the
  measured side ran on stand-in data, the cited number on the real benchmark;
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

A side may be *cited*: cells of a row quoted from prior work (`mlrep.report.tables`), such as
VECO against OneAligner. Its value is the published number, a constant with no seeds and no
sentences, so the test is one-sample: the bootstrap resamples the measured side's sentences
alone and compares each replicate of its printed quantity with the constant, and the sign test
counts the measured side's seeds above (or below) it. A cited side has no floor of its own
(the published number came from a full-size model on the real benchmark): only the measured
side must lie beyond its floor, and the ledger shows ``cited`` where the floor would be.

A *correlation* claim (statistic ``pearson``) pairs two series instead of two means: each side
is a row minus its ``baseline`` row at each of its ``columns`` (an entry that is a list of
columns is their mean, such as a language pair's two directions), and the claim is that the
gains of ``a`` and ``b`` correlate, r > 0 (``higher``) or r < 0 (``lower``), by the
permutation p of `mlrep.report.correlation.pearson`. A correlation has no floor of its own: the
four rows it differences must each lie beyond their floors, tested as a ``paired_bootstrap``
claim tests a side (a gain of two rows at chance is noise, whatever it correlates with).

A *figure* claim reads what the thesis shows only as a figure, without numbers (Fig 6.3's
per-layer change of cosine similarity): side ``a`` is a result series of ``figures.yaml``,
``{figure, series}`` by its legend label, read as the figure reads it (`figures.panels`), and
side ``b`` is the number each of its points is held against (0: no change). The statistic is
``sign_test`` over the series' points (its layers) instead of seeds: the claim is about every
point ("rose in nearly all layers"), and each point is one value. Its published side is the
thesis's text (``cite``), so the published check has no numbers to run (``published_holds``
None). It has no floor: a difference of two models' values over the same inputs has no
input-copying baseline, its no-effect value is ``b``, which the test already is; the outcomes
are those after the floor's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from mlrep.errors import MlrepError
from mlrep.report import figures
from mlrep.report.correlation import Correlation, pearson, pearson_r
from mlrep.report.fill import Bootstrap, Cell, FilledTable
from mlrep.report.metrics import UNTRAINED_SEED, Results
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
NOT_COMPARABLE = "not comparable at this scale"
COMPARABLE_SCALE = "full"  # the scale whose data are the benchmarks cited numbers come from
STATISTICS = ("paired_bootstrap", "sign_test", "pearson")
CORRELATION = "pearson"
_SERIES_KEYS = {"table", "row", "baseline", "columns"}  # a side of a correlation claim
DIRECTIONS = ("higher", "lower", "within")
_FIGURE_KEYS = {"figure", "series"}  # side a of a figure claim
POINTS = "sign_test"  # a figure claim's statistic: over its series' points
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
    cited: dict[str, str] = field(default_factory=dict)  # side ("a"/"b") -> its source
    # a correlation claim's r of the published and the measured gains, and its points
    correlation: dict[str, float | int | None] | None = None

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
            "cited": self.cited,
            "correlation": self.correlation,
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
        _check_series(claim, where)
        _check_figure(claim, where)
        if claim["id"] in seen:
            raise ClaimDefinitionError(f"{where}: duplicate id")
        seen.add(claim["id"])
    return claims


def _check_series(claim: dict[str, Any], where: str) -> None:
    """A ``pearson`` claim's sides are series of gains (``_SERIES_KEYS``) of equal length, at
    least 3; a ``baseline`` anywhere else is a claim that meant to be a correlation."""
    sides = (claim["a"], claim["b"])
    if claim["statistic"] != CORRELATION:
        if any(isinstance(side, dict) and "baseline" in side for side in sides):
            raise ClaimDefinitionError(
                f"{where}: a side with a baseline is a series of gains: set statistic: pearson"
            )
        return
    if claim["direction"] == "within" or float(claim.get("margin", 0)) != 0:
        raise ClaimDefinitionError(
            f"{where}: statistic pearson tests r > 0 (direction higher) or r < 0 (lower), "
            "with no margin"
        )
    for name, side in zip("ab", sides, strict=True):
        if not isinstance(side, dict) or set(side) != _SERIES_KEYS or not side["columns"]:
            raise ClaimDefinitionError(
                f"{where}: side {name} of a pearson claim needs exactly {sorted(_SERIES_KEYS)} "
                "(row minus baseline at each of columns; a list of columns is their mean)"
            )
    lengths = [len(side["columns"]) for side in sides]
    if lengths[0] != lengths[1] or lengths[0] < 3:
        raise ClaimDefinitionError(
            f"{where}: a pearson claim pairs the points of a and b: it needs as many columns "
            f"in each, at least 3; got {lengths[0]} and {lengths[1]}"
        )


def figure_claim(claim: dict[str, Any]) -> bool:
    """Whether the claim reads a figure's series (its side a) instead of table cells."""
    return isinstance(claim["a"], dict) and "figure" in claim["a"]


def _check_figure(claim: dict[str, Any], where: str) -> None:
    """A figure claim's side a is ``{figure, series}``, naming a result series of one run
    that exists, its b a number and its statistic `POINTS`; any other claim's sides are
    cells (a number or a figure as b is a claim that meant to be a figure claim)."""
    if not figure_claim(claim):
        if any(not isinstance(side, dict) or "figure" in side for side in (claim["a"], claim["b"])):
            raise ClaimDefinitionError(
                f"{where}: sides are table cells, but for a figure claim's: a figure's series "
                "as a, a number as b"
            )
        return
    a, b = claim["a"], claim["b"]
    if set(a) != _FIGURE_KEYS or claim["statistic"] != POINTS:
        raise ClaimDefinitionError(
            f"{where}: a figure claim's side a is exactly {sorted(_FIGURE_KEYS)}, its "
            f"statistic {POINTS} (over the series' points)"
        )
    if isinstance(b, bool) or not isinstance(b, int | float):
        raise ClaimDefinitionError(f"{where}: side b of a figure claim is the number it tests")
    _figure_series(claim, where)


def _figure_series(claim: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The figure a figure claim reads and its series, the one of that label, of one run."""
    a = claim["a"]
    spec = figures.definitions().get(a["figure"])
    if spec is None:
        raise ClaimDefinitionError(f"{where}: no figure {a['figure']!r} in figures.yaml")
    found = [s for panel in spec["panels"] for s in panel["series"] if s["label"] == a["series"]]
    if len(found) != 1 or "run" not in found[0]:
        raise ClaimDefinitionError(
            f"{where}: {a['figure']} needs exactly one series labelled {a['series']!r}, a "
            f"result series of one run; it has {len(found)}"
        )
    return spec, found[0]


def _groups(series: dict[str, Any]) -> list[list[str]]:
    """A series' points: each a list of columns whose mean it is."""
    return [c if isinstance(c, list) else [c] for c in series["columns"]]


def _series_rows(series: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A series' row and baseline row as plain sides over all of its columns."""
    columns = [c for group in _groups(series) for c in group]
    table = series["table"]
    return (
        {"table": table, "row": series["row"], "columns": columns},
        {"table": table, "row": series["baseline"], "columns": columns},
    )


def cell_sides(claim: dict[str, Any]) -> list[dict[str, Any]]:
    """Every plain side (``row`` + ``columns`` or ``column`` + ``rows``) whose cells the claim
    reads: its two sides, a correlation's two rows per series, none of a figure claim (its
    series' metrics are the figure's, `mlrep.report.references`)."""
    if figure_claim(claim):
        return []
    if claim["statistic"] != CORRELATION:
        return [claim["a"], claim["b"]]
    return [row for name in ("a", "b") for row in _series_rows(claim[name])]


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


@dataclass(frozen=True)
class _Side:
    """A claim side's cells; `cited`, where they are quoted from prior work, is their
    published mean: a constant, the same at every seed, with no sentences."""

    cells: list[Cell]
    cited: float | None = None

    @property
    def constant(self) -> float:
        return self.cited or 0.0

    def seed_means(self) -> dict[int, float] | None:
        """The side's value per seed (None for a cited side: a constant at any seed)."""
        if self.cited is not None:
            return None
        common = set.intersection(*(set(c.seeds) for c in self.cells))
        return {s: statistics.fmean(c.seeds[s] for c in self.cells) for s in sorted(common)}

    @property
    def untrained(self) -> bool:
        """Whether every cell is a run no seed trains (`UNTRAINED_SEED` alone: a pretrained
        model, a frozen teacher), whose one result stands at every seed of the other side."""
        return self.cited is None and all(set(c.seeds) == {UNTRAINED_SEED} for c in self.cells)

    def at(self, seeds: list[int]) -> list[int]:
        """The seeds of this side's own results that stand for `seeds` of the comparison."""
        return [UNTRAINED_SEED] * len(seeds) if self.untrained else seeds

    def sets(self, seeds: list[int], kind: str) -> list[SentenceSet] | None:
        """Its test sets (`_sets`); a cited side has none, so it adds nothing to a replicate
        and its constant is added instead (`_compare`)."""
        return [] if self.cited is not None else _sets(self.cells, seeds, kind)


def _side(side: dict[str, Any], tables: Mapping[str, FilledTable | None], claim_id: str) -> _Side:
    """A side's cells, and its cited value where every cell is quoted (never some of them)."""
    cells = _cells(side, tables, claim_id)
    cited = [c.cited is not None for c in cells]
    if not any(cited):
        return _Side(cells)
    if not all(cited):
        raise ClaimDefinitionError(f"claim {claim_id}: a side mixes cited and measured cells")
    value = _mean([c.published_value for c in cells])
    if value is None:
        raise ClaimDefinitionError(f"claim {claim_id}: a cited side needs printed numbers")
    return _Side(cells, value)


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


def _per_seed(side: _Side, seeds: list[int]) -> dict[int, float]:
    """The side's value at each of `seeds`: its own, an untrained side's one result, or a
    cited side's constant."""
    means = side.seed_means()
    if means is None:
        return dict.fromkeys(seeds, side.constant)
    return {s: means[t] for s, t in zip(seeds, side.at(seeds), strict=True)}


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
    x: _Side,
    y: _Side,
    statistic: str,
    hypothesis: _Hypothesis,
    bootstrap: Bootstrap,
    claim_seeds: list[int] | None = None,
) -> tuple[float, str, list[int]]:
    """p of `hypothesis` on x − y (p, its description, the seeds used), by `statistic`.
    Where neither side is trained, both stand at `claim_seeds` (the seeds of the claim whose
    side is tested against its floor), else at seed 0.

    A cited side is a constant at every seed of the other side and has no sentences: the
    bootstrap then resamples the measured side alone (one-sample) and the sign test compares
    each of its seeds with the constant."""
    # an untrained side stands at every seed of a trained one
    trained = [s for s in (x, y) if s.cited is None and not s.untrained]
    if trained:
        seeds = sorted(set.intersection(*(set(s.seed_means() or {}) for s in trained)))
    elif claim_seeds:
        seeds = claim_seeds
    else:
        measured = [s for s in (x, y) if s.cited is None]
        seeds = sorted(set.intersection(*(set(s.seed_means() or {}) for s in measured)))
    x_seeds, y_seeds = (_per_seed(side, seeds) for side in (x, y))
    against = next((f" against the cited {s.cited:g}" for s in (x, y) if s.cited is not None), "")
    note = ""
    for kind, score in _KINDS if statistic == "paired_bootstrap" else ():
        x_sets, y_sets = x.sets(x.at(seeds), kind), y.sets(y.at(seeds), kind)
        if x_sets is None or y_sets is None:
            continue
        x_printed = statistics.fmean(x_seeds[s] for s in seeds) - x.constant
        y_printed = statistics.fmean(y_seeds[s] for s in seeds) - y.constant
        if not (_reproduces(x_sets, score, x_printed) and _reproduces(y_sets, score, y_printed)):
            note = f" ({kind} do not reproduce the printed values)"
            continue
        try:
            differences = paired_differences(x_sets, y_sets, score, *bootstrap)
        except ValueError:
            note = f" ({kind} are not of the same test sentences)"
            continue
        differences += x.constant - y.constant
        resampled = x_sets or y_sets
        sentences = sum(t.sentences for t in resampled)
        described = (
            f"{'one-sample' if against else 'paired'} bootstrap over {sentences} sentences in "
            f"{len(resampled)} test set{'s' * (len(resampled) > 1)} × {len(seeds)} "
            f"seed{'s' * (len(seeds) > 1)}{against}"
        )
        return hypothesis.bootstrap_p(differences), described, seeds
    differences = [x_seeds[s] - y_seeds[s] for s in seeds]
    return (
        hypothesis.sign_p(differences),
        f"sign test over {len(seeds)} seeds{against}{note}",
        seeds,
    )


def _beyond(
    cells: list[Cell],
    floors: list[Cell],
    orientation: int,
    statistic: str,
    bootstrap: Bootstrap,
    claim_seeds: list[int],
) -> float:
    """p that a side does not lie beyond its floor, by the claim's statistic, at the claim's
    seeds (an untrained side stands at each of them, as in the claim)."""
    x, y = (_Side(cells), _Side(floors)) if orientation > 0 else (_Side(floors), _Side(cells))
    hypothesis = _Hypothesis(within=False, margin=0.0)
    return _compare(x, y, statistic, hypothesis, bootstrap, claim_seeds)[0]


def _judged(direction: str, margin: float, difference: float) -> bool:
    """Whether a − b (= `difference`) agrees with the claim (no statistic: its point)."""
    if direction == "within":
        return abs(difference) < margin
    return (difference if direction == "higher" else -difference) > margin


@dataclass(frozen=True)
class _Series:
    """A correlation side's cells: its row's and its baseline row's, `sizes[i]` of each at
    point i."""

    rows: tuple[list[Cell], list[Cell]]
    sizes: list[int]

    def gains(self, value: Callable[[Cell], float | None]) -> list[float] | None:
        """Row minus baseline at each point, each the mean of its cells' `value`; None where a
        cell has none."""
        out, start = [], 0
        for size in self.sizes:
            row, base = (
                _mean([value(c) for c in cells[start : start + size]]) for cells in self.rows
            )
            if row is None or base is None:
                return None
            out.append(row - base)
            start += size
        return out


def _series(
    series: dict[str, Any], tables: Mapping[str, FilledTable | None], claim_id: str
) -> _Series:
    row, base = (_cells(side, tables, claim_id) for side in _series_rows(series))
    if any(c.cited is not None for c in row + base):
        raise ClaimDefinitionError(
            f"claim {claim_id}: a pearson side is a measured gain, but {series['table']} row "
            f"{series['row']!r} or {series['baseline']!r} is cited"
        )
    return _Series((row, base), [len(group) for group in _groups(series)])


def _r(a: list[float] | None, b: list[float] | None) -> float | None:
    """r of two gain series; None where one is missing or constant (r undefined)."""
    if a is None or b is None:
        return None
    try:
        return pearson_r(a, b)
    except ValueError:
        return None


def _shared_seeds(cells: list[Cell]) -> list[int]:
    """The seeds every trained cell ran (an untrained one stands at each of them)."""
    trained = [set(c.seeds) for c in cells if set(c.seeds) != {UNTRAINED_SEED}]
    return sorted(set.intersection(*trained)) if trained else [UNTRAINED_SEED]


def _correlation_floors(
    claim: dict[str, Any],
    tables: dict[str, FilledTable],
    rows: list[list[Cell]],
    bootstrap: Bootstrap,
    verdict: Verdict,
) -> None:
    """Each row's floor (a and b: their rows'), and the largest p that a row is not beyond it,
    by the paired bootstrap (`_beyond`); None where a floor was not written."""
    floors = {t: f.floor for t, f in tables.items()}
    sides = cell_sides(claim)
    floor_cells = [_cells(side, floors, claim["id"]) for side in sides]
    values = [_mean([c.measured for c in cells]) for cells in floor_cells]
    verdict.floor_a, verdict.floor_b = values[0], values[2]
    if any(value is None for value in values):
        return
    verdict.floor_p = max(
        _beyond(
            cells,
            floor,
            _orientation(side, tables[side["table"]], claim["id"]),
            "paired_bootstrap",
            bootstrap,
            verdict.seeds,
        )
        for side, cells, floor in zip(sides, rows, floor_cells, strict=True)
    )


def _described(found: Correlation, bootstrap: Bootstrap) -> str:
    if found.exact:
        orderings = f"all {math.factorial(found.n)} orderings"
    else:
        orderings = f"{bootstrap[0]} random orderings, seed {bootstrap[1]}"
    return f"one-sided permutation test of Pearson's r over {found.n} points ({orderings})"


def _evaluate_correlation(
    claim: dict[str, Any], tables: dict[str, FilledTable], bootstrap: Bootstrap
) -> Verdict:
    """A ``pearson`` claim's verdict (module docstring): the outcomes in the same order as a
    comparison's, with r in place of a − b and no margin."""
    series = [_series(claim[name], tables, claim["id"]) for name in ("a", "b")]
    direction, alpha = claim["direction"], float(claim.get("alpha", 0.05))
    published = _r(*(s.gains(lambda c: c.published_value) for s in series))
    correlation: dict[str, float | int | None] = {
        "published_r": published,
        "measured_r": None,
        "n": len(series[0].sizes),
    }
    verdict = Verdict(
        claim=claim,
        citation=claim.get("cite") or tables[claim["a"]["table"]].published.source.citation,
        published_a=None,
        published_b=None,
        published_holds=None if published is None else _judged(direction, 0.0, published),
        correlation=correlation,
    )
    a_gains, b_gains = (s.gains(lambda c: c.measured) for s in series)
    if a_gains is None or b_gains is None:
        return verdict
    rows = [cells for s in series for cells in s.rows]
    verdict.seeds = _shared_seeds([c for cells in rows for c in cells])
    r: float | None = None
    alternative = "greater" if direction == "higher" else "less"
    try:
        found = pearson(a_gains, b_gains, alternative, *bootstrap)
    except ValueError as error:  # a constant series: r is undefined
        verdict.statistic = str(error)
    else:
        r = correlation["measured_r"] = found.r
        verdict.p_value, verdict.statistic = found.p, _described(found, bootstrap)
    _correlation_floors(claim, tables, rows, bootstrap, verdict)
    if verdict.floor_p is None:
        verdict.outcome = NO_FLOOR
    elif verdict.floor_p > alpha:
        verdict.outcome = BELOW_FLOOR
    elif r is None or verdict.p_value is None:
        verdict.outcome = INCONCLUSIVE
    elif not _judged(direction, 0.0, r):
        verdict.outcome = FAILS
    else:
        verdict.outcome = HOLDS if verdict.p_value <= alpha else INCONCLUSIVE
    return verdict


def _series_values(
    side: dict[str, Any],
    spec: dict[str, Any],
    tables: dict[str, FilledTable],
    results: Results,
) -> list[float | None]:
    """The measured points of a figure claim's series, as its figure draws them."""
    found = figures.panels(side["figure"], spec, tables, results)
    return next(s.measured for p in found for s in p.series if s.label == side["series"])


def _evaluate_figure(
    claim: dict[str, Any], tables: dict[str, FilledTable], results: Results | None
) -> Verdict:
    """A figure claim's verdict (module docstring): the sign test over the series' points
    against b, in the outcomes' order without the floor's; not run without `results`."""
    spec, series = _figure_series(claim, f"claim {claim['id']}")
    direction, margin = claim["direction"], float(claim.get("margin", 0))
    verdict = Verdict(
        claim=claim,
        citation=claim.get("cite") or spec["title"],
        published_a=None,
        published_b=None,
        published_holds=None,
    )
    values = [] if results is None else _series_values(claim["a"], spec, tables, results)
    points = [v for v in values if v is not None]
    if results is None or not points or len(points) < len(values):
        return verdict
    b = float(claim["b"])
    verdict.measured_a, verdict.measured_b = statistics.fmean(points), b
    verdict.seeds = sorted(r.seed for r in results.seeds(spec["chapter"], series["run"]))
    differences = [b - v if direction == "lower" else v - b for v in points]
    hypothesis = _Hypothesis(within=direction == "within", margin=margin)
    verdict.p_value = hypothesis.sign_p(differences)
    point = spec.get("xlabel") or "point"
    verdict.statistic = f"sign test over {len(values)} {point}s of {claim['a']['figure']}"
    if not _judged(direction, margin, verdict.measured_a - b):
        verdict.outcome = FAILS
    elif verdict.p_value <= float(claim.get("alpha", 0.05)):
        verdict.outcome = HOLDS
    else:
        verdict.outcome = INCONCLUSIVE
    return verdict


def evaluate(
    claim: dict[str, Any],
    tables: dict[str, FilledTable],
    bootstrap: Bootstrap = (1000, 12345),
    results: Results | None = None,
) -> Verdict:
    """A claim's verdict over the filled `tables`; a figure claim reads `results`."""
    if figure_claim(claim):
        return _evaluate_figure(claim, tables, results)
    if claim["statistic"] == CORRELATION:
        return _evaluate_correlation(claim, tables, bootstrap)
    a_side, b_side = _side(claim["a"], tables, claim["id"]), _side(claim["b"], tables, claim["id"])
    if a_side.cited is not None and b_side.cited is not None:
        raise ClaimDefinitionError(f"claim {claim['id']}: both sides are cited, none measured")
    a_cells, b_cells = a_side.cells, b_side.cells
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
    sides = {"a": a_side, "b": b_side}
    verdict.cited = {n: str(s.cells[0].cited) for n, s in sides.items() if s.cited is not None}
    # a cited side's value is its published number; the other side's is measured
    verdict.measured_a = pub_a if "a" in verdict.cited else _mean([c.measured for c in a_cells])
    verdict.measured_b = pub_b if "b" in verdict.cited else _mean([c.measured for c in b_cells])
    if verdict.measured_a is None or verdict.measured_b is None:
        return verdict
    x, y = (b_side, a_side) if direction == "lower" else (a_side, b_side)
    hypothesis = _Hypothesis(within=direction == "within", margin=margin)
    verdict.p_value, verdict.statistic, verdict.seeds = _compare(
        x, y, claim["statistic"], hypothesis, bootstrap
    )
    floors = {t: f.floor for t, f in tables.items()}
    measured = [n for n in sides if n not in verdict.cited]  # a cited side has no floor
    floor_cells = {n: _cells(claim[n], floors, claim["id"]) for n in measured}
    floor = {n: _mean([c.measured for c in cells]) for n, cells in floor_cells.items()}
    verdict.floor_a, verdict.floor_b = floor.get("a"), floor.get("b")
    if any(value is None for value in floor.values()):
        verdict.outcome = NO_FLOOR
        return verdict
    verdict.floor_p = max(
        _beyond(
            sides[n].cells,
            floor_cells[n],
            _orientation(claim[n], tables[claim[n]["table"]], claim["id"]),
            claim["statistic"],
            bootstrap,
            verdict.seeds,
        )
        for n in measured
    )
    if verdict.floor_p > alpha:
        verdict.outcome = BELOW_FLOOR
    elif verdict.cited and tables[claim["a"]["table"]].scale != COMPARABLE_SCALE:
        verdict.outcome = NOT_COMPARABLE
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
    results: Results | None = None,
) -> list[Verdict]:
    return [evaluate(claim, tables, bootstrap, results) for claim in claims]


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
            f"{published_text(v)} | {measured_text(v)} | {floor_text(v)} | {v.outcome} | "
            f"{v.statistic or '–'} | {'–' if v.p_value is None else f'{v.p_value:.3g}'} |"
        )
    return "\n".join(lines) + "\n"


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _r_text(r: float | int | None) -> str:
    return "–" if r is None else f"r = {r:.2f}"


def published_text(verdict: Verdict) -> str:
    """Both sides' published values, a correlation's r, or that a figure prints none."""
    if figure_claim(verdict.claim):
        return "no numbers printed"
    if verdict.correlation is not None:
        return _r_text(verdict.correlation["published_r"])
    return f"{number(verdict.published_a)} / {number(verdict.published_b)}"


def measured_text(verdict: Verdict) -> str:
    """Both sides' values, a cited side's marked with its source (it was never measured), or
    a correlation's r and its number of points."""
    if verdict.correlation is not None:
        c = verdict.correlation
        return f"{_r_text(c['measured_r'])} over {c['n']} points"
    return " / ".join(
        number(value) + (f" (cited: {verdict.cited[side]})" if side in verdict.cited else "")
        for side, value in (("a", verdict.measured_a), ("b", verdict.measured_b))
    )


def floor_text(verdict: Verdict) -> str:
    """The floors of both sides and the p that decides whether they are beaten; a cited side
    has none of its own."""
    if verdict.floor_a is None and verdict.floor_b is None:
        return "–"
    p = "" if verdict.floor_p is None else f" ({verdict.floor_p:.3g})"
    a, b = (
        "cited" if side in verdict.cited else number(value)
        for side, value in (("a", verdict.floor_a), ("b", verdict.floor_b))
    )
    return f"{a} / {b}{p}"
