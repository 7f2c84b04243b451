"""Binary head-annotated phrase trees (Enju's ``cons``/``tok`` shape), head finalization, PMASS.

Chapter 4 works on Enju HPSG trees: binary ``cons`` nodes, each with one head daughter, over
``tok`` leaves. `Tok` and `Cons` mirror that shape; `mlrep.text.enju` reads real Enju XML into
it and `mlrep.text.english` builds it from a dependency parse, so head finalization (HFSS)
and the phrase spans of PMASS (thesis Appendix B, Algorithms 1 and 2) run on either.

Unary ``cons`` nodes carry no order or span information and are collapsed on reading.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Union

from mlrep.text.lines import TextInputError


@dataclass(frozen=True)
class Tok:
    index: int  # position in the sentence's words


@dataclass(frozen=True)
class Cons:
    left: Node
    right: Node
    head_left: bool  # the head daughter is the left one
    coordination: bool = False  # Isozaki et al. (2010) do not reorder coordination
    punctuation: bool = False  # the non-head daughter is punctuation: kept in place


Node = Union[Tok, Cons]  # noqa: UP007 (the alias must work at runtime for dataclass fields)


def leaves(node: Node) -> list[int]:
    """Word indices under `node`, left to right."""
    if isinstance(node, Tok):
        return [node.index]
    return leaves(node.left) + leaves(node.right)


def size(node: Node) -> int:
    return 1 if isinstance(node, Tok) else size(node.left) + size(node.right)


def head_final_order(node: Node) -> list[int]:
    """Word order after head finalization (Isozaki et al. 2010, as the thesis applies it).

    At every binary node the head daughter moves after its sibling, except in coordination
    and where the sibling is punctuation. Words are kept 1:1, as the thesis's HFSS reorders
    only; Isozaki's article dropping and pseudo-particles are `mlrep.text.head_final`'s
    switches on top of this order.
    """
    if isinstance(node, Tok):
        return [node.index]
    left, right = head_final_order(node.left), head_final_order(node.right)
    if node.head_left and not (node.coordination or node.punctuation):
        return right + left
    return left + right


def pmass_single(tree: Node) -> list[int]:
    """Algorithm 1 (PMASS.S): the one phrase of at most L//2 words, found by descending
    into the larger daughter (the right one on ties) from the root."""
    budget = size(tree) // 2
    node = tree
    while size(node) > budget and isinstance(node, Cons):
        node = node.left if size(node.left) > size(node.right) else node.right
    return leaves(node) if size(node) <= budget else []


def pmass_plural(tree: Node, rng: random.Random) -> list[int]:
    """Algorithm 2 (PMASS.P): several whole phrases, about L//2 words in total."""
    budget = size(tree) // 2
    masked: list[int] = []

    def visit(node: Node, used: int) -> None:
        if isinstance(node, Tok):
            if budget - used > 0:
                masked.append(node.index)
            return
        left_size, right_size = size(node.left), size(node.right)
        if left_size == 1 and right_size == 1:
            if budget - used > 1:
                masked.extend(leaves(node))
            return
        if budget <= used:
            return
        room = budget - used
        if left_size <= room < right_size:
            if rng.random() < 0.5:
                masked.extend(leaves(node.left))
                used += left_size
            visit(node.right, used)
        elif right_size <= room < left_size:
            if rng.random() < 0.5:
                masked.extend(leaves(node.right))
                used += right_size
            visit(node.left, used)
        elif left_size > room and right_size > room:
            visit(node.left if rng.random() < 0.5 else node.right, used)
        else:
            masked.extend(leaves(node.left))
            visit(node.right, used + left_size)

    visit(tree, 0)
    return sorted(masked)


def to_json(node: Node) -> Any:
    """Compact JSON form: a leaf is its word index, a cons ``[left, right, flags]`` with flags
    a string of ``h`` (head left) or ``H`` (head right), plus ``c`` (coordination) and ``p``
    (punctuation sibling)."""
    if isinstance(node, Tok):
        return node.index
    flags = ("h" if node.head_left else "H") + ("c" if node.coordination else "")
    flags += "p" if node.punctuation else ""
    return [to_json(node.left), to_json(node.right), flags]


def from_json(data: Any) -> Node:
    if isinstance(data, int):
        return Tok(data)
    if not (isinstance(data, list) and len(data) == 3 and isinstance(data[2], str)):
        raise TextInputError(f"not a tree node: {json.dumps(data)[:80]}")
    flags = data[2]
    return Cons(
        from_json(data[0]),
        from_json(data[1]),
        head_left="h" in flags,
        coordination="c" in flags,
        punctuation="p" in flags,
    )


def bracketed(node: Node, words: list[str]) -> str:
    """Human-readable form with the head daughter starred, e.g. ``((the committee*) …)*``."""

    def show(n: Node) -> str:
        if isinstance(n, Tok):
            return words[n.index]
        left, right = show(n.left), show(n.right)
        return f"({left}* {right})" if n.head_left else f"({left} {right}*)"

    return show(node)
