"""OneAligner's scorer and loss (`mlrep.embed.bertscore`, `objectives.global_negatives`) against
independent per-pair and hand-written computations, and a learning check of the loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mlrep.embed import bertscore
from mlrep.embed.bertscore import ScorerError
from mlrep.embed.objectives import global_negatives
from mlrep.train import distributed
from tests.learning import assert_improves, assert_loss_falls

torch.set_num_threads(1)
PAD_VALUE = 50.0  # padded positions hold huge vectors: matched, they would win every max


def padded(rng: np.random.Generator, rows: int, length: int, dim: int, offset: float = 0.0):
    """Random token states with random lengths (1..length) and junk in the padding."""
    lengths = rng.integers(1, length + 1, size=rows)
    states = rng.normal(size=(rows, length, dim)) + offset
    mask = np.arange(length)[None, :] < lengths[:, None]
    states[~mask] = PAD_VALUE
    return torch.tensor(states), torch.tensor(mask)


def naive_f(src, src_mask, tgt, tgt_mask, cosine: bool) -> np.ndarray:
    """BERT-score F of each pair by a loop over pairs, on the unpadded tokens only."""
    out = np.zeros((len(src), len(tgt)))
    for m in range(len(src)):
        for n in range(len(tgt)):
            s = src[m].numpy()[src_mask[m].numpy()]
            t = tgt[n].numpy()[tgt_mask[n].numpy()]
            if cosine:
                s = s / np.linalg.norm(s, axis=1, keepdims=True)
                t = t / np.linalg.norm(t, axis=1, keepdims=True)
            sim = s @ t.T
            p, r = sim.max(axis=0).mean(), sim.max(axis=1).mean()
            out[m, n] = 2 * p * r / (p + r)
    return out


@pytest.mark.parametrize("cosine", [True, False])
def test_bertscore_matches_a_per_pair_loop(cosine: bool) -> None:
    rng = np.random.default_rng(0)
    # offset 1: dot products of the raw vectors stay positive, so P + R is far from 0
    src, sm = padded(rng, 7, 6, 5, offset=1.0)
    tgt, tm = padded(rng, 5, 4, 5, offset=1.0)
    got = bertscore.score_matrix(src, sm, tgt, tm, cosine=cosine)
    assert got.shape == (7, 5)
    np.testing.assert_allclose(got.numpy(), naive_f(src, sm, tgt, tm, cosine), rtol=1e-10)


def test_bertscore_blocks_change_no_value() -> None:
    rng = np.random.default_rng(1)
    src, sm = padded(rng, 9, 5, 4)
    tgt, tm = padded(rng, 7, 6, 4)
    whole = bertscore.score_matrix(src, sm, tgt, tm)
    for block in (1, 2, 4):
        blocked = bertscore.score_matrix(src, sm, tgt, tm, block=block)
        np.testing.assert_allclose(blocked.numpy(), whole.numpy(), rtol=1e-12)


@pytest.mark.parametrize("block", [1, 2, 3, None])
def test_length_sorted_blocks_cut_to_their_longest_score_every_pair(block) -> None:
    """Each side is scored sorted by length in blocks cut to their longest sentence (None:
    `CPU_BLOCK`): every pair still gets its own F, in the callers' row and column order."""
    rng = np.random.default_rng(2)
    src, sm = padded(rng, 8, 7, 4, offset=1.0)
    tgt, tm = padded(rng, 6, 9, 4, offset=1.0)
    assert sm.sum(1).tolist() != sorted(sm.sum(1).tolist())  # the order is not the lengths'
    got = bertscore.score_matrix(src, sm, tgt, tm, block=block)
    np.testing.assert_allclose(got.numpy(), naive_f(src, sm, tgt, tm, True), rtol=1e-10)


def test_mean_pooling_cosine_matches_numpy() -> None:
    rng = np.random.default_rng(2)
    src, sm = padded(rng, 4, 5, 3)
    tgt, tm = padded(rng, 3, 5, 3)
    got = bertscore.score_matrix(src, sm, tgt, tm, similarity="avg")
    for m in range(4):
        for n in range(3):
            a = src[m].numpy()[sm[m].numpy()].mean(axis=0)
            b = tgt[n].numpy()[tm[n].numpy()].mean(axis=0)
            want = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
            assert got[m, n].item() == pytest.approx(want, rel=1e-10)


