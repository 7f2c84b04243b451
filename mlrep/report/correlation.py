"""Pearson's r between two paired series, with a permutation p-value.

The ledger correlates per-language-pair gains (ΔBLEU against Δ retrieval P@1 over a baseline):
five to ten points that are differences of noisy scores, one pair often far from the others.
The t-based p of ``r`` assumes both series jointly normal, which such a handful of deltas
cannot show; a permutation test assumes only that, with no association, every pairing of the
x values with the y values is equally likely, so its p is exact whatever their distribution.
Up to `EXACT_MAX` points every pairing is enumerated (8! = 40320; n = 5 gives p ≥ 1/120, so
α = 0.05 is reachable); beyond, the pairings are sampled with the report's bootstrap seed, as
its other statistics are, so a verdict is reproducible.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

EXACT_MAX = 8
ALTERNATIVES = ("greater", "less", "two-sided")
_TIES = 1e-12  # a permuted r equal to the observed one up to rounding counts as reaching it


@dataclass(frozen=True)
class Correlation:
    r: float
    p: float
    n: int
    exact: bool  # every pairing enumerated (else `samples` random ones)


def _centred(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Both series minus their means, scaled to unit length: r is then their dot product."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(
            f"Pearson's r needs two series of equal length, got {xs.shape}, {ys.shape}"
        )
    if xs.size < 3:
        raise ValueError(f"Pearson's r needs at least 3 points, got {xs.size}")
    out = []
    for name, series in (("x", xs), ("y", ys)):
        centred = series - series.mean()
        norm = float(np.linalg.norm(centred))
        if norm == 0.0:
            raise ValueError(f"Pearson's r is undefined: {name} is constant ({series[0]:g})")
        out.append(centred / norm)
    return out[0], out[1]


def _r(xs: np.ndarray, ys: np.ndarray) -> float:
    """r of two centred unit series (`_centred`), clipped against rounding past ±1."""
    return float(np.clip(xs @ ys, -1.0, 1.0))


def pearson_r(x: Sequence[float], y: Sequence[float]) -> float:
    return _r(*_centred(x, y))


def _orderings(n: int, samples: int, seed: int) -> tuple[np.ndarray, bool]:
    """Every ordering of n points (n ≤ `EXACT_MAX`), else `samples` random ones."""
    if n <= EXACT_MAX:
        return np.array(list(itertools.permutations(range(n)))), True
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(n) for _ in range(samples)]), False


def _p(hits: np.ndarray, exact: bool) -> float:
    count = int(np.sum(hits))
    return count / hits.size if exact else (count + 1) / (hits.size + 1)


def pearson(
    x: Sequence[float],
    y: Sequence[float],
    alternative: str = "greater",
    samples: int = 1000,
    seed: int = 12345,
) -> Correlation:
    """r of x and y and the permutation p of no association against `alternative`:
    ``greater`` (r > 0), ``less`` (r < 0) or ``two-sided`` (the smaller one-sided p doubled,
    at most 1: the permutation distribution of r need not be symmetric, so "as large in
    absolute value" would not be the same test in both directions). Exact, the identity ordering
    is one of the n!, so p ≥ 1/n!; sampled, p is (hits + 1) / (samples + 1), the observed
    pairing counted as one, as `mlrep.report.stats.p_exceeds` counts a bootstrap."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    xs, ys = _centred(x, y)
    r = _r(xs, ys)
    orders, exact = _orderings(xs.size, samples, seed)
    permuted = ys[orders] @ xs
    greater = _p(permuted >= r - _TIES, exact)
    less = _p(permuted <= r + _TIES, exact)
    p = {"greater": greater, "less": less}.get(alternative, min(1.0, 2 * min(greater, less)))
    return Correlation(r=r, p=p, n=int(xs.size), exact=exact)
