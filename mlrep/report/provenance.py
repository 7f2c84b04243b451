"""Provenance of a rendered table: which result files fed it, from which config and code.

Chapters write ``provenance.json`` (`mlrep.provenance.record`) into the folder of each
metrics.json or a folder above it; the nearest one describes the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlrep.report.metrics import Results

PROVENANCE_FILE = "provenance.json"


def _nearest(path: Path, stop: Path) -> dict[str, Any]:
    for folder in [path.parent, *path.parent.parents]:
        candidate = folder / PROVENANCE_FILE
        if candidate.exists():
            try:
                return json.loads(candidate.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                return {"error": f"{candidate} is not valid JSON"}
        if folder == stop:
            break
    return {}


def runs(runs_used: set[tuple[str, str]], results: Results, results_dir: Path) -> list[dict]:
    """One entry per metrics.json behind a table: file, sha256, config hash, commit, time."""
    out = []
    for chapter, run in sorted(runs_used):
        for result in sorted(results.seeds(chapter, run), key=lambda r: r.seed):
            info = _nearest(result.path, results_dir)
            out.append(
                {
                    "run": f"{chapter}/{run}",
                    "seed": result.seed,
                    "file": str(result.path),
                    "sha256": result.sha256,
                    "config_hash": info.get("config_hash"),
                    "commit": (info.get("git") or {}).get("commit"),
                    "finished_utc": info.get("finished_utc"),
                }
            )
    return out
