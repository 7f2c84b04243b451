"""The statistics behind the claims ledger: paired bootstrap over sentences, sign test over seeds.

BLEU is recomputed from per-sentence sufficient statistics (the same ten numbers sacrebleu
accumulates), so a chapter stores them once in metrics.json and the ledger can resample test
sets without the text (Koehn, 2004). A compared quantity is a mean over test sets (the
directions of a cell, the cells of a claim side) and seeds; `paired_differences` resamples
each test set on its own and recomputes that mean (`SentenceSet`), so the statistic tests the
number the report prints. Two-sided "within a margin" claims use two one-sided tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU, CHRF


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
    # one conversion of the row, not ten numpy scalars: the bootstrap calls this a million
    # times for a report
    hyp_len, ref_len, c1, c2, c3, c4, t1, t2, t3, t4 = (int(x) for x in totals.tolist())
    correct, total = [c1, c2, c3, c4], [t1, t2, t3, t4]
    return BLEU.compute_bleu(correct, total, hyp_len, ref_len, smooth_method="exp").score


_CHRF_PLUS_PLUS = CHRF(word_order=2)


def chrf_sentence_stats(hypotheses: Sequence[str], references: Sequence[str]) -> list[list[float]]:
    """Per-sentence chrF++ statistics: for each character order 1–6 and word order 1–2, the
    hypothesis n-grams, reference n-grams and matches (24 numbers), which sacrebleu sums."""
    return [
        list(map(float, row))
        for row in _CHRF_PLUS_PLUS._extract_corpus_statistics(hypotheses, [references])
    ]


def chrf_from_stats(totals: np.ndarray) -> float:
    """Corpus chrF++ (0–100) of summed statistics, computed by sacrebleu."""
    return _CHRF_PLUS_PLUS._compute_score_from_stats([int(x) for x in totals]).score


@dataclass(frozen=True)
class SentenceSet:
    """One test set of a compared quantity: its per-sentence data at each seed, shaped
    ``(seeds, sentences, width)`` (width 10 for BLEU statistics, 1 for per-sentence scores),
    and its weight in the quantity.

    A quantity is the weighted sum over test sets of the mean over seeds of each set's corpus
    score: a claim side that is the mean of two cells, each the mean of three directions, has
    six sets of weight 1/6. The bootstrap thus resamples sentences within each test set and
    recomputes exactly the mean the report prints, never a score pooled across sets.
    """

    data: np.ndarray
    weight: float = 1.0

    @property
    def sentences(self) -> int:
        return int(self.data.shape[1])


Score = Callable[[np.ndarray], np.ndarray]  # (seeds, sentences, width) -> one score per seed


@dataclass(frozen=True)
class SummedScore:
    """A corpus score of each seed's sentence statistics summed over the sentences (BLEU,
    chrF++), a `Score`. Because only the sum counts, `paired_differences` computes a
    resample's totals as its draw counts times the statistics, for every replicate in one
    product, instead of gathering each resample's rows: integer statistics sum exactly in any
    order, so the replicates are the same numbers."""

    of_totals: Callable[[np.ndarray], float]

    def __call__(self, data: np.ndarray) -> np.ndarray:
        return np.array([self.of_totals(seed.sum(axis=0)) for seed in data])


# BLEU of each seed's summed sentence statistics (a test set's corpus BLEU per seed)
corpus_bleu = SummedScore(bleu_from_stats)
# chrF++ of each seed's summed sentence statistics
corpus_chrf = SummedScore(chrf_from_stats)


def corpus_mean(data: np.ndarray) -> np.ndarray:
    """The mean per-sentence score of each seed (a rate such as off-target, per seed)."""
    return data.mean(axis=(1, 2))


def quantity(
    sets: Sequence[SentenceSet], score: Score, indices: Sequence[np.ndarray] | None = None
) -> float:
    """The weighted mean over `sets` of the mean over seeds of `score`, on the sentences at
    `indices` (one index array per set; None: every sentence once, the printed value)."""
    total = 0.0
    for number, test_set in enumerate(sets):
        data = test_set.data if indices is None else test_set.data[:, indices[number]]
        total += test_set.weight * float(np.mean(score(data)))
    return total


def paired_differences(
    a: Sequence[SentenceSet], b: Sequence[SentenceSet], score: Score, samples: int, seed: int
) -> np.ndarray:
    """`samples` bootstrap replicates of ``quantity(a) - quantity(b)``.

    Each replicate resamples the sentences of every test set with replacement, with the same
    indices for the paired sets of `a` and `b` and for every seed (the same test sentences).
    One side may have no sets (a constant, such as a number cited from a paper, that the
    caller adds): its quantity is 0 and the other side is bootstrapped alone (one-sample).
    """
    paired = bool(a) and bool(b)
    if not (a or b) or (
        paired
        and (len(a) != len(b) or any(x.sentences != y.sentences for x, y in zip(a, b, strict=True)))
    ):
        raise ValueError(
            "paired bootstrap needs equal-length test sets, got "
            f"{[x.sentences for x in a]} and {[y.sentences for y in b]}"
        )
    rng = np.random.default_rng(seed)
    draws = [[rng.integers(0, x.sentences, x.sentences) for x in a or b] for _ in range(samples)]
    if isinstance(score, SummedScore):
        return _summed_quantities(a, score, draws) - _summed_quantities(b, score, draws)
    return np.array([quantity(a, score, ix) - quantity(b, score, ix) for ix in draws])


def _summed_quantities(
    sets: Sequence[SentenceSet], score: SummedScore, draws: list[list[np.ndarray]]
) -> np.ndarray:
    """`quantity` of `sets` at each replicate's indices (`draws`), for a summed score: each
    set's resampled totals for every replicate and seed come from one product of how often
    each sentence was drawn with the statistics, and are then scored as `quantity` does."""
    replicates = np.zeros(len(draws))
    for number, test_set in enumerate(sets):
        counts = np.stack(
            [np.bincount(indices[number], minlength=test_set.sentences) for indices in draws]
        ).astype(float)
        totals = np.einsum("rn,snw->rsw", counts, test_set.data)  # (replicates, seeds, width)
        scores = np.array([score.of_totals(row) for row in totals.reshape(-1, totals.shape[2])])
        # each replicate's mean over its seeds: a row's mean, the same sum as a 1-D mean's
        replicates += test_set.weight * scores.reshape(totals.shape[:2]).mean(axis=1)
    return replicates


def p_exceeds(differences: np.ndarray, margin: float = 0.0) -> float:
    """One-sided bootstrap p that the difference does not exceed `margin`."""
    return (int(np.sum(differences <= margin)) + 1) / (differences.size + 1)


def p_within(differences: np.ndarray, margin: float) -> float:
    """Bootstrap p that the difference is not within ``(-margin, margin)``: two one-sided
    tests (TOST), each against one edge; the larger p decides."""
    return max(p_exceeds(differences, -margin), p_exceeds(-differences, -margin))


def _single(rows: np.ndarray) -> list[SentenceSet]:
    return [SentenceSet(rows.reshape(1, rows.shape[0], -1))]


def paired_bootstrap(
    better: Sequence[Sequence[float]],
    worse: Sequence[Sequence[float]],
    samples: int = 1000,
    seed: int = 12345,
) -> float:
    """One-sided p that `better` is not better than `worse` in BLEU on the same test sentences
    (one test set, one seed; `paired_differences` for several).

    Resamples sentences with replacement (the same indices for both systems) and counts how
    often the resampled BLEU of `better` fails to exceed that of `worse`.
    """
    a, b = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != 10:
        raise ValueError(f"paired bootstrap needs equal-length stats, got {a.shape} and {b.shape}")
    return p_exceeds(paired_differences(_single(a), _single(b), corpus_bleu, samples, seed))


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
    return p_exceeds(paired_differences(_single(a), _single(b), corpus_mean, samples, seed))


def sign_test(differences: Sequence[float]) -> float:
    """One-sided exact sign test p that the differences are not positive (ties dropped)."""
    wins = sum(1 for d in differences if d > 0)
    n = sum(1 for d in differences if d != 0)
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n


def sign_test_within(differences: Sequence[float], margin: float) -> float:
    """Exact sign-test p that the differences are not within ``(-margin, margin)`` (TOST)."""
    return max(
        sign_test([margin - d for d in differences]), sign_test([d + margin for d in differences])
    )
