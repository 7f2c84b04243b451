"""The New-Tatoeba evaluation set of OneAligner (Niu et al. 2022), cut from a corpus folder.

The paper merges the dev and test sets of every Tatoeba Challenge v2021-08-07 pair whose two
languages are in CC-100, keeps the pairs with at least 1,000 merged examples and samples 1,000
of each (223 pairs: 49 with English, 174 without). It never published which examples it drew,
so this module draws them with a recorded seed and writes the drawn row numbers beside the
text: anyone can rebuild the same set from the same release, or compare against another draw.

The corpus folder is a normalised one (`mlrep.embed.align_data`): a pair is read from its own
``<split>.<a>-<b>.*`` files, or joined on segment ids (the English-centric tiny corpus yields
de-fr from en-de and en-fr). Every pair of two allowed languages that some split offers is a
candidate; its examples are the concatenation of its examples in each split of `splits`, in
that order (a split that lacks the pair adds none: many Challenge pairs have a test set but no
dev set). Each kept pair's sample depends only on the seed, the pair and its size, so adding
or dropping another pair, or an allowed language, leaves it unchanged.

The output folder holds ``eval.<a>-<b>.<a>`` and ``….<b>`` per kept pair (so
`align_data.pair_sentences(out, SPLIT, pair)` reads it) and ``new_tatoeba.json``: the
settings, each kept pair's merged size and sampled row numbers, and the pairs left out with
their sizes.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
import zlib
from collections.abc import Mapping
from dataclasses import asdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from mlrep.data.tiny_corpus import IDS_SUFFIX
from mlrep.embed.align_data import (
    Examples,
    by_segment,
    concatenate,
    pair_sentences,
    parse_pair,
)
from mlrep.embed.settings import NewTatoebaSettings
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory

SPLIT = "eval"  # the split name of the built files: eval.<a>-<b>.<a>
INDEX = "new_tatoeba.json"
ENGLISH = ("en", "eng")  # the tiny corpus's code and the Challenge's
_FILE = re.compile(r"^(?P<split>[^.]+)\.(?P<a>[^.-]+)-(?P<b>[^.-]+)\.(?P<side>[^.]+)$")


class NewTatoebaError(MlrepError):
    """A corpus folder without a requested split, or a built folder without its index."""


def english(pair: str) -> bool:
    """Whether a pair a-b has English on either side (the paper's "Eng" group)."""
    return bool(set(parse_pair(pair)) & set(ENGLISH))


def _scan(folder: Path, split: str) -> tuple[dict[frozenset[str], str], set[str]]:
    """({languages: pair name} of the pairs with their own files, languages with segment
    ids) of one split."""
    direct: dict[frozenset[str], str] = {}
    joinable: set[str] = set()
    names = sorted(path.name for path in folder.glob(f"{split}.*-*.*"))
    if not names:
        raise NewTatoebaError(
            f"{folder / f'{split}.<a>-<b>.<a>'}: no file of split {split!r}; place the "
            "corpus's held-out files there or set the splits to merge"
        )
    for name in names:
        match = _FILE.match(name)
        if match is None or match["split"] != split:
            continue
        a, b, side = match["a"], match["b"], match["side"]
        if a == b:  # the Challenge's ita-ita, ara-ara: paraphrases, no translation pair
            continue
        if side in (a, b):
            direct.setdefault(frozenset((a, b)), f"{a}-{b}")
        elif side == IDS_SUFFIX:
            joinable.update((a, b))
    return direct, joinable


class Corpus:
    """A corpus folder's held-out splits, scanned once: which pairs each split offers and,
    read on demand, each language's segments."""

    def __init__(self, folder: Path, splits: tuple[str, ...]) -> None:
        self.folder, self.splits = folder, splits
        self.scans = {split: _scan(folder, split) for split in splits}
        self._segments = functools.cache(functools.partial(by_segment, folder))

    def candidates(self, languages: tuple[str, ...]) -> list[str]:
        """Every pair of two `languages` that a split offers: its own files, or both
        languages in segment-id files (named a-b with a < b); sorted."""
        found: dict[frozenset[str], str] = {}
        for direct, joinable in self.scans.values():
            for key, name in direct.items():
                found.setdefault(key, name)
            for a, b in combinations(sorted(joinable), 2):
                found.setdefault(frozenset((a, b)), f"{a}-{b}")
        allowed = set(languages)
        return sorted(name for key, name in found.items() if key <= allowed)

    def merged(self, pair: str) -> Examples:
        """The pair's examples of every split, concatenated in the splits' order (a split
        without the pair adds none)."""
        a, b = parse_pair(pair)
        parts = []
        for split, (direct, joinable) in self.scans.items():
            if frozenset((a, b)) in direct:
                parts.append(pair_sentences(self.folder, split, pair))
            elif {a, b} <= joinable:
                left, right = self._segments(split, a), self._segments(split, b)
                shared = sorted(left.keys() & right.keys())
                parts.append(Examples([left[s] for s in shared], [right[s] for s in shared]))
        return concatenate(parts)


def draw(pair: str, size: int, settings: NewTatoebaSettings) -> list[int]:
    """`settings.sample` row numbers of `size`, sorted, drawn without replacement from a
    generator seeded by the seed and the pair alone."""
    rng = np.random.default_rng([settings.seed, zlib.crc32(pair.encode("utf-8"))])
    return sorted(rng.choice(size, settings.sample, replace=False).tolist())


def build(folder: Path, out: Path, settings: NewTatoebaSettings) -> dict[str, Any]:
    """Write the evaluation set of `folder` into `out` (atomically) and return its index."""
    corpus = Corpus(folder, settings.splits)
    kept: dict[str, dict[str, Any]] = {}
    left_out: dict[str, int] = {}
    with atomic_directory(out) as staging:
        for pair in corpus.candidates(settings.languages):
            examples = corpus.merged(pair)
            if len(examples) < settings.min_examples:
                left_out[pair] = len(examples)
                continue
            rows = draw(pair, len(examples), settings)
            chosen = examples.rows(rows)
            a, b = parse_pair(pair)
            for lang, lines in ((a, chosen.src), (b, chosen.tgt)):
                text = "".join(f"{line}\n" for line in lines)
                (staging / f"{SPLIT}.{pair}.{lang}").write_text(text, "utf-8", newline="\n")
            kept[pair] = {"examples": len(examples), "indices": rows}
        index = {
            "corpus": folder.name,
            "settings": asdict(settings),
            "split": SPLIT,
            "english_pairs": sum(english(pair) for pair in kept),
            "other_pairs": sum(not english(pair) for pair in kept),
            "pairs": kept,
            "left_out": left_out,
        }
        (staging / INDEX).write_text(json.dumps(index, indent=1) + "\n", "utf-8")
    return index


def pairs(folder: Path) -> list[str]:
    """The kept pairs of a built folder, from its index."""
    path = folder / INDEX
    if not path.is_file():
        raise NewTatoebaError(
            f"{path}: no New-Tatoeba index; build the folder with `mlrep embed new-tatoeba`"
        )
    return list(json.loads(path.read_text(encoding="utf-8"))["pairs"])


def by_language(per_pair: Mapping[str, float]) -> dict[str, float]:
    """Each language's mean over the pairs that involve it (`per_pair`: pair a-b -> score;
    the paper's Figure 2 y)."""
    scores: dict[str, list[float]] = {}
    for pair, value in per_pair.items():
        for lang in parse_pair(pair):
            scores.setdefault(lang, []).append(value)
    return {lang: statistics.fmean(values) for lang, values in sorted(scores.items())}
