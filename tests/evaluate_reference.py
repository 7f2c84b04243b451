"""Naive, obviously-correct numpy versions of the evaluation suite, for cross-checks.

Full similarity matrices in float64, loops written out as the definitions read (LASER's
xsim.py margins, the bucc2018.py mining recipe); ties go to the lower index, as a stable
descending sort orders them.
"""

from __future__ import annotations

import numpy as np


def cosine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    y = y.astype(np.float64)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    y = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    return x @ y.T


def knn(sim: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of every row: stable sort of the negated row (equal values keep index order)."""
    k = min(k, sim.shape[1])
    order = np.argsort(-sim, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(sim, order, axis=1), order


def best(sim: np.ndarray, margin: str | None, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Best candidate (column) of every query (row) and its score."""
    n = sim.shape[0]
    if margin in (None, "absolute"):
        picks = np.array([int(np.argmax(sim[i])) for i in range(n)])
        return picks, sim[np.arange(n), picks]
    fwd_scores, fwd_idx = knn(sim, k)
    bwd_scores, _ = knn(sim.T, k)
    mean_query = fwd_scores.mean(axis=1)
    mean_cand = bwd_scores.mean(axis=1)
    picks, values = [], []
    for i in range(n):
        scored = []
        for j in range(fwd_idx.shape[1]):
            a = fwd_scores[i, j]
            b = (mean_query[i] + mean_cand[fwd_idx[i, j]]) / 2
            scored.append(a / b if margin == "ratio" else a - b)
        top = int(np.argmax(scored))
        picks.append(int(fwd_idx[i, top]))
        values.append(scored[top])
    return np.array(picks), np.array(values)


def retrieval(src: np.ndarray, tgt: np.ndarray, margin: str | None, k: int) -> dict:
    sim = cosine(src, tgt)
    n = sim.shape[0]
    fwd, _ = best(sim, margin, k)
    bwd, _ = best(sim.T, margin, k)
    p_fwd = 100.0 * sum(int(fwd[i] == i) for i in range(n)) / n
    p_bwd = 100.0 * sum(int(bwd[i] == i) for i in range(n)) / n
    errors = sum(int(fwd[i] != i) for i in range(n))
    return {
        "p_at_1_src2tgt": p_fwd,
        "p_at_1_tgt2src": p_bwd,
        "p_at_1": (p_fwd + p_bwd) / 2,
        "xsim_error": 100.0 * errors / n,
    }


def mine(src: np.ndarray, tgt: np.ndarray, k: int) -> list[tuple[int, int, float]]:
    """bucc2018.py: forward + backward ratio-margin candidates, sorted, greedy 1-1."""
    sim = cosine(src, tgt)
    fwd, fwd_score = best(sim, "ratio", k)
    bwd, bwd_score = best(sim.T, "ratio", k)
    return greedy(fwd, fwd_score, bwd, bwd_score)


def greedy(
    fwd: np.ndarray, fwd_score: np.ndarray, bwd: np.ndarray, bwd_score: np.ndarray
) -> list[tuple[int, int, float]]:
    """Forward proposals (source i -> fwd[i]) then backward ones (bwd[j] -> target j), sorted
    by score (forward first among equals), each kept when both sides are still unused."""
    proposals = [(i, int(fwd[i]), fwd_score[i]) for i in range(len(fwd))]
    proposals += [(int(bwd[j]), j, bwd_score[j]) for j in range(len(bwd))]
    proposals.sort(key=lambda p: -p[2])  # Python's sort is stable
    used_src, used_tgt, kept = set(), set(), []
    for s, t, score in proposals:
        if s not in used_src and t not in used_tgt:
            used_src.add(s)
            used_tgt.add(t)
            kept.append((s, t, score))
    return kept


def oracle_f1(
    kept: list[tuple[int, int, float]], gold: set[tuple[int, int]]
) -> tuple[float, float]:
    """Best F1 (percent) over thresholds 'keep pairs scoring >= t', and that t."""
    best_f1, best_t = 0.0, float("inf")
    for t in sorted({score for _, _, score in kept}, reverse=True):
        chosen = [(s, g) for s, g, score in kept if score >= t]
        correct = len(set(chosen) & gold)
        if correct:
            p, r = correct / len(chosen), correct / len(gold)
            f1 = 100 * 2 * p * r / (p + r)
            if f1 > best_f1:
                best_f1, best_t = f1, t
    return best_f1, best_t
