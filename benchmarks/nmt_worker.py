"""What the NMT benchmarks share: a short training run in a child process, timed, with fairseq's
own throughput read from its log.

Each benchmark runs its systems one per process (a fresh process gives a clean peak memory and
no state carried from one run into the next) by calling its own script with ``--worker``; the
worker prints one JSON row last, which `run_worker` reads back. The scripts import this module
by name: ``python benchmarks/X.py`` puts this folder first on the path.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the worker imports torch and fairseq; the parent process need not
    from mlrep.nmt.train import TrainSettings

_WPS = re.compile(r"\bwps ([0-9.]+)")


def settings(arch: str, updates: int, threads: int, **overrides: Any) -> TrainSettings:
    """The benchmarks' training settings: the rules' defaults for a short run of `updates`
    updates (warm-up longer than the run, so every run sees the same learning-rate ramp)."""
    from mlrep.nmt.train import TrainSettings

    fields = {
        "arch": arch,
        "dropout": 0.1,
        "lr": 5e-4,
        "max_epoch": 0,
        "max_update": updates,
        "max_tokens": 4096,
        "warmup_updates": 4000,
        "label_smoothing": 0.1,
        "save_interval_updates": 10**6,
        "seed": 1,
        "threads": threads,
    }
    return TrainSettings(**(fields | overrides))


def timed_train(binary: Path, out: Path, variant: str, settings: TrainSettings) -> dict:
    """Train with `mlrep.nmt.train.train` (the code the rules run) and return the wall time
    (start-up included) and fairseq's words per second of the last epoch (target tokens/s)."""
    from mlrep.nmt.train import train
    from mlrep.nmt.variant import Variant

    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    # fairseq's progress bar logs its epoch line through this logger (renamed to "train")
    logging.getLogger("fairseq.logging.progress_bar").addHandler(Capture())
    start = time.perf_counter()
    train(binary, out, variant, Variant(), settings)
    wall = time.perf_counter() - start
    wps = [float(m.group(1)) for line in lines if (m := _WPS.search(line))]
    return {"wall_s": round(wall, 1), "target_tokens_per_s": wps[-1] if wps else None}


def run_worker(command: list[str]) -> dict:
    """Run one worker process and return the JSON row it printed last."""
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])
