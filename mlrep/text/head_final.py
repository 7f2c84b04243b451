"""Head finalization (Isozaki et al. 2010) with its two optional lexical steps.

The thesis's HFSS reorders only, words 1:1 (`mlrep.text.tree.head_final_order`). Isozaki's
full method, built to make English look like Japanese for SMT, also

* drops the articles *a*, *an* and *the* (Japanese has none), and
* inserts pseudo-particles after verb arguments, as Japanese marks them with は/が/を:
  ``va0`` after the subject of the sentence head, ``va1`` after the subject of any other
  verb, ``va2`` after the object of a verb.

Both are switches (``preprocess.head_final``), off by default, so the thesis setting stays
the default and the full method is one flag away. The arguments come from the parser: Enju's
predicate-argument attributes (`mlrep.text.enju`) or the dependency labels of the spaCy
substitute (`mlrep.text.english`); each is a contiguous span of the sentence's words, so in
head-final order it is still contiguous and its particle follows its last word there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlrep.text.lines import TextInputError
from mlrep.text.tree import Node, head_final_order

ARTICLES = frozenset({"a", "an", "the"})
SENTENCE_SUBJECT, SUBJECT, OBJECT = "va0", "va1", "va2"
PARTICLES = (SENTENCE_SUBJECT, SUBJECT, OBJECT)  # also their priority on one span


@dataclass(frozen=True)
class HeadFinalSettings:
    """params.yaml ``preprocess.head_final``: the options of ``mlrep text head-final``."""

    drop_articles: bool = field(metadata={"help": "drop a/an/the (Isozaki et al.)"})
    pseudo_particles: bool = field(metadata={"help": "insert va0/va1/va2 after arguments"})


@dataclass(frozen=True)
class Argument:
    """Words ``start:end`` (end exclusive) are an argument marked by `particle`."""

    start: int
    end: int
    particle: str


def arguments_to_json(arguments: Iterable[Argument]) -> list[list[Any]]:
    return [[a.start, a.end, a.particle] for a in arguments]


def arguments_from_json(data: Any) -> list[Argument]:
    """The ``args`` field of a parse line (absent in lines made before it existed: none)."""
    if data is None:
        return []
    try:
        out = [Argument(int(s), int(e), str(p)) for s, e, p in data]
    except (TypeError, ValueError):
        raise TextInputError(f"not an argument list: {str(data)[:80]}") from None
    if any(a.particle not in PARTICLES or not 0 <= a.start < a.end for a in out):
        raise TextInputError(f"not an argument list: {str(data)[:80]}")
    return out


def unique(arguments: Iterable[Argument]) -> list[Argument]:
    """One particle per span: a shared subject (``John wants to go``) is the sentence
    subject's ``va0`` rather than also ``va1``; sorted for a stable output."""
    best: dict[tuple[int, int], str] = {}
    for arg in arguments:
        span = (arg.start, arg.end)
        if span not in best or PARTICLES.index(arg.particle) < PARTICLES.index(best[span]):
            best[span] = arg.particle
    return [Argument(s, e, p) for (s, e), p in sorted(best.items())]


def head_finalize(
    words: Sequence[str],
    tree: Node | None,
    arguments: Iterable[Argument] = (),
    drop_articles: bool = False,
    pseudo_particles: bool = False,
) -> list[str]:
    """The head-finalized sentence; without a tree the words keep their order (the optional
    steps still apply: they need no tree)."""
    order = head_final_order(tree) if tree is not None else list(range(len(words)))
    position = {index: at for at, index in enumerate(order)}
    after: dict[int, list[str]] = {}
    if pseudo_particles:
        for arg in unique(arguments):
            span = [position[i] for i in range(arg.start, arg.end) if i in position]
            if span:
                after.setdefault(max(span), []).append(arg.particle)
    out: list[str] = []
    for at, index in enumerate(order):
        if not (drop_articles and words[index].lower() in ARTICLES):
            out.append(words[index])
        out.extend(sorted(after.get(at, [])))
    return out
