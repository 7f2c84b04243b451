"""Fetch a registry dataset: streaming, resumable, retried, verified, published atomically.

A file is downloaded into ``<dest>/.partial/<path>.part``; an interrupted download resumes
from there with an HTTP Range request on the next attempt or the next run. Only a file whose
checksum matches (registry pin, or the lock for trust-on-first-use files) is renamed to its
final path, so a file under its real name is always complete and verified. Memory stays flat:
data moves in fixed-size chunks and hashing re-reads the file in chunks.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from mlrep import __version__
from mlrep.data.registry import Dataset, FileSpec, Lock
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text

PARTIAL = ".partial"
MANIFEST = "fetched.json"
_CHUNK = 1 << 20


class DownloadError(MlrepError):
    """A download that cannot complete (HTTP error, retries exhausted, manual data missing)."""


class ChecksumError(DownloadError):
    """Downloaded or placed data whose checksum differs from the registry or the lock."""


@dataclass(frozen=True)
class Policy:
    """How hard to try: retries on connection errors and 5xx, with exponential backoff."""

    retries: int = field(default=5, metadata={"help": "retries on connection errors and 5xx"})
    timeout: float = field(default=60.0, metadata={"help": "seconds without data before a retry"})
    backoff: float = field(
        default=1.0, metadata={"help": "first retry delay in s (doubles each time)"}
    )
    chunk_bytes: int = _CHUNK
    progress: bool = True


CALLER_SET = ("chunk_bytes", "progress")  # Policy fields that are no params.yaml data.download keys


class UnresolvedHostError(DownloadError):
    """The host's name did not resolve: offline, or a typo; retrying in seconds would not help."""


class _Retryable(Exception):
    """A transient failure: the connection dropped, timed out, or the server said 5xx."""


def digests(path: Path, algorithms: tuple[str, ...] = ("sha256",)) -> dict[str, str]:
    """Hex digests of a file in one chunked pass (md5 only where a registry pin needs it)."""
    hashers = {name: hashlib.new(name, usedforsecurity=False) for name in algorithms}
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            for hasher in hashers.values():
                hasher.update(chunk)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


def _attempt(url: str, partial: Path, policy: Policy) -> None:
    offset = partial.stat().st_size if partial.exists() else 0
    headers = {"User-Agent": f"mlrep/{__version__}"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        response = urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=policy.timeout
        )
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            return  # the partial file is already whole; the checksum decides
        if exc.code >= 500 or exc.code == 429:
            raise _Retryable(f"HTTP {exc.code} {exc.reason}") from exc
        raise DownloadError(
            f"{url}: HTTP {exc.code} {exc.reason}; check the registry URL or the mirror "
            "(--mirror, or data.download.mirrors in params.yaml)"
        ) from exc
    except (OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", None)
        if isinstance(reason, socket.gaierror):
            host = urllib.parse.urlsplit(url).hostname
            raise UnresolvedHostError(
                f"{url}: the host {host} could not be resolved ({reason.strerror}); offline?"
            ) from exc
        raise _Retryable(str(exc)) from exc
    with response:
        resumed = offset and response.status == 206
        if resumed and not response.headers.get("Content-Range", "").startswith(f"bytes {offset}-"):
            raise _Retryable(f"server answered the range {offset}- with the wrong range")
        start = offset if resumed else 0
        length = response.headers.get("Content-Length")
        total = start + int(length) if length is not None else None
        bar = tqdm(
            total=total,
            initial=start,
            unit="B",
            unit_scale=True,
            desc=partial.name.removesuffix(".part"),
            disable=None if policy.progress else True,
            file=sys.stderr,
        )
        with open(partial, "ab" if resumed else "wb") as out, bar:
            while True:
                try:
                    chunk = response.read(policy.chunk_bytes)
                except (OSError, http.client.HTTPException) as exc:
                    raise _Retryable(f"connection lost: {exc!r}") from exc
                if not chunk:
                    break
                out.write(chunk)
                bar.update(len(chunk))
    size = partial.stat().st_size
    if total is not None and size < total:
        raise _Retryable(f"connection closed at {size} of {total} bytes")


def stream(url: str, partial: Path, policy: Policy) -> None:
    """Download `url` into `partial`, resuming and retrying with backoff until complete."""
    partial.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(policy.retries + 1):
        try:
            _attempt(url, partial, policy)
            return
        except _Retryable as exc:
            if attempt == policy.retries:
                have = partial.stat().st_size if partial.exists() else 0
                raise DownloadError(
                    f"{url}: gave up after {attempt + 1} attempts ({exc}); {have} bytes are "
                    f"kept in {partial} and the next run resumes from there"
                ) from exc
            delay = policy.backoff * 2**attempt
            print(f"{url}: {exc}; retrying in {delay:g} s", file=sys.stderr)
            time.sleep(delay)


def verify(dataset: Dataset, spec: FileSpec, path: Path, lock: Lock) -> str:
    """Check `path` against the registry pin or the lock; lock it if first seen. Return sha256."""
    if spec.size is not None and path.stat().st_size != spec.size:
        raise ChecksumError(
            f"{path}: {path.stat().st_size} bytes, but the registry says {spec.size} for "
            f"{dataset.key}/{spec.path}"
        )
    actual = digests(path, ("sha256", "md5") if spec.md5 else ("sha256",))
    locked = lock.entries(dataset.key).get(spec.path)
    for algo, expected, source in (
        ("sha256", spec.sha256, "registry"),
        ("md5", spec.md5, "registry (sacrebleu)"),
        ("sha256", locked, f"lock {lock.path}"),
    ):
        if expected and actual[algo] != expected:
            raise ChecksumError(
                f"{path}: {algo} {actual[algo]} does not match {expected} from the {source} "
                f"for {dataset.key}/{spec.path} (a bad mirror, a truncated copy, or an upstream "
                "change)"
            )
    if not spec.sha256 and locked is None:
        lock.record(dataset.key, spec.path, actual["sha256"])
    return actual["sha256"]


def _mirror_hint(key: str) -> str:
    return f"--mirror DIR|URL, or data.download.mirrors.{key} in params.yaml"


def mirror_folder(mirror: str, key: str) -> Path | None:
    """The folder of a local mirror (a plain path or a file:// URL); None for an http(s) one.

    A site without internet keeps a copy of the files in a folder laid out like the registry's
    base_url; its files are copied, not fetched through urllib (which knows no plain paths).
    Any other scheme, or a folder that is not there, is an error naming the mirror.
    """
    parts = urllib.parse.urlsplit(mirror)
    if parts.scheme in ("http", "https"):
        return None
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        folder = Path(urllib.request.url2pathname(parts.path))
    elif not parts.scheme:
        folder = Path(mirror)
    else:
        raise DownloadError(
            f"mirror {mirror!r}: unsupported; a mirror is an http(s):// URL prefix, a local "
            f"folder or a file:///folder URL ({_mirror_hint(key)})"
        )
    if not folder.is_dir():
        raise DownloadError(
            f"mirror {mirror!r}: the folder {folder} does not exist; give a folder holding "
            f"{key}'s files as laid out under its base_url ({_mirror_hint(key)})"
        )
    return folder


def _obtain(
    dataset: Dataset, spec: FileSpec, partial: Path, mirror: str | None, policy: Policy
) -> None:
    """Put `spec`'s file into `partial`: copied from a local mirror folder, else downloaded."""
    folder = mirror_folder(mirror, dataset.key) if mirror else None
    if folder is None:
        url = dataset.url(spec, mirror)
        print(f"{dataset.key}: {url}", file=sys.stderr)
        try:
            stream(url, partial, policy)
        except UnresolvedHostError as exc:
            fix = f"check the mirror {mirror!r}" if mirror else "use a copy"
            raise UnresolvedHostError(f"{exc} {fix}: {_mirror_hint(dataset.key)}") from None
        return
    source = folder / spec.path
    print(f"{dataset.key}: {source}", file=sys.stderr)
    if not source.is_file():
        raise DownloadError(
            f"{source}: not in the mirror folder {folder}, which must hold {dataset.key}'s "
            f"files as laid out under {dataset.base_url}"
        )
    partial.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, partial)


