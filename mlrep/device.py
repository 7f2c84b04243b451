"""Where a job computes, read from torch, and how training keeps the thesis's batch on it.

Every step that runs a model (training, decoding, layer states, probes, BLEURT, the sentence
encoders and their search) asks `visible()`, so a job uses exactly the GPUs its scheduler made
visible (SLURM sets CUDA_VISIBLE_DEVICES; torch.cuda counts what it allows) and the CPU where
there are none. SLURM variables are never read: they describe the allocation, not what this
process can use, and a workstation has none.

The thesis trained on a fixed number of GPUs, each taking one batch per update; its effective
batch is that product. `plan_batch` spreads the same effective batch over the devices a job
actually has: data parallel over all of them, with gradient accumulation where they are fewer,
so a run on one GPU (or on the CPU) updates with the batch the thesis's run did.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Devices:
    """The CUDA devices this process may use (0: CPU only)."""

    gpus: int

    @property
    def device(self) -> str:
        """The torch device of a single-process job: the first visible GPU, else the CPU."""
        return "cuda" if self.gpus else "cpu"

    @property
    def world_size(self) -> int:
        """Data-parallel processes a training job runs: one per GPU, one on the CPU."""
        return max(1, self.gpus)


def visible() -> Devices:
    """The devices torch sees in this process."""
    import torch

    return Devices(torch.cuda.device_count() if torch.cuda.is_available() else 0)


@dataclass(frozen=True)
class BatchPlan:
    """One update's batch: `world_size` processes × `update_freq` passes × `per_device` each.

    `per_device` is in the unit the reference gives (tokens for fairseq's ``--max-tokens``,
    sentence pairs for EMS); `reference` is the thesis's effective batch in that unit.
    """

    reference_devices: int
    reference_per_device: int
    world_size: int
    update_freq: int
    per_device: int

    @property
    def reference(self) -> int:
        return self.reference_devices * self.reference_per_device

    @property
    def effective(self) -> int:
        return self.world_size * self.update_freq * self.per_device

    def as_dict(self) -> dict[str, int]:
        return asdict(self) | {"reference": self.reference, "effective": self.effective}


def plan_batch(reference_devices: int, reference_per_device: int, world_size: int) -> BatchPlan:
    """The thesis's batch (`reference_devices` × `reference_per_device`) on `world_size` devices.

    ``update_freq = ceil(reference / (world_size × reference_per_device))`` passes per update,
    and each pass takes ``reference // (world_size × update_freq)``: the reference size itself
    whenever the device counts divide (1, 2, 4 or 8 GPUs for the thesis's 4 or 8), otherwise a
    little less, so the effective batch never exceeds the thesis's and falls short of it by
    less than one item per pass (3 GPUs for 4: 2 passes of 2,730 tokens, not 2 of 4,096).
    """
    for name, value in (
        ("reference_devices", reference_devices),
        ("reference_per_device", reference_per_device),
        ("world_size", world_size),
    ):
        if value < 1:
            raise ValueError(f"{name} must be positive, got {value}")
    reference = reference_devices * reference_per_device
    update_freq = math.ceil(reference / (world_size * reference_per_device))
    return BatchPlan(
        reference_devices,
        reference_per_device,
        world_size,
        update_freq,
        reference // (world_size * update_freq),
    )
