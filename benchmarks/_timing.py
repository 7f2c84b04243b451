"""Wall-clock readings shared by the GPU benchmarks: CUDA runs asynchronously, so a reading
waits for the device's queued work first, or a timed section would end before its kernels."""

from __future__ import annotations

import time

import torch


def clock(device: torch.device) -> float:
    """`time.perf_counter()` once every kernel queued on `device` has finished."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()