def test_content_mask_drops_padding_and_special_tokens() -> None:
    ids = torch.tensor([[0, 7, 8, 2, 1], [0, 9, 2, 1, 1]])
    attention = (ids != 1).long()
    keep = bertscore.content_mask(ids, attention, special_ids=(0, 2))
    assert keep.tolist() == [[False, True, True, False, False], [False, True, False, False, False]]
    as_bool = attention.bool()
    bertscore.content_mask(ids, as_bool, special_ids=(0, 2))
    assert torch.equal(as_bool, attention.bool())  # the caller's mask is left alone


@pytest.mark.parametrize(
    ("src_shape", "mask_shape", "message"),
    [((2, 3, 4), (2, 4), "sentences × length"), ((2, 3, 4), (2, 3), "no token left")],
)
def test_bad_states_are_refused(src_shape, mask_shape, message) -> None:
    src = torch.ones(src_shape)
    mask = torch.zeros(mask_shape, dtype=torch.bool)
    if mask_shape == src_shape[:2]:
        mask[0, 0] = True  # sentence 1 is empty
    good = torch.ones(2, 3, 4), torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(ScorerError, match=message):
        bertscore.score_matrix(src, mask, *good)
    with pytest.raises(ScorerError, match="unknown similarity"):
        bertscore.score_matrix(*good, *good, similarity="max")
    with pytest.raises(ScorerError, match="block is 0"):
        bertscore.score_matrix(*good, *good, block=0)


def hand_normalised(f: np.ndarray, alpha: float, recentre: bool) -> np.ndarray:
    m, n = f.shape
    out = np.zeros_like(f)
    for i in range(m):
        for j in range(n):
            row = sum(f[i, k] for k in range(n)) / n
            col = sum(f[k, j] for k in range(m)) / m
            out[i, j] = f[i, j] - alpha * (row + col)
            if recentre:
                out[i, j] += (2 * alpha - 1) * f.sum() / (m * n)
    return out


@pytest.mark.parametrize("recentre", [True, False])
def test_normalisation_matches_the_formula(recentre: bool) -> None:
    f = np.random.default_rng(3).normal(size=(4, 6)) + 2.0
    got = bertscore.normalize(torch.tensor(f), 0.75, recentre=recentre).numpy()
    np.testing.assert_allclose(got, hand_normalised(f, 0.75, recentre), rtol=1e-12)
    if recentre:  # footnote 3: the added term keeps the scores around 0
        assert abs(got.mean()) < 1e-12


def test_recentring_changes_no_ranking() -> None:
    f = torch.tensor(np.random.default_rng(4).normal(size=(8, 8)))
    plain, recentred = bertscore.normalize(f), bertscore.normalize(f, recentre=True)
    assert not torch.allclose(plain, recentred)
    assert torch.equal(plain.argsort(dim=1), recentred.argsort(dim=1))
    assert torch.equal(plain.argsort(dim=0), recentred.argsort(dim=0))


def test_evaluation_normalises_each_block_with_its_own_means() -> None:
    f = np.random.default_rng(5).normal(size=(7, 5))
    got = bertscore.normalize_blocks(torch.tensor(f), 0.75, batch=3).numpy()
    for m in range(0, 7, 3):
        for n in range(0, 5, 3):
            want = hand_normalised(f[m : m + 3, n : n + 3], 0.75, recentre=False)
            np.testing.assert_allclose(got[m : m + 3, n : n + 3], want, rtol=1e-12)
    whole = bertscore.normalize_blocks(torch.tensor(f), 0.75, batch=256).numpy()
    np.testing.assert_allclose(whole, hand_normalised(f, 0.75, recentre=False), rtol=1e-12)


def test_normalisation_defeats_a_popular_sentence() -> None:
    """Target 0 is close to every source: it wins every row until normalisation."""
    rng = np.random.default_rng(6)
    f = rng.uniform(0.0, 0.1, size=(6, 6)) + np.eye(6) * 0.3
    f[:, 0] += 0.5
    f = torch.tensor(f)
    assert bertscore.precision_at_1(f) == pytest.approx(100 / 6)
    assert bertscore.precision_at_1(bertscore.normalize_blocks(f, 0.75)) == 100.0


def test_evaluation_scores_alpha_zero_is_unnormalised() -> None:
    rng = np.random.default_rng(7)
    src, sm = padded(rng, 5, 4, 3)
    tgt, tm = padded(rng, 6, 4, 3)
    f = bertscore.score_matrix(src, sm, tgt, tm)
    assert torch.equal(bertscore.evaluation_scores(src, sm, tgt, tm, alpha=0.0), f)
    scores = bertscore.evaluation_scores(src, sm, tgt, tm, batch=4)
    assert torch.allclose(scores, bertscore.normalize_blocks(f, bertscore.ALPHA, 4))


