"""The Chapter 8 grid as data: which runs a params section asks for (used by the rules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.chapters.ch8_layernorm.systems import PIVOT_SYSTEM


def runs(section: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(dataset, system, seed) of every trained run: the grid, then ``extra_runs``."""
    out = [
        (dataset, system, seed)
        for dataset in section["run_datasets"]
        for system in section["systems"]
        for seed in section["seeds"]
    ]
    for extra in section["extra_runs"]:
        dataset, system, seed = extra.split("/")
        out.append((dataset, system, int(seed.removeprefix("seed"))))
    return list(dict.fromkeys(out))


def scored_runs(section: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """Every run with a metrics.json: the trained ones and the pivot baseline (#0)."""
    pivots = [
        (dataset, PIVOT_SYSTEM, seed)
        for dataset in section["run_datasets"]
        for seed in section["seeds"]
        if section["pivot"]
    ]
    return runs(section) + pivots
