"""Fine-tuning pools: a seeded permutation of a pair's training lines, with its held-out sets.

A chapter that fine-tunes on nested samples of a corpus (Chapter 4: 3k ⊂ 10k ⊂ 20k ⊂ 50k)
draws them all as prefixes of one pool, a seeded permutation of the training lines, so a
smaller sample is always inside a larger one and every sample is known before any run: its
segment ids are what the pre-training text must leave out (`mlrep.data.monolingual`'s
``--exclude-ids``), or the model would pre-train on its own fine-tuning data.

The pools are read from preprocessed words (``<split>.<a>-<b>.<lang>`` files of a
`mlrep text` stage, the first lines of the corpus files of the same names) with each line's
segment id from the corpus; a pair the corpus lacks (ja-zh) is joined on segment ids
(`mlrep.embed.align_data.pair_segments`). Words of a corpus without segment ids (a registry
download: ASPEC, Wikipedia Ja-Zh, News En-Ko) are the pair's own files, each line's id
``<split>.<a>-<b>:<line number>`` (`numbered`). Files aligned with the words of one language
(the Japanese bunsetsu spans) travel with them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mlrep.cliutil import non_negative
from mlrep.data import validate
from mlrep.embed.align_data import by_segment, pair_segments, parse_pair
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, read_lines
from mlrep.provenance import record

SPLITS = ("train", "valid", "test")
IDS = "ids"  # <split>.ids: the segment id of each line of the split's files
METADATA = "metadata.json"


class PoolError(MlrepError):
    """Words or aligned files that do not line up with the pair's segments."""


@dataclass(frozen=True)
class PoolSettings:
    """How a pair's fine-tuning pool and held-out sets are cut (params ``<chapter>.data``)."""

    pool: int = field(
        metadata={
            "help": "training lines in the pool, the largest fine-tuning size (the smaller "
            "sizes are its prefixes; 0: every line)",
            "type": non_negative,
        }
    )
    max_valid: int = field(
        metadata={"help": "first lines of the valid set kept (0: all)", "type": non_negative}
    )
    max_test: int = field(
        metadata={"help": "first lines of the test set kept (0: all)", "type": non_negative}
    )
    seed: int = field(metadata={"help": "seed of the pool's permutation"})


@dataclass(frozen=True)
class Split:
    """One split of a pool: segment ids and, per language, the words lines; `aligned` holds
    (language, name) → lines aligned with that language's words."""

    ids: list[str]
    words: dict[str, list[str]]
    aligned: dict[tuple[str, str], list[str]]

    def rows(self, keep: list[int]) -> Split:
        return Split(
            [self.ids[i] for i in keep],
            {lang: [lines[i] for i in keep] for lang, lines in self.words.items()},
            {key: [lines[i] for i in keep] for key, lines in self.aligned.items()},
        )


def numbered(
    words: Path, split: str, pair: str, aligned: Mapping[tuple[str, str], Path] | None = None
) -> Split:
    """The pair's `split` from its own files in `words` (either orientation), numbered: a
    corpus without segment ids has nothing to join on, and its splits share no ids."""
    a, b = parse_pair(pair)
    stems = [f"{split}.{x}-{y}" for x, y in ((a, b), (b, a))]
    stem = next((s for s in stems if (words / f"{s}.{a}").is_file()), None)
    if stem is None:
        raise PoolError(
            f"{words}: no {stems[0]}.{a} or {stems[1]}.{a}; a corpus without segment ids "
            f"needs the pair's own files (preprocess the pair {pair} itself)"
        )
    rows = list(validate.parallel([words / f"{stem}.{a}", words / f"{stem}.{b}"]))
    extra = {}
    for (lang, name), folder in (aligned or {}).items():
        lines = read_lines(folder / f"{stem}.{lang}", PoolError)
        if len(lines) != len(rows):
            raise PoolError(
                f"{folder / f'{stem}.{lang}'}: {len(lines)} {name} lines for {len(rows)} words "
                f"lines in {words}; make it from the same corpus files"
            )
        extra[(lang, name)] = lines
    ids = [f"{stem}:{number}" for number in range(len(rows))]
    return Split(ids, {a: [r[0] for r in rows], b: [r[1] for r in rows]}, extra)


