"""Gradient caching (mlrep/train/grad_cache.py) is exact: chunked, its parameter gradients
equal those of one backward through the whole batch, dropout included (RNG replay), on a tiny
LEALLA student with its full loss (AMS + FD + LD over the whole batch)."""

from __future__ import annotations

import torch

from mlrep.embed.distill import DistillModel
from mlrep.embed.settings import DistillConfig, StudentConfig
from mlrep.train import grad_cache

ROWS, TEACHER_DIM = 12, 10


def model(dropout: float) -> DistillModel:
    torch.manual_seed(0)
    shape = dict(layers=2, heads=2, dim=16, ffn_dim=32)
    student = StudentConfig(
        vocab_size=30, max_tokens=6, dropout=dropout, attention_dropout=dropout, **shape
    )
    return DistillModel(student, DistillConfig(teacher_dim=TEACHER_DIM)).train()


def batch() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    src, tgt = (torch.randint(1, 30, (ROWS, 6), generator=g) for _ in range(2))
    src[:, 4:] = 0  # padding, as prepared pairs have
    t_src, t_tgt = (torch.randn(ROWS, TEACHER_DIM, generator=g) for _ in range(2))
    return src, tgt, t_src, t_tgt


def gradients(net: DistillModel) -> dict[str, torch.Tensor]:
    grads = {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None}
    net.zero_grad()
    return grads


def cached(net: DistillModel, chunk_size: int) -> tuple[float, dict[str, torch.Tensor]]:
    src, tgt, t_src, t_tgt = batch()
    torch.manual_seed(7)
    loss = grad_cache.backward(
        net.student,
        (src, tgt),
        lambda pooled: net.head_terms(*pooled, t_src, t_tgt)["loss"],
        chunk_size,
    )
    return float(loss), gradients(net)


def assert_same(expected: tuple[float, dict], found: tuple[float, dict]) -> None:
    assert abs(expected[0] - found[0]) <= 1e-5 * abs(expected[0])
    assert expected[1].keys() == found[1].keys()
    assert len(expected[1]) > 10  # the student's and the FD head's parameters
    for name, grad in expected[1].items():
        torch.testing.assert_close(found[1][name], grad, rtol=1e-4, atol=1e-6, msg=name)


def test_chunked_gradients_equal_the_whole_batch_without_dropout():
    net = model(dropout=0.0)
    src, tgt, t_src, t_tgt = batch()
    loss = net.loss_terms(src, tgt, t_src, t_tgt)["loss"]
    loss.backward()
    whole = float(loss.detach()), gradients(net)
    for chunk_size in (5, 4, 1):  # uneven, even, one row
        assert_same(whole, cached(net, chunk_size))


def test_chunked_gradients_equal_one_backward_with_the_same_dropout_masks():
    """With dropout on, the reference is one graph over the same chunked forward passes (the
    same masks), backpropagated once from the whole-batch loss."""
    net = model(dropout=0.3)
    src, tgt, t_src, t_tgt = batch()
    torch.manual_seed(7)
    pooled = [torch.cat([net.student(c) for c in x.split(5)]) for x in (src, tgt)]
    loss = net.head_terms(*pooled, t_src, t_tgt)["loss"]
    loss.backward()
    after = torch.rand(1)
    assert_same((float(loss.detach()), gradients(net)), cached(net, 5))
    assert torch.equal(torch.rand(1), after)  # the RNG advanced as by one forward pass
