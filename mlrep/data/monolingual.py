"""Leak-free monolingual text from a multi-way corpus, for pre-training, LM and denoising steps.

The embedded tiny corpus is multi-way parallel: a segment id names one English sentence and
all its translations, one ``<split>.<a>-<b>.segids`` line per pair file. A test sentence's French
translation is a paraphrase of its German one, so removing only the German test lines from
German pre-training text is not enough once a model pre-trains on several languages: every
id held out (``valid`` and ``test``) in *any* pair must leave *every* language's text. This
module is the one place that does it; a chapter that pre-trains, builds an LM or denoises
reads its text from here (``mlrep data monolingual``), optionally also leaving out the ids of
its own fine-tuning set (``--exclude-ids``).

The corpus split is a hash of the English side, so the tiny corpus already keeps an id in one
split across languages; this helper does not rely on that (a corpus built otherwise, a
stand-in or a chapter's own subset may not), and also drops a training line whose text equals
a held-out line of the same language under another id (two English messages, one
translation), where `drop_held_out_text` asks for it.

A monolingual dataset (a normalised registry download of the ``monolingual`` reader,
``train.mono.<lang>``: CC-100 for Chapter 4 at full) shares no segment with a parallel corpus,
so nothing of it is held out: its lines pass through with the ids ``<lang>:<line number>``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mlrep.data import validate
from mlrep.data.stand_in import corpus_record
from mlrep.data.tiny_corpus import IDS_SUFFIX, REBUILD
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, read_lines, sha256_file
from mlrep.provenance import record

TRAIN = "train"  # the split the text is read from
MONO = "train.mono"  # a monolingual dataset's files: train.mono.<lang> (mlrep.data.readers)
METADATA = "metadata.json"
_PAIR_IDS = re.compile(rf"^(?P<split>[^.]+)\.(?P<a>[^.-]+)-(?P<b>[^.-]+)\.{IDS_SUFFIX}$")


class MonolingualError(MlrepError):
    """A corpus without segment ids, or a language it does not have."""


@dataclass(frozen=True)
class MonolingualSettings:
    """What is held out of the text (a chapter's params section, or the verb's options)."""

    held_out_splits: list[str] = field(
        metadata={"help": "splits whose segment ids, in every pair, leave every language's text"}
    )
    drop_held_out_text: bool = field(
        metadata={"help": "also drop a line equal to a held-out line of its language"}
    )


@dataclass(frozen=True)
class PairFiles:
    """One aligned pair file set of the corpus: ``<split>.<a>-<b>.{segids,a,b}``."""

    split: str
    languages: tuple[str, str]
    ids: Path

    def side(self, language: str) -> Path:
        return self.ids.with_suffix(f".{language}")


def pair_files(corpus: Path) -> list[PairFiles]:
    """Every pair file set of `corpus` that records segment ids, in name order."""
    found = []
    for path in sorted(corpus.glob(f"*.{IDS_SUFFIX}")):
        if match := _PAIR_IDS.match(path.name):
            found.append(PairFiles(match["split"], (match["a"], match["b"]), path))
    if not found:
        raise MonolingualError(
            f"{corpus}: no <split>.<a>-<b>.{IDS_SUFFIX} files; leak-free text needs the segment "
            "ids of a multi-way corpus (one built before they moved from `.id` lacks them): "
            f"{REBUILD}"
        )
    return found


def _rows(files: PairFiles, language: str) -> Iterator[tuple[str, ...]]:
    """(segment id, line) of one side of a pair file set, checked aligned."""
    return validate.parallel([files.ids, files.side(language)])


def held_out(corpus: Path, settings: MonolingualSettings) -> tuple[set[str], dict[str, set[str]]]:
    """The held-out segment ids of every pair, and the held-out lines of each language."""
    ids: set[str] = set()
    text: dict[str, set[str]] = {}
    for files in pair_files(corpus):
        if files.split not in settings.held_out_splits:
            continue
        ids.update(read_lines(files.ids, MonolingualError))
        if settings.drop_held_out_text:
            for language in files.languages:
                text.setdefault(language, set()).update(line for _, line in _rows(files, language))
    return ids, text


def unpaired(corpus: Path, language: str) -> Iterator[tuple[str, str]] | None:
    """(``<language>:<n>``, line) of a monolingual dataset's text, streamed; None for a corpus
    with segment ids or without ``train.mono.<language>``."""
    path = corpus / f"{MONO}.{language}"
    if any(corpus.glob(f"*.{IDS_SUFFIX}")) or not path.is_file():
        return None
    return (
        (f"{language}:{number}", line) for number, (line,) in enumerate(validate.parallel([path]))
    )


def text(
    corpus: Path,
    language: str,
    settings: MonolingualSettings,
    exclude: Iterable[str] = (),
    removed: Counter[str] | None = None,
) -> Iterator[tuple[str, str]]:
    """(segment id, line) of `language`'s training text, each id once (English sits in every
    pair), with every held-out id of every language, each id in `exclude` and (where the
    settings ask) each held-out line of `language` left out; `removed` counts why."""
    removed = Counter() if removed is None else removed
    if (rows := unpaired(corpus, language)) is not None:
        yield from rows
        return
    ids, held_text = held_out(corpus, settings)
    excluded = set(exclude)
    language_text = held_text.get(language, set())
    sources = [f for f in pair_files(corpus) if f.split == TRAIN and language in f.languages]
    if not sources:
        raise MonolingualError(
            f"{corpus}: no {TRAIN} text with segment ids for language {language!r}"
        )
    seen: set[str] = set()
    for files in sources:
        for segment, line in _rows(files, language):
            if segment in seen:
                continue
            seen.add(segment)
            if segment in ids:
                removed["held_out_id"] += 1
            elif segment in excluded:
                removed["excluded_id"] += 1
            elif line in language_text:
                removed["held_out_text"] += 1
            else:
                yield segment, line


def write(
    corpus: Path,
    languages: list[str],
    out: Path,
    settings: MonolingualSettings,
    exclude: Iterable[str] = (),
    config: dict[str, Any] | None = None,
) -> dict:
    """Write ``<language>.txt`` and ``<language>.id`` (aligned) per language into `out`
    (atomically), with ``metadata.json`` (the corpus record's sha256, settings, counts) and,
    given `config`, ``config.yaml`` and ``provenance.json``."""
    excluded = sorted(set(exclude))
    fingerprint = corpus_record(corpus)
    counts: dict[str, dict[str, int]] = {}
    with atomic_directory(out) as staging:
        for language in languages:
            removed: Counter[str] = Counter()
            rows = list(text(corpus, language, settings, excluded, removed))
            for suffix, column in (("txt", 1), ("id", 0)):
                lines = "".join(f"{row[column]}\n" for row in rows)
                path = staging / f"{language}.{suffix}"
                path.write_text(lines, encoding="utf-8", newline="\n")
            counts[language] = {"lines": len(rows), **dict(sorted(removed.items()))}
        metadata = {
            "corpus": corpus.name,
            "corpus_record": {"file": fingerprint.name, "sha256": sha256_file(fingerprint)},
            "settings": asdict(settings),
            "excluded_ids": len(excluded),
            "languages": counts,
        }
        (staging / METADATA).write_text(
            json.dumps(metadata, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if config is not None:
            record(staging, "data monolingual", config)
    return metadata
