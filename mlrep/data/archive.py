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
from pathlib import Path, PurePosixPath

from mlrep.errors import MlrepError
from mlrep.io import atomic_directory

_COMPRESSED = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


class ArchiveError(MlrepError):
    """An archive that is corrupt, truncated, or has a member that would escape the target."""


def _safe_name(archive: Path, name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("\\") or (path.parts and ":" in path.parts[0]):
        raise ArchiveError(f"{archive}: member {name!r} has an absolute path; refusing to extract")
    if ".." in path.parts:
        raise ArchiveError(f"{archive}: member {name!r} contains '..'; refusing to extract")
    return path


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


def _extract_tar(archive: Path, staging: Path) -> None:
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        for member in members:
            _check_tar_member(archive, member)
        tar.extractall(staging, members=members, filter="data")


def _extract_zip(archive: Path, staging: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            _safe_name(archive, info.filename)
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                raise ArchiveError(f"{archive}: member {info.filename!r} is a symlink; refusing")
        bad = zf.testzip()
        if bad is not None:
            raise ArchiveError(f"{archive}: member {bad!r} fails its CRC check")
        zf.extractall(staging)


def _decompress(archive: Path, staging: Path, opener) -> None:
    with opener(archive, "rb") as source, open(staging / archive.stem, "wb") as out:
        shutil.copyfileobj(source, out, 1 << 20)


def extract(archive: Path, target: Path) -> Path:
    """Extract `archive` into `target` (replaced atomically) and return `target`."""
    if not archive.is_file():
        raise ArchiveError(f"{archive}: no such file")
    name = archive.name.lower()
    try:
        with atomic_directory(target) as staging:
            if name.endswith(_TAR_SUFFIXES):
                _extract_tar(archive, staging)
            elif name.endswith(".zip"):
                _extract_zip(archive, staging)
            elif archive.suffix.lower() in _COMPRESSED:
                _decompress(archive, staging, _COMPRESSED[archive.suffix.lower()])
            else:
                raise ArchiveError(f"{archive}: unknown archive type (tar, zip, gz, xz, bz2)")
    except (EOFError, OSError, tarfile.TarError, zipfile.BadZipFile, lzma.LZMAError) as exc:
        raise ArchiveError(
            f"{archive}: truncated or corrupt ({exc}); delete it and fetch it again"
        ) from exc
    return target
