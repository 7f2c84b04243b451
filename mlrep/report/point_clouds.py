"""2-D point sets for the representation figures (mRASP2 Figs 4 and 5): reading and smoothing.

A chapter that projects sentence representations to 2-D (t-SNE) writes them as a CSV beside its
run's ``metrics.json``: a header ``x,y,group`` and one point a line (``group``: the language, or
the sentence id). The report draws them; it never recomputes a projection.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from mlrep.errors import MlrepError

COLUMNS = ("x", "y", "group")
_CHUNK = 256
MAX_KDE_POINTS = 5000


class PointsFileError(MlrepError):
    """A points CSV breaks the format above; the message names file, line and fix."""


def read_points(path: Path) -> dict[str, np.ndarray]:
    """{group: float [n, 2]} from a points CSV, groups in order of first appearance."""
    groups: dict[str, list[tuple[float, float]]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLUMNS:
            raise PointsFileError(f"{path}:1: the header must be {','.join(COLUMNS)}")
        for number, row in enumerate(reader, start=2):
            try:
                x, y, group = float(row[0]), float(row[1]), row[2].strip()
            except (ValueError, IndexError):
                raise PointsFileError(
                    f"{path}:{number}: expected x,y,group with numeric x and y, got {row!r}"
                ) from None
            if not (math.isfinite(x) and math.isfinite(y)):
                raise PointsFileError(f"{path}:{number}: x and y must be finite numbers")
            groups.setdefault(group, []).append((x, y))
    return {g: np.array(p, dtype=float) for g, p in groups.items()}


def kde(points: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Gaussian kernel density of 2-D `points` on the grid xs × ys (Scott's bandwidth rule).

    The full-covariance kernel of a bivariate KDE plot, in numpy: the density figures need
    contours, not a statistics library. Above `MAX_KDE_POINTS` a fixed random subset stands in
    for the whole set (34k Ted-M sentences would cost minutes for contours that do not change).
    """
    if len(points) > MAX_KDE_POINTS:
        keep = np.random.default_rng(0).choice(len(points), MAX_KDE_POINTS, replace=False)
        points = points[np.sort(keep)]
    n = len(points)
    if n < 3:
        raise PointsFileError(f"a density needs at least 3 points, got {n}")
    covariance = np.cov(points.T) * n ** (-2 / 6)  # Scott: n^(-1/(d+4)), squared, d = 2
    if np.linalg.det(covariance) <= 0:
        raise PointsFileError("the points lie on a line: their density is degenerate")
    inverse = np.linalg.inv(covariance)
    norm = 1 / (2 * np.pi * math.sqrt(np.linalg.det(covariance)) * n)
    (a, b), (_, c) = inverse
    density = np.zeros((len(ys), len(xs)))
    for start in range(0, n, _CHUNK):  # a chunk of kernels at a time: bounded memory
        dx = xs[None, None, :] - points[start : start + _CHUNK, 0, None, None]
        dy = ys[None, :, None] - points[start : start + _CHUNK, 1, None, None]
        density += np.exp(-0.5 * (a * dx**2 + 2 * b * dx * dy + c * dy**2)).sum(axis=0)
    return density * norm
