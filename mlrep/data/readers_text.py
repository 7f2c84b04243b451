"""Readers of plain-text layouts: OPUS-100, ``<split>.<lang>`` files, and monolingual streams.

These files already hold one segment per line; the readers only find and name them (and, for
monolingual streams, decompress at most ``max_lines`` lines), so nothing is loaded whole.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from mlrep.data.source import (
    ReaderError,
    Source,
    TextSet,
    decompressed,
    lines,
    require,
    scratch_file,
)

_PAIR_FOLDER = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")
# opus-100-corpus/v1.0/supervised/de-en/opus.de-en-train.de
_OPUS100 = re.compile(
    r"^opus\.(?P<pair>[a-z_]{2,7}-[a-z_]{2,7})-(?P<split>train|dev|test)\.(?P<lang>[a-z_]{2,7})$"
)


def opus100_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """OPUS-100: ``opus.<l1>-<l2>-<split>.<lang>`` under the registry's ``members`` glob.

    One archive holds the English-centric (``supervised/``) and the zero-shot sets, so the
    registry's ``members`` decides which a key reads. A pair is read when each of its
    languages is chosen or is English; only those members are extracted.
    """
    dataset = source.dataset
    pattern = dataset.members or "*"

    available: set[str] = set()

    def wanted(name: str) -> bool:
        match = _OPUS100.match(PurePosixPath(name).name)
        if not (match and fnmatch(name, pattern)):
            return False
        available.update(match["pair"].split("-"))
        return _chosen(match["pair"].split("-"), languages)

    found: dict[tuple[str, str], dict[str, Path]] = defaultdict(dict)
    for path in source.fetched_paths():
        root = source.unpacked(path, select=wanted)
        for file in sorted(root.rglob("opus.*")):
            if match := _OPUS100.match(file.name):
                found[(match["split"], match["pair"])][match["lang"]] = file
    require(dataset, languages, sorted(available), f"are in no pair of {pattern}")
    sets = []
    for (split, pair), files in sorted(found.items()):
        langs = tuple(pair.split("-"))
        if set(files) != set(langs):
            raise ReaderError(
                f"{source.raw}: OPUS-100 {split} {pair} lacks a side: {sorted(files)}"
            )
        sets.append(TextSet(f"{split}.{pair}", {lang: files[lang] for lang in langs}, langs))
    return sets


def _chosen(langs: Iterable[str], languages: list[str] | None) -> bool:
    """Whether a pair is read: no choice made, or each language chosen or English."""
    return not languages or all(lang in languages or lang == "en" for lang in langs)


def plain_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """Files (or archive members) named ``[<corpus>.]<split>.<lang>``, one segment per line.

    Used by releases already split and aligned (Stanford's IWSLT15 en-vi, the Korean-English
    news archives, hand-assembled WMT training data, PC32's per-pair folders). A file in a
    folder named ``<l1>-<l2>`` belongs to that pair; elsewhere the pair is the registry
    entry's two languages. Every split of a pair needs a file for each of its languages;
    sets are ``<split>.<l1>-<l2>``.
    """
    registry_pair = tuple(source.dataset.languages)
    found: dict[tuple[str, tuple[str, ...]], dict[str, Path]] = defaultdict(dict)
    for path in source.fetched_paths():
        root = source.unpacked(path)
        for file in [root] if root.is_file() else sorted(root.rglob("*")):
            folder = _PAIR_FOLDER.fullmatch(file.parent.name)
            langs = tuple(folder.group(0).split("-")) if folder else registry_pair
            parts = file.name.split(".")
            if file.is_file() and len(parts) >= 2 and parts[-1] in langs:
                found[(parts[-2], langs)][parts[-1]] = file
    sets = []
    for (split, langs), files in sorted(found.items()):
        if not _chosen(langs, languages):
            continue
        if set(files) != set(langs):
            raise ReaderError(
                f"{source.raw}: split {split!r} of {'-'.join(langs)} has files for "
                f"{sorted(files)} but not for {sorted(set(langs) - set(files))}; every split "
                "needs one file per language"
            )
        ordered = {lang: files[lang] for lang in langs}
        sets.append(TextSet(f"{split}.{'-'.join(langs)}", ordered, langs))
    return sets


# Tatoeba Challenge: data/release/<version>/<src>-<tgt>/{train,dev,test}.{src,trg,id}[.gz]
_CHALLENGE = re.compile(r"^(?P<split>train|dev|test)\.(?P<part>src|trg|id)(\.gz)?$")


def tatoeba_challenge_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """Tatoeba Challenge ``<src>-<tgt>.tar`` releases: ``<split>.{src,trg,id}`` per pair.

    ``.id`` holds each line's language variants and stays aligned with the text
    (``<split>.<src>-<tgt>.id``); gzipped training files are decompressed as a stream, at most
    ``max_lines`` lines.
    """
    sets = []
    for path in source.fetched_paths():
        pair = PurePosixPath(path).name.split(".")[0]
        if not _PAIR_FOLDER.fullmatch(pair):
            continue
        src, tgt = pair.split("-")
        if languages and not {src, tgt} <= set(languages):
            continue
        root = source.unpacked(path)
        parts: dict[str, dict[str, Path]] = defaultdict(dict)
        for file in sorted(root.rglob("*")):
            if (match := _CHALLENGE.match(file.name)) and file.parent.name == pair:
                parts[match["split"]][match["part"]] = file
        for split, found in sorted(parts.items()):
            if {"src", "trg"} - set(found):
                raise ReaderError(f"{source.raw / path}: {split} lacks its .src or .trg file")
            name = f"{split}.{pair}"
            sides = {src: "src", tgt: "trg", "id": "id"}
            files = {
                suffix: decompressed(source, found[part], f"{name}.{suffix}")
                for suffix, part in sides.items()
                if part in found
            }
            sets.append(TextSet(name, files, (src, tgt)))
    return sets


def _language(source: Source, path: str) -> str:
    spec = next((f for f in source.dataset.files if f.path == path), None)
    if spec is not None and spec.lang:
        return spec.lang
    parts = PurePosixPath(path).parts
    if len(parts) < 2:
        raise ReaderError(
            f"{source.raw / path}: cannot tell its language; place monolingual files in a "
            "folder named by the language code (<lang>/file)"
        )
    return parts[0]


def monolingual_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """Monolingual text, plain or .xz/.gz/.bz2, streamed: one set ``train.mono`` per corpus.

    CC-100 separates documents with an empty line: they are kept in the stream (so
    ``drop_empty: false`` keeps document boundaries) and counted as ``documents``; with the
    default ``drop_empty: true`` the output is one sentence per line. Files of one language
    (News Crawl years in ``<lang>/``) are concatenated in name order; ``max_lines`` caps
    what is decompressed, per language.
    """
    by_language: dict[str, list[str]] = defaultdict(list)
    for path in source.fetched_paths():
        by_language[_language(source, path)].append(path)
    chosen = require(source.dataset, languages, sorted(by_language), "were not fetched")
    files: dict[str, Path] = {}
    documents: dict[str, int] = {}
    for lang in chosen:
        out = scratch_file(source, f"train.mono.{lang}")
        count, docs, previous = 0, 0, ""
        with open(out, "w", encoding="utf-8", newline="\n") as handle:
            for path in sorted(by_language[lang]):
                for _, text in lines(source.raw / path):
                    if source.max_lines and count >= source.max_lines:
                        break
                    docs += bool(text.strip()) and not previous.strip()
                    previous = text
                    handle.write(text + "\n")
                    count += 1
        files[lang] = out
        documents[lang] = docs
    aligned = tuple((lang,) for lang in chosen)
    info = {"documents": documents}
    return [TextSet("train.mono", files, tuple(chosen), "monolingual", aligned, info)]
