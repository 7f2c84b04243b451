"""Alignment error rate, precision and recall against gold with sure and possible links.

Och & Ney (2003): with test links A, sure S and possible P (S ⊆ P), precision = |A∩P|/|A|,
recall = |A∩S|/|S| and AER = 1 − (|A∩S| + |A∩P|)/(|A| + |S|), summed over the corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from mlrep.align.pharaoh import GoldLine, Link
from mlrep.errors import MlrepError


class ScoreError(MlrepError):
    """Gold and test alignments that cannot be compared."""


@dataclass(frozen=True)
class Scores:
    aer: float
    precision: float
    recall: float
    sentences: int
    test_links: int
    sure_links: int
    possible_links: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def score(gold: Sequence[GoldLine], test: Sequence[frozenset[Link]]) -> Scores:
    if len(gold) != len(test):
        raise ScoreError(
            f"gold has {len(gold)} sentence pairs but test has {len(test)}: score alignments "
            "of the same corpus (one line per sentence pair, empty lines included)"
        )
    a = s = p = a_s = a_p = 0
    for g, t in zip(gold, test, strict=True):
        possible = g.possible | g.sure
        a += len(t)
        s += len(g.sure)
        p += len(possible)
        a_s += len(t & g.sure)
        a_p += len(t & possible)
    if a + s == 0:
        raise ScoreError("gold and test are both empty: nothing to score")
    return Scores(
        aer=1 - (a_s + a_p) / (a + s),
        precision=a_p / a if a else 0.0,
        recall=a_s / s if s else 0.0,
        sentences=len(gold),
        test_links=a,
        sure_links=s,
        possible_links=p,
    )
