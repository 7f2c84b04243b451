"""The device and world-size choice (from torch.cuda only) and the batch plan of training."""

from __future__ import annotations

import pytest
import torch

from mlrep import device
from mlrep.device import Devices, plan_batch


@pytest.mark.parametrize(
    ("available", "count", "expected", "world_size"),
    [
        (False, 0, "cpu", 1),  # a CPU-only job (the tiny scale)
        (True, 1, "cuda", 1),
        (True, 4, "cuda", 4),
        (False, 2, "cpu", 1),  # GPUs present but unusable (no driver): the CPU
    ],
)
def test_devices_come_from_torch_cuda(monkeypatch, available, count, expected, world_size):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "8")  # never consulted
    monkeypatch.setenv("SLURM_JOB_GPUS", "0,1,2,3,4,5,6,7")
    chosen = device.visible()
    assert chosen == Devices(count if available else 0)
    assert chosen.device == expected
    assert chosen.world_size == world_size


@pytest.mark.parametrize(
    ("reference_devices", "world_size", "update_freq", "per_device"),
    [
        (4, 4, 1, 4096),  # Transformer-base as the thesis ran it
        (4, 1, 4, 4096),  # one GPU (or the CPU): accumulate four batches
        (4, 2, 2, 4096),
        (8, 1, 8, 4096),  # Transformer-big on one GPU
        (8, 4, 2, 4096),
        (4, 3, 2, 2730),  # no integer split: never more than the thesis's batch
        (4, 8, 1, 2048),  # more GPUs than the thesis: smaller batches each
        (1, 1, 1, 4096),  # the tiny scale's reference: one device
    ],
)
def test_batch_plan_keeps_the_thesis_effective_batch(
    reference_devices, world_size, update_freq, per_device
):
    plan = plan_batch(reference_devices, 4096, world_size)
    assert (plan.update_freq, plan.per_device) == (update_freq, per_device)
    assert plan.reference == reference_devices * 4096
    assert plan.reference - world_size * update_freq <= plan.effective <= plan.reference
    assert plan.as_dict()["effective"] == world_size * update_freq * per_device


def test_batch_plan_counts_sentences_too():
    # EMS: 152 pairs per V100 on 4 V100s, trained in one process
    plan = plan_batch(4, 152, 1)
    assert (plan.update_freq, plan.per_device, plan.effective) == (4, 152, 608)


def test_batch_plan_refuses_zero_devices():
    with pytest.raises(ValueError, match="world_size"):
        plan_batch(4, 4096, 0)
