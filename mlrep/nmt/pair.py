"""Pair-model data (thesis Chapter 4): one dictionary per language pair, shared by the
pre-training on both languages' monolingual pairs and every fine-tuning on the pair's bitext.

A pre-trained model is fine-tuned by restoring its weights, so the fine-tuning data must be
binarised with the very dictionary the model was pre-trained on: a token's id is its row of
the embedding matrix. The dictionary is therefore built once per pair, before pre-training,
from the pre-training pair files (`mlrep text pretrain-pairs`: source lines led by a task tag
and a language tag) *and* the fine-tuning bitexts' subword lines, so that no fine-tuning
subword becomes ``<unk>``; ``[M]``, every task tag and both language tags are always in it.

Layout of a prepared folder (`pretrain` and `finetune` write the same one): ``raw/`` holds
the ``{train,valid}.src-tgt.{src,tgt}`` lines fairseq binarises, ``bin/`` the data-bin
(languages ``src``/``tgt``, as `mlrep.nmt.prepare`), ``pair.json`` what was made from what.
`pretrain` also writes ``dict.txt``, the pair's dictionary that `finetune` is given.

Fine-tuning restores a pre-trained checkpoint (`mlrep.nmt.train`'s ``init``), which refuses
one whose dictionary is not the fine-tuning data-bin's.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt.data import Direction
from mlrep.nmt.prepare import dictionary_sha256, fairseq_preprocess, write_dictionary
from mlrep.text.pretrain_tasks import MASK, TASK_TAGS, finetune_source, language_tag

DICT = "dict.txt"
RAW = "raw"
BIN = "bin"
SUMMARY = "pair.json"
SPLITS = ("train", "valid")

Files = Sequence[tuple[Path, Path]]  # (source file, target file) of each set


class PairDataError(MlrepError):
    """Pair-model data that cannot be binarised as given."""


def reserved_tokens(languages: Sequence[str]) -> list[str]:
    """The tokens every pair dictionary holds whatever the text: the mask, the task tags
    and the pair's language tags."""
    return [MASK, *dict.fromkeys(TASK_TAGS.values()), *map(language_tag, languages)]


def _check_pretrain_sources(path: Path, lines: Sequence[str], languages: Sequence[str]) -> None:
    """Each pre-training source starts with a task tag, then one of the pair's language tags
    (so a target file given as a source, or another pair's file, is named)."""
    tasks = set(TASK_TAGS.values())
    langs = {language_tag(lang) for lang in languages}
    for number, line in enumerate(lines, start=1):
        head = line.split()[:2]
        if len(head) < 2 or head[0] not in tasks or head[1] not in langs:
            raise PairDataError(
                f"{path}:{number}: a pre-training source starts with a task tag "
                f"({', '.join(sorted(tasks))}) and a language tag of this pair "
                f"({', '.join(sorted(langs))}), not {' '.join(head)!r}; give the --source "
                "files of `mlrep text pretrain-pairs` for these languages"
            )


def _concatenated(files: Files, languages: Sequence[str] | None = None) -> list[list[str]]:
    """[sources, targets]: the lines of every (source, target) pair of files, in order; with
    `languages`, each source checked as a pre-training source of that pair."""
    sides: list[list[str]] = [[], []]
    for source, target in files:
        src, tgt = read_lines(source, PairDataError), read_lines(target, PairDataError)
        if len(src) != len(tgt):
            raise PairDataError(
                f"{source} has {len(src)} lines, {target} {len(tgt)}: give each source file "
                "with the target file made with it, in the same order"
            )
        if languages is not None:
            _check_pretrain_sources(source, src, languages)
        sides[0] += src
        sides[1] += tgt
    return sides


def _binarise(out: Path, lines: dict[str, list[list[str]]], dictionary: Path) -> dict[str, int]:
    """Write each split's [sources, targets] under ``raw/``, binarise them with `dictionary`
    into ``bin/``; returns the lines of each split."""
    for split, (sources, targets) in lines.items():
        if not sources:
            raise PairDataError(f"no {split} lines: give at least one non-empty {split} set")
        for side, side_lines in (("src", sources), ("tgt", targets)):
            text = "".join(line + "\n" for line in side_lines)
            atomic_write_text(out / RAW / f"{split}.src-tgt.{side}", text)
    fairseq_preprocess(out / RAW, out / BIN, dictionary)
    return {split: len(sides[0]) for split, sides in lines.items()}


