"""The published numbers: one CSV per table under ``reports/reference/`` plus ``sources.yaml``.

Cells are kept as printed (``42.19%``, ``12.00M``, ``-``); `number` reads the value a cell
holds so that aggregates and claims can compute with it.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mlrep.errors import MlrepError

SOURCES_FILE = "sources.yaml"
_NUMBER = re.compile(r"^\(?([+\-−]?\d+(?:,\d{3})*(?:\.\d+)?)\)?\s*(%|[kKMB])?\*?$")
_SUFFIX = {"%": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, None: 1.0}


class ReferenceError(MlrepError):
    """The published-number files are missing or malformed."""


def number(cell: str) -> float | None:
    """The value of a printed cell (``42.19%`` → 42.19, ``4.9M`` → 4.9e6); None if not a number."""
    text = cell.strip().replace("−", "-").rstrip("†‡*").strip()
    match = _NUMBER.match(text)
    if not match:
        return None
    return float(match.group(1).replace(",", "")) * _SUFFIX[match.group(2)]


def multiplier(cell: str) -> tuple[str, float]:
    """The magnitude suffix a printed number carries and its factor (``471M`` → ("M", 1e6));
    ("", 1) for none or ``%``: a measured count is shown in the unit its printed cell uses."""
    match = _NUMBER.match(cell.strip().replace("−", "-").rstrip("†‡*").strip())
    suffix = match.group(2) if match else None
    return (suffix, _SUFFIX[suffix]) if suffix and suffix != "%" else ("", 1.0)


def decimals(cell: str) -> int:
    """How many decimals a printed number shows (sets the rounding tolerance of checks)."""
    match = re.search(r"\.(\d+)", cell)
    return len(match.group(1)) if match else 0


@dataclass(frozen=True)
class Source:
    table_id: str
    chapter: str
    label: str
    seed: str
    line: int
    caveats: list[str] = field(default_factory=list)

    @property
    def citation(self) -> str:
        return f"seeds/{self.seed}:{self.line}"


@dataclass(frozen=True)
class PublishedTable:
    table_id: str
    header: list[str]
    rows: list[list[str]]
    source: Source


def load_sources(reference_dir: Path) -> dict[str, Source]:
    path = reference_dir / SOURCES_FILE
    if not path.exists():
        raise ReferenceError(f"{path} not found: the published tables ship with the repository")
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {
        table_id: Source(
            table_id=table_id,
            chapter=entry["chapter"],
            label=entry["label"],
            seed=entry["seed"],
            line=entry["line"],
            caveats=list(entry.get("caveats") or []),
        )
        for table_id, entry in data.items()
    }


def load_table(reference_dir: Path, source: Source) -> PublishedTable:
    path = reference_dir / f"{source.table_id}.csv"
    if not path.exists():
        raise ReferenceError(f"{path} not found but listed in {reference_dir / SOURCES_FILE}")
    with open(path, encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    for number_, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ReferenceError(
                f"{path}:{number_}: {len(row)} cells but the header has {len(header)}"
            )
    return PublishedTable(source.table_id, header, rows, source)


def load_all(reference_dir: Path) -> dict[str, PublishedTable]:
    """Every published table listed in ``sources.yaml``, by table id."""
    return {tid: load_table(reference_dir, s) for tid, s in load_sources(reference_dir).items()}
