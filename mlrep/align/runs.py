"""An alignment run's folder: its counts (``stats.json``) and the config its provenance records.

A run is one aligner and one symmetrization over one pair's tokenized split. What it recorded
is read back from the facts of the run (each direction's ``--stats`` file and the token files'
``.meta.json``), never from params.yaml, which may have changed since the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlrep.align.pharaoh import parse_links
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text
from mlrep.text.lines import read_counts


class RunError(MlrepError):
    """The files of an alignment run do not belong together."""


def _read_stats(paths: list[Path]) -> list[dict[str, Any]]:
    stats = []
    for path in paths:
        try:
            stats.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunError(f"{path}: not a stats file of `mlrep align --stats` ({exc})") from None
    return stats


def aligner_settings(stats_paths: list[Path]) -> dict[str, Any]:
    """The aligner settings shared by every direction and shard (reverse aside)."""
    settings = None
    for path, stats in zip(stats_paths, _read_stats(stats_paths), strict=True):
        options = {k: v for k, v in stats["options"].items() if k != "reverse"}
        current = {
            "backend": stats["backend"],
            "package": stats["package"],
            "max_length": stats["max_length"],
            **options,
        }
        if settings is None:
            settings = current
        elif current != settings:
            raise RunError(f"{path}: aligned with other settings than {stats_paths[0]}; rerun both")
    if settings is None:
        raise RunError("no --stats files given")
    return settings


def run_config(
    scale: str, method: str, stats_paths: list[Path], tokens: list[Path], shards: int
) -> dict[str, Any]:
    """What ``config.yaml`` records: aligner, symmetrization, shards, tokenization."""
    return {
        "scale": scale,
        "align": {
            "symmetrize": method,
            "shards": shards,
            "aligner": aligner_settings(stats_paths),
        },
        "tokens": {str(path): read_counts(path).extra for path in tokens},
    }


def write_stats(folder: Path, stats_paths: list[Path], links: list[str]) -> dict[str, Any]:
    """``stats.json``: pairs, pairs aligned and skipped per direction, symmetrized links."""
    directions: dict[str, dict[str, Any]] = {}
    for stats in _read_stats(stats_paths):
        name = "reverse" if stats["options"]["reverse"] else "forward"
        total = directions.setdefault(name, {"pairs": 0, "aligned": 0, "skipped": {}})
        total["pairs"] += stats["pairs"]
        total["aligned"] += stats["aligned"]
        for reason, count in stats["skipped"].items():
            total["skipped"][reason] = total["skipped"].get(reason, 0) + count
    counts = [len(parse_links(line, f"{folder}:{n}")) for n, line in enumerate(links, 1)]
    summary = {
        "pairs": len(links),
        "directions": directions,
        "links": sum(counts),
        "links_per_pair": round(sum(counts) / len(counts), 4) if counts else None,
    }
    atomic_write_text(folder / "stats.json", json.dumps(summary, indent=2) + "\n")
    return summary
