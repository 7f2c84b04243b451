"""mRASP2's Aligned Augmentation (AA, §3.2): dictionary substitution of source words.

AA turns a sentence x into C(x): each word that a dictionary lists is replaced, with
probability p (0.9 in the paper), by one of its translations chosen uniformly; other words stay.
A parallel pair (x_i, x_j) becomes the pseudo-parallel pair (C(x_i), x_j) and a monolingual
sentence x the self-parallel pair (C(x), x). Either way only the source side changes, so the
substitution writes one output line per input line and the pair is made by choosing the target
file: the original target (parallel) or the input itself (monolingual).

Dictionaries (each maps a word to its translations; a word is one whitespace-free token, so
multi-word entries cannot occur in any of the formats below and are not handled):

- MUSE bilingual dictionaries (Lample et al. 2018): one ``source target`` pair a line, split on
  whitespace; a source with several translations has several lines (`read_muse`).
- mRASP2's released multilingual synonym dictionaries (``synonym_dict_raw_dep1/2/3``), read as
  mRASP's RAS script reads the files its word-graph script writes: one headword a line,
  ``XX__word`` followed by tab-separated ``YY__translation__d`` fields, XX and YY two-letter
  language codes and d the path length (1-9) from the headword in the graph of MUSE pairs
  (`read_synonyms`). The released files themselves (1.6-2.2 GB) were not inspected here: the
  format is that of the scripts, not confirmed on the files.
- A dictionary induced from the project's own word alignments (`induce`), for scales without
  MUSE, written in the MUSE format (`write_muse`); several of them (or MUSE files) make a
  synonym dictionary as mRASP's word graph makes the release's (`synonym_graph`).

A dictionary's translations keep their file order and may repeat a word: a repeat weighs it
(`read_synonyms` weighs shorter paths this way, as mRASP does).

Several dictionaries (one per replacement language, MUSE's en-de, en-fr, …) are used in one of
two ways (`augment`'s `per`), the two of mRASP's released RAS scripts:

- ``sentence``: each line draws one dictionary uniformly and substitutes from it only, as
  mRASP's ``replace_word.py`` does with its en-X MUSE dictionaries (one language per copy of a
  sentence), so a line is code-switched into one other language;
- ``word``: the dictionaries are pooled (`merge`) and each word draws among all their
  translations, as mRASP's ``replace_word_w_multi.py`` does with the multilingual synonym
  dictionary, the script the mRASP2 release names for its RAS and AA data: a line mixes
  languages (the paper's Figure 6), and a language with more translations of a word is drawn
  more often.

mRASP's RAS (the paper's S2 system) and mRASP2's AA differ only in data and settings, not in
code: RAS runs on parallel text, AA on parallel and monolingual text. mRASP2 states p = 0.9
for its AA (mRASP's scripts default to 0.15).
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mlrep.align.bitext import read_token_pairs
from mlrep.align.pharaoh import Link, read_alignments
from mlrep.align.units import one_to_one
from mlrep.io import atomic_write_text
from mlrep.text.lines import TextInputError, read_lines

Dictionary = dict[str, list[str]]
Per = Literal["sentence", "word"]  # what draws a replacement language (module docstring)

_CODE = re.compile(r"[A-Za-z]{2}")
_HEAD = re.compile(r"^([A-Za-z]{2})__(\S+)$")
_ENTRY = re.compile(r"^([A-Za-z]{2})__(\S+)__([1-9])$")


def read_muse(path: Path) -> Dictionary:
    """A MUSE dictionary; blank lines are skipped and a repeated pair counts once, so a pair
    listed twice (files concatenated) does not weigh its translation in the draw."""
    dictionary: Dictionary = {}
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise TextInputError(
                f"{path}:{number}: expected 'source target' (two words split by whitespace), "
                f"found {len(fields)} fields in {line!r}; fix or remove the line"
            )
        pair = (fields[0], fields[1])
        if pair not in seen:
            seen.add(pair)
            dictionary.setdefault(pair[0], []).append(pair[1])
    return dictionary


def read_synonyms(
    path: Path, lang: str, targets: Iterable[str] | None = None, max_depth: int = 1
) -> Dictionary:
    """The headwords of language `lang` in an mRASP synonym dictionary, each with its entries
    in the languages `targets` (all when None) within `max_depth` steps of the graph.

    An entry at depth d is listed 2^(max_depth - d) times, so substitution picks nearer
    synonyms more often, as mRASP's RAS does (with its default max depth 1, uniformly).
    Headwords left with no entry are left out: they have nothing to be replaced by. Every
    line is checked, those of other languages too: a malformed file is refused whatever `lang`.
    """
    wanted = None if targets is None else {t.lower() for t in targets}
    dictionary: Dictionary = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        head, *entries = line.split("\t")
        found = _HEAD.match(head)
        if not found:
            raise TextInputError(
                f"{path}:{number}: the headword {head!r} is not 'XX__word' (a two-letter "
                "language code, '__', a word without spaces); fix or remove the line"
            )
        candidates = []
        for entry in entries:
            match = _ENTRY.match(entry)
            if not match:
                raise TextInputError(
                    f"{path}:{number}: the entry {entry!r} is not 'YY__word__d' (language "
                    "code, word, depth 1-9), fields split by tabs; fix or remove the entry"
                )
            language, word, depth = match.group(1).lower(), match.group(2), int(match.group(3))
            if depth <= max_depth and (wanted is None or language in wanted):
                candidates += [word] * 2 ** (max_depth - depth)
        if candidates and found.group(1).lower() == lang.lower():
            dictionary.setdefault(found.group(2), []).extend(candidates)
    return dictionary


def induce(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    links: Sequence[frozenset[Link]],
    min_count: int,
    top: int,
    min_prob: float = 0.0,
) -> Dictionary:
    """A dictionary from a tokenized bitext and its Pharaoh links: each 1-to-1 link (neither
    word has another link in its sentence) counts its word pair; a pair is kept when it was
    linked at least `min_count` times and p(t|s), its count over all 1-to-1 links of the source
    word, is at least `min_prob`; the `top` most frequent are kept per source word (ties: the
    word).

    Only 1-to-1 links count because a word linked to several words is part of a phrase, and AA
    substitutes single words. The count threshold drops one-off alignment errors; p(t|s) drops
    a frequent word's rare wrong partners, which a count alone keeps (a word linked 1,000 times
    has many pairs seen twice). `pairs` and `links` are line-aligned, as `read_aligned` gives
    them.
    """
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for (source, target), line in zip(pairs, links, strict=True):
        for i, j in one_to_one(line):
            counts[source[i]][target[j]] += 1
    dictionary: Dictionary = {}
    for word in sorted(counts):
        total = counts[word].total()
        kept = sorted(
            (
                (translation, n)
                for translation, n in counts[word].items()
                if n >= min_count and n / total >= min_prob
            ),
            key=lambda item: (-item[1], item[0]),
        )
        if kept:
            dictionary[word] = [translation for translation, _ in kept[:top]]
    return dictionary


def read_aligned(
    source: Path, target: Path, alignment: Path
) -> tuple[list[tuple[list[str], list[str]]], list[frozenset[Link]]]:
    """The token pairs of two line-aligned token files and their Pharaoh links (``i-j``: source
    word i, target word j), every link inside its line's words."""
    pairs = read_token_pairs(source, target)
    links = read_alignments(alignment)
    if len(links) != len(pairs):
        raise TextInputError(
            f"{alignment} has {len(links)} lines for {len(pairs)} sentence pairs in {source}; "
            "align this bitext (`mlrep align …`) to get one line of links per pair"
        )
    for number, ((left, right), line) in enumerate(zip(pairs, links, strict=True), start=1):
        for i, j in line:
            if i >= len(left) or j >= len(right):
                raise TextInputError(
                    f"{alignment}:{number}: link {i}-{j} is outside the line's {len(left)} "
                    f"source and {len(right)} target words; the links belong to another "
                    "tokenization: align these token files"
                )
    return pairs, links