def read_split(
    words: Path,
    ids: Path | None,
    split: str,
    pair: str,
    aligned: Mapping[tuple[str, str], Path] | None = None,
) -> Split:
    """The pair's `split` from the words folder (ids from the corpus folder `ids`; None:
    `numbered`), with each ``(language, name) → folder`` of `aligned` read for the same
    segments."""
    if ids is None:
        return numbered(words, split, pair, aligned)
    a, b = parse_pair(pair)
    segments, examples = pair_segments(words, split, pair, ids)
    extra = {}
    for (lang, name), folder in (aligned or {}).items():
        lines = by_segment(folder, split, lang, ids)
        missing = [s for s in segments if s not in lines]
        if missing:
            raise PoolError(
                f"{folder}: no {split} {name} line of {lang} for {len(missing)} segments (first "
                f"{missing[0]}); make it from the same corpus files as {words}"
            )
        extra[(lang, name)] = [lines[s] for s in segments]
    return Split(segments, {a: examples.src, b: examples.tgt}, extra)


def permutation(lines: int, size: int, seed: int) -> list[int]:
    """The first `size` (0: all) rows of one seeded permutation of `lines` rows: a smaller size
    is a prefix of a larger one under the same seed."""
    order = np.random.default_rng(seed).permutation(lines).tolist()
    return order[:size] if size else order


def cut(splits: Mapping[str, Split], settings: PoolSettings) -> tuple[dict[str, Split], dict]:
    """(the pool and its held-out sets, counts): the first ``max_valid`` / ``max_test`` lines
    of valid and test, and the pool permuted from the training lines whose segment id is in
    neither of the pair's held-out sets (the corpus's splits need not be disjoint)."""
    heldout = {}
    for split, cap in (("valid", settings.max_valid), ("test", settings.max_test)):
        lines = len(splits[split].ids)
        heldout[split] = splits[split].rows(list(range(min(cap, lines) if cap else lines)))
    held = set(splits["valid"].ids) | set(splits["test"].ids)
    train = splits["train"]
    clean = [i for i, segment in enumerate(train.ids) if segment not in held]
    chosen = permutation(len(clean), settings.pool, settings.seed)
    pool = train.rows([clean[i] for i in chosen])
    counts = {
        "train_words": len(train.ids),  # training lines read, before the held-out ids leave
        "train_held_out_ids": len(train.ids) - len(clean),
        **{f"{split}_lines": len(part.ids) for split, part in {"train": pool, **heldout}.items()},
    }
    return {"train": pool, **heldout}, counts


def write(
    out: Path, pair: str, splits: Mapping[str, Split], counts: dict, config: dict[str, Any]
) -> None:
    """``<split>.<lang>`` words, ``<split>.<lang>.<name>`` aligned files and ``<split>.ids``
    into `out` (atomically), with ``metadata.json``, ``config.yaml`` and ``provenance.json``."""
    with atomic_directory(out) as staging:
        for split, part in splits.items():
            files = {
                IDS: part.ids,
                **part.words,
                **{f"{lang}.{name}": lines for (lang, name), lines in part.aligned.items()},
            }
            for suffix, lines in files.items():
                text = "".join(f"{line}\n" for line in lines)
                (staging / f"{split}.{suffix}").write_text(text, encoding="utf-8", newline="\n")
        metadata = {"pair": pair, "counts": counts, "settings": config["data"]}
        (staging / METADATA).write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
        record(staging, "data finetune-pool", config)


def build(
    words: Path,
    ids: Path | None,
    pair: str,
    out: Path,
    settings: PoolSettings,
    aligned: Mapping[tuple[str, str], Path] | None = None,
    scale: str = "",
) -> dict:
    """Read the pair's splits, cut the pool and write it to `out`; returns the counts."""
    splits = {split: read_split(words, ids, split, pair, aligned) for split in SPLITS}
    pool, counts = cut(splits, settings)
    write(out, pair, pool, counts, {"scale": scale, "data": asdict(settings)})
    return counts
