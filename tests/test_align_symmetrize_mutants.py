"""Symmetrization's edges: the refusal of an unknown method names every method as a list a
reader can copy, and a sentence pair without links (an empty line of fast_align output) gives
no links by every method."""

import pytest

from mlrep.align.symmetrize import METHODS, symmetrize


def test_an_unknown_method_is_refused_naming_each_method():
    expected = (
        "unknown symmetrization 'grow'; choose one of intersect, union, grow-diag, "
        "grow-diag-final, grow-diag-final-and"
    )
    with pytest.raises(ValueError) as raised:
        symmetrize("grow", frozenset({(0, 0)}), frozenset({(0, 0)}))
    assert str(raised.value) == expected


@pytest.mark.parametrize("method", METHODS)
def test_a_pair_without_links_stays_without_links(method):
    assert symmetrize(method, frozenset(), frozenset()) == set()
