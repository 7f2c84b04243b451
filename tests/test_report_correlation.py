"""Pearson's r and its permutation p (`mlrep.report.correlation`) against a case worked by hand
and against scipy's own implementation (its exact permutation method and, sampled, its
Monte-Carlo one)."""

import numpy as np
import pytest
from scipy import stats

from mlrep.report.correlation import pearson, pearson_r

X, Y = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]


def test_a_case_worked_by_hand():
    """Centred: x = y = (-1.5, -0.5, 0.5, 1.5) up to one swap, so r = 4 / 5. As y is a
    permutation of x, r of an ordering is 1 - Σd²/10: r ≥ 0.8 for the identity and the three
    adjacent swaps (4 of 24), r ≤ 0.8 for all but the perfect pairing (23 of 24); two-sided,
    the smaller of the two doubled."""
    assert pearson_r(X, Y) == pytest.approx(0.8)
    assert pearson(X, Y).p == pytest.approx(4 / 24)
    assert pearson(X, Y, "two-sided").p == pytest.approx(8 / 24)
    assert pearson(X, Y, "less").p == pytest.approx(23 / 24)
    assert (pearson(X, Y).n, pearson(X, Y).exact) == (4, True)


def test_r_ignores_the_series_offsets_and_scales():
    """A gain of BLEU (a few tenths) against one of P@1 (a few points) around large means."""
    assert pearson_r([x + 1000 for x in X], [10 * y - 7 for y in Y]) == pytest.approx(0.8)
    assert pearson_r(X, [-y for y in Y]) == pytest.approx(-0.8)


@pytest.mark.parametrize("n", [3, 5, 8])  # 8: the largest enumerated (8! = 40320)
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_exact_p_is_scipys_exact_permutation_p(n, alternative):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(size=n) + 50
    found = pearson(x, y, alternative)
    expected = stats.pearsonr(
        x, y, alternative=alternative, method=stats.PermutationMethod(n_resamples=np.inf)
    )
    assert found.r == pytest.approx(expected.statistic)
    assert found.p == pytest.approx(expected.pvalue) and found.exact


def test_beyond_eight_points_p_is_sampled_with_the_seed():
    rng = np.random.default_rng(0)
    x = rng.normal(size=9)
    y = 0.5 * x + rng.normal(size=9)
    found = pearson(x, y, samples=4000, seed=7)
    assert not found.exact and found == pearson(x, y, samples=4000, seed=7)
    assert found.p != pearson(x, y, samples=4000, seed=8).p
    expected = stats.pearsonr(
        x, y, alternative="greater", method=stats.PermutationMethod(n_resamples=99999, rng=1)
    )
    assert found.p == pytest.approx(expected.pvalue, abs=0.02)
    # with this many points the t distribution's p is close to the permutation p
    assert found.p == pytest.approx(stats.pearsonr(x, y, alternative="greater").pvalue, abs=0.03)


def test_a_sampled_p_counts_the_observed_pairing():
    x = np.arange(10.0)
    assert pearson(x, x, samples=99).p == pytest.approx(1 / 100)


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        ([1, 2], [2, 1], "at least 3 points"),
        ([1, 2, 3], [1, 2], "equal length"),
        ([1, 2, 3], [5, 5, 5], "y is constant"),
        ([4, 4, 4], [1, 2, 3], "x is constant"),
    ],
)
def test_too_few_points_or_a_constant_series_is_refused(x, y, message):
    with pytest.raises(ValueError, match=message):
        pearson(x, y)


def test_an_unknown_alternative_is_refused():
    with pytest.raises(ValueError, match="alternative must be one of"):
        pearson(X, Y, "positive")
