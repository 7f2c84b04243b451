"""Gradient caching (Gao et al. 2021): an exact large-batch update on one device.

A contrastive loss whose in-batch negatives span the whole batch (AMS) or whose targets are the
whole batch's similarity matrix (LD) cannot be split into independent micro-batches: each
pair's gradient depends on every other pair's embedding. Gradient caching keeps that exactness
while holding only one chunk's activations at a time:

1. every input is embedded chunk by chunk without a graph (`torch.no_grad`);
2. the loss runs once over the whole batch's embeddings (detached leaves that require grad);
   its backward gives d loss / d embedding of every row, and the gradients of whatever
   parameters the loss itself holds (training-only heads);
3. each chunk is embedded again with a graph and ``embedding.backward(cached gradient)``
   carries the cached gradients into the encoder's parameters.

By the chain rule the accumulated gradients are those of one backward through the whole batch.
Dropout draws fresh masks on each pass, so the torch RNG state (CPU and CUDA) is saved before a
chunk's first pass and restored for its second: both passes see the same masks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

Encode = Callable[[torch.Tensor], torch.Tensor]


def _rng_state() -> tuple[torch.Tensor, list[torch.Tensor]]:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else []
    return torch.get_rng_state(), cuda


def _set_rng_state(state: tuple[torch.Tensor, list[torch.Tensor]]) -> None:
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda:
        torch.cuda.set_rng_state_all(cuda)


def _chunks(inputs: torch.Tensor, size: int) -> list[torch.Tensor]:
    return list(inputs.split(size)) if size > 0 else [inputs]


def backward(
    encode: Encode,
    inputs: Sequence[torch.Tensor],
    loss: Callable[[list[torch.Tensor]], torch.Tensor],
    chunk_size: int,
) -> torch.Tensor:
    """Accumulate into ``.grad`` the gradients of ``loss([encode(x) for x in inputs])`` over the
    whole batch, running `encode` on at most `chunk_size` rows at a time; returns the loss
    (detached). `loss` gets one embedding matrix per input, all rows, and may hold parameters
    of its own. The last replay leaves the RNG where the first passes did, so later draws do not
    repeat masks."""
    states: list[list[tuple[torch.Tensor, list[torch.Tensor]]]] = []
    embedded = []
    with torch.no_grad():
        for tensor in inputs:
            parts, saved = [], []
            for chunk in _chunks(tensor, chunk_size):
                saved.append(_rng_state())
                parts.append(encode(chunk))
            states.append(saved)
            embedded.append(torch.cat(parts).requires_grad_())
    value = loss(embedded)
    value.backward()
    for tensor, saved, full in zip(inputs, states, embedded, strict=True):
        cached = _chunks(full.grad, chunk_size)
        for chunk, state, gradient in zip(_chunks(tensor, chunk_size), saved, cached, strict=True):
            _set_rng_state(state)
            encode(chunk).backward(gradient=gradient)
    return value.detach()
