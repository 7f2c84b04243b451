"""Readers: each source format normalised to one internal layout that every chapter reads.

Layout of ``results/data/<key>/``: plain-text files ``<split>.<pair>.<suffix>`` (UTF-8, one
segment per line) and ``metadata.json`` with the source key, languages, per-set counts
(including what each content filter removed), the sha256 of every output file and of the raw
files it came from. Each set has a ``kind``:

* ``parallel``: one file per language, aligned by line (``test.deu-eng.deu``);
* ``multiway``: the same with every language of a multi-way source (pair ``multiway``);
* ``dictionary``: aligned like parallel, one word pair per line (MUSE); ``source_words``;
* ``comparable``: each side on its own with its ids (``….de`` + ``….de.ids``), plus the gold
  id pairs (``….gold``, TAB-separated), as BUCC mining needs; counts per side (``sides``);
* ``monolingual``: ``train.mono.<lang>`` per language, counts per side, ``documents``;
* ``labelled``: documents ``<split>.<name>.<lang>`` with ``….<lang>.label`` line by line.

A reader (one per source *format*, in ``readers_*.py``) only finds the files and converts
its layout to lines; validation, the ``max_lines`` cap, filters and writing are shared here.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict
from itertools import islice
from pathlib import Path
from typing import Any

from mlrep.data import (
    archive,
    readers_columns,
    readers_labelled,
    readers_markup,
    readers_text,
    validate,
)
from mlrep.data.download import MANIFEST
from mlrep.data.registry import Dataset
from mlrep.data.source import ReaderError, Source, TextSet, require
from mlrep.io import atomic_directory, atomic_write_text, sha256_file
from mlrep.provenance import record

__all__ = ["READERS", "ReaderError", "normalize", "publish"]

Reader = Callable[[Source, list[str] | None], list[TextSet]]


def tatoeba_set(lang: str, text: Path, english: Path) -> TextSet:
    """One language of the normalised Tatoeba layout: ``test.<xx>-eng.<xx>`` and ``….eng``."""
    return TextSet(f"test.{lang}-eng", {lang: text, "eng": english}, (lang, "eng"))


def tatoeba_pairs(source: Source, languages: list[str] | None) -> list[TextSet]:
    """LASER's Tatoeba v1: ``tatoeba.<xx>-eng.<xx>`` and ``tatoeba.<xx>-eng.eng`` per language."""
    return [
        tatoeba_set(
            lang, source.raw / f"tatoeba.{lang}-eng.{lang}", source.raw / f"tatoeba.{lang}-eng.eng"
        )
        for lang in source.languages(languages)
    ]


def opus_moses_pairs(source: Source, languages: list[str] | None) -> list[TextSet]:
    """OPUS Moses downloads: ``<l1>-<l2>.txt.zip`` holding ``<Corpus>.<l1>-<l2>.<l1|l2>``."""
    pairs: list[TextSet] = []
    chosen = source.languages(languages)
    for spec in source.dataset.files:
        if spec.lang not in chosen or spec.path not in source.fetched:
            continue
        pair = spec.path.split(".", 1)[0]
        folder = archive.extract(source.raw / spec.path, source.scratch / pair)
        sides = {}
        for lang in pair.split("-"):
            found = sorted(folder.rglob(f"*.{pair}.{lang}"))
            if len(found) != 1:
                raise ReaderError(
                    f"{source.raw / spec.path}: expected one member named *.{pair}.{lang}, "
                    f"found {[p.name for p in found]}; is this an OPUS Moses download?"
                )
            sides[lang] = found[0]
        pairs.append(TextSet(f"train.{pair}", sides, tuple(sides)))
    return pairs


def flores_pairs(source: Source, languages: list[str] | None) -> list[TextSet]:
    """Flores-101/200 archives: ``<top>/{dev,devtest}/<code>.{dev,devtest}``, multi-way."""
    spec = source.dataset.files[0]
    if spec.path not in source.fetched:
        raise ReaderError(f"{source.raw}: {spec.path} was not fetched; run `mlrep data fetch`")
    folder = archive.extract(source.raw / spec.path, source.scratch / "flores")
    pairs: list[TextSet] = []
    for split in ("dev", "devtest"):
        files = {p.name.removesuffix(f".{split}"): p for p in folder.glob(f"*/{split}/*.{split}")}
        if not files:
            raise ReaderError(f"{source.raw / spec.path}: no */{split}/*.{split} files inside")
        chosen = require(source.dataset, languages, sorted(files), "are not in the archive")
        pairs.append(
            TextSet(f"{split}.multiway", {lang: files[lang] for lang in chosen}, tuple(chosen))
        )
    return pairs


READERS: dict[str, Reader] = {
    "tatoeba": tatoeba_pairs,
    "opus_moses": opus_moses_pairs,
    "flores": flores_pairs,
    "bucc": readers_columns.bucc_sets,
    "aspec": readers_columns.aspec_sets,
    "muse": readers_columns.muse_sets,
    "wmt_sgml": readers_markup.wmt_sgml_sets,
    "iwslt_xml": readers_markup.iwslt_xml_sets,
    "opus100": readers_text.opus100_sets,
    "plain": readers_text.plain_sets,
    "monolingual": readers_text.monolingual_sets,
    "tatoeba_challenge": readers_text.tatoeba_challenge_sets,
    "ted_tsv": readers_columns.ted_tsv_sets,
    "alt": readers_columns.alt_sets,
    "mldoc": readers_labelled.mldoc_sets,
    "cls_review": readers_labelled.cls_review_sets,
    "marc_json": readers_labelled.marc_json_sets,
}


