"""Blocked k-NN search against a naive full-matrix sort: values, indices, ties, block edges."""

from __future__ import annotations

import numpy as np
import pytest

from mlrep.device import Devices
from mlrep.evaluate import search
from tests import evaluate_reference as ref
from tests.device_helpers import FakeCuda


def tied_vectors(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    """±1 vectors in 16 dimensions: normalised entries are ±1/4 and every dot product is an
    exact multiple of 1/16, so many similarities tie exactly in float32 and float64 alike."""
    return rng.choice([-1.0, 1.0], size=(n, dim)).astype(np.float32)


def run(x, y, k, block):
    return search.mutual_knn(x, y, k, block)


@pytest.mark.parametrize("block", [3, 7, 64, 1000])
@pytest.mark.parametrize("k", [1, 4])
def test_random_data_matches_naive_sort_in_both_directions(block, k):
    rng = np.random.default_rng(block * 10 + k)
    x = rng.normal(size=(101, 24)).astype(np.float32)  # 101: not a multiple of any block
    y = rng.normal(size=(67, 24)).astype(np.float32)
    forward, backward = run(x, y, k, block)
    sim = ref.cosine(x, y)
    want_scores, want_idx = ref.knn(sim, k)
    np.testing.assert_array_equal(forward.indices, want_idx)
    np.testing.assert_allclose(forward.scores, want_scores, atol=1e-5)
    want_scores, want_idx = ref.knn(sim.T, k)
    np.testing.assert_array_equal(backward.indices, want_idx)
    np.testing.assert_allclose(backward.scores, want_scores, atol=1e-5)


@pytest.mark.parametrize("block", [2, 5, 16, 50, 500])
def test_exact_ties_go_to_the_lower_index_whatever_the_block_size(block):
    rng = np.random.default_rng(block)
    x = tied_vectors(rng, 53)
    y = np.concatenate([tied_vectors(rng, 40), tied_vectors(rng, 5).repeat(3, axis=0)])
    forward, backward = run(x, y, 4, block)
    sim = ref.cosine(x, y)
    ranked = np.sort(sim, axis=1)
    assert (ranked[:, -4] == ranked[:, -5]).sum() > 10, "the data must tie at the k-th place"
    np.testing.assert_array_equal(forward.indices, ref.knn(sim, 4)[1])
    np.testing.assert_array_equal(backward.indices, ref.knn(sim.T, 4)[1])
    np.testing.assert_array_equal(forward.scores, ref.knn(sim, 4)[0].astype(np.float32))


def test_k_is_capped_at_the_number_of_candidates_and_backward_can_be_skipped():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 8)).astype(np.float32)
    y = rng.normal(size=(3, 8)).astype(np.float32)
    forward, backward = search.mutual_knn(x, y, 4, 2, backward=False)
    assert forward.indices.shape == (5, 3) and backward is None
    np.testing.assert_array_equal(forward.indices, ref.knn(ref.cosine(x, y), 3)[1])


def test_zero_rows_score_zero_and_float16_memory_maps_are_read(tmp_path):
    x = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float16)
    np.save(tmp_path / "x.npy", x)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r")
    y = np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    forward, backward = search.mutual_knn(mapped, y, 2, block_size=1)
    np.testing.assert_allclose(forward.scores, [[0.8, 0.6], [0.0, 0.0]], atol=1e-3)
    assert forward.indices.tolist() == [[0, 1], [0, 1]]  # the zero row ties: lower index first
    np.testing.assert_allclose(backward.scores, [[0.8, 0.0], [0.6, 0.0]], atol=1e-3)


def test_blocks_are_compared_on_the_jobs_gpu(monkeypatch):
    rng = np.random.default_rng(3)
    x, y = tied_vectors(rng, 40), tied_vectors(rng, 30)
    on_cpu = run(x, y, 4, 16)
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(search, "visible", lambda: Devices(1))
    on_gpu = run(x, y, 4, 16)
    # both norms, then each of the 3 query blocks and the 2 candidate blocks per query block
    assert gpu.tensors == 2 + 3 + 3 * 2
    for a, b in zip(on_cpu, on_gpu, strict=True):
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.scores, b.scores)


def test_block_size_must_be_positive():
    x = np.eye(2, dtype=np.float32)
    with pytest.raises(ValueError, match="block_size"):
        search.mutual_knn(x, x, 1, 0)
