"""Provenance of a rendered table: which result files fed it, from which config, code and data.

Chapters write ``provenance.json`` (`mlrep.provenance.record`) into the folder of each
metrics.json or a folder above it; the nearest one describes the run. Its ``data`` field holds
the checksums of the datasets the run was built from; a run recorded before that field existed
has them traced now from its recorded command (`mlrep.provenance.data_checksums`), which reads
today's dataset files, so such entries are marked as traced rather than recorded. A dataset
that stands in for a benchmark (`mlrep.data.stand_in`) says so, and so does every table read
from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlrep.data.stand_in import describe
from mlrep.provenance import PROVENANCE_FILE, STAND_IN, data_checksums
from mlrep.report.metrics import Results


def _nearest(path: Path, stop: Path) -> tuple[Path | None, dict[str, Any]]:
    for folder in [path.parent, *path.parent.parents]:
        candidate = folder / PROVENANCE_FILE
        if candidate.exists():
            try:
                return folder, json.loads(candidate.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                return folder, {"error": f"{candidate} is not valid JSON"}
        if folder == stop:
            break
    return None, {}


def _data(folder: Path | None, info: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The run's dataset checksums and whether they were traced now (not recorded)."""
    if isinstance(info.get("data"), dict):
        return info["data"], False
    command = info.get("command")
    if folder is None or not isinstance(command, list):
        return {}, False
    # commands ran from the workflow root, which is where the report is built from too
    return data_checksums([str(a) for a in command], Path.cwd(), own=folder), True


def runs(runs_used: set[tuple[str, str]], results: Results, results_dir: Path) -> list[dict]:
    """One entry per metrics.json behind a table: file, sha256, config hash, commit, time and
    the checksums of the datasets it was built from."""
    out = []
    for chapter, run in sorted(runs_used):
        for result in sorted(results.seeds(chapter, run), key=lambda r: r.seed):
            folder, info = _nearest(result.path, results_dir)
            data, traced = _data(folder, info)
            out.append(
                {
                    "run": f"{chapter}/{run}",
                    "seed": result.seed,
                    "file": str(result.path),
                    "sha256": result.sha256,
                    "config_hash": info.get("config_hash"),
                    "commit": (info.get("git") or {}).get("commit"),
                    "finished_utc": info.get("finished_utc"),
                    "data": data,
                    "data_traced": traced,
                }
            )
    return out


def datasets(entries: list[dict]) -> dict[str, dict[str, str]]:
    """Every dataset behind a table's runs, once: folder -> {file, sha256}."""
    return {name: d for e in entries for name, d in sorted(e.get("data", {}).items())}


def stand_in(data: dict[str, Any]) -> str | None:
    """A stand-in dataset's label ("stand-in for <benchmark>, cut from <corpus> <split>")."""
    return describe(data[STAND_IN]) if isinstance(data.get(STAND_IN), dict) else None


def stand_ins(entries: list[dict]) -> list[str]:
    """The stand-ins behind a table's runs, each once: its numbers are not the benchmark's."""
    return sorted({label for d in datasets(entries).values() if (label := stand_in(d))})
