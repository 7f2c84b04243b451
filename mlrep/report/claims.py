"""The claims ledger: headline claims as checks over table cells, measured and published.

Each claim (``claims.yaml``) compares two sides, each the mean of some cells of a defined
table. Over the published numbers the check shows that the claim is encoded as the thesis
states it; over the measured numbers it gives the verdict at the report's scale:

* ``not run at this scale`` — a cell of either side has no result;
* ``fails`` — the measured difference points the other way (or misses the margin);
* ``inconclusive`` — the direction holds but the test's p is above ``alpha``
  (one seed cannot make a sign test significant: the thesis's three seeds give p = 0.125);
* ``holds`` — the direction holds and p ≤ ``alpha``.

Statistics: ``paired_bootstrap`` resamples test sentences from the BLEU sufficient statistics
of both sides (paired by seed), or from their per-sentence scores for a mean-type metric such
as an off-target rate, falling back to ``sign_test`` over seeds where a side has neither.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mlrep.errors import MlrepError
from mlrep.report.fill import Bootstrap, Cell, FilledTable
from mlrep.report.stats import paired_bootstrap, paired_bootstrap_mean, sign_test

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "fails", "inconclusive", "not run at this scale"
STATISTICS = ("paired_bootstrap", "sign_test")
_KEYS = {"id", "chapter", "claim", "a", "b", "direction", "statistic", "alpha", "margin", "cite"}


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
        if claim["direction"] not in ("higher", "lower") or claim["statistic"] not in STATISTICS:
            raise ClaimDefinitionError(
                f"{where}: direction must be higher|lower, statistic one of {STATISTICS}"
            )
        if claim.get("margin") and claim["statistic"] == "paired_bootstrap":
            # the bootstrap tests a > b, not a > b + margin
            raise ClaimDefinitionError(f"{where}: a margin needs statistic: sign_test")
        if claim["id"] in seen:
            raise ClaimDefinitionError(f"{where}: duplicate id")
        seen.add(claim["id"])
    return claims


def _cells(side: dict[str, Any], tables: dict[str, FilledTable], claim_id: str) -> list[Cell]:
    filled = tables.get(side["table"])
    if filled is None:
        raise ClaimDefinitionError(f"claim {claim_id}: no defined table {side['table']!r}")
    if "row" in side:
        points = [(side["row"], c) for c in side["columns"]]
    else:
        points = [(r, side["column"]) for r in side["rows"]]
    try:
        return [filled.cell(str(row), column) for row, column in points]
    except ValueError:
        raise ClaimDefinitionError(
            f"claim {claim_id}: {side['table']} has no cell {points}; rows {filled.row_keys}"
        ) from None


def _mean(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else statistics.fmean(values)  # type: ignore[arg-type]


def _seed_means(cells: list[Cell]) -> dict[int, float]:
    common = set.intersection(*(set(c.seeds) for c in cells))
    return {s: statistics.fmean(c.seeds[s] for c in cells) for s in sorted(common)}


def _pooled(cells: list[Cell], seeds: list[int], kind: str) -> list | None:
    """Every cell's per-sentence data (`kind`, a Cell field) over `seeds`; None if one lacks it."""
    per_cell = [getattr(c, kind) for c in cells]
    if not seeds or any(not all(s in data for s in seeds) for data in per_cell):
        return None
    return [row for s in seeds for data in per_cell for row in data[s]]


def _bootstrap_p(
    a_cells: list[Cell], b_cells: list[Cell], seeds: list[int], sign: int, bootstrap: Bootstrap
) -> tuple[float, str] | None:
    """Paired bootstrap p over the pooled sentences of both sides, if both have them."""
    for kind, test in (
        ("bleu_stats", paired_bootstrap),
        ("sentence_scores", paired_bootstrap_mean),
    ):
        pooled_a, pooled_b = _pooled(a_cells, seeds, kind), _pooled(b_cells, seeds, kind)
        if pooled_a is not None and pooled_b is not None and len(pooled_a) == len(pooled_b):
            better, worse = (pooled_a, pooled_b) if sign > 0 else (pooled_b, pooled_a)
            described = f"paired bootstrap over {len(pooled_a)} sentences"
            return test(better, worse, *bootstrap), described
    return None


def evaluate(
    claim: dict[str, Any], tables: dict[str, FilledTable], bootstrap: Bootstrap = (1000, 12345)
) -> Verdict:
    a_cells = _cells(claim["a"], tables, claim["id"])
    b_cells = _cells(claim["b"], tables, claim["id"])
    sign = 1 if claim["direction"] == "higher" else -1
    margin = float(claim.get("margin", 0))
    pub_a = _mean([c.published_value for c in a_cells])
    pub_b = _mean([c.published_value for c in b_cells])
    source = tables[claim["a"]["table"]].published.source
    verdict = Verdict(
        claim=claim,
        citation=claim.get("cite") or source.citation,
        published_a=pub_a,
        published_b=pub_b,
        published_holds=None if pub_a is None or pub_b is None else sign * (pub_a - pub_b) > margin,
    )
    verdict.measured_a = _mean([c.measured for c in a_cells])
    verdict.measured_b = _mean([c.measured for c in b_cells])
    if verdict.measured_a is None or verdict.measured_b is None:
        return verdict
    a_seeds, b_seeds = _seed_means(a_cells), _seed_means(b_cells)
    seeds = sorted(set(a_seeds) & set(b_seeds))
    verdict.seeds = seeds
    bootstrapped = (
        _bootstrap_p(a_cells, b_cells, seeds, sign, bootstrap)
        if claim["statistic"] == "paired_bootstrap"
        else None
    )
    if bootstrapped is not None:
        verdict.p_value, verdict.statistic = bootstrapped
    else:
        differences = [sign * (a_seeds[s] - b_seeds[s]) - margin for s in seeds]
        verdict.statistic = f"sign test over {len(differences)} seeds"
        verdict.p_value = sign_test(differences)
    if sign * (verdict.measured_a - verdict.measured_b) <= margin:
        verdict.outcome = FAILS
    elif verdict.p_value <= float(claim.get("alpha", 0.05)):
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


def scale_note(scale: str) -> str:
    """What a verdict at `scale` can tell a reader ("" at ``full``)."""
    if scale == "full":
        return ""
    return (
        f"At scale {scale} the models are toy-sized and trained for minutes on a few thousand "
        "sentences, so their scores sit near zero: a verdict here shows that the comparison and "
        "its statistic run end to end on real outputs, not whether the finding reproduces "
        "(that needs scale full)."
    )


def markdown(verdicts: list[Verdict], scale: str) -> str:
    note = scale_note(scale)
    lines = [
        f"**Claims ledger at scale {scale}**",
        "",
        *([note, ""] if note else []),
        "| id | claim | source | published a / b | measured a / b | outcome | statistic | p |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def num(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    for v in verdicts:
        lines.append(
            f"| {v.claim['id']} | {v.claim['claim']} | {v.citation} | "
            f"{num(v.published_a)} / {num(v.published_b)} | "
            f"{num(v.measured_a)} / {num(v.measured_b)} | {v.outcome} | {v.statistic or '–'} | "
            f"{'–' if v.p_value is None else f'{v.p_value:.3g}'} |"
        )
    return "\n".join(lines) + "\n"
