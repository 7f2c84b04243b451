"""Atomic file and folder output, and content hashing.

Every output of the workflow is published with a rename: an interrupted job leaves either the
previous complete output or nothing, never a half-written file that looks finished.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks so memory stays flat on large files."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def atomic_file(path: Path, suffix: str = ".partial") -> Iterator[Path]:
    """Yield a temporary path beside `path` that replaces `path` only if the block succeeds.

    `suffix` lets writers that infer the format from the name (matplotlib) see the right one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` (UTF-8, LF) through a temporary file in the same folder."""
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")


def decode_line(raw: bytes, path: Path, number: int, error: type[Exception]) -> str:
    """One line of a text file as text; bad bytes raise `error` naming file, line and fix."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}:{number}: invalid UTF-8 at byte {exc.start} of the line ({exc.reason}); "
            "re-encode the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)"
        ) from None


def read_lines(path: Path, error: type[Exception]) -> list[str]:
    """All lines of a UTF-8 file without their line ends.

    A missing file or invalid UTF-8 raises `error`, so each area reports bad input as its own
    user-fixable error with the file (and line) named.
    """
    if not path.exists():
        raise error(f"{path}: file not found")
    with open(path, "rb") as handle:
        return [
            decode_line(raw, path, number, error).rstrip("\r\n")
            for number, raw in enumerate(handle, start=1)
        ]


def count_lines(path: Path, error: type[Exception], chunk: int = 1 << 20) -> int:
    """Number of lines `read_lines` would return, counted in fixed-size chunks (flat memory).

    A shard job needs the file's length to know its block, not the text of the whole file.
    """
    if not path.exists():
        raise error(f"{path}: file not found")
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def read_line_range(path: Path, start: int, stop: int, error: type[Exception]) -> list[str]:
    """Lines ``start`` to ``stop - 1`` (0-based) of a UTF-8 file, as `read_lines` gives them.

    Only those lines are held and decoded, so each of many shards of a large corpus keeps its
    own block in memory; bad bytes are reported with the line's number in the whole file.
    """
    if not path.exists():
        raise error(f"{path}: file not found")
    with open(path, "rb") as handle:
        return [
            decode_line(raw, path, number, error).rstrip("\r\n")
            for number, raw in enumerate(islice(handle, start, stop), start=start + 1)
        ]


@contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """Yield a fresh staging folder that replaces `path` only if the block succeeds.

    The staging folder sits beside `path` so the final rename stays on one file system.
    A previous `path` is kept until the new one is in place.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    previous = None
    if path.exists():
        previous = path.with_name(f".{path.name}.previous")
        shutil.rmtree(previous, ignore_errors=True)
        os.replace(path, previous)
    os.replace(staging, path)
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)
