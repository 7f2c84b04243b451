"""Symmetrization of two directional alignments, with the semantics of Moses' ``symal``.

Both inputs are in source-target orientation (``i-j``), as fast_align prints them with and
without ``-r``: `forward` gives each target word at most one source word, `reverse` each
source word at most one target word. grow-diag starts from the intersection and repeatedly
adds union links that neighbour an accepted link and cover a so far unaligned source or target
word; ``final`` then adds remaining links of `forward`, then of `reverse`, that touch an
unaligned word, and ``final-and`` only those whose source and target words are both unaligned.

The order of visits decides which of two competing links covers a word first, so it is pinned
to Moses' (``symal/symal.cpp``, the same as Koehn's grow-diag-final pseudocode with the target
as Koehn's "English" side): each pass visits the accepted links target-major (target word
outer, source word inner, links accepted during the pass included once reached) and tries their
neighbours in the order (Δtarget, Δsource) = (-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1),
(-1, 1), (1, -1), (1, 1); passes repeat until one adds nothing. Only links that share a word
compete, and reading those offsets as (Δsource, Δtarget), or visiting a final step's links
source-major, ranks every such pair alike, so neither choice can change a result; the scan
order can. fast_align's ``atools`` and sil-thot grow differently (they scan the union's
candidate links and accept any with an aligned neighbour) and disagree with Moses on about 7%
of random sentence pairs. ``tests/test_align_symmetrize_score.py`` checks this module against
Koehn's pseudocode on random cases and pins a case where the orders differ.
"""

from __future__ import annotations

from collections.abc import Callable

from mlrep.align.pharaoh import Link

METHODS = ("intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
# Moses' order, as (Δtarget, Δsource): the four direct neighbours first, then the diagonals.
_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def _grow_diag(forward: frozenset[Link], reverse: frozenset[Link]) -> set[Link]:
    union = forward | reverse
    result = set(forward & reverse)
    source_aligned = {i for i, _ in result}
    target_aligned = {j for _, j in result}
    n_source = 1 + max((i for i, _ in union), default=-1)
    n_target = 1 + max((j for _, j in union), default=-1)
    added = True
    while added:
        added = False
        for j in range(n_target):
            for i in range(n_source):
                if (i, j) not in result:
                    continue
                for dj, di in _NEIGHBOURS:
                    link = (i + di, j + dj)
                    if link not in union or link in result:
                        continue
                    if link[0] not in source_aligned or link[1] not in target_aligned:
                        result.add(link)
                        source_aligned.add(link[0])
                        target_aligned.add(link[1])
                        added = True
    return result


def _final(result: set[Link], directional: frozenset[Link], both_unaligned: bool) -> None:
    source_aligned = {i for i, _ in result}
    target_aligned = {j for _, j in result}
    for i, j in sorted(directional):
        if (i, j) in result:
            continue
        new_source, new_target = i not in source_aligned, j not in target_aligned
        if (new_source and new_target) if both_unaligned else (new_source or new_target):
            result.add((i, j))
            source_aligned.add(i)
            target_aligned.add(j)


def symmetrize(method: str, forward: frozenset[Link], reverse: frozenset[Link]) -> set[Link]:
    """Combine one sentence pair's forward and reverse links with `method` (see `METHODS`)."""
    simple: dict[str, Callable[[], set[Link]]] = {
        "intersect": lambda: set(forward & reverse),
        "union": lambda: set(forward | reverse),
        "grow-diag": lambda: _grow_diag(forward, reverse),
    }
    if method in simple:
        return simple[method]()
    if method not in METHODS:
        raise ValueError(f"unknown symmetrization {method!r}; choose one of {', '.join(METHODS)}")
    result = _grow_diag(forward, reverse)
    both = method == "grow-diag-final-and"
    _final(result, forward, both)
    _final(result, reverse, both)
    return result
