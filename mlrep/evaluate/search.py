"""Blocked exact k-nearest-neighbour search by cosine similarity, in both directions at once.

Retrieval and mining compare every query with every candidate, but an n x n similarity
matrix does not fit for BUCC (200k x 200k floats is 160 GB). Here the matrix is computed one
block of queries x one block of candidates at a time; each block updates a running top-k for
its rows (query -> candidates) and, when asked, for its columns (candidate -> queries), so
one matrix product serves both directions of a margin score. Rows are normalised as their
block is used (from norms computed once), so beyond the inputs, which may stay
memory-mapped and float16, memory is O(block x (block + dimension)).

Ties are broken towards the lower index in every direction, exactly as a stable descending
sort of the full row would order them, so (up to the float rounding of the matrix product)
results do not depend on the block size and agree with a naive argmax implementation.

The blocks are multiplied on the job's device (`mlrep.device`): at full scale BUCC and
ParaCrawl compare hundreds of thousands of sentences with each other, which a GPU does in
minutes; only the running top-k come back to the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from mlrep.device import visible

DEFAULT_BLOCK = 4096


_NORMALISE_CHUNK = 65536


@dataclass(frozen=True)
class Neighbours:
    """Top-k cosine neighbours: ``scores[i]`` sorted high to low, ``indices[i]`` their rows."""

    scores: np.ndarray  # float32, (n, k)
    indices: np.ndarray  # int64, (n, k)


def _inverse_norms(array: np.ndarray) -> torch.Tensor:
    """1 / L2 norm of every row (0 for a zero row, which then stays zero), read in chunks."""
    out = torch.empty(array.shape[0], dtype=torch.float32)
    for start in range(0, array.shape[0], _NORMALISE_CHUNK):
        chunk = torch.from_numpy(np.array(array[start : start + _NORMALISE_CHUNK], np.float32))
        norms = torch.linalg.vector_norm(chunk, dim=1)
        out[start : start + len(norms)] = torch.where(norms > 0, 1 / norms, 0.0)
    return out


def _unit_rows(
    array: np.ndarray, inverse: torch.Tensor, start: int, stop: int, device: str
) -> torch.Tensor:
    """Rows start:stop of `array` as unit-length float32 rows on `device`."""
    block = torch.from_numpy(np.array(array[start:stop], np.float32)).to(device)
    return block * inverse[start:stop, None]


def _block_topk(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Row-wise top-k of `scores` ordered by (score descending, index ascending).

    torch.topk picks arbitrarily among equal values. One extra neighbour shows whether the
    k-th value is tied with a value left out; only such rows are redone with a stable sort,
    which is rare and keeps the fast path.
    """
    extra = min(k + 1, scores.shape[1])
    values, indices = torch.topk(scores, extra, dim=1, sorted=True)
    ambiguous = values[:, k - 1] == values[:, extra - 1] if extra > k else None
    values, indices = values[:, :k], indices[:, :k]
    if ambiguous is not None and ambiguous.any():
        rows = ambiguous.nonzero().squeeze(1)
        exact_values, exact_indices = torch.sort(scores[rows], dim=1, descending=True, stable=True)
        values[rows] = exact_values[:, :k]
        indices[rows] = exact_indices[:, :k]
    by_index, order = torch.sort(indices, dim=1)
    values = torch.gather(values, 1, order)
    values, order = torch.sort(values, dim=1, descending=True, stable=True)
    return values, torch.gather(by_index, 1, order)


def _merge(
    best: tuple[torch.Tensor, torch.Tensor], new: tuple[torch.Tensor, torch.Tensor], k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Keep the k best of a running top-k and a later block's top-k.

    The running entries come from earlier blocks (lower indices) and are placed first, so a
    stable sort keeps the lower index ahead on equal scores.
    """
    values = torch.cat([best[0], new[0]], dim=1)
    indices = torch.cat([best[1], new[1]], dim=1)
    values, order = torch.sort(values, dim=1, descending=True, stable=True)
    return values[:, :k], torch.gather(indices, 1, order[:, :k])


def _empty(rows: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    return (
        torch.empty((rows, 0), dtype=torch.float32, device=device),
        torch.empty((rows, 0), dtype=torch.int64, device=device),
    )


def mutual_knn(
    queries: np.ndarray,
    candidates: np.ndarray,
    k: int,
    block_size: int = DEFAULT_BLOCK,
    backward: bool = True,
) -> tuple[Neighbours, Neighbours | None]:
    """Top-k candidates of every query and, with `backward`, top-k queries of every candidate.

    Similarity is the cosine of the rows; k is capped at the size of the searched set.
    """
    if block_size < 1:
        raise ValueError(f"block_size must be positive, got {block_size}")
    n_q, n_c = queries.shape[0], candidates.shape[0]
    k_fwd, k_bwd = min(k, n_c), min(k, n_q)
    device = visible().device
    q_inverse = _inverse_norms(queries).to(device)
    c_inverse = _inverse_norms(candidates).to(device)
    col_best = [
        _empty(min(block_size, n_c - c0), q_inverse.device) for c0 in range(0, n_c, block_size)
    ]
    fwd_scores = np.empty((n_q, k_fwd), dtype=np.float32)
    fwd_indices = np.empty((n_q, k_fwd), dtype=np.int64)
    with torch.inference_mode():
        for q0 in range(0, n_q, block_size):
            q_block = _unit_rows(queries, q_inverse, q0, q0 + block_size, device)
            row_best = _empty(q_block.shape[0], q_inverse.device)
            for block, c0 in enumerate(range(0, n_c, block_size)):
                c_block = _unit_rows(candidates, c_inverse, c0, c0 + block_size, device)
                sims = q_block @ c_block.T
                values, indices = _block_topk(sims, min(k_fwd, sims.shape[1]))
                row_best = _merge(row_best, (values, indices + c0), k_fwd)
                if backward:
                    values, indices = _block_topk(sims.T.contiguous(), min(k_bwd, sims.shape[0]))
                    col_best[block] = _merge(col_best[block], (values, indices + q0), k_bwd)
            fwd_scores[q0 : q0 + block_size] = row_best[0].cpu().numpy()
            fwd_indices[q0 : q0 + block_size] = row_best[1].cpu().numpy()
    forward = Neighbours(fwd_scores, fwd_indices)
    if not backward:
        return forward, None
    return forward, Neighbours(
        torch.cat([c[0] for c in col_best]).cpu().numpy(),
        torch.cat([c[1] for c in col_best]).cpu().numpy(),
    )
