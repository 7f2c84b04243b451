"""Symmetrization (Moses/atools semantics) and AER on hand-made cases."""

import random

import pytest

from mlrep.align.pharaoh import AlignmentFormatError, GoldLine, parse_gold, parse_links
from mlrep.align.score import ScoreError, score
from mlrep.align.symmetrize import METHODS, symmetrize

# Source "the house is small", target "das Haus ist klein ." (5th token unaligned in fwd).
FORWARD = frozenset({(0, 0), (1, 1), (2, 2), (3, 3), (3, 4)})
REVERSE = frozenset({(0, 0), (1, 1), (2, 2), (3, 3), (2, 4)})


def test_intersect_and_union():
    assert symmetrize("intersect", FORWARD, REVERSE) == {(0, 0), (1, 1), (2, 2), (3, 3)}
    assert symmetrize("union", FORWARD, REVERSE) == FORWARD | REVERSE


def test_grow_diag_adds_a_neighbour_covering_an_unaligned_word():
    # Target 4 is unaligned in the intersection. (3, 4) is a direct neighbour of (3, 3) and
    # is added; (2, 4) is only a diagonal neighbour of (3, 3) and, once target 4 is aligned,
    # touches no unaligned word.
    grown = symmetrize("grow-diag", FORWARD, REVERSE)
    assert grown == {(0, 0), (1, 1), (2, 2), (3, 3), (3, 4)}
    # For the same reason neither final step adds (2, 4).
    assert symmetrize("grow-diag-final", FORWARD, REVERSE) == grown
    assert symmetrize("grow-diag-final-and", FORWARD, REVERSE) == grown


def test_final_and_only_adds_links_between_two_unaligned_words():
    forward = frozenset({(0, 0), (2, 2)})
    reverse = frozenset({(0, 0), (0, 2), (1, 3)})
    # grow-diag: nothing neighbours (0, 0) in the union except nothing ((0,2) is two away).
    assert symmetrize("grow-diag", forward, reverse) == {(0, 0)}
    # final (forward first): (2, 2) both unaligned → added; reverse: (0, 2) target 2 now
    # aligned and source 0 aligned → not added; (1, 3) both unaligned → added.
    assert symmetrize("grow-diag-final", forward, reverse) == {(0, 0), (2, 2), (1, 3)}
    assert symmetrize("grow-diag-final-and", forward, reverse) == {(0, 0), (2, 2), (1, 3)}
    # final (or) adds a link touching one aligned word; final-and does not.
    forward = frozenset({(0, 0)})
    reverse = frozenset({(0, 0), (0, 2)})
    assert symmetrize("grow-diag-final", forward, reverse) == {(0, 0), (0, 2)}
    assert symmetrize("grow-diag-final-and", forward, reverse) == {(0, 0)}


def test_grow_diag_follows_diagonals():
    forward = frozenset({(0, 0), (1, 1), (2, 2)})
    reverse = frozenset({(0, 0)})
    # (1, 1) is a diagonal neighbour of (0, 0), then (2, 2) of (1, 1).
    assert symmetrize("grow-diag", forward, reverse) == forward
    assert symmetrize("intersect", forward, reverse) == {(0, 0)}


def test_methods_are_ordered_by_inclusion_on_random_cases():
    from thot.common import WordAlignmentMatrix

    rng = random.Random(0)
    for _ in range(500):
        n, m = rng.randint(1, 7), rng.randint(1, 7)
        forward = frozenset((rng.randrange(n), j) for j in range(m) if rng.random() < 0.8)
        reverse = frozenset((i, rng.randrange(m)) for i in range(n) if rng.random() < 0.8)
        out = {method: symmetrize(method, forward, reverse) for method in METHODS}
        assert out["intersect"] <= out["grow-diag"] <= out["grow-diag-final-and"]
        assert out["grow-diag-final-and"] <= out["grow-diag-final"] <= out["union"]
        # An independent implementation (sil-thot) agrees on the order-free methods.
        for method, name in (("intersect", "intersect"), ("union", "union")):
            matrix = WordAlignmentMatrix(n, m)
            other = WordAlignmentMatrix(n, m)
            for i, j in forward:
                matrix.set(i, j)
            for i, j in reverse:
                other.set(i, j)
            getattr(matrix, name)(other)
            rows, cols = matrix.to_numpy().nonzero()
            assert {(int(i), int(j)) for i, j in zip(rows, cols, strict=True)} == out[method]


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="grow-diag-final-and"):
        symmetrize("grow", FORWARD, REVERSE)


def test_aer_on_a_hand_made_gold():
    gold = [parse_gold("0-0 1?1 2-2"), parse_gold("0-1 1-0")]
    test = [parse_links("0-0 1-1 2-1"), parse_links("0-1")]
    result = score(gold, test)
    # A = 4 links, S = 4 sure, |A∩S| = 2 (0-0, 0-1), |A∩P| = 3 (adds 1?1).
    assert result.precision == pytest.approx(3 / 4)
    assert result.recall == pytest.approx(2 / 4)
    assert result.aer == pytest.approx(1 - (2 + 3) / (4 + 4))
    assert (result.test_links, result.sure_links, result.possible_links) == (4, 4, 5)


def test_perfect_alignment_scores_zero_aer_and_possible_links_cost_nothing():
    gold = [GoldLine(frozenset({(0, 0)}), frozenset({(0, 0), (1, 1)}))]
    assert score(gold, [frozenset({(0, 0)})]).aer == 0
    assert score(gold, [frozenset({(0, 0), (1, 1)})]).aer == 0
    assert score(gold, [frozenset({(0, 0), (1, 0)})]).aer == pytest.approx(1 - 2 / 3)


def test_score_refuses_mismatched_or_malformed_input():
    with pytest.raises(ScoreError, match="gold has 1 sentence pairs but test has 2"):
        score([parse_gold("0-0")], [frozenset(), frozenset()])
    with pytest.raises(AlignmentFormatError, match="line 3: '0:1' is not a link"):
        parse_links("0-0 0:1", "line 3")
    with pytest.raises(AlignmentFormatError, match="possible"):
        parse_links("0?1", "test")
