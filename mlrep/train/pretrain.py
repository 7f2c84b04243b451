"""The loop and the output of a short from-scratch pretraining of a tiny stand-in model (an
MLM encoder, a causal LM), shared by every stand-in so they update, log, refuse a diverged run
and save alike.

Such a pretraining takes seconds to minutes at tiny shapes, so it neither checkpoints nor
resumes: its output folder is written atomically (model, tokenizer and the run's record), and a
killed run starts over.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from mlrep.errors import MlrepError
from mlrep.io import atomic_directory

SUMMARY_FILE = "train.json"
TAIL = 10  # the updates whose mean loss is the record's final loss


def run(
    optimizer: torch.optim.Optimizer,
    steps: int,
    loss_at: Callable[[int], tuple[torch.Tensor, float]],
    lr_at: Callable[[int], float],
    log: Callable[[str], object],
) -> tuple[list[float], float]:
    """Updates 1..`steps`: `loss_at(step)` gives the loss to back-propagate and the value to
    record; `lr_at(step)` the learning rate set before the step. Returns the recorded losses
    and the seconds the loop took."""
    losses: list[float] = []
    started = time.perf_counter()
    for step in range(1, steps + 1):
        loss, recorded = loss_at(step)
        optimizer.zero_grad()
        loss.backward()
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        optimizer.step()
        losses.append(recorded)
        if step % max(steps // 10, 1) == 0:
            log(f"step {step}: loss {losses[-1]:.4f}")
    return losses, time.perf_counter() - started


def summary(
    losses: list[float], out: Path, what: str, lr: float, model: torch.nn.Module
) -> dict[str, Any]:
    """The record's common fields; an error naming `out` where the `what` loss diverged."""
    if not all(math.isfinite(value) for value in losses):
        raise MlrepError(f"{out}: the {what} loss diverged (lr {lr}); lower --lr")
    last = losses[-min(TAIL, len(losses)) :]
    return {
        "final_loss": sum(last) / len(last),
        "steps": len(losses),
        "parameters": sum(p.numel() for p in model.parameters()),
    }


def save(
    out: Path,
    model: Any,
    tokenizer: Any,
    record: dict[str, Any],
    finish: Callable[[Path], object],
) -> None:
    """Model and tokenizer (`save_pretrained`) and ``train.json`` into `out`, atomically;
    `finish` adds to the staging folder before it replaces `out` (the verb's provenance)."""
    with atomic_directory(out) as staging:
        model.cpu().save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / SUMMARY_FILE).write_text(json.dumps(record, indent=1) + "\n")
        finish(staging)
