"""A stand-in GPU for CPU-only test machines: what code sends to "cuda" is recorded and runs on
the CPU, so a test checks both that the model and its batches go to the chosen device and that
the results are those of the real computation."""

from __future__ import annotations

from typing import Any

import torch


def _is_cuda(value: Any) -> bool:
    return isinstance(value, (str, torch.device)) and torch.device(value).type == "cuda"


class FakeCuda:
    """While installed, ``.to("cuda")`` on a module or tensor counts and moves to the CPU."""

    def __init__(self, monkeypatch) -> None:
        self.modules: list[str] = []  # class names of the modules moved to "cuda"
        self.tensors = 0  # tensors moved to "cuda"
        real_module_to, real_tensor_to = torch.nn.Module.to, torch.Tensor.to

        def redirect(args: tuple, kwargs: dict) -> tuple[tuple, dict, bool]:
            if args and _is_cuda(args[0]):
                return ("cpu", *args[1:]), kwargs, True
            if _is_cuda(kwargs.get("device")):
                return args, {**kwargs, "device": "cpu"}, True
            return args, kwargs, False

        def module_to(module, *args, **kwargs):
            args, kwargs, moved = redirect(args, kwargs)
            if moved:
                self.modules.append(type(module).__name__)
            return real_module_to(module, *args, **kwargs)

        def tensor_to(tensor, *args, **kwargs):
            args, kwargs, moved = redirect(args, kwargs)
            self.tensors += moved
            return real_tensor_to(tensor, *args, **kwargs)

        monkeypatch.setattr(torch.nn.Module, "to", module_to)
        monkeypatch.setattr(torch.Tensor, "to", tensor_to)