def _write_group(
    item: TextSet, group: tuple[str, ...], outputs: dict[str, Path], filters: validate.Filters
) -> dict[str, Any]:
    """Validate, cap and filter one group of line-aligned files into the staging folder."""
    counts: dict[str, int] = {}
    rows = validate.parallel([item.files[suffix] for suffix in group])
    if filters.max_lines:
        rows = islice(rows, filters.max_lines)
    with ExitStack() as stack:
        handles = [
            stack.enter_context(open(outputs[suffix], "w", encoding="utf-8", newline="\n"))
            for suffix in group
        ]
        for row in validate.filtered(rows, filters, counts):
            for handle, line in zip(handles, row, strict=True):
                handle.write(line + "\n")
    return {
        "lines": counts["kept"],
        "filtered": {k: v for k, v in counts.items() if k not in ("input", "kept")},
        "input_lines": counts["input"],
    }


def _write_set(item: TextSet, staging: Path, filters: validate.Filters) -> dict[str, Any]:
    outputs = {suffix: staging / f"{item.name}.{suffix}" for suffix in item.files}
    grouped = [suffix for group in item.groups for suffix in group]
    sides = {group[0]: _write_group(item, group, outputs, filters) for group in item.groups}
    for suffix in set(item.files) - set(grouped):
        shutil.copyfile(item.files[suffix], outputs[suffix])
    info: dict[str, Any] = {"kind": item.kind, "languages": list(item.languages)}
    info.update({"sides": sides} if item.aligned else next(iter(sides.values())))
    info.update(item.info)
    info["files"] = {path.name: sha256_file(path) for path in outputs.values()}
    if filters.langid_sample:
        texts = {lang: outputs[lang] for lang in item.languages}
        info["langid"] = validate.language_id(texts, filters.langid_sample)
        for warning in info["langid"]["warnings"]:
            print(f"{item.name}: language-ID warning: {warning}", file=sys.stderr)
    return info


def normalize(
    dataset: Dataset,
    raw: Path,
    out: Path,
    languages: list[str] | None,
    filters: validate.Filters,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Validate and normalise the fetched files of `dataset` in `raw` into `out` (atomic).

    With `config` (the resolved settings the step read), the folder also gets the project's
    config.yaml + provenance.json.
    """
    if dataset.reader not in READERS:
        raise ReaderError(
            f"{dataset.key} has no reader yet (registry reader: {dataset.reader!r}); known "
            f"readers: {sorted(READERS)}"
        )
    manifest_path = raw / MANIFEST
    if not manifest_path.exists():
        raise ReaderError(f"{raw}: no {MANIFEST}; run `mlrep data fetch {dataset.key}` first")
    fetched = json.loads(manifest_path.read_text("utf-8"))["files"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(
            prefix=f".{out.name}.", suffix=".scratch", dir=out.parent
        ) as tmp,
        atomic_directory(out) as staging,
    ):
        source = Source(dataset, raw, fetched, Path(tmp), filters.max_lines)
        sets = READERS[dataset.reader](source, languages)
        if not sets:
            raise ReaderError(
                f"{raw}: the {dataset.reader} reader found no data for languages "
                f"{languages or 'all'} of {dataset.key}; check the fetched files and --languages"
            )
        used = {
            f.path
            for f in dataset.files
            if f.path in fetched and (f.lang is None or not languages or f.lang in languages)
        } or set(fetched)
        about = {
            "source_key": dataset.key,
            "name": dataset.name,
            "licence": dataset.licence,
            "citation": dataset.citation,
        }
        metadata = publish(
            sets, staging, filters, about, {"raw_files": {p: fetched[p] for p in sorted(used)}}
        )
        if config is not None:
            record(staging, f"data normalize {dataset.key}", config)
    return metadata


def publish(
    sets: list[TextSet],
    staging: Path,
    filters: validate.Filters,
    about: dict[str, Any],
    origin: dict[str, Any],
) -> dict[str, Any]:
    """Validate, filter and write `sets` and their ``metadata.json`` into `staging`.

    One writer for a normalised download and a stand-in alike, so both have the same layout
    and counts; `about` names the data (source_key, name, licence, citation) and `origin` says
    where the lines came from (``raw_files``, or ``stand_in``).
    """
    names = [item.name for item in sets]
    if len(names) != len(set(names)):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ReaderError(
            f"{about['source_key']}: sets {twice} were made twice; a reader (or stand-in "
            "layout) must name each set once"
        )
    written = {item.name: _write_set(item, staging, filters) for item in sets}
    metadata = {
        **about,
        "languages": sorted({lang for info in written.values() for lang in info["languages"]}),
        "filters": asdict(filters),
        "pairs": written,
        **origin,
    }
    atomic_write_text(
        staging / "metadata.json", json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"
    )
    return metadata
