"""The claims statistics at their edges, each against an independent value: the mutants of
`mlrep.report.stats` that `benchmarks/mutation.py` found surviving the main tests.

Chinese targets use their own tokenizer, corpus BLEU smooths like sacrebleu's, every test
sentence can be drawn by the bootstrap, a seed makes it reproducible, malformed statistics
are refused, and the sign test drops ties as the exact binomial test does.
"""

import random

import numpy as np
import pytest
from sacrebleu.metrics import BLEU
from scipy.stats import binomtest

from mlrep.report.stats import (
    bleu_from_stats,
    paired_bootstrap,
    paired_bootstrap_mean,
    sentence_stats,
    sign_test,
)
from tests.report_helpers import REFERENCES, degrade

CHINESE_REFERENCES = [
    "我们今天下午去北京看朋友。",
    "他每天晚上都喜欢读书和写字。",
    "这个城市的冬天非常冷。",
]
CHINESE_HYPOTHESES = ["我们明天下午去北京看朋友。", "他每天都喜欢写字。", "这个城市冬天很冷。"]


def _corpus(hypotheses: list[str], references: list[str], tokenize: str | None = None) -> float:
    return bleu_from_stats(np.array(sentence_stats(hypotheses, references, tokenize)).sum(axis=0))


def test_chinese_statistics_use_the_zh_tokenizer():
    expected = BLEU(tokenize="zh").corpus_score(CHINESE_HYPOTHESES, [CHINESE_REFERENCES]).score
    assert expected > 20  # characters match; under 13a each unspaced sentence is one token
    assert _corpus(CHINESE_HYPOTHESES, CHINESE_REFERENCES, "zh") == pytest.approx(expected)
    assert _corpus(CHINESE_HYPOTHESES, CHINESE_REFERENCES) == pytest.approx(
        BLEU().corpus_score(CHINESE_HYPOTHESES, [CHINESE_REFERENCES]).score
    )


def test_corpus_bleu_without_four_gram_matches_is_smoothed_as_sacrebleu_does():
    # words in a new order: unigram and bigram matches, no 4-gram match anywhere
    hypotheses = [" ".join(r.split()[::-1]) for r in REFERENCES[:8]]
    expected = BLEU().corpus_score(hypotheses, [REFERENCES[:8]])
    assert expected.counts[3] == 0 and expected.score > 0  # sacrebleu's default 'exp' smoothing
    assert _corpus(hypotheses, REFERENCES[:8]) == pytest.approx(expected.score)


def test_corpus_bleu_without_any_match_is_zero():
    hypotheses = ["zebra quantum xylophone marmalade kiwi"] * 3  # n-grams of every order
    assert BLEU().corpus_score(hypotheses, [REFERENCES[:3]]).score == 0.0
    assert _corpus(hypotheses, REFERENCES[:3]) == 0.0


@pytest.mark.parametrize("position", [0, 1, 2])
def test_the_bootstrap_draws_every_sentence(position):
    # one sentence tells the systems apart: the better one fails to win exactly when a
    # resample of three sentences misses it, with probability (2/3)^3
    higher = [0.0, 0.0, 0.0]
    higher[position] = 100.0
    p = paired_bootstrap_mean(higher, [0.0, 0.0, 0.0], samples=4000, seed=position)
    assert p == pytest.approx((2 / 3) ** 3, abs=0.03)


def _close_systems() -> tuple[list[list[float]], list[list[float]]]:
    """Sentence statistics of two systems of nearly the same quality: p lies far from 0 and 1."""
    rng = random.Random(7)
    a = sentence_stats([degrade(r, 0.3, rng) for r in REFERENCES], REFERENCES)
    b = sentence_stats([degrade(r, 0.3, rng) for r in REFERENCES], REFERENCES)
    return a, b


def test_the_bleu_bootstrap_is_reproducible_by_its_seed():
    a, b = _close_systems()
    p = [paired_bootstrap(a, b, samples=400) for _ in range(3)]
    assert 0.05 < p[0] < 0.95  # a p that resampling noise could move
    assert p[0] == p[1] == p[2]
    assert len({paired_bootstrap(a, b, samples=400, seed=s) for s in range(4)}) > 1


def test_the_mean_bootstrap_is_reproducible_by_its_seed():
    rng = np.random.default_rng(5)
    a = rng.random(40) * 100
    b = a + rng.normal(0, 30, 40)
    p = [paired_bootstrap_mean(a, b, samples=400) for _ in range(3)]
    assert 0.05 < p[0] < 0.95
    assert p[0] == p[1] == p[2]
    assert len({paired_bootstrap_mean(a, b, samples=400, seed=s) for s in range(4)}) > 1


@pytest.mark.parametrize(
    "stats",
    [
        [[1.0] * 9] * 4,  # nine numbers per sentence, not ten
        [1.0] * 10,  # one sentence's statistics, not a list of them
    ],
)
def test_the_bleu_bootstrap_refuses_malformed_statistics(stats):
    with pytest.raises(ValueError, match="equal-length"):
        paired_bootstrap(stats, stats)


@pytest.mark.parametrize("scores", [[], [[1.0, 0.0], [0.0, 1.0]]])
def test_the_mean_bootstrap_refuses_empty_or_nested_scores(scores):
    with pytest.raises(ValueError, match="equal-length"):
        paired_bootstrap_mean(scores, scores)


@pytest.mark.parametrize(
    ("differences", "wins", "n"),
    [
        ([1.0, 0.0, -1.0], 1, 2),
        ([0.0, 2.0, 0.0, 3.0, -1.0], 2, 3),
        ([0.5, 0.0, 0.0, 1.0, 2.0], 3, 3),
        ([-0.5, 0.0, 1.0, -2.0], 1, 3),
    ],
)
def test_the_sign_test_drops_ties_like_the_exact_binomial_test(differences, wins, n):
    expected = binomtest(wins, n, 0.5, alternative="greater").pvalue
    assert sign_test(differences) == pytest.approx(expected)
