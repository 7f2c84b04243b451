"""English-centric multilingual datasets cut from a multi-way corpus, and their language tags.

A dataset is a set of languages containing English. Training uses only the English-centric
pairs (en→xx and xx→en from each ``en-xx`` bitext); valid and test sets cover *every*
direction, the zero-shot ones (xx→yy) joined through the shared segment ids of the corpus,
so a zero-shot reference is a real human translation of the same English message.

Two tag formats (Chapter 8's TAG factor), applied to subword lines:

* ``s-enc-t-dec``: ``__src__`` starts the encoder input and ``__tgt__`` the target, so the
  target tag is the decoder's first token; decoding forces it as a one-token prefix.
* ``t-enc``: ``__tgt__`` starts the encoder input only; the target is untagged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import permutations
from pathlib import Path

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


def _bitext(corpus: Path, split: str, xx: str) -> dict[str, tuple[str, str]]:
    """segment id -> (English, xx) of one English-centric split of the corpus."""
    stem = corpus / f"{split}.en-{xx}"
    ids, en, other = (
        read_lines(stem.with_name(f"{stem.name}.{s}"), NmtDataError) for s in ("id", "en", xx)
    )
    if not len(ids) == len(en) == len(other):
        raise NmtDataError(f"{stem}.{{id,en,{xx}}}: files differ in line count; rebuild the corpus")
    return {i: (e, o) for i, e, o in zip(ids, en, other, strict=True) if e.strip() and o.strip()}


def _side(pair: tuple[str, str], lang: str) -> str:
    return pair[0] if lang == PIVOT else pair[1]


def cut(
    corpus: Path, languages: Sequence[str], out: Path, max_train: int, max_valid: int, max_test: int
) -> dict:
    """Write ``{split}.{src}-{tgt}.{lang}`` for the dataset into `out`; return its statistics.

    Train files hold the English-centric bitexts once each (``train.en-xx``; both directions
    are made from them at binarisation). Valid and test hold every direction, each capped at
    `max_valid` / `max_test` lines in corpus order (the corpus is sorted by segment id).
    """
    if PIVOT not in languages:
        raise NmtDataError(f"dataset languages {list(languages)} must include English ({PIVOT})")
    others = sorted(set(languages) - {PIVOT})
    s_train = 0
    for xx in others:
        bitext = list(_bitext(corpus, "train", xx).values())[:max_train]
        s_train += len(bitext)
        _write_pair(out, "train", Direction(PIVOT, xx), [(e, x) for e, x in bitext])
    for split, cap in (("valid", max_valid), ("test", max_test)):
        by_lang = {xx: _bitext(corpus, split, xx) for xx in others}
        for d in directions(languages):
            src_side = by_lang[d.src] if d.src != PIVOT else by_lang[d.tgt]
            tgt_side = by_lang[d.tgt] if d.tgt != PIVOT else by_lang[d.src]
            shared = [i for i in src_side if i in tgt_side][:cap]
            if not shared:
                raise NmtDataError(f"{corpus}: no shared {split} segments for {d.name}")
            rows = [(_side(src_side[i], d.src), _side(tgt_side[i], d.tgt)) for i in shared]
            _write_pair(out, split, d, rows)
    zero = [d for d in directions(languages) if d.zero_shot]
    return {
        "languages": sorted(languages),
        "n_zero": len(zero),
        "n_supervised": 2 * len(others),
        "s_train": s_train,
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
