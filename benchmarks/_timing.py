"""Readings shared by the benchmarks. `clock`: CUDA runs asynchronously, so a wall-clock
reading waits for the device's queued work first, or a timed section would end before its
kernels. `in_child`: a peak resident size is only the measured code's own in a fresh
interpreter, not after the parent's imports and earlier runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the memory benchmarks run without torch in the parent
    import torch


def clock(device: torch.device) -> float:
    """`time.perf_counter()` once every kernel queued on `device` has finished."""
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)
    return time.perf_counter()


def in_child(code: str, *args: str) -> dict:
    """Run `code` in a fresh Python with `args` as its argv; the JSON object its last output
    line prints."""
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])
