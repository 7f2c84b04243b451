"""BLEU from sufficient statistics, the paired bootstrap (one test set, or a mean over test
sets and seeds), one- and two-sided, and the sign test."""

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from mlrep.report.stats import (
    SentenceSet,
    bleu_from_stats,
    chrf_from_stats,
    chrf_sentence_stats,
    corpus_bleu,
    corpus_chrf,
    corpus_mean,
    p_exceeds,
    p_within,
    paired_bootstrap,
    paired_bootstrap_mean,
    paired_differences,
    quantity,
    sentence_stats,
    sign_test,
    sign_test_within,
)
from tests.report_helpers import REFERENCES, degrade


def test_bleu_from_summed_sentence_stats_equals_sacrebleu_corpus_bleu():
    import random

    rng = random.Random(0)
    hyps = [degrade(r, 0.3, rng) for r in REFERENCES]
    stats = np.array(sentence_stats(hyps, REFERENCES)).sum(axis=0)
    assert bleu_from_stats(stats) == pytest.approx(BLEU().corpus_score(hyps, [REFERENCES]).score)


def test_chrf_from_summed_sentence_stats_equals_sacrebleu_corpus_chrf_plus_plus():
    import random

    rng = random.Random(2)
    hyps = [degrade(r, 0.3, rng) for r in REFERENCES]
    stats = chrf_sentence_stats(hyps, REFERENCES)
    expected = CHRF(word_order=2).corpus_score(hyps, [REFERENCES]).score
    assert chrf_from_stats(np.array(stats).sum(axis=0)) == pytest.approx(expected)
    assert expected != pytest.approx(CHRF().corpus_score(hyps, [REFERENCES]).score, abs=0.1)
    assert len(stats) == len(REFERENCES) and {len(row) for row in stats} == {24}


def test_paired_bootstrap_of_chrf_recomputes_corpus_chrf():
    import random

    rng = random.Random(4)
    hyps = [[degrade(r, rate, rng) for r in REFERENCES] for rate in (0.05, 0.5)]
    sets = [[SentenceSet(np.array([chrf_sentence_stats(h, REFERENCES)]))] for h in hyps]
    for found, h in zip(sets, hyps, strict=True):  # the printed number, unresampled
        printed = CHRF(word_order=2).corpus_score(h, [REFERENCES]).score
        assert quantity(found, corpus_chrf) == pytest.approx(printed)
    differences = paired_differences(*sets, corpus_chrf, samples=300, seed=1)
    assert p_exceeds(differences) < 0.01 and p_exceeds(-differences) > 0.99


def test_paired_bootstrap_separates_a_better_system_from_a_worse_one():
    import random

    rng = random.Random(1)
    good = sentence_stats([degrade(r, 0.05, rng) for r in REFERENCES], REFERENCES)
    bad = sentence_stats([degrade(r, 0.5, rng) for r in REFERENCES], REFERENCES)
    assert paired_bootstrap(good, bad, samples=300) < 0.01
    assert paired_bootstrap(bad, good, samples=300) > 0.99
    assert paired_bootstrap(good, good, samples=300) == 1.0  # ties never count as better


def test_paired_bootstrap_needs_the_same_test_sentences():
    stats = sentence_stats(REFERENCES[:4], REFERENCES[:4])
    with pytest.raises(ValueError, match="equal-length"):
        paired_bootstrap(stats, stats[:3])


def test_paired_bootstrap_of_means_tests_per_sentence_rates():
    rng = np.random.default_rng(3)
    # off-target flags (100 = wrong language) of 300 sentences: 60% against 20%
    often = np.where(rng.random(300) < 0.6, 100.0, 0.0)
    rarely = np.where(rng.random(300) < 0.2, 100.0, 0.0)
    assert paired_bootstrap_mean(often, rarely, samples=300) < 0.01
    assert paired_bootstrap_mean(rarely, often, samples=300) > 0.99
    assert paired_bootstrap_mean(often, often, samples=300) == 1.0
    with pytest.raises(ValueError, match="equal-length"):
        paired_bootstrap_mean(often, rarely[:10])


@pytest.mark.parametrize(
    ("differences", "p"),
    [
        ([1.0, 2.0, 0.5], 0.125),
        ([1.0, -1.0, 2.0], 0.5),
        ([1.0], 0.5),
        ([0.0, 0.0], 1.0),
        ([-1.0, -2.0], 1.0),
    ],
)
def test_sign_test(differences, p):
    assert sign_test(differences) == pytest.approx(p)


