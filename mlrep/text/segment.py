"""Word segmentation for Japanese, Chinese, Korean, Burmese and Khmer; Japanese bunsetsu.

Japanese: GiNZA (``ja-ginza``: Sudachi words, a UD parser and GiNZA's rule-based bunsetsu
recognizer) is the default because its model ships inside a PyPI wheel. The thesis used
Juman++ words and KNP bunsetsus; users who have them give their KNP output instead
(`mlrep.text.knp`, ``preprocess.segment.source: knp``) and get the thesis segmentation exactly.
Outputs say which segmenter produced them.
GiNZA's bunsetsu are then moved toward KNP's conventions by the rules of `mlrep.text.bunsetsu`
(``preprocess.segment.knp_rules``, on by default); they change the bunsetsu, never the words.
GiNZA's NER component is excluded: the pipeline runs about 3.7 times faster without it
(45 → 166 sentences/s measured in one process), and it changes bunsetsu on only 2 of 400
tiny-corpus lines, where it fuses a named entity with its neighbours into one bunsetsu
("ゼロ/その他" as one), which KNP does not do.

Burmese and Khmer, which Moses breaks, are tokenized by rule (`mlrep.text.scripts`).

Bunsetsu are written as token spans ``start:end`` (end exclusive) over the words line, so
any token, including ``|`` or ``:``, stays unambiguous.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from importlib import metadata
from itertools import pairwise
from typing import Any

from mlrep.text import bunsetsu, scripts

SEGMENTERS = {
    "ja": "ginza",
    "zh": "jieba",
    "ko": "kiwi",
    "my": "Burmese syllables",
    "km": "Khmer words",
}
_PACKAGES = {"ja": "ja-ginza", "zh": "jieba", "ko": "kiwipiepy"}
_BATCH = 64


@dataclass(frozen=True)
class Segmented:
    """One sentence: its words and (Japanese only) its bunsetsu as word-index spans."""

    words: tuple[str, ...]
    bunsetsu: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SegmentSettings:
    """params.yaml ``preprocess.segment``: the options of ``mlrep text segment``."""

    knp_rules: bool = field(
        metadata={"help": "ja: move GiNZA's bunsetsu toward KNP's (mlrep.text.bunsetsu)"}
    )


def tool_version(lang: str, knp_rules: bool = False) -> str:
    """The segmenter of `lang`'s words; with `knp_rules` (Japanese), also the version of the
    bunsetsu rules, so a bunsetsu file made by other rules names other ones."""
    if lang not in _PACKAGES:
        return f"{SEGMENTERS[lang]} (rules, mlrep.text.scripts)"
    package = _PACKAGES[lang]
    tool = f"{SEGMENTERS[lang]} ({package} {metadata.version(package)})"
    return f"{tool} + {bunsetsu.version()}" if lang == "ja" and knp_rules else tool


@lru_cache(maxsize=1)
def _ginza() -> Any:
    import spacy

    return spacy.load("ja_ginza", exclude=["ner"])


def _clean(token: str) -> str:
    """Tokens never contain spaces in the output (they separate tokens)."""
    return "".join(token.split())


def japanese(lines: Iterable[str], knp_rules: bool = True) -> list[Segmented]:
    """GiNZA's words and bunsetsu, the bunsetsu after `bunsetsu.RULES` with `knp_rules`."""
    import ginza

    out = []
    for doc in _ginza().pipe(lines, batch_size=_BATCH):
        index: dict[int, int] = {}
        words: list[str] = []
        for token in doc:
            text = _clean(token.text)
            if text:
                index[token.i] = len(words)
                words.append(text)
        starts = frozenset(span.start for span in ginza.bunsetu_spans(doc))
        if knp_rules:
            starts = bunsetsu.apply(list(doc), starts)
        spans = []
        for start, end in pairwise([*sorted(starts), len(doc)]):
            kept = [index[i] for i in range(start, end) if i in index]
            if kept:
                spans.append((kept[0], kept[-1] + 1))
        out.append(Segmented(tuple(words), tuple(spans)))
    return out


def chinese(lines: Iterable[str]) -> list[Segmented]:
    import jieba

    jieba.setLogLevel(60)  # its dictionary-loading banner goes to stderr otherwise
    return [
        Segmented(tuple(w for w in (_clean(t) for t in jieba.lcut(line)) if w)) for line in lines
    ]


@lru_cache(maxsize=1)
def _kiwi() -> Any:
    from kiwipiepy import Kiwi

    return Kiwi()


def korean(lines: Iterable[str]) -> list[Segmented]:
    """Kiwi morpheme boundaries on the surface text.

    Kiwi restores morphemes (시 + ㄴ다 from 신다) whose spans can overlap; a cut is kept only
    where no morpheme straddles it, so the words always concatenate back to the line.
    """
    out = []
    for line in lines:
        spans = [(t.start, t.start + t.len) for t in _kiwi().tokenize(line)]
        cuts = {edge for span in spans for edge in span} | {0, len(line)}
        cuts = {c for c in cuts if not any(a < c < b for a, b in spans)}
        words = []
        for start, end in pairwise(sorted(cuts)):
            words.extend(line[start:end].split())
        out.append(Segmented(tuple(words)))
    return out


def by_rule(tokenize: Callable[[str], list[str]]) -> Callable[[Iterable[str]], list[Segmented]]:
    return lambda lines: [Segmented(tuple(tokenize(line))) for line in lines]


def segment(lines: list[str], lang: str, knp_rules: bool = True) -> list[Segmented]:
    """Segment `lines` with the language's segmenter (`SEGMENTERS`); `knp_rules`: Japanese
    bunsetsu after `mlrep.text.bunsetsu`'s rules."""
    segmenters = {
        "ja": partial(japanese, knp_rules=knp_rules),
        "zh": chinese,
        "ko": korean,
        "my": by_rule(scripts.burmese),
        "km": by_rule(scripts.khmer),
    }
    return segmenters[lang](lines)


def format_spans(spans: Iterable[tuple[int, int]]) -> str:
    return " ".join(f"{start}:{end}" for start, end in spans)


def parse_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for item in text.split():
        start, end = item.split(":")
        spans.append((int(start), int(end)))
    return spans