def test_global_negatives_on_a_3x3_case() -> None:
    s = [[2.0, 0.5, -1.0], [1.0, 3.0, 0.0], [-0.5, 2.5, 1.5]]
    tau = 5.0
    negatives = sum(math.exp(s[m][n] / tau) for m in range(3) for n in range(3) if m != n)
    want = (
        -sum(
            math.log(math.exp(s[i][i] / tau) / (math.exp(s[i][i] / tau) + negatives))
            for i in range(3)
        )
        / 3
    )
    got = global_negatives(torch.tensor(s, dtype=torch.float64), tau)
    assert got.item() == pytest.approx(want, rel=1e-12)


def test_training_loss_gradient_reaches_real_tokens_only() -> None:
    rng = np.random.default_rng(8)
    src, sm = padded(rng, 4, 5, 3, offset=1.0)
    tgt, tm = padded(rng, 4, 5, 3, offset=1.0)
    src.requires_grad_(True)
    tgt.requires_grad_(True)
    loss = bertscore.training_loss(src, sm, tgt, tm)
    loss.backward()
    assert torch.isfinite(loss)
    for states, mask in ((src, sm), (tgt, tm)):
        assert torch.isfinite(states.grad).all()
        assert states.grad[mask].abs().sum() > 0
        assert states.grad[~mask].abs().sum() == 0


def test_training_scores_use_raw_dot_products_and_recentre() -> None:
    rng = np.random.default_rng(9)
    src, sm = padded(rng, 4, 5, 3, offset=1.0)
    tgt, tm = padded(rng, 4, 5, 3, offset=1.0)
    f = naive_f(src, sm, tgt, tm, cosine=False)
    got = bertscore.training_scores(src, sm, tgt, tm, alpha=0.75)
    np.testing.assert_allclose(got.numpy(), hand_normalised(f, 0.75, recentre=True), rtol=1e-10)


def test_gather_hook_widens_the_negatives() -> None:
    rng = np.random.default_rng(10)
    local = padded(rng, 3, 4, 3, offset=1.0)
    other = padded(rng, 3, 4, 3, offset=1.0)
    gathered = []

    def two_processes(x: torch.Tensor) -> torch.Tensor:
        gathered.append(x)
        pool = {id(local[0]): other[0], id(local[1]): other[1]}
        return torch.cat([x, pool[id(x)]])

    src_states, src_mask = local
    scores = bertscore.training_scores(src_states, src_mask, *local, gather=two_processes)
    assert len(gathered) == 4 and scores.shape == (6, 6)
    both = [torch.cat([a, b]) for a, b in zip(local, other, strict=True)]
    assert torch.allclose(scores, bertscore.training_scores(*both, *both))
    assert distributed.gather_processes(src_states) is src_states  # no process group: a no-op


def _two_process_data():
    g = torch.Generator().manual_seed(0)
    src, tgt = torch.randn(4, 5, 3, generator=g), torch.randn(4, 5, 3, generator=g)
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[1, 3:], mask[2, 4:] = False, False
    return src, mask, tgt, mask.flip(0)


def _loss_and_gradient(src, src_mask, tgt, tgt_mask, gather):
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 3)
    encode = lambda x: torch.nn.functional.softplus(layer(x))  # noqa: E731
    loss = bertscore.training_loss(encode(src), src_mask, encode(tgt), tgt_mask, gather=gather)
    loss.backward()
    return loss.detach(), layer.weight.grad


def _two_process_worker(rank: int, store: str, out: str) -> None:
    torch.set_num_threads(1)
    torch.distributed.init_process_group(
        "gloo", init_method=f"file://{store}", rank=rank, world_size=2
    )
    rows = slice(2 * rank, 2 * rank + 2)
    own = [x[rows] for x in _two_process_data()]
    loss, grad = _loss_and_gradient(*own, distributed.gather_processes)
    torch.distributed.all_reduce(grad)  # what DDP does to a parameter's gradient
    torch.save((loss, grad / 2), f"{out}.{rank}")
    torch.distributed.destroy_process_group()


def test_gather_processes_gives_the_global_loss_and_gradient(tmp_path) -> None:
    """Two processes of two pairs each train as one process with the batch of four."""
    out = str(tmp_path / "result")
    torch.multiprocessing.spawn(_two_process_worker, args=(str(tmp_path / "store"), out), nprocs=2)
    want_loss, want_grad = _loss_and_gradient(*_two_process_data(), distributed.no_gather)
    for rank in range(2):
        loss, grad = torch.load(f"{out}.{rank}")
        assert loss.item() == pytest.approx(want_loss.item(), rel=1e-6)
        torch.testing.assert_close(grad, want_grad, rtol=1e-5, atol=1e-7)