def synonym_graph(dictionaries: Mapping[tuple[str, str], Dictionary], max_depth: int) -> list[str]:
    """The lines of a multilingual synonym dictionary (`read_synonyms`' format) built from
    bilingual ones keyed by (source, target) language, as mRASP's ``multi_way_word_graph.py``
    builds ``synonym_dict_raw_dep<d>`` from MUSE: each pair is an edge between ``SRC__word``
    and ``TGT__translation`` (upper-case codes), and each word's line lists every word within
    `max_depth` edges with its distance, so words of a third language (and same-language
    synonyms) come in through a shared translation. Built from induced dictionaries, it stands
    in for the release's files where they are not used (the tiny scale). Words come in order
    of first appearance and entries by distance, then spelling (mRASP's order is a set's)."""
    if not 1 <= max_depth <= 9:
        raise TextInputError(f"a synonym graph of depth {max_depth}: the format has 1 to 9")
    codes = sorted({code for pair in dictionaries for code in pair})
    if not all(_CODE.fullmatch(code) for code in codes):
        raise TextInputError(
            f"language codes {codes}: the synonym format has two-letter codes (en, de); name "
            "the dictionaries by their two-letter codes"
        )
    neighbours: dict[str, set[str]] = {}
    for (src, tgt), dictionary in dictionaries.items():
        for word, translations in dictionary.items():
            for translation in translations:
                a, b = f"{src.upper()}__{word}", f"{tgt.upper()}__{translation}"
                neighbours.setdefault(a, set()).add(b)
                neighbours.setdefault(b, set()).add(a)
    lines = []
    for vertex in neighbours:
        depth = {vertex: 0}
        frontier = {vertex}
        for distance in range(1, max_depth + 1):
            frontier = {n for v in frontier for n in neighbours[v] if n not in depth}
            depth |= dict.fromkeys(frontier, distance)
        entries = sorted((d, word) for word, d in depth.items() if d)
        lines.append("\t".join([vertex, *(f"{word}__{d}" for d, word in entries)]))
    return lines


