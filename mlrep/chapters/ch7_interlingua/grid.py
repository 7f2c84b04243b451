"""The Chapter 7 grid as data: which runs a params section asks for, and each run's training
values (used by the rules)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mlrep.chapters.ch7_interlingua import systems
from mlrep.nmt.settings import train_dataset_values
from mlrep.nmt.valid_log import VALID_LOG


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


def metrics_inputs(system: str) -> tuple[str, ...]:
    """What the metrics step of a run reads beside its scores: a trained system's model
    folder (its validation log: Fig 7.3) and a length-predicting system's gold-length scores
    (Table 7.5). The pivot baseline has neither."""
    if system == systems.PIVOT_SYSTEM:
        return ()
    gold = ("gold_scores",) if system in systems.PREDICTED_LENGTH else ()
    return ("model", *gold)


def metrics_options(inputs: Mapping[str, str]) -> str:
    """The `mlrep nmt metrics` options for the inputs `metrics_inputs` named (``model`` is the
    trainer's train.json, beside which it keeps the validation log)."""
    options = []
    if "gold_scores" in inputs:
        options.append(f"--gold-scores {inputs['gold_scores']}")
    if "model" in inputs:
        options.append(f"--valid-log {os.path.join(os.path.dirname(inputs['model']), VALID_LOG)}")
    return " ".join(options)