def _sources(sets: dict[str, Files]) -> dict[str, list[list[str]]]:
    return {split: [[str(s), str(t)] for s, t in sets[split]] for split in SPLITS}


def pretrain(
    out: Path,
    languages: Sequence[str],
    sets: dict[str, Files],
    finetune_text: Sequence[Path],
) -> dict:
    """The pair's dictionary and its pre-training data-bin in `out`; returns ``pair.json``.

    `sets` maps ``train`` and ``valid`` to their (source, target) pair files (one per
    language and task run, concatenated: fairseq's batches then mix them); `finetune_text`
    are subword files of the fine-tuning bitexts, counted into the dictionary only."""
    if len(set(languages)) != 2:
        raise PairDataError(f"languages {list(languages)}: a pair model has two languages")
    lines = {split: _concatenated(sets[split], languages) for split in SPLITS}
    counts: Counter[str] = Counter()
    for text in (*lines["train"], *(read_lines(p, PairDataError) for p in finetune_text)):
        for line in text:
            counts.update(line.split())
    write_dictionary(out / DICT, counts, reserved_tokens(languages))
    summary = {
        "languages": list(languages),
        "lines": _binarise(out, lines, out / DICT),
        "dictionary": {
            "tokens": len(read_lines(out / DICT, PairDataError)),
            "sha256": dictionary_sha256(out / BIN),
        },
        "sources": _sources(sets),
        "finetune_text": [str(p) for p in finetune_text],
    }
    atomic_write_text(out / SUMMARY, json.dumps(summary, indent=1) + "\n")
    return summary


def _first(lines: list[list[str]], count: int, files: Files) -> list[list[str]]:
    """The first `count` training pairs (0: all): a sample of a shuffled pool, whose sizes
    nest; a pool shorter than the sample is named rather than silently used whole."""
    if not count:
        return lines
    if len(lines[0]) < count:
        raise PairDataError(
            f"{', '.join(str(s) for s, _ in files)}: {len(lines[0])} training pairs, fewer than "
            f"the {count} asked for (--train-lines): give a larger pool or a smaller size"
        )
    return [side[:count] for side in lines]


def _check_tags(dictionary: Path, direction: Direction) -> None:
    """The pair's dictionary has both language tags, or it is another pair's."""
    known = {line.split(" ", 1)[0] for line in read_lines(dictionary, PairDataError)}
    for lang in (direction.src, direction.tgt):
        if language_tag(lang) not in known:
            raise PairDataError(
                f"{dictionary} has no {language_tag(lang)}: it is another pair's dictionary; "
                f"give the dict.txt of the pre-training data of {direction.src} and "
                f"{direction.tgt} (`mlrep nmt pair-pretrain`)"
            )


def finetune(
    out: Path,
    dictionary: Path | None,
    direction: Direction,
    sets: dict[str, Files],
    train_lines: int = 0,
) -> dict:
    """One direction's fine-tuning data-bin in `out`, with the pair's `dictionary` (``dict.txt``
    of `pretrain`): each source line gets the target language's tag only
    (`mlrep.text.pretrain_tasks.finetune_source`), the target stays as it is. Training uses
    the first `train_lines` pairs of the train set (0: all of them).

    Without a `dictionary` (a model trained from scratch on its own BPE, Chapter 4's #0*), the
    dictionary is the training sample's own: both sides' subwords counted, with the
    `reserved_tokens`, written to ``out/dict.txt``."""
    if dictionary is not None:
        _check_tags(dictionary, direction)
    lines = {split: _concatenated(sets[split]) for split in SPLITS}
    lines["train"] = _first(lines["train"], train_lines, sets["train"])
    for sources, _ in lines.values():
        sources[:] = [finetune_source(line, direction.tgt) for line in sources]
    own = dictionary is None
    if dictionary is None:
        dictionary = out / DICT
        counts = Counter(
            token for side in lines["train"] for line in side for token in line.split()
        )
        write_dictionary(dictionary, counts, reserved_tokens((direction.src, direction.tgt)))
    summary = {
        "direction": direction.name,
        "lines": _binarise(out, lines, dictionary),
        "dictionary": {
            "file": f"{DICT} (the training sample's)" if own else str(dictionary),
            "sha256": dictionary_sha256(out / BIN),
        },
        "sources": _sources(sets),
    }
    atomic_write_text(out / SUMMARY, json.dumps(summary, indent=1) + "\n")
    return summary
