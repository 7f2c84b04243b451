"""Readers: each source format normalised to one internal layout that every chapter reads.

Layout of ``results/data/<key>/``: one plain-text file per side of each language pair and
split, ``<split>.<src>-<tgt>.<lang>`` like the tiny corpus (UTF-8, one segment per line,
aligned by line number; a multi-way source uses ``multiway`` as its pair), and
``metadata.json`` with the source key, languages, per-pair counts (including what each content
filter removed), the sha256 of every output file and of the raw files it came from.
A reader only maps a source's files to pairs; validation and writing are shared.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mlrep.data import archive, validate
from mlrep.data.download import MANIFEST
from mlrep.data.registry import Dataset
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, atomic_write_text, sha256_file
from mlrep.provenance import record

# ("<split>.<pair>", {language: text file}) for each aligned set a source holds; a multi-way
# source (Flores) has one set per split, "<split>.multiway", with every language in it.
Pairs = list[tuple[str, dict[str, Path]]]


class ReaderError(MlrepError):
    """Raw data that a reader cannot map (no reader, missing or unfetched files)."""


@dataclass(frozen=True)
class Source:
    """What a reader gets: the dataset, its raw folder and fetched files, a scratch folder."""

    dataset: Dataset
    raw: Path
    fetched: dict[str, str]
    scratch: Path

    def languages(self, wanted: list[str] | None) -> list[str]:
        """`wanted` (None: every fetched language), checked against the per-language files."""
        files = self.dataset.files
        available = sorted({f.lang for f in files if f.lang and f.path in self.fetched})
        return _require(self.dataset, wanted, available, "were not fetched")


def _require(dataset: Dataset, wanted: list[str] | None, available: list[str], why: str):
    missing = sorted(set(wanted or []) - set(available))
    if missing:
        raise ReaderError(
            f"languages {missing} of {dataset.key} {why}; available: {available[:20]}"
            f"{' …' if len(available) > 20 else ''} (`mlrep data fetch {dataset.key} "
            "--languages ...` fetches more)"
        )
    return list(wanted or available)


def tatoeba_pairs(source: Source, languages: list[str] | None) -> Pairs:
    """LASER's Tatoeba v1: ``tatoeba.<xx>-eng.<xx>`` and ``tatoeba.<xx>-eng.eng`` per language."""
    return [
        (
            f"test.{lang}-eng",
            {side: source.raw / f"tatoeba.{lang}-eng.{side}" for side in (lang, "eng")},
        )
        for lang in source.languages(languages)
    ]


def opus_moses_pairs(source: Source, languages: list[str] | None) -> Pairs:
    """OPUS Moses downloads: ``<l1>-<l2>.txt.zip`` holding ``<Corpus>.<l1>-<l2>.<l1|l2>``."""
    pairs: Pairs = []
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
        pairs.append((f"train.{pair}", sides))
    return pairs


def flores_pairs(source: Source, languages: list[str] | None) -> Pairs:
    """Flores-101/200 archives: ``<top>/{dev,devtest}/<code>.{dev,devtest}``, multi-way."""
    spec = source.dataset.files[0]
    if spec.path not in source.fetched:
        raise ReaderError(f"{source.raw}: {spec.path} was not fetched; run `mlrep data fetch`")
    folder = archive.extract(source.raw / spec.path, source.scratch / "flores")
    pairs: Pairs = []
    for split in ("dev", "devtest"):
        files = {p.name.removesuffix(f".{split}"): p for p in folder.glob(f"*/{split}/*.{split}")}
        if not files:
            raise ReaderError(f"{source.raw / spec.path}: no */{split}/*.{split} files inside")
        chosen = _require(source.dataset, languages, sorted(files), "are not in the archive")
        pairs.append((f"{split}.multiway", {lang: files[lang] for lang in chosen}))
    return pairs


READERS: dict[str, Callable[[Source, list[str] | None], Pairs]] = {
    "tatoeba": tatoeba_pairs,
    "opus_moses": opus_moses_pairs,
    "flores": flores_pairs,
}


def _write_pair(
    name: str, sources: dict[str, Path], staging: Path, filters: validate.Filters
) -> dict[str, Any]:
    counts: dict[str, int] = {}
    langs = list(sources)
    outputs = {lang: staging / f"{name}.{lang}" for lang in langs}
    rows = validate.parallel([sources[lang] for lang in langs])
    with ExitStack() as stack:
        handles = [
            stack.enter_context(open(outputs[lang], "w", encoding="utf-8", newline="\n"))
            for lang in langs
        ]
        for row in validate.filtered(rows, filters, counts):
            for handle, line in zip(handles, row, strict=True):
                handle.write(line + "\n")
    info: dict[str, Any] = {
        "languages": langs,
        "lines": counts["kept"],
        "filtered": {k: v for k, v in counts.items() if k not in ("input", "kept")},
        "input_lines": counts["input"],
        "files": {path.name: sha256_file(path) for path in outputs.values()},
    }
    if filters.langid_sample:
        info["langid"] = validate.language_id(outputs, filters.langid_sample)
        for warning in info["langid"]["warnings"]:
            print(f"{name}: language-ID warning: {warning}", file=sys.stderr)
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
        pairs = READERS[dataset.reader](Source(dataset, raw, fetched, Path(tmp)), languages)
        written = {name: _write_pair(name, sources, staging, filters) for name, sources in pairs}
        used = {
            f.path
            for f in dataset.files
            if f.path in fetched and (f.lang is None or not languages or f.lang in languages)
        }
        metadata = {
            "source_key": dataset.key,
            "name": dataset.name,
            "licence": dataset.licence,
            "citation": dataset.citation,
            "languages": sorted({lang for info in written.values() for lang in info["languages"]}),
            "filters": asdict(filters),
            "pairs": written,
            "raw_files": {path: fetched[path] for path in sorted(used)},
        }
        atomic_write_text(
            staging / "metadata.json", json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"
        )
        if config is not None:
            record(staging, f"data normalize {dataset.key}", config)
    return metadata
