"""Learning tests: the checks that fail when a trainer stops learning.

Determinism, resume and key names pass just as well for a trainer whose updates do nothing
(an optimiser step dropped, a learning rate of 0). Every trainer of the project (Chapter 2's
sentence encoder, fairseq NMT, and the trainers later chapters add: LoRA LLMs, the
interlingua, contrastive NMT) therefore gets two tests built on this module:

1. **Overfit a fixed tiny batch.** Train through the trainer's own entry point (the one the
   workflow runs, so a mutant anywhere on that path is caught) on a training set that is one
   batch, for a few dozen updates, and pass its per-update training losses, in update order, to
   `assert_loss_falls`. The mean of the last `window` losses must lie below `below` times the
   mean of the first `window`: an update that does nothing leaves the loss flat up to the noise
   of dropout and masking (ratio about 1), a working one on a fixed batch drives it down fast.
2. **A held-out metric beats its untrained value.** Where a few seconds of training move it,
   score held-out data with the product's own evaluation before and after training and pass
   both to `assert_improves` (retrieval accuracy: higher is better; a validation loss: lower
   is better). Where the untrained value is not measured by the trainer (fairseq validates
   only after its first updates), its first measurement stands in for it and the test says so.

The caller chooses `window`, `below` and `by` from measured runs and leaves a margin of at
least a third of the measured effect, writing the measured values beside the thresholds, and
shows that a mutant which stops the update fails the test. Losses must be finite and
positive (they are ratios' denominators); a test keeps each run under about 30 s on one core.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def assert_loss_falls(
    losses: Sequence[float], *, window: int, below: float, what: str = "training loss"
) -> None:
    """Mean of the last `window` losses < `below` × mean of the first `window`."""
    values = [float(v) for v in losses]
    assert len(values) >= 2 * window, f"{what}: {len(values)} values, need 2 × {window}"
    assert all(math.isfinite(v) and v > 0 for v in values), f"{what}: {values}"
    first = sum(values[:window]) / window
    last = sum(values[-window:]) / window
    assert last < below * first, (
        f"{what} did not fall: last {window} mean {last:.4f} is not below {below} × "
        f"first {window} mean {first:.4f} (ratio {last / first:.3f}); curve {values}"
    )


def assert_improves(
    trained: float, untrained: float, *, by: float, higher_is_better: bool, what: str
) -> None:
    """`trained` beats `untrained` by more than `by` in the metric's good direction."""
    gain = trained - untrained if higher_is_better else untrained - trained
    assert math.isfinite(gain), f"{what}: trained {trained}, untrained {untrained}"
    assert gain > by, (
        f"{what}: trained {trained:.4f} vs untrained {untrained:.4f} improves by {gain:.4f}, "
        f"not more than {by}"
    )
