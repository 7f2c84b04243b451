"""OneAligner's training examples: sentence pairs of any two languages of a corpus folder, a
fixed budget sampled before the length filter, and no sentence of an evaluation set.

A corpus folder holds ``<split>.<a>-<b>.<a>`` and ``….<b>`` (aligned lines) and, in the
embedded multi-way corpus, ``….segids`` (a segment id per line, the same segment in every
language). A pair a-b is read from its own files when the folder has them (either
orientation); otherwise it is joined on the segment ids of any files holding a and b, so the
English-centric tiny corpus yields non-English pairs (de-ja from en-de and en-ja).

The order of the paper (its §3): sample ``budget`` examples uniformly from the concatenation of
the chosen pairs, then drop those with fewer than ``min_tokens`` tokens on either side, so an
experiment trains on slightly fewer than its budget; then drop every example whose source or
target sentence occurs in an evaluation set (the paper removes fewer than 2.5k per set).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlrep.data.tiny_corpus import IDS_SUFFIX, ids_file
from mlrep.errors import MlrepError
from mlrep.io import read_lines


class AlignDataError(MlrepError):
    """A pair the corpus folder cannot give, or files that do not line up."""


@dataclass(frozen=True)
class Examples:
    """Aligned sentence pairs: ``src[i]`` translates ``tgt[i]``."""

    src: list[str]
    tgt: list[str]

    def __len__(self) -> int:
        return len(self.src)

    def rows(self, keep: Iterable[int]) -> Examples:
        chosen = list(keep)
        return Examples([self.src[i] for i in chosen], [self.tgt[i] for i in chosen])


def parse_pair(pair: str) -> tuple[str, str]:
    """``a-b`` as (a, b)."""
    a, sep, b = pair.partition("-")
    if not sep or not a or not b or "-" in b or a == b:
        raise AlignDataError(f"pair {pair!r}: write two different language codes as a-b")
    return a, b


def _aligned(first: Path, second: Path) -> tuple[list[str], list[str]]:
    a, b = read_lines(first, AlignDataError), read_lines(second, AlignDataError)
    if len(a) != len(b):
        raise AlignDataError(f"{first} has {len(a)} lines but {second} has {len(b)}; realign them")
    return a, b


def segment_ids(side: Path, ids_folder: Path | None, lines: int) -> list[str]:
    """The segment ids of the `lines` lines of `side`: its own ``.segids`` file or, for a
    preprocessed file (the first lines of the corpus file of the same name, as
    ``preprocess.max_lines`` keeps them), that corpus file's in `ids_folder`."""
    ids = read_lines(
        ids_file(side if ids_folder is None else ids_folder / side.name), AlignDataError
    )
    if ids_folder is not None and lines <= len(ids):
        ids = ids[:lines]
    if len(ids) != lines:
        raise AlignDataError(f"{side}: {lines} lines but {len(ids)} segment ids")
    return ids


def by_segment(
    folder: Path, split: str, lang: str, ids_folder: Path | None = None
) -> dict[str, str]:
    """Segment id -> sentence of `lang`, from every file of `split` that holds `lang` (ids as
    `segment_ids` finds them)."""
    found: dict[str, str] = {}
    for side in sorted(folder.glob(f"{split}.*-*.{lang}")):
        middle = side.name[len(split) + 1 : -len(lang) - 1]
        if lang not in middle.split("-"):
            continue
        lines = read_lines(side, AlignDataError)
        for segment, line in zip(segment_ids(side, ids_folder, len(lines)), lines, strict=True):
            found.setdefault(segment, line)
    return found


def _own_files(folder: Path, split: str, pair: str) -> tuple[Path, Path] | None:
    """The pair's own aligned files (a then b, either orientation on disk), if the folder has
    them."""
    a, b = parse_pair(pair)
    for x, y in ((a, b), (b, a)):
        stem = folder / f"{split}.{x}-{y}"
        if Path(f"{stem}.{x}").exists():
            return Path(f"{stem}.{a}"), Path(f"{stem}.{b}")
    return None


def _joined(
    folder: Path, split: str, pair: str, ids_folder: Path | None
) -> tuple[list[str], Examples]:
    """The a-b examples joined on the segment ids of files holding a and of files holding b,
    in the order of the ids (so the result is the same on every call)."""
    a, b = parse_pair(pair)
    left, right = by_segment(folder, split, a, ids_folder), by_segment(folder, split, b, ids_folder)
    shared = sorted(left.keys() & right.keys())
    if not shared:
        raise AlignDataError(
            f"{folder}: no {split}.{a}-{b}.{a} files and no {split} segments shared by {a} and "
            f"{b} (through `.{IDS_SUFFIX}` files); check the pair and the corpus folder"
        )
    return shared, Examples([left[s] for s in shared], [right[s] for s in shared])


def pair_sentences(folder: Path, split: str, pair: str) -> Examples:
    """The a-b examples of `split`: the pair's own files, else a join on segment ids."""
    if own := _own_files(folder, split, pair):
        return Examples(*_aligned(*own))
    return _joined(folder, split, pair, None)[1]


def pair_segments(
    folder: Path, split: str, pair: str, ids_folder: Path | None = None
) -> tuple[list[str], Examples]:
    """(segment ids, examples) of `split` as `pair_sentences` reads them, each example with its
    id (`segment_ids`: from `ids_folder` for a preprocessed folder)."""
    if own := _own_files(folder, split, pair):
        src, tgt = _aligned(*own)
        return segment_ids(own[0], ids_folder, len(src)), Examples(src, tgt)
    return _joined(folder, split, pair, ids_folder)


def concatenate(parts: Sequence[Examples]) -> Examples:
    return Examples([s for p in parts for s in p.src], [t for p in parts for t in p.tgt])


def sample_then_filter(
    examples: Examples, budget: int, min_tokens: int, count: Callable[[str], int], seed: int
) -> tuple[Examples, int]:
    """(kept, sampled): `budget` examples drawn uniformly without replacement (all when the
    budget is 0 or exceeds the pool), in their pool order, then those with at least
    `min_tokens` tokens (`count`) on both sides."""
    rows = np.arange(len(examples))
    if 0 < budget < len(examples):
        rows = np.sort(np.random.default_rng(seed).choice(len(examples), budget, replace=False))
    sampled = examples.rows(rows.tolist())
    long_enough = (
        i
        for i in range(len(sampled))
        if count(sampled.src[i]) >= min_tokens and count(sampled.tgt[i]) >= min_tokens
    )
    return sampled.rows(long_enough), len(sampled)


def evaluation_sentences(folders: Sequence[Path]) -> set[str]:
    """Every line (stripped) of every text file under `folders`: the evaluation sentences."""
    found: set[str] = set()
    for folder in folders:
        if not folder.is_dir():
            raise AlignDataError(f"{folder}: not a folder; give the evaluation sets' folders")
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix not in (".json", f".{IDS_SUFFIX}", ".npy"):
                found.update(line.strip() for line in read_lines(path, AlignDataError))
    found.discard("")
    return found


def remove_overlap(examples: Examples, test: set[str]) -> Examples:
    """The examples neither of whose sentences occurs in `test`."""
    return examples.rows(
        i
        for i in range(len(examples))
        if examples.src[i].strip() not in test and examples.tgt[i].strip() not in test
    )
