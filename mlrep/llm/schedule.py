"""What an update trains on and at which learning rate, as functions of its number.

The checkpoint contract (`mlrep.train.checkpoint`) resumes bit-for-bit only when an update's
batch follows from the update number, not from an iterator's hidden position; so does the
learning rate here, which leaves no scheduler state to save. Both the stand-in's pretraining
and the LoRA trainer draw from these.
"""

from __future__ import annotations

import math

import numpy as np


def updates_per_epoch(size: int, per_update: int) -> int:
    """Updates of one pass over `size` examples, `per_update` each (the last one smaller)."""
    return math.ceil(size / per_update)


def update_rows(size: int, per_update: int, seed: int, step: int) -> list[int]:
    """Example indices of update `step` (1-based): epoch-wise permutations seeded by
    (seed, epoch), cut into consecutive blocks of `per_update`; the last block of an epoch
    holds the remainder, so every example is seen once per epoch (as the HF Trainer does)."""
    epoch, index = divmod(step - 1, updates_per_epoch(size, per_update))
    order = np.random.default_rng([seed, epoch]).permutation(size)
    return order[index * per_update : (index + 1) * per_update].tolist()


def warmup_steps(total: int, ratio: float) -> int:
    """Warm-up updates of a run of `total` updates (``ceil``, as the HF Trainer rounds)."""
    return math.ceil(total * ratio)


def linear_lr(peak: float, step: int, total: int, warmup: int) -> float:
    """Linear warm-up from 0 to `peak` over `warmup` updates, then linear decay to 0 at `total`
    (the shape of the HF Trainer's default ``linear`` schedule; `step` is 1-based, so the
    first update already learns)."""
    if step <= warmup:
        return peak * step / warmup
    return peak * max(0.0, (total - step) / max(total - warmup, 1))