def write_muse(dictionary: Dictionary, path: Path) -> None:
    """Write `dictionary` as a MUSE file (source words in code-point order), atomically."""
    atomic_write_text(
        path, "".join(f"{word} {t}\n" for word in sorted(dictionary) for t in dictionary[word])
    )


def substitute(
    tokens: Sequence[str], dictionary: Dictionary, p: float, rng: random.Random
) -> tuple[list[str], int]:
    """C(tokens) and the number of words replaced: each word in `dictionary` is replaced with
    probability `p` by one of its translations, uniformly. `rng` draws only for dictionary
    words, so a seed fixes the output for a given text and dictionary."""
    out, replaced = [], 0
    for token in tokens:
        translations = dictionary.get(token)
        if translations and rng.random() < p:
            out.append(rng.choice(translations))
            replaced += 1
        else:
            out.append(token)
    return out, replaced


def merge(dictionaries: Iterable[Dictionary]) -> Dictionary:
    """One dictionary pooling the translations of several, in their order: a word then draws
    among every language's translations (``per="word"``)."""
    merged: Dictionary = {}
    for dictionary in dictionaries:
        for word, translations in dictionary.items():
            merged.setdefault(word, []).extend(translations)
    return merged


@dataclass
class Stats:
    """What `augment` did: Table 10 of the paper reports the share of replaced tokens."""

    tokens: int = 0
    in_dictionary: int = 0  # tokens a line's dictionary lists: the most that can be replaced
    replaced: int = 0  # substitutions made; a translation spelled as the word itself counts
    lines_per_dictionary: dict[str, int] = field(default_factory=dict)  # per="sentence"

    @property
    def replaced_share(self) -> float | None:
        return round(self.replaced / self.tokens, 4) if self.tokens else None


def augment(
    lines: Iterable[str],
    dictionaries: Mapping[str, Dictionary],
    p: float,
    seed: int,
    per: Per = "word",
) -> tuple[list[str], Stats]:
    """C(line) of each whitespace-tokenized line (runs of spaces become one), with one random
    generator seeded by `seed` for the whole text. `dictionaries` are named (by their file or
    replacement language); `per` says whether a line draws one of them (``sentence``) or each
    word draws among all their translations (``word``). A line draws a dictionary only when
    there are several, so one dictionary gives the same text either way."""
    if not dictionaries:
        raise ValueError("aligned augmentation needs at least one dictionary")
    if per == "word":
        dictionaries = {"+".join(dictionaries): merge(dictionaries.values())}
    names = list(dictionaries)
    rng = random.Random(seed)
    stats = Stats(lines_per_dictionary=dict.fromkeys(names, 0) if per == "sentence" else {})
    out = []
    for line in lines:
        tokens = line.split()
        name = rng.choice(names) if len(names) > 1 else names[0]
        dictionary = dictionaries[name]
        if per == "sentence":
            stats.lines_per_dictionary[name] += 1
        changed, replaced = substitute(tokens, dictionary, p, rng)
        stats.tokens += len(tokens)
        stats.in_dictionary += sum(1 for token in tokens if token in dictionary)
        stats.replaced += replaced
        out.append(" ".join(changed))
    return out, stats
