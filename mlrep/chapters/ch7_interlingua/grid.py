"""The Chapter 7 grid as data: which runs a params section asks for, and each run's training
values (used by the rules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.chapters.ch7_interlingua import systems
from mlrep.nmt.settings import train_dataset_values


def runs(section: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(dataset, system, seed) of every trained run."""
    return [
        (dataset, system, seed)
        for dataset in section["run_datasets"]
        for system in section["systems"]
        for seed in section["seeds"]
    ]


def scored_runs(section: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """Every run with a metrics.json: the trained ones and the pivot baseline."""
    pivots = [
        (dataset, systems.PIVOT_SYSTEM, seed)
        for dataset in section["run_datasets"]
        for seed in section["seeds"]
        if section["pivot"]
    ]
    return runs(section) + pivots


def train_values(section: Mapping[str, Any], dataset: str, system: str) -> dict[str, Any]:
    """What `mlrep nmt train` is given for one run, by params.yaml key: the dataset's model
    and training values, then the system's. The dataset's fixed interlingua length reaches
    only the fixed-length systems (`systems.settings`), so it is dropped from the dataset's."""
    spec = section["datasets"][dataset]
    own = systems.settings(system, spec)
    shared = {k: v for k, v in train_dataset_values(spec).items() if k != "interlingua_length"}
    return shared | own
