"""English-centric multilingual datasets cut from parallel corpora, and their language tags.

A dataset is a set of languages containing English, read from one or more corpus folders:
registry datasets as the data layer's readers normalise them (``results/data/<key>``) or the
embedded tiny corpus. Both name a set's files ``<split>.<l1>-<l2>.<lang>``, so one reader
(`Corpora`) serves every scale; only params.yaml says which corpora and splits. Training
uses only the English-centric pairs (en→xx and xx→en from each ``en-xx`` bitext); valid
covers the supervised directions and test *every* direction, a zero-shot test pair (xx→yy)
being the corpus's own xx-yy set or two en-xx sets joined on the same English sentence, so
a zero-shot reference is always a human translation of the source's message.

Two tag formats (Chapter 8's TAG factor), applied to subword lines:

* ``s-enc-t-dec``: ``__src__`` starts the encoder input and ``__tgt__`` the target, so the
  target tag is the decoder's first token; decoding forces it as a one-token prefix.
* ``t-enc``: ``__tgt__`` starts the encoder input only; the target is untagged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, permutations
from pathlib import Path

from mlrep.data import validate
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, read_lines

TAGS = ("s-enc-t-dec", "t-enc")
PIVOT = "en"
SPLITS = ("train", "valid", "test")


class NmtDataError(MlrepError):
    """Input data for an NMT step is missing or inconsistent."""


def tag(lang: str) -> str:
    """The language tag token (fairseq's multilingual format)."""
    return f"__{lang}__"


def tag_source(pieces: str, src: str, tgt: str, tag_format: str) -> str:
    return f"{tag(src if tag_format == 's-enc-t-dec' else tgt)} {pieces}"


def tag_target(pieces: str, tgt: str, tag_format: str) -> str:
    return f"{tag(tgt)} {pieces}" if tag_format == "s-enc-t-dec" else pieces


def strip_tags(tokens: Sequence[str]) -> list[str]:
    """Drop language tags from a token sequence (decoder output in S-ENC-T-DEC starts with one)."""
    return [t for t in tokens if not (t.startswith("__") and t.endswith("__") and len(t) > 4)]


@dataclass(frozen=True)
class Direction:
    src: str
    tgt: str

    @property
    def name(self) -> str:
        return f"{self.src}-{self.tgt}"

    @property
    def zero_shot(self) -> bool:
        return PIVOT not in (self.src, self.tgt)

    @classmethod
    def parse(cls, name: str) -> Direction:
        src, _, tgt = name.partition("-")
        return cls(src, tgt)


def directions(languages: Iterable[str]) -> list[Direction]:
    """Every ordered pair of distinct languages, supervised (English-centric) first."""
    pairs = [Direction(a, b) for a, b in permutations(sorted(languages), 2)]
    return sorted(pairs, key=lambda d: (d.zero_shot, d.src, d.tgt))


_SET_FILE = re.compile(
    r"^(?P<split>[^.]+)\.(?P<a>[A-Za-z_]+)-(?P<b>[A-Za-z_]+)\.(?P<lang>[A-Za-z_]+)$"
)


@dataclass(frozen=True)
class Bitext:
    """One line-aligned set ``<split>.<l1>-<l2>`` of a corpus folder, one file per language."""

    label: str  # <corpus folder>/<set>, for errors and the dataset's record of its sources
    files: Mapping[str, Path]

    def rows(self, first: str, second: str) -> Iterator[tuple[str, str]]:
        """(first, second) lines with both sides non-empty, streamed (files can be huge)."""
        for a, b in validate.parallel([self.files[first], self.files[second]]):
            if a.strip() and b.strip():
                yield a, b


def _parallel_sets(folder: Path) -> set[str] | None:
    """Names of the sets whose files are line-aligned; None: every set (the tiny corpus).

    A registry dataset's metadata.json (`mlrep data normalize`) gives each set's ``kind``:
    only ``parallel`` sets pair lines (BUCC's ``comparable`` sets share the file naming but
    not the alignment). The tiny corpus (manifest.json) holds English-centric bitexts only.
    """
    metadata = folder / "metadata.json"
    if metadata.exists():
        pairs = json.loads(metadata.read_text(encoding="utf-8"))["pairs"]
        return {name for name, info in pairs.items() if info["kind"] == "parallel"}
    if (folder / "manifest.json").exists():
        return None
    raise NmtDataError(
        f"{folder}: neither metadata.json nor manifest.json; build it with `mlrep data "
        "normalize` (registry datasets) or `mlrep corpus tiny` (snakemake does both)"
    )


class Corpora:
    """The parallel sets of one or more corpus folders, by split and unordered language pair.

    Readers name a pair's files in the source's order (``train.de-en.de``, ``dev.en-fr.fr``),
    the tiny corpus English first (``test.en-it.it``); either serves both directions.
    """

    def __init__(self, folders: Sequence[Path]) -> None:
        self.sets: dict[tuple[str, frozenset[str]], Bitext] = {}
        for folder in folders:
            if not folder.is_dir():
                raise NmtDataError(f"{folder}: corpus folder not found; build it first")
            parallel = _parallel_sets(folder)
            found: dict[str, dict[str, Path]] = {}
            for path in sorted(folder.iterdir()):
                match = _SET_FILE.match(path.name)
                if match and match["lang"] in (match["a"], match["b"]):
                    found.setdefault(path.name.rsplit(".", 1)[0], {})[match["lang"]] = path
            for name, files in found.items():
                if len(files) != 2 or (parallel is not None and name not in parallel):
                    continue
                split = name.split(".", 1)[0]
                key = (split, frozenset(files))
                if key in self.sets:
                    raise NmtDataError(
                        f"{folder / name}: {split} {'-'.join(sorted(files))} is also in "
                        f"{self.sets[key].label}; list only one of the two corpora"
                    )
                self.sets[key] = Bitext(f"{folder.name}/{name}", files)

    def find(self, split: str, a: str, b: str) -> Bitext | None:
        return self.sets.get((split, frozenset((a, b))))

    def bitext(self, split: str, a: str, b: str) -> Bitext:
        """The set of `split` for languages `a` and `b`, or an error naming what there is."""
        found = self.find(split, a, b)
        if found is None:
            there = sorted(s.label for (sp, langs), s in self.sets.items() if langs & {a, b})
            raise NmtDataError(
                f"no parallel {split} set for {a}-{b} in the corpora; sets with {a} or {b}: "
                f"{there[:12] or 'none'}; check the dataset's `corpora` and `splits` in "
                "params.yaml, and that the corpus was normalised with these languages"
            )
        return found


def split_directions(languages: Iterable[str], split: str) -> list[Direction]:
    """Directions of a split: train the en-xx bitexts, valid the supervised ones, test all.

    Validation selects checkpoints on supervised loss and trains the probes on supervised
    states (the thesis's protocol), so no zero-shot valid set is needed (OPUS-100 has none).
    """
    if split == "train":
        return [Direction(PIVOT, xx) for xx in sorted(set(languages) - {PIVOT})]
    every = directions(languages)
    return every if split == "test" else [d for d in every if not d.zero_shot]


Pairs = dict[str, tuple[str, str]]  # English -> (English, xx), in corpus order


def _by_english(rows: Iterable[tuple[str, str]]) -> Pairs:
    """The first pair of each English sentence (its key for joining languages)."""
    out: Pairs = {}
    for en, xx in rows:
        out.setdefault(en, (en, xx))
    return out


def _hold_out(bitexts: Mapping[str, Bitext], caps: Mapping[str, int]) -> dict[str, set[str]]:
    """English sentences held out of training for each split in `caps` (Europarl v7).

    Candidates are multi-way: the English occurs exactly once in every en-xx bitext, so each
    language's side is the translation of that one sentence. They are ordered by a hash of
    the English (spread over the whole corpus, independent of file order) and dealt out:
    the first ``caps[first split]`` to it, the next to the second.
    """
    if not caps:
        return {}
    counts: dict[str, int] | None = None
    for xx, bitext in bitexts.items():
        seen: dict[str, int] = {}
        for en, _ in bitext.rows(PIVOT, xx):
            if counts is None or en in counts:
                seen[en] = seen.get(en, 0) + 1
        counts = {en: n for en, n in seen.items() if n == 1}
    ranked = sorted(counts or {}, key=lambda en: hashlib.sha256(en.encode("utf-8")).digest())
    held: dict[str, set[str]] = {}
    start = 0
    for split, cap in caps.items():
        held[split] = set(ranked[start : start + cap])
        start += cap
        if not held[split]:
            raise NmtDataError(
                f"{', '.join(b.label for b in bitexts.values())}: no English sentence left that "
                f"occurs once in every bitext to hold out for {split}; add languages' data or "
                f"name a {split} split of the corpus in `splits`"
            )
    return held


def cut(
    corpora: Sequence[Path],
    languages: Sequence[str],
    splits: Sequence[str],
    out: Path,
    max_train: int,
    max_valid: int,
    max_test: int,
) -> dict:
    """Write ``{split}.{src}-{tgt}.{lang}`` for the dataset into `out`; return its statistics.

    `splits` names the corpora's splits read as train, valid and test (OPUS-100: train, dev,
    test; IWSLT 2017: train, dev2010, tst2010). Train holds each en-xx bitext once (both
    directions are made from it at binarisation), at most `max_train` pairs. Valid and test
    hold their directions (`split_directions`), at most `max_valid` / `max_test` lines each
    in corpus order. A zero-shot test set is the corpora's own xx-yy set where there is one
    (OPUS-100's zero-shot sets, IWSLT's non-English pairs), else the en-xx and en-yy sets
    joined on the same English sentence, so both sides translate one English message. A
    valid or test split named like the train split (Europarl v7 publishes only training
    data) is held out of it (`_hold_out`): none of its English sentences is trained on.
    """
    if PIVOT not in languages:
        raise NmtDataError(f"dataset languages {list(languages)} must include English ({PIVOT})")
    if len(splits) != len(SPLITS):
        raise NmtDataError(f"splits {list(splits)}: name three, the corpus's {'/'.join(SPLITS)}")
    names = dict(zip(SPLITS, splits, strict=True))
    caps = {"valid": max_valid, "test": max_test}
    index = Corpora(corpora)
    others = sorted(set(languages) - {PIVOT})
    train = {xx: index.bitext(names["train"], PIVOT, xx) for xx in others}
    held = _hold_out(train, {s: c for s, c in caps.items() if names[s] == names["train"]})
    dropped = set().union(*held.values())
    sources: dict[str, str] = {}
    s_train = 0
    for xx in others:
        kept = (row for row in train[xx].rows(PIVOT, xx) if row[0] not in dropped)
        rows = list(islice(kept, max_train))
        s_train += len(rows)
        _write_pair(out, "train", Direction(PIVOT, xx), rows)
        sources[f"train.en-{xx}"] = train[xx].label + (" less held-out" if held else "")
    for split, cap in caps.items():
        if split in held:
            by_lang = {
                xx: _by_english(r for r in train[xx].rows(PIVOT, xx) if r[0] in held[split])
                for xx in others
            }
            how = {xx: f"held out of {train[xx].label}" for xx in others}
        else:
            bitexts = {xx: index.bitext(names[split], PIVOT, xx) for xx in others}
            by_lang = {xx: _by_english(b.rows(PIVOT, xx)) for xx, b in bitexts.items()}
            how = {xx: b.label for xx, b in bitexts.items()}
        for d in split_directions(languages, split):
            own = d.zero_shot and split not in held
            direct = index.find(names[split], d.src, d.tgt) if own else None
            if direct is not None:
                rows = list(islice(direct.rows(d.src, d.tgt), cap))
                sources[f"{split}.{d.name}"] = direct.label
            elif d.zero_shot:
                src_side, tgt_side = by_lang[d.src], by_lang[d.tgt]
                shared = [en for en in src_side if en in tgt_side][:cap]
                rows = [(src_side[en][1], tgt_side[en][1]) for en in shared]
                sources[f"{split}.{d.name}"] = f"{how[d.src]} + {how[d.tgt]} on English"
            else:
                xx = d.tgt if d.src == PIVOT else d.src
                rows = [(e, x) if d.src == PIVOT else (x, e) for e, x in by_lang[xx].values()]
                rows = rows[:cap]
                sources[f"{split}.{d.name}"] = how[xx]
            if not rows:
                raise NmtDataError(f"{sources[f'{split}.{d.name}']}: no {split} pairs for {d.name}")
            _write_pair(out, split, d, rows)
    zero = [d for d in directions(languages) if d.zero_shot]
    return {
        "languages": sorted(languages),
        "n_zero": len(zero),
        "n_supervised": 2 * len(others),
        "s_train": s_train,
        "sources": sources,
    }


def _write_pair(out: Path, split: str, d: Direction, rows: list[tuple[str, str]]) -> None:
    for index, lang in enumerate((d.src, d.tgt)):
        text = "".join(row[index] + "\n" for row in rows)
        atomic_write_text(out / f"{split}.{d.name}.{lang}", text)


def read_pair(folder: Path, split: str, d: Direction) -> tuple[list[str], list[str]]:
    src = read_lines(folder / f"{split}.{d.name}.{d.src}", NmtDataError)
    tgt = read_lines(folder / f"{split}.{d.name}.{d.tgt}", NmtDataError)
    if len(src) != len(tgt):
        raise NmtDataError(f"{folder}/{split}.{d.name}: source and target differ in line count")
    return src, tgt


def write_stats(out: Path, stats: dict) -> None:
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")


def read_stats(folder: Path) -> dict:
    return json.loads((folder / "stats.json").read_text(encoding="utf-8"))
