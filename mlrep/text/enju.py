"""Reader for Enju's XML output (``enju -xml``) into the trees of `mlrep.text.tree`.

Users who have Enju get the thesis's HPSG trees exactly: each ``<sentence>`` holds nested
``<cons head="…">`` elements over ``<tok>`` leaves; the ``head`` attribute names the head
daughter. Unary ``cons`` are collapsed. Coordination is recognised by Enju's ``coord_*``
schema names (Isozaki et al. do not reorder it), and a ``tok`` whose ``pos`` is punctuation
is never moved, as in the spaCy substitute. A sentence Enju failed to parse
(``parse_status`` other than ``success``, or no ``cons``) yields its words and no tree.

Verb arguments for Isozaki's pseudo-particles come from Enju's predicate-argument attributes:
a ``tok`` whose ``pred`` is a verb predicate (``verb_arg12`` …) points with ``arg1`` (subject)
and ``arg2`` (object) at the ``cons`` (or ``tok``: its maximal projection) of the argument.
The sentence head is reached from the root along ``sem_head``, which passes auxiliaries to
the content verb, so "has approved" marks the subject of "approved" with ``va0``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from mlrep.text.head_final import OBJECT, SENTENCE_SUBJECT, SUBJECT, Argument, unique
from mlrep.text.lines import TextInputError
from mlrep.text.tree import Cons, Node, Tok

_DECLARATION = re.compile(r"<\?xml[^>]*\?>")
PUNCTUATION_POS = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "#", "$"})


class Parsed(NamedTuple):
    """One sentence: its words, its tree (None when Enju failed) and verb arguments."""

    words: list[str]
    tree: Node | None
    arguments: list[Argument]


def _convert(element: ET.Element, position: dict[int, int], path: Path) -> Node:
    if element.tag == "tok":
        return Tok(position[id(element)])
    children = [child for child in element if child.tag in ("cons", "tok")]
    if len(children) == 1:
        return _convert(children[0], position, path)
    if len(children) != 2:
        raise TextInputError(
            f"{path}: cons {element.get('id')} has {len(children)} daughters; Enju trees are "
            "binary: is this Enju's XML output (enju -xml)?"
        )
    left, right = children
    head = element.get("head")
    head_left = head == left.get("id")
    if not head_left and head != right.get("id"):
        raise TextInputError(f"{path}: cons {element.get('id')} names no daughter as head")
    sibling = right if head_left else left
    return Cons(
        _convert(left, position, path),
        _convert(right, position, path),
        head_left=head_left,
        coordination=(element.get("schema") or "").startswith("coord"),
        punctuation=sibling.tag == "tok" and sibling.get("pos") in PUNCTUATION_POS,
    )


def _arguments(sentence: ET.Element, top: ET.Element, position: dict[int, int]) -> list[Argument]:
    """Subjects (``arg1``) and objects (``arg2``) of the sentence's verb predicates."""
    by_id = {e.get("id"): e for e in sentence.iter() if e.tag in ("cons", "tok")}
    parent = {id(child): e for e in sentence.iter() for child in e}
    head, seen = top, set()
    while head.tag == "cons" and id(head) not in seen:  # a malformed loop ends here
        seen.add(id(head))
        head = by_id.get(head.get("sem_head") or head.get("head"), head)

    def phrase(element: ET.Element) -> list[int]:
        """Word indices of the largest phrase `element` heads (itself for a maximal one)."""
        while (up := parent.get(id(element))) is not None and up.get("head") == element.get("id"):
            element = up
        return [position[id(tok)] for tok in element.iter("tok")]

    found = []
    for tok in sentence.iter("tok"):
        if not (tok.get("pred") or "").startswith("verb"):
            continue
        roles = (("arg1", SENTENCE_SUBJECT if tok is head else SUBJECT), ("arg2", OBJECT))
        for attribute, particle in roles:
            target = by_id.get(tok.get(attribute))
            words = phrase(target) if target is not None else []
            if words:
                found.append(Argument(min(words), max(words) + 1, particle))
    return unique(found)


def read_enju(path: Path) -> Iterator[Parsed]:
    """Words, tree and verb arguments per sentence of an Enju XML file (one
    ``<sentence>`` per line or a document wrapping them)."""
    try:
        text = _DECLARATION.sub("", path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise TextInputError(f"{path}: invalid UTF-8 at byte {exc.start}") from None
    try:
        root = ET.fromstring(f"<enju>{text}</enju>")
    except ET.ParseError as exc:
        raise TextInputError(f"{path}: not well-formed XML ({exc})") from None
    for sentence in root.iter("sentence"):
        toks = list(sentence.iter("tok"))
        words = ["".join(tok.itertext()).strip() for tok in toks]
        position = {id(tok): i for i, tok in enumerate(toks)}
        top = [child for child in sentence if child.tag in ("cons", "tok")]
        if sentence.get("parse_status", "success") != "success" or len(top) != 1:
            yield Parsed(words, None, [])
            continue
        tree = _convert(top[0], position, path)
        yield Parsed(words, tree, _arguments(sentence, top[0], position))
