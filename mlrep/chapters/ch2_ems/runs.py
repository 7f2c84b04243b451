"""The runs of Chapter 2: named variants and grid points, resolved to one flat set of values.

params.yaml ``ch2_ems`` keeps the shared settings in ``model``, ``objective`` and ``train`` and
lists each variant under ``runs`` by the keys it changes (Table 2.14's ablations, the
LaBSE-EMS-* baselines). The grid search of Table 2.2 varies one hyper-parameter at a time
around those settings (``grid.values``: key → values) for ``grid.steps`` updates; its points
are runs named ``grid/<key>-<value>``. Rules and the CLI both resolve a run here, so a run's
flags are the same whichever way it is started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.errors import MlrepError
from mlrep.report.metrics import UNTRAINED_SEED

SECTION = "ch2_ems"
GRID_PREFIX = "grid/"
STAND_IN_SUFFIX = "-stand-in"
BASELINE_SEED = UNTRAINED_SEED  # a pretrained baseline has no training seed: one result
# the training-free baseline (`mlrep.evaluate.tfidf`), scored like a pretrained one (seed0)
TFIDF_RUN = "char-tfidf"


class UnknownRunError(MlrepError):
    """A run name that is neither in ``ch2_ems.runs`` nor a grid point."""


def grid_points(section: Mapping[str, Any]) -> list[str]:
    """``<key>-<value>`` for every value of every grid key (one-at-a-time sweep)."""
    return [
        f"{key}-{value}" for key, values in section["grid"]["values"].items() for value in values
    ]


def run_names(section: Mapping[str, Any]) -> list[str]:
    return list(section["runs"])


def run_values(section: Mapping[str, Any], run: str) -> dict[str, Any]:
    """Every model, objective and training value of `run`, its overrides applied."""
    values = {**section["model"], **section["objective"], **section["train"]}
    if run.startswith(GRID_PREFIX):
        point = run[len(GRID_PREFIX) :]
        for key, options in section["grid"]["values"].items():
            for option in options:
                if point == f"{key}-{option}":
                    return {**values, key: option, "steps": section["grid"]["steps"]}
        raise UnknownRunError(
            f"{run}: not a grid point of {SECTION}.grid; points: {', '.join(grid_points(section))}"
        )
    if run not in section["runs"]:
        raise UnknownRunError(
            f"{run}: no such run in {SECTION}.runs; runs: {', '.join(run_names(section))}"
        )
    return {**values, **(section["runs"][run] or {})}


def baseline_runs(section: Mapping[str, Any]) -> list[str]:
    """Runs of the pretrained baselines evaluated at this scale (``baseline_runs``).

    A baseline given a local stand-in checkpoint (``stand_ins``: a random model of the same
    class, as tests make) runs as ``<name>-stand-in``, so its numbers never fill the row of
    the real model in a table. Both name ``baselines`` entries (`mlrep.config` checks that).
    """
    return [
        name + (STAND_IN_SUFFIX if name in section["stand_ins"] else "")
        for name in section["baseline_runs"]
    ]


def baseline_name(run: str) -> str:
    """The ``ch2_ems.baselines`` entry of a baseline run."""
    return run.removesuffix(STAND_IN_SUFFIX)


def benchmark_datasets(benchmarks: Mapping[str, Any]) -> dict[str, str]:
    """Benchmark of ``ch2_ems.benchmarks`` -> the data folder key it reads
    (``results/data/<key>``); a benchmark whose dataset is "" is not run."""
    return {name: spec["dataset"] for name, spec in benchmarks.items() if spec["dataset"]}


def baseline_checkpoint(section: Mapping[str, Any], run: str, fetched: str) -> str:
    """The checkpoint folder of a baseline run: its local stand-in, else the folder the fetch
    step fills (`fetched`, a pattern with ``{name}``)."""
    name = baseline_name(run)
    return section["stand_ins"][name] if run != name else fetched.format(name=name)


def baseline_source(section: Mapping[str, Any], run: str) -> dict[str, Any]:
    """Loader, hub and revision of a baseline run (its file list is the fetch step's)."""
    spec = section["baselines"][baseline_name(run)]
    return {key: value for key, value in spec.items() if key != "files"}
