"""EMS objectives against hand-computed values and a loop-by-loop reading of the thesis formulas."""

import math

import pytest
import torch

from mlrep.embed.objectives import bag_of_tokens, kl_to_bag, margin_softmax


def test_bag_of_tokens_counts_each_token_over_the_sentence_length_without_padding():
    bag = bag_of_tokens(torch.tensor([[3, 3, 4, 0], [2, 0, 0, 0]]), vocab_size=5, ignore=(0,))
    expected = torch.tensor([[0, 0, 0, 2 / 3, 1 / 3], [0, 0, 1, 0, 0]])
    assert torch.allclose(bag, expected)


def test_kl_to_a_bag_of_tokens_by_hand():
    target = bag_of_tokens(torch.tensor([[3, 3, 4, 0]]), vocab_size=5, ignore=(0,))
    uniform = torch.zeros(1, 5)  # q(w) = 1/5
    by_hand = 2 / 3 * math.log((2 / 3) / (1 / 5)) + 1 / 3 * math.log((1 / 3) / (1 / 5))
    assert kl_to_bag(target, uniform).item() == pytest.approx(by_hand, rel=1e-6)
    # q equal to p: KL is 0 (the zero-probability words contribute 0 · log 0 = 0)
    exact = torch.tensor([[-1e4, -1e4, -1e4, math.log(2 / 3), math.log(1 / 3)]])
    assert kl_to_bag(target, exact).item() == pytest.approx(0.0, abs=1e-6)
    # rows add up: the loss is a batch sum
    assert kl_to_bag(target.repeat(3, 1), uniform.repeat(3, 1)).item() == pytest.approx(3 * by_hand)


def test_symmetric_in_batch_loss_by_hand():
    eye = torch.eye(2)
    # cos = I: each of the 2 rows and 2 columns is -log(e^1 / (e^1 + e^0))
    assert margin_softmax(eye, eye, temperature=1.0, margin=0.0).item() == pytest.approx(
        4 * math.log(1 + math.exp(-1))
    )
    # AMS: the positive becomes (1 - 0.3) / 0.5 = 1.4, negatives stay 0
    assert margin_softmax(eye, eye, temperature=0.5, margin=0.3).item() == pytest.approx(
        4 * math.log(1 + math.exp(-1.4))
    )


def _naive(a: torch.Tensor, b: torch.Tensor, temperature: float, margin: float) -> float:
    """Spec §4.3/§4.4, term by term: rows (a_j against every b_k) plus columns."""

    def cos(x, y):
        return (x @ y / (x.norm() * y.norm())).item()

    n, total = len(a), 0.0
    for j in range(n):
        for first, second in ((a, b), (b, a)):
            positive = math.exp((cos(first[j], second[j]) - margin) / temperature)
            negatives = sum(
                math.exp(cos(first[j], second[k]) / temperature) for k in range(n) if k != j
            )
            total -= math.log(positive / (positive + negatives))
    return total


@pytest.mark.parametrize(("temperature", "margin"), [(0.1, 0.0), (1.0, 0.3), (0.1, 0.3)])
def test_margin_softmax_matches_the_formula_on_random_vectors(temperature, margin):
    generator = torch.Generator().manual_seed(7)
    a = torch.randn(5, 8, generator=generator, dtype=torch.float64)
    b = torch.randn(5, 8, generator=generator, dtype=torch.float64)
    got = margin_softmax(a, b, temperature, margin).item()
    assert got == pytest.approx(_naive(a, b, temperature, margin), rel=1e-9)
