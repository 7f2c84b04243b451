"""The dataset registry (registry.yaml) and its trust-on-first-use lock (registry-lock.yaml).

Every corpus and benchmark that a chapter uses has one entry, so a download, a licence question
or a checksum always has one place to look. Files with a published checksum are pinned in the
registry; the others get their sha256 recorded in the lock on first download, and every later
download must match it, so a silently changed upstream file is caught on the second machine.
"""

from __future__ import annotations

import fcntl
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text

ACCESS = ("download", "manual", "unavailable")
KEY = re.compile(r"^[a-z0-9]+_[a-z0-9_]+$")
DEFAULT_LOCK = Path(__file__).resolve().parent / "registry-lock.yaml"
_HEX = {"sha256": 64, "md5": 32}


class RegistryError(MlrepError):
    """A malformed registry entry, an unknown key, or a lock file that cannot be read."""


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset: where it lives relative to base_url and the download folder."""

    path: str
    lang: str | None = None
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None
    columns: int | None = None  # fields per line where a reader checks them (ASPEC)

    @property
    def pinned(self) -> bool:
        """Whether a checksum is published in the registry (else trust-on-first-use)."""
        return bool(self.sha256 or self.md5)


@dataclass(frozen=True)
class Dataset:
    key: str
    name: str
    chapters: tuple[str, ...]
    languages: tuple[str, ...]
    access: str
    licence: str
    citation: str
    size: str
    files: tuple[FileSpec, ...]
    base_url: str | None = None
    reader: str | None = None
    manual: str | None = None
    notes: str | None = None
    members: str | None = None  # glob of the archive members the reader uses

    @property
    def importer(self) -> str:
        return self.key.split("_", 1)[0]

    def url(self, spec: FileSpec, mirror: str | None = None) -> str:
        """The file's URL; a mirror replaces the registry's base_url prefix."""
        base = mirror or self.base_url
        if base is None:
            raise RegistryError(f"{self.key} has no base_url: it is {self.access}, not downloaded")
        return base.rstrip("/") + "/" + spec.path

    def select(self, languages: list[str] | None) -> tuple[FileSpec, ...]:
        """The files of `languages` plus the files tied to no language (None: every file).

        A dataset published as one multilingual archive (Flores) has no per-language files:
        all of it is fetched and the reader picks the languages.
        """
        if not languages or not any(f.lang for f in self.files):
            return self.files
        known = {f.lang for f in self.files if f.lang}
        unknown = sorted(set(languages) - known)
        if unknown:
            raise RegistryError(
                f"{self.key} has no files for language(s) {unknown}; "
                f"it has files for {sorted(known) or 'no single language'}"
            )
        return tuple(f for f in self.files if f.lang is None or f.lang in languages)


def _file(key: str, raw: Mapping[str, Any]) -> FileSpec:
    spec = FileSpec(**raw)
    if Path(spec.path).is_absolute() or ".." in Path(spec.path).parts:
        raise RegistryError(f"{key}: file path {spec.path!r} must be relative, without '..'")
    for algo, length in _HEX.items():
        value = getattr(spec, algo)
        if value is not None and not re.fullmatch(f"[0-9a-f]{{{length}}}", value):
            raise RegistryError(
                f"{key}: {spec.path}: {algo} must be {length} lower-case hex digits"
            )
    return spec


def _expand(key: str, entry: dict[str, Any]) -> list[FileSpec]:
    """Files listed explicitly, or one per pair of a per-pair ``template``."""
    files = [_file(key, raw) for raw in entry.pop("files", None) or []]
    template = entry.pop("template", None)
    pairs = entry.pop("pairs", None) or []
    for pair in pairs:
        src, tgt = pair.split("-")
        lang = tgt if src == "en" else src
        path = template.format(pair=pair, src=src, tgt=tgt)
        files.append(_file(key, {"path": path, "lang": lang}))
    return files


def parse(data: Mapping[str, Any], label: str = "registry.yaml") -> dict[str, Dataset]:
    """Check and build every entry; errors name the entry and the fix."""
    out: dict[str, Dataset] = {}
    for key, raw in (data.get("datasets") or {}).items():
        if not KEY.match(key):
            raise RegistryError(f"{label}: key {key!r} is not of the form <importer>_<name>")
        entry = dict(raw)
        try:
            files = _expand(key, entry)
            dataset = Dataset(
                key=key,
                files=tuple(files),
                chapters=tuple(entry.pop("chapters")),
                languages=tuple(str(x) for x in entry.pop("languages")),
                **entry,
            )
        except (TypeError, KeyError, ValueError) as exc:
            raise RegistryError(f"{label}: entry {key}: {exc}") from exc
        if dataset.access not in ACCESS:
            raise RegistryError(f"{label}: {key}: access must be one of {ACCESS}")
        if dataset.access == "download" and not (dataset.base_url and dataset.files):
            raise RegistryError(f"{label}: {key}: a download entry needs base_url and files")
        if dataset.access == "manual" and not dataset.manual:
            raise RegistryError(f"{label}: {key}: a manual entry needs a `manual` instruction")
        paths = [f.path for f in dataset.files]
        if len(paths) != len(set(paths)):
            raise RegistryError(f"{label}: {key}: a file path is listed twice")
        out[key] = dataset
    return out


def load(extra: str | Path | None = None) -> dict[str, Dataset]:
    """The registry shipped with the package, plus the entries of `extra` if given.

    `extra` is a YAML file in registry.yaml's format (params.yaml ``data.registry``): a site's
    own datasets, or a test's. Its keys must be new, so a package entry and its pinned
    checksums always mean the same data.
    """
    text = resources.files("mlrep.data").joinpath("registry.yaml").read_text("utf-8")
    entries = parse(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    if not extra:
        return entries
    path = Path(extra)
    try:
        added = parse(yaml.safe_load(path.read_text("utf-8")) or {}, label=str(path))
    except (OSError, yaml.YAMLError) as exc:
        raise RegistryError(
            f"{path}: cannot read these extra registry entries ({exc}); fix the file or set "
            "data.registry to '' in params.yaml"
        ) from exc
    clash = sorted(set(added) & set(entries))
    if clash:
        raise RegistryError(
            f"{path}: {clash} are keys of the package's registry; give your entries keys of "
            "their own"
        )
    return {**entries, **added}


def get(key: str, registry: Mapping[str, Dataset] | None = None) -> Dataset:
    registry = registry if registry is not None else load()
    if key not in registry:
        raise RegistryError(f"unknown dataset {key!r}; `mlrep data list` shows the known keys")
    return registry[key]


class Lock:
    """sha256 recorded on first download, per dataset key and file path.

    The file is sorted YAML so it diffs cleanly under version control; writes hold an flock
    and re-read the file, so concurrent download jobs never drop each other's entries.
    """

    def __init__(self, path: Path = DEFAULT_LOCK) -> None:
        self.path = path

    def _read(self) -> dict[str, dict[str, str]]:
        if not self.path.exists():
            return {}
        try:
            data = yaml.safe_load(self.path.read_text("utf-8")) or {}
        except yaml.YAMLError as exc:
            raise RegistryError(
                f"{self.path}: not valid YAML ({exc}); restore it from git"
            ) from exc
        return {str(k): dict(v) for k, v in data.items()}

    def entries(self, key: str) -> dict[str, str]:
        return self._read().get(key, {})

    @contextmanager
    def _held(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(f".{self.path.name}.flock"), "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def record(self, key: str, path: str, sha256: str) -> None:
        """Record a first-seen checksum; an existing different one is an error, never replaced."""
        with self._held():
            data = self._read()
            known = data.setdefault(key, {}).get(path)
            if known is not None and known != sha256:
                raise RegistryError(
                    f"{self.path}: {key}/{path} is locked to {known}, not {sha256}; "
                    "delete that lock line only if the upstream change is deliberate"
                )
            data[key][path] = sha256
            ordered = {k: dict(sorted(v.items())) for k, v in sorted(data.items())}
            header = (
                "# sha256 recorded on first download (trust on first use); keep it under\n"
                "# version control. Written by `mlrep data fetch`, sorted for clean diffs.\n"
            )
            atomic_write_text(self.path, header + yaml.safe_dump(ordered, sort_keys=True))


def checksum_status(dataset: Dataset, lock: Lock) -> str:
    """One honest phrase: how this dataset's files are verified today."""
    if dataset.access == "unavailable":
        return "not public"
    locked = lock.entries(dataset.key)
    if dataset.files and all(f.sha256 for f in dataset.files):
        return f"sha256 pinned ({len(dataset.files)} files)"
    if dataset.files and all(f.md5 for f in dataset.files):
        return f"md5 pinned by sacrebleu ({len(dataset.files)} files)"
    how = "manual, locked on placement" if dataset.access == "manual" else "trust-on-first-use"
    if not dataset.files:
        return f"{how} ({len(locked)} files)"
    tofu = [f for f in dataset.files if not f.pinned]
    done = sum(1 for f in tofu if f.path in locked)
    pinned = len(dataset.files) - len(tofu)  # a pinned set extended by files without a sum
    prefix = f"{pinned} pinned + " if pinned else ""
    return f"{prefix}{how} ({done}/{len(tofu)})"