def _fetch_one(
    dataset: Dataset, spec: FileSpec, dest: Path, mirror: str | None, lock: Lock, policy: Policy
) -> str:
    target = dest / spec.path
    if target.exists():
        try:
            return verify(dataset, spec, target, lock)
        except ChecksumError as exc:
            raise ChecksumError(f"{exc}; delete {target} to download it again") from None
    partial = dest / PARTIAL / f"{spec.path}.part"
    _obtain(dataset, spec, partial, mirror, policy)
    try:
        digest = verify(dataset, spec, partial, lock)
    except ChecksumError as exc:
        partial.unlink(missing_ok=True)
        raise ChecksumError(f"{exc}; the download was deleted and nothing was published") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(partial, target)
    return digest


def _placed(dataset: Dataset, dest: Path) -> list[FileSpec]:
    """Manual data: the listed files, or (for an unlisted release) every file placed in dest."""
    if dataset.files:
        missing = [f.path for f in dataset.files if not (dest / f.path).is_file()]
    else:
        found = sorted(
            p.relative_to(dest).as_posix()
            for p in dest.rglob("*")
            if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(dest).parts)
            and p.name != MANIFEST
        )
        missing = [] if found else ["(any file of the release)"]
    if missing:
        shown = ", ".join(missing[:8]) + (
            f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        )
        raise DownloadError(
            f"{dataset.key} ({dataset.name}) must be obtained by hand ({dataset.licence}). "
            f"{dataset.manual} Download folder: {dest}. Missing: {shown}. Then run the same "
            "command again to verify the files."
        )
    return list(dataset.files) or [FileSpec(path=path) for path in found]


def fetch(
    dataset: Dataset,
    dest: Path,
    *,
    languages: list[str] | None = None,
    mirror: str | None = None,
    lock: Lock | None = None,
    policy: Policy = Policy(),
) -> dict[str, str]:
    """Make every (selected) file of `dataset` present and verified in `dest`.

    Files already present are verified, not fetched again, so reruns are offline. Writes
    ``fetched.json`` (file → sha256) last, as the marker that the folder is complete.
    """
    lock = lock or Lock()
    if dataset.access == "unavailable":
        raise DownloadError(f"{dataset.key} is not public: {dataset.notes}")
    dest.mkdir(parents=True, exist_ok=True)
    if dataset.access == "manual":
        specs = [f for f in _placed(dataset, dest) if not languages or f.lang in (None, *languages)]
        files = {f.path: verify(dataset, f, dest / f.path, lock) for f in specs}
    else:
        files = {
            f.path: _fetch_one(dataset, f, dest, mirror, lock, policy)
            for f in dataset.select(languages)
        }
    manifest = {
        "key": dataset.key,
        "access": dataset.access,
        "source": mirror or dataset.base_url,
        "languages": languages or "all",
        "files": files,
    }
    atomic_write_text(dest / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return files
