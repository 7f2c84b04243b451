"""A line's links as units (words or phrases), and the 1-to-1 filter of Chapter 5's FA links.

A unit is a connected component of the bipartite graph whose nodes are one sentence pair's
source and target words and whose edges are its links. Chapter 5's word-level contrastive
learning (§3.2) contrasts units, and Table 5.1 counts them (N, alignments per sentence), so
every alignment that feeds it is written so that its units are exactly what it means: a w2w
phrase pair is the full cross product of its words (`mlrep.align.lexicon`), a 1-to-1 link is
a unit on its own. A symmetrized fast_align run's many-to-many clusters are units too, which
is why its stats count them beside its links.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from mlrep.align.pharaoh import Link

Unit = tuple[tuple[int, ...], tuple[int, ...]]


def units(links: Iterable[Link]) -> list[Unit]:
    """The connected components of one line's links as (source words, target words), each
    side ascending, units ordered by their first source word."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def root(node: tuple[str, int]) -> tuple[str, int]:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for i, j in links:
        parent[root(("s", i))] = root(("t", j))
    members: dict[tuple[str, int], tuple[set[int], set[int]]] = {}
    for node in list(parent):
        side, index = node
        group = members.setdefault(root(node), (set(), set()))
        group[0 if side == "s" else 1].add(index)
    return sorted((tuple(sorted(s)), tuple(sorted(t))) for s, t in members.values())


def one_to_one(links: Iterable[Link]) -> set[Link]:
    """The links whose source word and target word have no other link (units of one link):
    Chapter 5's "FA, 1-to-1 only" alignments, read from a symmetrized run."""
    links = set(links)
    source = Counter(i for i, _ in links)
    target = Counter(j for _, j in links)
    return {(i, j) for i, j in links if source[i] == 1 and target[j] == 1}
