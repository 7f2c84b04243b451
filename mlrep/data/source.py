"""What every reader shares: its input (`Source`), its output (`TextSet`), and line access.

A reader maps a source's raw files to line-aligned text files (in a scratch folder when the
raw layout needs converting) and says how they belong together; validation, filtering and
writing are done once, by `mlrep.data.readers.normalize`, for every format.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mlrep.data import archive
from mlrep.data.registry import Dataset
from mlrep.errors import MlrepError
from mlrep.io import decode_line

KINDS = ("parallel", "multiway", "comparable", "monolingual", "dictionary", "labelled")
_OPENERS = {".xz": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


class ReaderError(MlrepError):
    """Raw data that a reader cannot map: no reader, unfetched files, or a malformed layout."""


@dataclass(frozen=True)
class TextSet:
    """One normalised set: ``<name>.<suffix>`` for each file, ``name`` = ``<split>.<pair>``.

    `aligned` lists the groups of suffixes that are line-aligned with each other (validated and
    filtered row by row); by default all files form one group. A suffix in no group is an
    annotation the reader already checked (BUCC's gold id pairs) and is copied as it is.
    `info` adds format-specific counts to the set's metadata.
    """

    name: str
    files: Mapping[str, Path]
    languages: tuple[str, ...]
    kind: str = "parallel"
    aligned: tuple[tuple[str, ...], ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"set kind {self.kind!r} is not one of {KINDS}")

    @property
    def groups(self) -> tuple[tuple[str, ...], ...]:
        return self.aligned or (tuple(self.files),)


@dataclass(frozen=True)
class Source:
    """What a reader gets: the dataset, its raw folder and fetched files, a scratch folder.

    `max_lines` (0: no cap) lets a reader of a huge stream (CC-100) stop early; the writer
    applies the same cap to every set.
    """

    dataset: Dataset
    raw: Path
    fetched: dict[str, str]
    scratch: Path
    max_lines: int = 0

    def languages(self, wanted: list[str] | None) -> list[str]:
        """`wanted` (None: every fetched language), checked against the per-language files."""
        files = self.dataset.files
        available = sorted({f.lang for f in files if f.lang and f.path in self.fetched})
        return require(self.dataset, wanted, available, "were not fetched")

    def fetched_paths(self) -> list[str]:
        """Fetched files in registry order (placed files of an unlisted manual release last)."""
        listed = [f.path for f in self.dataset.files if f.path in self.fetched]
        return listed + sorted(set(self.fetched) - set(listed))

    def unpacked(self, path: str, select=None) -> Path:
        """`path` itself, or the folder an archive extracts to (only members `select` accepts)."""
        file = self.raw / path
        if not archive.is_archive(file.name):
            return file
        target = self.scratch / path.replace("/", "_")
        return archive.extract(file, target, select=select)


def require(dataset: Dataset, wanted: list[str] | None, available: list[str], why: str):
    """`wanted` (None: all of `available`); languages not available are an error."""
    missing = sorted(set(wanted or []) - set(available))
    if missing:
        raise ReaderError(
            f"languages {missing} of {dataset.key} {why}; available: {available[:20]}"
            f"{' …' if len(available) > 20 else ''} (`mlrep data fetch {dataset.key} "
            "--languages ...` fetches more)"
        )
    return list(wanted or available)


def open_stream(path: Path) -> IO[bytes]:
    """A binary stream of `path`, decompressed on the fly for .xz, .gz and .bz2."""
    return _OPENERS.get(path.suffix.lower(), open)(path, "rb")


def lines(path: Path, label: str | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) of a UTF-8 file, streamed.

    Invalid UTF-8 or a truncated compressed stream stops with file and line (`label` names
    an archive member the way the user knows it).
    """
    name = Path(label) if label else path
    number = 0
    try:
        with open_stream(path) as handle:
            for number, raw in enumerate(handle, start=1):
                text = decode_line(raw, name, number, ReaderError)
                yield number, text.rstrip("\r\n")
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile, OSError) as exc:
        raise ReaderError(
            f"{name}:{number + 1}: truncated or corrupt stream ({exc}); delete it and fetch it "
            "again"
        ) from exc


def scratch_file(source: Source, name: str) -> Path:
    """A new file path in the scratch folder (its parent created)."""
    path = source.scratch / "text" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def decompressed(source: Source, file: Path, name: str, label: str | None = None) -> Path:
    """`file` itself, or its first ``max_lines`` lines decompressed into the scratch folder."""
    if file.suffix.lower() not in _OPENERS:
        return file
    out = scratch_file(source, name)
    with open(out, "w", encoding="utf-8", newline="\n") as handle:
        for number, text in lines(file, label):
            if source.max_lines and number > source.max_lines:
                break
            handle.write(text + "\n")
    return out
