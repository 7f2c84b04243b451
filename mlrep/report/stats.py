"""The statistics behind the claims ledger: paired bootstrap over sentences, sign test over seeds.

BLEU is recomputed from per-sentence sufficient statistics (the same ten numbers sacrebleu
accumulates), so a chapter stores them once in metrics.json and the ledger can resample test
sets without the text (Koehn, 2004).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from sacrebleu.metrics import BLEU


def sentence_stats(
    hypotheses: Sequence[str], references: Sequence[str], tokenize: str | None = None
) -> list[list[float]]:
    """Per-sentence ``[hyp_len, ref_len, c1..c4, t1..t4]``; `tokenize` is sacrebleu's
    tokenizer name (None: its default, 13a), e.g. ``zh`` for Chinese targets."""
    bleu = BLEU(tokenize=tokenize)
    # sacrebleu's own extractor: the exact statistics its corpus_score sums
    return [
        list(map(float, row)) for row in bleu._extract_corpus_statistics(hypotheses, [references])
    ]


def bleu_from_stats(totals: np.ndarray) -> float:
    """Corpus BLEU (0–100) of summed statistics, computed by sacrebleu (smooth 'exp')."""
    hyp_len, ref_len = int(totals[0]), int(totals[1])
    correct = [int(c) for c in totals[2:6]]
    total = [int(t) for t in totals[6:10]]
    return BLEU.compute_bleu(correct, total, hyp_len, ref_len, smooth_method="exp").score


def _resample(
    a: np.ndarray, b: np.ndarray, corpus: Callable[[np.ndarray], float], samples: int, seed: int
) -> float:
    """One-sided p that `a`'s corpus score does not exceed `b`'s, resampling sentences."""
    rng = np.random.default_rng(seed)
    n = a.shape[0]
    losses = 0
    for _ in range(samples):
        index = rng.integers(0, n, n)
        if corpus(a[index]) <= corpus(b[index]):
            losses += 1
    return (losses + 1) / (samples + 1)


def paired_bootstrap(
    better: Sequence[Sequence[float]],
    worse: Sequence[Sequence[float]],
    samples: int = 1000,
    seed: int = 12345,
) -> float:
    """One-sided p that `better` is not better than `worse` in BLEU on the same test sentences.

    Resamples sentences with replacement (the same indices for both systems) and counts how
    often the resampled BLEU of `better` fails to exceed that of `worse`.
    """
    a, b = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != 10:
        raise ValueError(f"paired bootstrap needs equal-length stats, got {a.shape} and {b.shape}")
    return _resample(a, b, lambda rows: bleu_from_stats(rows.sum(axis=0)), samples, seed)


def paired_bootstrap_mean(
    higher: Sequence[float], lower: Sequence[float], samples: int = 1000, seed: int = 12345
) -> float:
    """One-sided p that the mean of `higher` does not exceed that of `lower` (same sentences).

    For corpus scores that are means of per-sentence scores, such as an off-target rate
    (100 for a sentence in the wrong language, 0 otherwise).
    """
    a, b = np.asarray(higher, dtype=float), np.asarray(lower, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or not a.size:
        raise ValueError(f"paired bootstrap needs equal-length scores, got {a.shape} and {b.shape}")
    return _resample(a, b, np.mean, samples, seed)


def sign_test(differences: Sequence[float]) -> float:
    """One-sided exact sign test p that the differences are not positive (ties dropped)."""
    wins = sum(1 for d in differences if d > 0)
    n = sum(1 for d in differences if d != 0)
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n
