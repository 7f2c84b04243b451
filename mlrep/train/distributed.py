"""In-batch negatives across data-parallel processes: one differentiable all-gather for every
contrastive loss that wants the global batch (OneAligner's global negatives, LEALLA's AMS).

A contrastive loss is only as hard as its batch is large, and the papers' batches are the sum
over their devices (LaBSE's and LEALLA's TPU cores, OneAligner's GPUs). A loss that takes a
`Gather` scores the rows every process holds; `no_gather` keeps its own batch, and
`gather_processes` turns into it when no process group is running, so a one-process job needs
no special case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Gather = Callable[[torch.Tensor], torch.Tensor]


def no_gather(tensor: torch.Tensor) -> torch.Tensor:
    """The gather of one process: its own batch is the whole batch."""
    return tensor


class _AllGather(torch.autograd.Function):
    """All processes' rows in rank order; backward sums the gradient over the processes (each
    computed the same loss) and hands each process its own rows' share."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor) -> torch.Tensor:
        ctx.rank, ctx.rows = torch.distributed.get_rank(), tensor.shape[0]
        parts = [torch.empty_like(tensor) for _ in range(torch.distributed.get_world_size())]
        torch.distributed.all_gather(parts, tensor.contiguous())
        return torch.cat(parts)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous()
        torch.distributed.all_reduce(grad)
        return grad[ctx.rank * ctx.rows : (ctx.rank + 1) * ctx.rows]


def gather_processes(tensor: torch.Tensor) -> torch.Tensor:
    """Every process's rows of `tensor`, concatenated in rank order, with gradients flowing back
    to each process's own rows; `no_gather` when no process group is running.

    Every process then scores the same global batch and computes the same loss, and DDP's
    averaging of the parameter gradients makes the update the gradient of that one loss (the
    gather's backward sums each row's gradient over the processes, DDP divides by their
    number). Every process must hold as many rows, padded to the same length.
    """
    if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
        return tensor
    return _AllGather.apply(tensor)
