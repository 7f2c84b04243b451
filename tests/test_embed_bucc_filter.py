"""The BUCC candidate pre-filter (`mlrep.embed.bucc_filter`): its candidates are the exact k-NN
of both directions, its recall counts the gold pairs it keeps, and with every pair a candidate
it scores and mines exactly as the all-pairs path (`bertscore.evaluation_scores` and
`align_eval.mine`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from mlrep.embed import align_eval, bertscore, bucc_filter
from mlrep.embed.settings import AlignEvaluateSettings
from mlrep.evaluate import mining

torch.set_num_threads(1)
EVAL = AlignEvaluateSettings(layer=1)


def token_states(sentences: int, seed: int, length: int = 7, width: int = 8) -> tuple:
    """Random token states with 2..length real tokens each (the rest masked)."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, length + 1, (sentences,), generator=generator)
    mask = torch.arange(length)[None, :] < lengths[:, None]
    return torch.randn(sentences, length, width, generator=generator), mask


def cached(states: torch.Tensor, mask: torch.Tensor, path, batch: int = 5, dtype=np.float32):
    """A token cache of states fed in batches, as `hf_encoder.batches` yields them."""
    batches = ((states[i : i + batch], mask[i : i + batch]) for i in range(0, len(states), batch))
    return bucc_filter.cache_side(batches, path, dtype)


def brute_force(src: np.ndarray, tgt: np.ndarray, k: int) -> set[tuple[int, int]]:
    """Each source's k most similar targets and each target's k most similar sources."""
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    sims = unit(src) @ unit(tgt).T
    pairs = {(i, int(j)) for i in range(len(src)) for j in np.argsort(-sims[i])[:k]}
    return pairs | {(int(i), j) for j in range(len(tgt)) for i in np.argsort(-sims[:, j])[:k]}


def test_candidates_are_the_knn_of_both_directions():
    rng = np.random.default_rng(0)
    src, tgt = rng.normal(size=(30, 6)), rng.normal(size=(23, 6))
    for k in (1, 3):
        rows, cols = bucc_filter.candidates(src, tgt, k, block_size=7)
        found = list(zip(rows.tolist(), cols.tolist(), strict=True))
        assert len(found) == len(set(found))  # each pair once
        assert set(found) == brute_force(src, tgt, k)


def test_recall_is_the_share_of_gold_pairs_among_the_candidates():
    split = mining.Split(
        np.zeros((0, 0)),
        np.zeros((0, 0)),
        src_ids=["a", "b", "c", "d"],
        tgt_ids=["x", "y", "z"],
        gold={("a", "y"), ("c", "x"), ("d", "z")},
    )
    # rows are source rows, cols target rows: (0, 1) is a-y, (2, 0) c-x; (1, 2) is b-z, no gold
    rows, cols = np.array([0, 1, 2, 3]), np.array([1, 2, 0, 0])
    assert bucc_filter.recall(rows, cols, split) == pytest.approx(200 / 3)
    assert bucc_filter.recall(np.array([3]), np.array([2]), split) == pytest.approx(100 / 3)


def test_every_pair_a_candidate_scores_and_mines_as_all_pairs(tmp_path, monkeypatch):
    monkeypatch.setattr(bucc_filter, "PAIR_BLOCK", 17)  # several candidate blocks
    monkeypatch.setattr(bucc_filter, "SENTENCE_BLOCK", 4)
    (src, src_mask), (tgt, tgt_mask) = token_states(12, 1), token_states(10, 2)
    s_cache, t_cache = cached(src, src_mask, tmp_path / "s"), cached(tgt, tgt_mask, tmp_path / "t")
    rows, cols = bucc_filter.candidates(s_cache.pooled, t_cache.pooled, 12)
    assert len(rows) == 12 * 10
    for alpha in (0.75, 0.0):
        dense = bertscore.evaluation_scores(src, src_mask, tgt, tgt_mask, alpha=alpha, batch=16)
        scores = bucc_filter.candidate_scores(
            s_cache, t_cache, rows, cols, alpha=alpha, batch=16, device="cpu"
        )
        assert scores == pytest.approx(dense[rows, cols].numpy(), abs=1e-5)
        mined = bucc_filter.mine(rows, cols, scores, (12, 10))
        expected = align_eval.mine(dense)
        assert mined.src.tolist() == expected.src.tolist()
        assert mined.tgt.tolist() == expected.tgt.tolist()


