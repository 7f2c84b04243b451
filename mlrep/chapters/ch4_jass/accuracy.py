"""What Chapter 4's pre-training accuracy job reads and writes (Tables 4.12, 4.13; rule
``ch4_token_accuracy`` in workflow/rules/ch4_jass.smk asks here).

Every planned pre-training is scored at every seed on held-out pairs of each task it trains,
per language: the ``valid`` pairs of that task alone (`data.pretrain` with one task, made
from the pool's valid words as the pre-training's own valid side is; each task draws from
its own random stream, so they are that side's pairs of the task). A multi-task side such as
JASS (BMASS + BRSS) is scored task by task, and its ``overall`` over the tokens of both.
One `mlrep nmt token-accuracy` process scores every model (fairseq is imported once) and writes
each pre-training's ``metrics.json`` beside its model, ``pretrain/<id>/seed<N>/``: the
report's run ``pretrain/<id>``, which the tables' rows name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.chapters.ch4_jass import data, runs, training
from mlrep.chapters.ch4_jass.settings import SECTION
from mlrep.paths import Paths
from mlrep.text.pretrain_tasks import expand_tasks

SPLIT = "valid"  # the held-out pairs: the pool's valid sentences


def metrics(paths: Paths, run_id: str, seed: int | str) -> str:
    """A pre-training's ``metrics.json`` (token accuracy, moved words)."""
    return str(paths.run(SECTION, training.pretrain_run(run_id), seed) / training.METRICS)


def scored(run_id: str) -> list[tuple[str, str]]:
    """The (language, task) pairs a pre-training is scored on: every task of each side."""
    run = runs.pretraining(run_id)
    return [(lang, task) for lang in run.languages for task in expand_tasks(run.tasks(lang))]


def _pairs(paths: Paths, run_id: str, lang: str, task: str) -> str:
    """The stem of one task's held-out pairs in a pre-training's pair model (``.src``/``.tgt``)."""
    return data.pretrain(paths, runs.pretraining(run_id).pair, lang, task, SPLIT)


def _scored_runs(section: Mapping[str, Any]) -> list[tuple[str, int]]:
    return [
        (run_id, seed) for seed in section["seeds"] for run_id in runs.planned_pretrainings(section)
    ]


def targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every planned pre-training's ``metrics.json`` at every seed of the section: the
    outputs of the one scoring job (and the inputs of target ``ch4_jass_token_accuracy``)."""
    return [metrics(paths, run_id, seed) for run_id, seed in _scored_runs(section)]


def inputs(paths: Paths, section: Mapping[str, Any]) -> dict[str, list[str]]:
    """The scoring job's inputs: each model's ``train.json`` (its checkpoints sit beside it),
    each pre-training's data folder (dictionary, and the train pairs' moved words) and every
    held-out pair file, each once."""
    planned = runs.planned_pretrainings(section)
    stems = dict.fromkeys(
        _pairs(paths, run_id, lang, task) for run_id in planned for lang, task in scored(run_id)
    )
    return {
        "models": [
            training.model(paths, training.PRETRAIN, run_id, seed)
            for run_id, seed in _scored_runs(section)
        ],
        "data": [training.pretrain_data(paths, run_id) for run_id in planned],
        "pairs": [f"{stem}.{side}" for stem in stems for side in ("src", "tgt")],
    }


def arguments(paths: Paths, section: Mapping[str, Any]) -> str:
    """`mlrep nmt token-accuracy`'s ``--pairs`` (each held-out file once, its set the pair
    model whose BPE it is in) and ``--model`` (one per planned pre-training and seed)."""
    given: dict[tuple[str, str, str], str] = {}
    models = []
    for run_id, seed in _scored_runs(section):
        pair = runs.pretraining(run_id).pair
        keys = [(pair, lang, task) for lang, task in scored(run_id)]
        for key in keys:
            given.setdefault(key, _pairs(paths, run_id, *key[1:]))
        fields = [
            training.pretrain_run(run_id),
            str(seed),
            str(Path(training.model(paths, training.PRETRAIN, run_id, seed)).parent),
            training.pretrain_data(paths, run_id),
            metrics(paths, run_id, seed),
            ",".join(":".join(key) for key in keys),
        ]
        models.append("--model " + " ".join(fields))
    pairs = [f"--pairs {' '.join(key)} {stem}.src {stem}.tgt" for key, stem in given.items()]
    return " ".join([*pairs, *models])
