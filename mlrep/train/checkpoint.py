"""The checkpoint contract every training job follows, so long runs survive clusters.

A training job (1) saves a checkpoint every N updates, atomically, keeping the last few;
(2) on start, resumes from the newest complete checkpoint, restoring model, optimiser, RNG
states and the update counter, so the resumed run continues bit-for-bit where it stopped when
its data order is a function of the update number; (3) on SLURM's warning signal (SIGUSR1,
requested with ``--signal=USR1@300``) or on SIGTERM (``scancel``, preemption, wall time) saves
at the next update boundary and exits with `EXIT_PREEMPTED`, so Snakemake's retry or SLURM's
requeue reruns the rule and the rerun resumes.
"""

from __future__ import annotations

import os
import random
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from mlrep.io import atomic_file
from mlrep.train.signals import EXIT_PREEMPTED, STOP_SIGNALS

_NAME = re.compile(r"^step-(\d{9})\.pt$")


class Checkpoints:
    """A folder of ``step-NNNNNNNNN.pt`` files; only complete files ever carry that name."""

    def __init__(self, folder: Path, keep: int = 2) -> None:
        self.folder = folder
        self.keep = keep

    def steps(self) -> list[int]:
        if not self.folder.exists():
            return []
        return sorted(int(m.group(1)) for p in self.folder.iterdir() if (m := _NAME.match(p.name)))

    def path(self, step: int) -> Path:
        return self.folder / f"step-{step:09d}.pt"

    def save(self, step: int, payload: dict[str, Any]) -> Path:
        """Write atomically (temporary file, fsync, rename), then drop all but the newest `keep`."""
        with atomic_file(self.path(step)) as tmp, open(tmp, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        for old in self.steps()[: -self.keep]:
            self.path(old).unlink(missing_ok=True)
        return self.path(step)

    def load_latest(self) -> dict[str, Any] | None:
        steps = self.steps()
        if not steps:
            return None
        # our own files, written by `save`: full unpickling is needed for optimiser/RNG state
        return torch.load(self.path(steps[-1]), map_location="cpu", weights_only=False)


def rng_state() -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class StopRequest:
    """Set by SIGUSR1/SIGTERM; the training loop polls it between updates."""

    def __init__(self) -> None:
        self.signal: str | None = None

    def __bool__(self) -> bool:
        return self.signal is not None


@contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Turn SIGUSR1 and SIGTERM into a `StopRequest` for the block, restoring handlers after."""
    request = StopRequest()

    def handler(signum: int, _frame: object) -> None:
        request.signal = signal.Signals(signum).name

    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield request
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class Preempted(SystemExit):
    """Raised after the checkpoint is saved; exits the process with `EXIT_PREEMPTED`."""

    def __init__(self, step: int, signal_name: str) -> None:
        super().__init__(EXIT_PREEMPTED)
        self.step = step
        self.signal_name = signal_name


def train(
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    update: Callable[[int], float],
    total_updates: int,
    checkpoint_every: int,
    checkpoints: Checkpoints,
    log: Callable[[str], None] = print,
) -> int:
    """Run ``update(step)`` for steps 1..total_updates under the checkpoint contract.

    `update` must derive its batch from the step number (not from an iterator's hidden
    position) so that a resumed run sees the same data. Returns the last step run.
    """
    start = 0
    if (state := checkpoints.load_latest()) is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        set_rng_state(state["rng"])
        start = state["step"]
        log(f"resumed from step {start} ({checkpoints.path(start)})")

    def save(step: int) -> None:
        checkpoints.save(
            step,
            {
                "step": step,
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "rng": rng_state(),
            },
        )

    with stop_on_signals() as stop:
        for step in range(start + 1, total_updates + 1):
            loss = update(step)
            if step % checkpoint_every == 0 or step == total_updates or stop:
                save(step)
            if stop:
                log(f"{stop.signal} at step {step}: checkpoint saved, exiting for a rerun")
                raise Preempted(step, stop.signal or "")
            if step % checkpoint_every == 0:
                log(f"step {step} loss {loss:.6f}")
    return total_updates
