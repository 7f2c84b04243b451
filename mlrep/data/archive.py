"""Safe extraction of downloaded archives (tar[.gz|.bz2|.xz], zip, single .gz/.xz/.bz2 files).

Archives come from the network, so every member is checked before anything is written:
absolute paths, ``..`` components, links that leave the target, and device files are refused.
Extraction goes to a staging folder that replaces the target only when every member was
read, so a truncated or corrupt archive never leaves a half-extracted folder behind.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from mlrep.errors import MlrepError
from mlrep.io import atomic_directory

_COMPRESSED = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
Select = Callable[[str], bool] | None  # which members to extract (None: all)


class ArchiveError(MlrepError):
    """An archive that is corrupt, truncated, or has a member that would escape the target."""


def _safe_name(archive: Path, name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("\\") or (path.parts and ":" in path.parts[0]):
        raise ArchiveError(f"{archive}: member {name!r} has an absolute path; refusing to extract")
    if ".." in path.parts:
        raise ArchiveError(f"{archive}: member {name!r} contains '..'; refusing to extract")
    return path


def is_archive(name: str) -> bool:
    """Whether `name` is a tar or zip archive (a single compressed file is not)."""
    return name.lower().endswith((*_TAR_SUFFIXES, ".zip"))


def _check_tar_member(archive: Path, member: tarfile.TarInfo) -> None:
    path = _safe_name(archive, member.name)
    if member.issym() or member.islnk():
        base = path.parent if member.issym() else PurePosixPath()
        target = PurePosixPath(member.linkname)
        parts: list[str] = []
        for part in (base / target).parts if not target.is_absolute() else ("/",):
            if part == "/" or (part == ".." and not parts):
                raise ArchiveError(
                    f"{archive}: link {member.name!r} -> {member.linkname!r} points outside "
                    "the extraction folder; refusing to extract"
                )
            if part == "..":
                parts.pop()
            elif part != ".":
                parts.append(part)
    elif not (member.isfile() or member.isdir()):
        raise ArchiveError(f"{archive}: member {member.name!r} is a device or fifo; refusing")


def _extract_tar(archive: Path, staging: Path, select: Select) -> None:
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        for member in members:
            _check_tar_member(archive, member)
        chosen = [m for m in members if select is None or m.isdir() or select(m.name)]
        tar.extractall(staging, members=chosen, filter="data")


def _extract_zip(archive: Path, staging: Path, select: Select) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            _safe_name(archive, info.filename)
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                raise ArchiveError(f"{archive}: member {info.filename!r} is a symlink; refusing")
        chosen = [i for i in zf.infolist() if select is None or select(i.filename)]
        zf.extractall(staging, members=chosen)  # a CRC mismatch raises BadZipFile


def _decompress(archive: Path, staging: Path, opener) -> None:
    with opener(archive, "rb") as source, open(staging / archive.stem, "wb") as out:
        shutil.copyfileobj(source, out, 1 << 20)


def extract(archive: Path, target: Path, select: Select = None) -> Path:
    """Extract `archive` into `target` (replaced atomically) and return `target`.

    `select` (member name -> bool) limits extraction to the members a reader needs, so one
    language of a multi-gigabyte release costs only its own bytes on disk; every member is
    still checked for safety.
    """
    if not archive.is_file():
        raise ArchiveError(f"{archive}: no such file")
    name = archive.name.lower()
    try:
        with atomic_directory(target) as staging:
            if name.endswith(_TAR_SUFFIXES):
                _extract_tar(archive, staging, select)
            elif name.endswith(".zip"):
                _extract_zip(archive, staging, select)
            elif archive.suffix.lower() in _COMPRESSED:
                _decompress(archive, staging, _COMPRESSED[archive.suffix.lower()])
            else:
                raise ArchiveError(f"{archive}: unknown archive type (tar, zip, gz, xz, bz2)")
    except (EOFError, OSError, tarfile.TarError, zipfile.BadZipFile, lzma.LZMAError) as exc:
        raise ArchiveError(
            f"{archive}: truncated or corrupt ({exc}); delete it and fetch it again"
        ) from exc
    return target
