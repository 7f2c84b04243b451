"""word2word bilingual lexicons learnt from the training bitext, and the w2w links they extract.

Chapter 5's word-level contrastive learning (§3.2) aligns words with lexicons built by
word2word's method (Choe et al. 2020). word2word's prebuilt lexicons download at run time and
come from OpenSubtitles, so the lexicon is rebuilt here, offline, from the training corpus the
chapter trains on. It maps source words to target words (one direction: the pair's source is
the lexicon's query side).

Building (`build`), with word2word's counts, which are over token occurrences (a word twice in
a sentence counts twice):

1. c(x) per source word; c(x, y) per source and target word of the same sentence pair; c(x, x')
   per two different source words of the same sentence, x' among the `collocates` most
   frequent source words (ties: code-point order of the word).
2. The `width` targets that co-occur most with x (ties: the word) are re-ranked by the
   controlled predictive effect CPE(y|x) = c(x, y)/c(x) − Σ_x' c(x, x')/c(x) · c(x', y)/c(x'):
   what x's collocates x' predict of y is taken off, so the translation of a word that merely
   comes with x ("new" beside "york") falls below x's own translation, even where plain
   co-occurrence ranks it first.
3. The `translations` best by CPE (ties: co-occurrence, then the word) are x's entries.

The defaults are ``Word2word.make``'s (n_translations 10, rerank_width 100, cutoff 5000).

File format (`save`, `load`): UTF-8 text, one entry per line, ``source<TAB>target<TAB>score``
with the CPE score as Python writes a float (it reads back exactly); a source word's entries
are consecutive, best first, source words in code-point order. Tokens never hold whitespace,
because the tokenized text they come from is split on it.

Extraction (`extract`), per sentence pair: every (source word, target word) the lexicon links
and both sides hold is a candidate link. Links are disjoint (each word in at most one link),
chosen greedily: candidates in descending CPE score (ties: the source position, then the
target position), each kept unless one of its words is already linked. Then phrase merging:
kept links whose source words are consecutive and whose target words are consecutive (in
either order: an inverted pair merges too) join one phrase pair, transitively; with disjoint
links a phrase is a run of consecutive source words facing a run of consecutive target words.

Representation contract: a phrase pair is written as the full cross product of its source
words × target words and a single link as itself, so the connected components of a line's
links are exactly its units, words or phrases. A downstream criterion groups links into units
by connected components (`mlrep.align.units.units`) and must not read a phrase's cross product
as several word pairs.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlrep.align.pharaoh import AlignmentFormatError, Link, read_lines
from mlrep.io import atomic_write_text

Pair = tuple[Sequence[str], Sequence[str]]
# source word -> its entries (target word, CPE score), best first
Lexicon = dict[str, list[tuple[str, float]]]


@dataclass(frozen=True)
class LexiconSettings:
    """word2word's knobs, with ``Word2word.make``'s defaults."""

    translations: int = 10  # n_translations: entries kept per source word
    width: int = 100  # rerank_width: co-occurring candidates re-ranked by CPE
    collocates: int = 5000  # cutoff: the most frequent source words that count as collocates


def build(pairs: Sequence[Pair], settings: LexiconSettings) -> Lexicon:
    """The source-to-target lexicon of a tokenized bitext (module docstring: steps 1-3)."""
    count: Counter[str] = Counter()
    cooccur: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for source, target in pairs:
        count.update(source)
        target_counts = Counter(target)
        for x in source:
            cooccur[x].update(target_counts)
    kept = set(sorted(count, key=lambda word: (-count[word], word))[: settings.collocates])
    collocate: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for source, _ in pairs:
        in_cutoff = Counter(word for word in source if word in kept)
        for x in source:
            collocate[x].update(in_cutoff)
    for x, row in collocate.items():
        del row[x]  # a word is no collocate of itself
    lexicon: Lexicon = {}
    for x in sorted(cooccur):
        candidates = sorted(cooccur[x].items(), key=lambda item: (-item[1], item[0]))
        scored = []
        for y, together in candidates[: settings.width]:
            explained = sum(
                n * cooccur[other][y] / count[other]
                for other, n in collocate[x].items()
                if y in cooccur[other]
            )
            scored.append((y, (together - explained) / count[x], together))
        scored.sort(key=lambda item: (-item[1], -item[2], item[0]))
        if scored:
            lexicon[x] = [(y, score) for y, score, _ in scored[: settings.translations]]
    return lexicon


def save(lexicon: Lexicon, path: Path) -> None:
    """Write `lexicon` in the module's file format, atomically."""
    atomic_write_text(
        path,
        "".join(f"{x}\t{y}\t{score!r}\n" for x in sorted(lexicon) for y, score in lexicon[x]),
    )


def load(path: Path) -> Lexicon:
    """Read a lexicon file; a malformed line is an error naming the file, the line and the fix."""
    lexicon: Lexicon = {}
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split("\t")
        where = f"{path}:{number}"
        fix = "rebuild the lexicon with `mlrep align lexicon` instead of editing it"
        if len(fields) != 3 or any(field.split() != [field] for field in fields[:2]):
            raise AlignmentFormatError(
                f"{where}: expected 'source<TAB>target<TAB>score' (two tokens without spaces "
                f"and a number), found {line!r}; {fix}"
            )
        x, y, text = fields
        try:
            score = float(text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise AlignmentFormatError(f"{where}: score {text!r} is not a finite number; {fix}")
        if (x, y) in seen:
            raise AlignmentFormatError(f"{where}: {x!r} -> {y!r} is listed twice; {fix}")
        seen.add((x, y))
        lexicon.setdefault(x, []).append((y, score))
    return lexicon


def _merge_phrases(links: list[Link]) -> set[Link]:
    """Phrase merging of disjoint links (each word in one link at most): with one link per
    source word, a phrase is a run of consecutive source words whose targets step by ±1."""
    phrases: list[list[Link]] = []
    for i, j in sorted(links):
        if phrases and i == phrases[-1][-1][0] + 1 and abs(j - phrases[-1][-1][1]) == 1:
            phrases[-1].append((i, j))
        else:
            phrases.append([(i, j)])
    return {(i, j) for phrase in phrases for i, _ in phrase for _, j in phrase}


def extract(lexicon: Lexicon, source: Sequence[str], target: Sequence[str]) -> set[Link]:
    """One sentence pair's w2w links: disjoint lexicon links, phrases as cross products."""
    positions: defaultdict[str, list[int]] = defaultdict(list)
    for j, y in enumerate(target):
        positions[y].append(j)
    candidates = sorted(
        (-score, i, j)
        for i, x in enumerate(source)
        for y, score in lexicon.get(x, ())
        for j in positions.get(y, ())
    )
    linked_source: set[int] = set()
    linked_target: set[int] = set()
    links = []
    for _, i, j in candidates:
        if i not in linked_source and j not in linked_target:
            links.append((i, j))
            linked_source.add(i)
            linked_target.add(j)
    return _merge_phrases(links)
