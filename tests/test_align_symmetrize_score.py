"""Symmetrization (Moses' semantics) against Koehn's pseudocode on random cases, the case where
atools/sil-thot differ, and AER on hand-made cases."""

import random

import pytest
from thot.common import WordAlignmentMatrix

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


def fast_align_pair(rng: random.Random) -> tuple[int, int, frozenset, frozenset]:
    """Random sentence lengths and the two directions' shapes: forward gives each target word
    at most one source word, reverse each source word at most one target word."""
    n, m = rng.randint(1, 7), rng.randint(1, 7)
    forward = frozenset((rng.randrange(n), j) for j in range(m) if rng.random() < 0.8)
    reverse = frozenset((i, rng.randrange(m)) for i in range(n) if rng.random() < 0.8)
    return n, m, forward, reverse


def thot(method: str, n: int, m: int, forward: frozenset, reverse: frozenset) -> set:
    """sil-thot's WordAlignmentMatrix symmetrization (atools' growing procedure)."""
    matrix, other = WordAlignmentMatrix(n, m), WordAlignmentMatrix(n, m)
    for i, j in forward:
        matrix.set(i, j)
    for i, j in reverse:
        other.set(i, j)
    getattr(matrix, method.replace("-", "_"))(other)
    rows, cols = matrix.to_numpy().nonzero()
    return {(int(i), int(j)) for i, j in zip(rows, cols, strict=True)}


def test_methods_are_ordered_by_inclusion_on_random_cases():
    rng = random.Random(0)
    for _ in range(500):
        n, m, forward, reverse = fast_align_pair(rng)
        out = {method: symmetrize(method, forward, reverse) for method in METHODS}
        assert out["intersect"] <= out["grow-diag"] <= out["grow-diag-final-and"]
        assert out["grow-diag-final-and"] <= out["grow-diag-final"] <= out["union"]
        # An independent implementation (sil-thot) agrees on the order-free methods.
        for method in ("intersect", "union"):
            assert thot(method, n, m, forward, reverse) == out[method]


# Koehn's pseudocode (Statistical Machine Translation, 2010, ch. 4; the Moses manual's
# "grow-diag-final"), in its own coordinates: points (e, f) with e the English side, which is
# the target (Moses translates foreign → English; symal.cpp stores points as (target, source)).
KOEHN_NEIGHBOURING = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def koehn(method: str, n: int, m: int, forward: frozenset, reverse: frozenset) -> set:
    """GROW-DIAG(); FINAL(e2f); FINAL(f2e), literally: `forward` (one source word per target
    word) is symal's inverse alignment, whose links its final step adds first."""
    e2f = {(j, i) for i, j in forward}
    f2e = {(j, i) for i, j in reverse}
    alignment = e2f & f2e
    union = e2f | f2e

    def e_aligned(e: int) -> bool:
        return any(a == e for a, _ in alignment)

    def f_aligned(f: int) -> bool:
        return any(b == f for _, b in alignment)

    new_points = True
    while new_points:  # iterate until no new points added
        new_points = False
        for e in range(m):
            for f in range(n):
                if (e, f) in alignment:
                    for de, df in KOEHN_NEIGHBOURING:
                        e_new, f_new = e + de, f + df
                        unaligned = not e_aligned(e_new) or not f_aligned(f_new)
                        if unaligned and (e_new, f_new) in union:
                            alignment.add((e_new, f_new))
                            new_points = True
    if method != "grow-diag":
        for a in (e2f, f2e):
            for e_new in range(m):
                for f_new in range(n):
                    if method == "grow-diag-final-and":
                        free = not e_aligned(e_new) and not f_aligned(f_new)
                    else:
                        free = not e_aligned(e_new) or not f_aligned(f_new)
                    if free and (e_new, f_new) in a:
                        alignment.add((e_new, f_new))
    return {(f, e) for e, f in alignment}


@pytest.mark.parametrize("method", ["grow-diag", "grow-diag-final", "grow-diag-final-and"])
def test_growing_methods_follow_koehns_pseudocode_on_random_cases(method):
    rng = random.Random(1)
    for case in range(600):
        n, m, forward, reverse = fast_align_pair(rng)
        if case % 2:  # also any two link sets, not only fast_align's shapes
            forward = frozenset((i, j) for i in range(n) for j in range(m) if rng.random() < 0.3)
            reverse = frozenset((i, j) for i in range(n) for j in range(m) if rng.random() < 0.3)
        expected = koehn(method, n, m, forward, reverse)
        assert symmetrize(method, forward, reverse) == expected, (n, m, forward, reverse)


# Target-major visits add (0, 0) (a diagonal neighbour of (1, 1), covering source 0) before
# (0, 2) is reached; a source-major scan adds (0, 2) first, and then (0, 0) covers nothing new.
# atools and sil-thot scan the union's candidates instead and also drop (0, 0).
ORDER_FORWARD = frozenset({(0, 2), (1, 1), (1, 3), (2, 0)})
ORDER_REVERSE = frozenset({(0, 0), (1, 3), (2, 0), (3, 0)})


def test_visit_order_is_moses_not_atools():
    moses = {(0, 0), (0, 2), (1, 1), (1, 3), (2, 0), (3, 0)}
    assert symmetrize("grow-diag", ORDER_FORWARD, ORDER_REVERSE) == moses
    assert koehn("grow-diag", 4, 4, ORDER_FORWARD, ORDER_REVERSE) == moses
    assert thot("grow-diag", 4, 4, ORDER_FORWARD, ORDER_REVERSE) == moses - {(0, 0)}


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