def test_the_cache_holds_unit_content_tokens_and_pooled_means(tmp_path):
    states, mask = token_states(9, 3)
    cache = cached(states, mask, tmp_path / "s")
    assert cache.pooled == pytest.approx(bertscore.mean_pool(states, mask).numpy(), abs=1e-6)
    padded, padded_mask = cache.padded(np.array([4, 0]), "cpu")
    width = padded_mask.shape[1]
    assert torch.equal(padded_mask, mask[[4, 0], :width])
    unit = torch.nn.functional.normalize(states, dim=-1)[[4, 0], :width]
    assert padded[padded_mask].numpy() == pytest.approx(unit[padded_mask].numpy(), abs=1e-6)


def test_a_subset_of_candidates_keeps_its_scores_and_mines_within_it(tmp_path):
    (src, src_mask), (tgt, tgt_mask) = token_states(9, 4), token_states(8, 5)
    s_cache, t_cache = cached(src, src_mask, tmp_path / "s"), cached(tgt, tgt_mask, tmp_path / "t")
    every = bucc_filter.candidates(s_cache.pooled, t_cache.pooled, 9)
    full = bucc_filter.candidate_scores(s_cache, t_cache, *every, alpha=0.75, batch=4, device="cpu")
    rows, cols = bucc_filter.candidates(s_cache.pooled, t_cache.pooled, 2)
    some = bucc_filter.candidate_scores(
        s_cache, t_cache, rows, cols, alpha=0.75, batch=4, device="cpu"
    )
    assert some == pytest.approx(full[rows * 8 + cols], abs=1e-6)
    mined = bucc_filter.mine(rows, cols, some, (9, 8))
    allowed = set(zip(rows.tolist(), cols.tolist(), strict=True))
    assert set(zip(mined.src.tolist(), mined.tgt.tolist(), strict=True)) <= allowed


def test_half_precision_cache_moves_scores_little(tmp_path):
    (src, src_mask), (tgt, tgt_mask) = token_states(6, 6), token_states(5, 7)
    exact = [
        cached(x, m, tmp_path / f"{n}32")
        for n, (x, m) in enumerate([(src, src_mask), (tgt, tgt_mask)])
    ]
    half = [
        cached(x, m, tmp_path / f"{n}16", dtype=np.float16)
        for n, (x, m) in enumerate([(src, src_mask), (tgt, tgt_mask)])
    ]
    rows, cols = bucc_filter.candidates(exact[0].pooled, exact[1].pooled, 6)
    kwargs = {"alpha": 0.75, "batch": 256, "device": "cpu"}
    assert bucc_filter.candidate_scores(*half, rows, cols, **kwargs) == pytest.approx(
        bucc_filter.candidate_scores(*exact, rows, cols, **kwargs), abs=5e-3
    )


def test_k_reaching_both_sides_takes_the_all_pairs_path(monkeypatch):
    matrix = torch.tensor([[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]])
    monkeypatch.setattr(align_eval, "scores", lambda *args: matrix)
    monkeypatch.setattr(bucc_filter, "mine_prefiltered", lambda *args, **kw: "pre-filtered")
    monkeypatch.setattr(align_eval.hf_encoder, "batches", lambda *args: iter(()))
    src, tgt, encoder = ["a", "b"], ["x", "y", "z"], SimpleNamespace(device="cpu")
    expected = align_eval.mine(matrix)
    for k in (0, 3, 50):
        mined, covered = align_eval._mined(encoder, src, tgt, None, k, EVAL)
        assert covered == 100.0
        assert mined.src.tolist() == expected.src.tolist()
        assert mined.tgt.tolist() == expected.tgt.tolist()
    for k in (1, 2):  # fewer than the larger side: candidates only
        assert align_eval._mined(encoder, src, tgt, None, k, EVAL) == "pre-filtered"


def test_published_bucc_is_read_with_its_own_ids_and_gold(tmp_path):
    stem = tmp_path / "training.de-en"
    files = {
        "de": "Hallo\nWelt\nHaus\n",
        "en": "house\nhello\nworld\ntree\n",
        "de.ids": "de-1\nde-2\nde-3\n",
        "en.ids": "en-1\nen-2\nen-3\nen-4\n",
        "gold": "de-1\ten-2\nde-3\ten-1\n",
    }
    for suffix, text in files.items():
        (tmp_path / f"{stem.name}.{suffix}").write_text(text)
    spec = SimpleNamespace(gold_fraction=0.5, bucc_seed=0)
    src, tgt, split = align_eval._bucc_split(tmp_path, "training", "de", spec)
    assert (src, tgt) == (["Hallo", "Welt", "Haus"], ["house", "hello", "world", "tree"])
    assert split.src_ids == ["de-1", "de-2", "de-3"] and split.tgt_ids[0] == "en-1"
    assert split.gold == {("de-1", "en-2"), ("de-3", "en-1")}
