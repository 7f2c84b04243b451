"""BLEU from sufficient statistics, the paired bootstrap and the sign test."""

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from mlrep.report.stats import (
    bleu_from_stats,
    paired_bootstrap,
    paired_bootstrap_mean,
    sentence_stats,
    sign_test,
)
from tests.report_helpers import REFERENCES, degrade


def test_bleu_from_summed_sentence_stats_equals_sacrebleu_corpus_bleu():
    import random

    rng = random.Random(0)
    hyps = [degrade(r, 0.3, rng) for r in REFERENCES]
    stats = np.array(sentence_stats(hyps, REFERENCES)).sum(axis=0)
    assert bleu_from_stats(stats) == pytest.approx(BLEU().corpus_score(hyps, [REFERENCES]).score)


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
