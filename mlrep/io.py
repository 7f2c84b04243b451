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
from pathlib import Path

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks so memory stays flat on large files."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` (UTF-8, LF) through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