class Projection(torch.nn.Module):
    """A linear map per language on top of fixed token vectors, then softplus: the encoder to
    be trained. Its vectors are positive, so every raw dot product is, as XLM-R's anisotropic
    hidden states' are; with signed vectors P + R can cross 0, and the pole of F = 2PR/(P + R)
    there is what the optimiser then exploits (measured: loss spikes, erratic P@1)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.src = torch.nn.Linear(dim, dim, bias=False)
        self.tgt = torch.nn.Linear(dim, dim, bias=False)
        torch.nn.init.eye_(self.src.weight)
        torch.nn.init.eye_(self.tgt.weight)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        softplus = torch.nn.functional.softplus
        return softplus(self.src(src)), softplus(self.tgt(tgt))


def synthetic_pairs(rng: np.random.Generator, count: int, rotations, vocab: np.ndarray):
    """Aligned sentences: the same words in shuffled order, each language its own rotation of
    the word vectors, padded to one length."""
    length, dim = 6, vocab.shape[1]
    src = np.zeros((count, length, dim))
    tgt = np.zeros((count, length, dim))
    sm = np.zeros((count, length), dtype=bool)
    tm = np.zeros((count, length), dtype=bool)
    for i in range(count):
        size = rng.integers(3, length + 1)
        words = rng.choice(len(vocab), size=size, replace=False)
        src[i, :size] = vocab[words] @ rotations[0]
        tgt[i, :size] = vocab[rng.permutation(words)] @ rotations[1]
        sm[i, :size], tm[i, :size] = True, True
    src_t, tgt_t = torch.tensor(src, dtype=torch.float32), torch.tensor(tgt, dtype=torch.float32)
    return src_t, torch.tensor(sm), tgt_t, torch.tensor(tm)


def test_loss_teaches_a_linear_model_to_retrieve() -> None:
    """Overfit one batch of 16 pairs with the loss; held-out P@1 (64 candidates) must rise.
    Measured over data seeds 11-15: loss ratio 0.04-0.13, P@1 from <= 3.1 to 66-100."""
    torch.manual_seed(0)
    rng = np.random.default_rng(13)
    dim = 12
    vocab = rng.normal(size=(40, dim))
    rotations = [np.linalg.qr(rng.normal(size=(dim, dim)))[0] for _ in range(2)]
    src, sm, tgt, tm = synthetic_pairs(rng, 16, rotations, vocab)
    heldout = synthetic_pairs(rng, 64, rotations, vocab)
    model = Projection(dim)

    def p_at_1() -> float:
        with torch.no_grad():
            held_src, held_tgt = model(heldout[0], heldout[2])
            scores = bertscore.evaluation_scores(held_src, heldout[1], held_tgt, heldout[3])
        return bertscore.precision_at_1(scores)

    untrained = p_at_1()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(40):
        src_states, tgt_states = model(src, tgt)
        loss = bertscore.training_loss(src_states, sm, tgt_states, tm)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert_loss_falls(losses, window=5, below=0.4)
    assert_improves(p_at_1(), untrained, by=40.0, higher_is_better=True, what="held-out P@1")


@pytest.fixture(scope="module")
def tiny_encoders():
    transformers = pytest.importorskip("transformers")
    shape = dict(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=40,
    )
    torch.manual_seed(0)
    return [
        transformers.BertModel(transformers.BertConfig(**shape)).eval(),
        transformers.XLMRobertaModel(transformers.XLMRobertaConfig(**shape, pad_token_id=1)).eval(),
    ]


def test_layer_states_pick_the_hidden_layer(tiny_encoders) -> None:
    ids = torch.tensor([[0, 5, 6, 7, 2], [0, 8, 2, 1, 1]])
    mask = (ids != 1).long()
    for encoder in tiny_encoders:
        with torch.no_grad():
            out = encoder(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            second = bertscore.layer_states(encoder, ids, mask, 2)
            last = bertscore.layer_states(encoder, ids, mask, 3)
        assert torch.equal(second, out.hidden_states[2])
        assert torch.equal(last, out.last_hidden_state)
        for layer in (0, 4, bertscore.XLMR_LARGE_LAYER):
            with pytest.raises(ScorerError, match=rf"layer {layer} .* 3-layer .* choose 1\.\.3"):
                bertscore.layer_states(encoder, ids, mask, layer)