def test_a_quantity_is_the_weighted_mean_of_per_set_per_seed_scores_not_a_pooled_score():
    """Two directions of different size: the quantity averages their corpus BLEU (each at
    each seed), which is not the BLEU of their pooled statistics."""
    import random

    rng = random.Random(2)
    short = sentence_stats(REFERENCES[:8], REFERENCES[:8])  # perfect: BLEU 100
    long = [sentence_stats([degrade(r, 0.5, rng) for r in REFERENCES], REFERENCES) for _ in "ab"]
    sets = [SentenceSet(np.array([short, short]), 0.5), SentenceSet(np.array(long), 0.5)]
    expected = 0.5 * 100 + 0.5 * np.mean([bleu_from_stats(np.sum(s, axis=0)) for s in long])
    assert quantity(sets, corpus_bleu) == pytest.approx(expected)
    pooled = bleu_from_stats(np.sum(short + long[0], axis=0))
    assert abs(pooled - quantity(sets, corpus_bleu)) > 5
    # resampling the identity indices gives the same number
    identity = [np.arange(s.sentences) for s in sets]
    assert quantity(sets, corpus_bleu, identity) == pytest.approx(expected)


def test_paired_differences_resample_each_set_with_shared_indices():
    rng = np.random.default_rng(0)
    a = [SentenceSet(rng.random((2, 30, 1)), 0.5), SentenceSet(rng.random((2, 5, 1)), 0.5)]
    same = paired_differences(a, a, corpus_mean, 50, 1)
    assert np.all(same == 0)  # the same indices for both sides, at every seed
    shifted = [SentenceSet(t.data + 1.0, t.weight) for t in a]
    assert np.allclose(paired_differences(shifted, a, corpus_mean, 50, 1), 1.0)
    with pytest.raises(ValueError, match="equal-length test sets"):
        paired_differences(a, a[:1], corpus_mean, 10, 1)


@pytest.mark.parametrize(
    ("differences", "margin", "p"),
    [
        ([0.0] * 9, 0.5, 0.1),  # every replicate inside: the smallest p
        ([0.1, -0.2, 0.3, 0.0, -0.1, 0.2, 0.4, -0.4, 0.0], 0.5, 0.1),
        ([0.6] + [0.0] * 8, 0.5, 0.2),  # one replicate beyond +margin
        ([-0.6] + [0.0] * 8, 0.5, 0.2),  # ... or beyond -margin
        ([-0.6, 0.6, 0.7] + [0.0] * 6, 0.5, 0.3),  # the worse edge decides
        ([1.0] * 9, 0.5, 1.0),
    ],
)
def test_within_takes_the_larger_of_two_one_sided_ps(differences, margin, p):
    assert p_within(np.array(differences), margin) == pytest.approx(p)


def test_one_sided_p_counts_replicates_at_or_below_the_margin():
    differences = np.array([0.5, 1.0, 2.0, 3.0])
    assert p_exceeds(differences) == pytest.approx(1 / 5)
    assert p_exceeds(differences, 1.0) == pytest.approx(3 / 5)


@pytest.mark.parametrize(
    ("differences", "p"),
    [
        ([0.1, -0.2, 0.3, 0.0, 0.2], 1 / 32),  # all five inside ±0.5
        ([0.1, 0.7, 0.3, 0.0, 0.2], 6 / 32),  # one beyond +0.5
        ([0.1, -0.7, 0.3, 0.0, 0.2], 6 / 32),  # one beyond -0.5
        ([0.1], 0.5),
    ],
)
def test_sign_test_within(differences, p):
    assert sign_test_within(differences, 0.5) == pytest.approx(p)


@pytest.mark.parametrize("score", [corpus_bleu, corpus_chrf], ids=["bleu", "chrf"])
def test_summed_scores_resample_from_draw_counts_to_the_very_replicates_of_gathered_rows(score):
    """BLEU and chrF++ replicates come from draw counts times the statistics
    (`SummedScore`); they are the numbers that scoring each resample's gathered rows gives (the
    generic path, taken by a plain function), bit for bit, over weighted sets, several seeds,
    and one-sample sides."""
    rng = np.random.default_rng(3)
    width = 10 if score is corpus_bleu else 24
    sizes, weights = (7, 19, 12), (0.5, 0.3, 0.2)

    def sides() -> list[SentenceSet]:
        return [
            SentenceSet(rng.integers(0, 9, (3, n, width)).astype(float), w)
            for n, w in zip(sizes, weights, strict=True)
        ]

    a, b = sides(), sides()

    def gathered(data: np.ndarray) -> np.ndarray:
        return score(data)

    for x, y in ((a, b), (a, []), ([], b)):
        fast = paired_differences(x, y, score, 120, 5)
        assert np.array_equal(fast, paired_differences(x, y, gathered, 120, 5))
        assert np.unique(fast).size > 10  # the replicates differ: the draws reach the scores
