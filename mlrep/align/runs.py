"""An alignment run's folder: its counts (``stats.json``) and the config its provenance records.

A run is one aligner and one symmetrization over one pair's tokenized split, or links derived
from the pair's text or from another run (a w2w lexicon's links, a run's 1-to-1 links). What it
recorded is read back from the facts of the run (each direction's ``--stats`` file, the token
files' ``.meta.json``, the ``config.yaml`` of the lexicon or run it derives from), never from
params.yaml, which may have changed since the run. Its counts include units, the connected
components of each line's links (`mlrep.align.units`): Table 5.1's number of extracted word
pairs (N) and alignments per sentence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from mlrep.align.pharaoh import parse_links
from mlrep.align.units import units
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


def token_tools(tokens: list[Path]) -> dict[str, Any]:
    """The tokenization of each token file, from its ``.meta.json``."""
    return {str(path): read_counts(path).extra for path in tokens}


def recorded_config(folder: Path) -> dict[str, Any]:
    """The ``config.yaml`` that a lexicon or run folder recorded, for what derives from it."""
    path = folder / "config.yaml"
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RunError(
            f"{path}: not the record of an mlrep alignment step ({exc}); rebuild {folder} with "
            "the `mlrep align` verb that writes it, with --record"
        ) from None


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
        "tokens": token_tools(tokens),
    }


def link_counts(folder: Path, links: list[str]) -> dict[str, Any]:
    """Pairs, links and units of a run's lines, in total and per pair."""
    parsed = [parse_links(line, f"{folder}:{n}") for n, line in enumerate(links, 1)]
    total_links = sum(len(line) for line in parsed)
    total_units = sum(len(units(line)) for line in parsed)

    def per_pair(total: int) -> float | None:
        return round(total / len(parsed), 4) if parsed else None

    return {
        "pairs": len(parsed),
        "links": total_links,
        "links_per_pair": per_pair(total_links),
        "units": total_units,
        "units_per_pair": per_pair(total_units),
    }


def write_link_stats(folder: Path, links: list[str], **extra: Any) -> dict[str, Any]:
    """``stats.json``: `link_counts` and the `extra` fields of the run's kind."""
    summary = {**link_counts(folder, links), **extra}
    atomic_write_text(folder / "stats.json", json.dumps(summary, indent=2) + "\n")
    return summary


def write_stats(
    folder: Path, stats_paths: list[Path], links: list[str], od_lines: int
) -> dict[str, Any]:
    """``stats.json``: pairs aligned and skipped per direction (OD lines included), then
    `link_counts` of the kept in-domain lines and the OD lines the aligner also learnt from."""
    directions: dict[str, dict[str, Any]] = {}
    for stats in _read_stats(stats_paths):
        name = "reverse" if stats["options"]["reverse"] else "forward"
        total = directions.setdefault(name, {"pairs": 0, "aligned": 0, "skipped": {}})
        total["pairs"] += stats["pairs"]
        total["aligned"] += stats["aligned"]
        for reason, count in stats["skipped"].items():
            total["skipped"][reason] = total["skipped"].get(reason, 0) + count
    return write_link_stats(folder, links, directions=directions, od_lines=od_lines)
