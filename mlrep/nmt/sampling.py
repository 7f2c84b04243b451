"""Temperature-based multilingual data sampling, done by resampling lines before binarisation.

Chapter 5 oversamples the training pairs of its many-to-many models with temperature 1.5;
mRASP2 samples its MC24 monolingual data with T = 5. Both draw corpus i with probability
q_i ∝ (n_i / N)^(1/T), n_i its lines and N = Σ n_j: T = 1 keeps the natural shares, T → ∞
makes them uniform. Here each corpus is resampled to q_i · N lines, so the total stays N and
corpus i's *ratio* is q_i · N / n_i (above 1 for small corpora, below 1 for large ones).

Why lines in data preparation, not a fairseq multilingual task with a sampler: `mlrep.nmt`
trains one ``translation`` task on one data-bin holding every direction (`mlrep.nmt.prepare`
tags the lines), which the contrastive criterion and the word links
(`mlrep.nmt.alignments`) read line by line. A sampling task would need one dataset per
direction, a new task and its own batching, and would change every chapter's training.
Repeating lines keeps the task, the data-bin format and the links as they are, and a
prepared dataset records exactly what was trained on. The cost is disk (a corpus upsampled
r times is stored r times) and that a seeded subsample is fixed for every epoch, where a
sampler would redraw it.

The total: mRASP2's Table 10 keeps Σ Final ≈ Σ Original (1000.8M against 988.4M over the 21
sampled languages, +1.3%; Nl, Pl and Pt are left at ratio 1.00), so the counts here sum to
exactly N (largest remainders take the rounding). The published ratios follow
n_i^(1/T − 1) with T = 5 (a log-log fit of Final against Original over 17 languages gives
the exponent 0.204), but sit 1–14% above this formula's, and El, Es, Gu and Hi are off by
factors 1.3 to 3.3: their ratios cannot come from the Original column (tests/test_nmt_sampling.py).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


def probabilities(counts: Mapping[str, int], temperature: float) -> dict[str, float]:
    """q_i ∝ (n_i / N)^(1/T): each corpus's share of the resampled data."""
    if temperature <= 0:
        raise ValueError(f"sampling temperature {temperature} must be positive")
    total = sum(counts.values())
    if total <= 0 or min(counts.values()) <= 0:
        raise ValueError(f"corpus sizes {dict(counts)}: every corpus needs lines")
    weights = {name: (n / total) ** (1 / temperature) for name, n in counts.items()}
    norm = sum(weights.values())
    return {name: w / norm for name, w in weights.items()}


def ratios(counts: Mapping[str, int], temperature: float) -> dict[str, float]:
    """q_i · N / n_i: how many times corpus i is repeated (Table 10's "Sampling Ratio")."""
    total = sum(counts.values())
    return {
        name: q * total / counts[name] for name, q in probabilities(counts, temperature).items()
    }


def sampled_counts(
    counts: Mapping[str, int], temperature: float, total: int | None = None
) -> dict[str, int]:
    """Each corpus's lines after resampling: q_i · `total` (N when None) rounded so that they
    sum to `total` exactly (the largest fractional parts get the leftover lines; ties by name,
    so it is deterministic). T = 1 gives back `counts`; a `total` other than N is a budget, as
    a monolingual mix may have (`mlrep.nmt.monolingual_mix`)."""
    if total is None:
        total = sum(counts.values())
    if total < 0:
        raise ValueError(f"a resampled total of {total} lines")
    exact = {name: q * total for name, q in probabilities(counts, temperature).items()}
    out = {name: int(x) for name, x in exact.items()}
    by_remainder = sorted(exact, key=lambda name: (out[name] - exact[name], name))
    for name in by_remainder[: total - sum(out.values())]:
        out[name] += 1
    return out


def resample(rows: Sequence[T], count: int, seed: str) -> list[T]:
    """`count` rows drawn from `rows`: every row ``count // len(rows)`` times, in order, then
    a sample without replacement (seeded by `seed`, kept in corpus order) for the rest. So
    upsampling repeats every line about equally often and downsampling (count < len) keeps a
    seeded subset; a row never appears that is not in `rows`."""
    if not rows:
        raise ValueError("nothing to resample")
    whole, rest = divmod(count, len(rows))
    picked = sorted(random.Random(seed).sample(range(len(rows)), rest))
    return [*rows] * whole + [rows[i] for i in picked]
