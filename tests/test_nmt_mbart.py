"""The mBART-class architectures (`mlrep.nmt.mbart`) are fairseq's mBART: its state dict at
mBART-25's size, its function at a tiny size."""

from __future__ import annotations

import argparse
import dataclasses

import pytest
import torch
from fairseq.models import ARCH_CONFIG_REGISTRY

from mlrep.device import BatchPlan
from mlrep.nmt.mbart import MBART_ARCHITECTURES
from mlrep.nmt.model import MODEL, ArchitectureMismatch
from mlrep.nmt.train import encoder_layers, fairseq_args
from mlrep.nmt.variant import Variant
from tests.mbart_helpers import TINY, bart, meta, ours, vocabulary
from tests.nmt_helpers import settings

MBART25_ROWS = 250027  # 4 specials + dict.txt's 249997 pieces + 25 language tokens + <mask>


def mbart_parameters(vocabulary: int, d: int, ffn: int, layers: int, positions: int) -> int:
    """A PreNorm Transformer's parameters with one shared embedding matrix, learned positions
    (fairseq adds padding_idx + 1 = 2 rows), a LayerNorm on each stack's embeddings and after
    each stack; per encoder layer self-attention (4 projections with biases), the FFN and 2
    LayerNorms; per decoder layer one attention more and a third LayerNorm."""
    attention, norm = 4 * (d * d + d), 2 * d
    feed_forward = d * ffn + ffn + ffn * d + d
    encoder = attention + feed_forward + 2 * norm
    decoder = 2 * attention + feed_forward + 3 * norm
    embeddings = vocabulary * d + 2 * (positions + 2) * d + 2 * norm
    return embeddings + layers * (encoder + decoder) + 2 * norm


def test_large_is_mbart25_by_size_and_by_fairseqs_state_dict():
    words = vocabulary(MBART25_ROWS)
    model = meta(ours, f"{MODEL}_mbart_large", words)
    assert MBART_ARCHITECTURES[f"{MODEL}_mbart_large"] == (1024, 4096, 16, 12)
    count = sum(p.numel() for p in model.parameters())
    assert count == mbart_parameters(MBART25_ROWS, 1024, 4096, 12, 1024) == 610_851_840
    theirs = meta(bart, words, []).state_dict()
    # bart's classification heads are an empty ModuleDict unless one is registered: no keys
    assert {k: v.shape for k, v in model.state_dict().items()} == {
        k: v.shape for k, v in theirs.items()
    }


def test_tiny_computes_what_fairseqs_mbart_computes():
    """fairseq's weights in our model give fairseq's output: every field that changes the
    function (embedding LayerNorm and scale, GELU, PreNorm, learned positions) is matched."""
    words = vocabulary(40)
    torch.manual_seed(0)
    theirs = bart(words, TINY).eval()
    model = ours(f"{MODEL}_mbart_tiny", words).eval()
    model.load_state_dict(theirs.state_dict())
    source = torch.randint(4, 40, (3, 7))
    target = torch.randint(4, 40, (3, 5))
    lengths = torch.full((3,), 7)
    expected, _ = theirs(source, lengths, target)
    actual, _ = model(source, lengths, target)
    torch.testing.assert_close(actual, expected)


@pytest.mark.parametrize("placement", ["post", "swap"])
def test_mbart_refuses_another_layernorm_placement(placement):
    """The placement changes the function, not the state dict: it must not load silently."""
    with pytest.raises(ArchitectureMismatch, match="mBART is PreNorm"):
        ARCH_CONFIG_REGISTRY[f"{MODEL}_mbart_tiny"](argparse.Namespace(layernorm=placement))


def test_training_keeps_mbarts_1024_learned_positions(tmp_path):
    """The positions are checkpoint weights: a run of an mBART-class arch keeps all 1024 (the
    other architectures' sinusoidal positions need only cover the data)."""
    plan = BatchPlan(1, 512, 1, 1, 512)
    mbart = dataclasses.replace(settings(), arch=f"{MODEL}_mbart_large")
    argv = fairseq_args(tmp_path, tmp_path, Variant("pre"), mbart, plan)
    assert "--max-source-positions=1024" in argv and "--max-target-positions=1024" in argv
    assert "--max-source-positions=256" in fairseq_args(
        tmp_path, tmp_path, Variant(), settings(), plan
    )
    assert encoder_layers(mbart.arch) == 12
