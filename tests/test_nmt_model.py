"""The Chapter 8 architecture variants really differ, and only where they should."""

from __future__ import annotations

import argparse
import dataclasses

import pytest
import torch
from fairseq.data import Dictionary
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

from mlrep.chapters.ch8_layernorm.systems import System, SystemNameError
from mlrep.device import BatchPlan
from mlrep.nmt.model import ARCHITECTURES, MODEL, VariantTransformer
from mlrep.nmt.train import depth, fairseq_args
from mlrep.nmt.variant import Variant, middle_layer
from tests.nmt_helpers import StubTask, settings, word_dictionary


def dictionary() -> Dictionary:
    return word_dictionary(["a", "b", "c", "d", "e", "f", "g", "h"])


def build(system: str, layers: int = 3) -> VariantTransformer:
    # as fairseq's own parser: options left out are absent, so architectures fill them in
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    VariantTransformer.add_args(parser)
    switches = System.parse(system).settings()
    switches.pop("tag_format")
    flags = Variant.of(layers, **switches).fairseq_flags()
    args = parser.parse_args([*flags, f"--encoder-layers={layers}", f"--decoder-layers={layers}"])
    ARCH_CONFIG_REGISTRY[f"{MODEL}_tiny"](args)
    torch.manual_seed(0)
    return VariantTransformer.build_model(args, StubTask(dictionary())).eval()


def layer_norms(model: torch.nn.Module) -> list[torch.nn.LayerNorm]:
    return [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]


def test_architectures_are_registered_with_thesis_sizes():
    assert ARCH_MODEL_REGISTRY[f"{MODEL}_base"] is VariantTransformer
    assert ARCHITECTURES[f"{MODEL}_base"] == (512, 2048, 8, 6)
    assert ARCHITECTURES[f"{MODEL}_big"] == (1024, 4096, 16, 6)


def test_layernorm_simple_has_no_layernorm_parameters():
    plain, simple = build("prenorm-s-enc-t-dec-w"), build("prenorm-simple-s-enc-t-dec-w")
    assert all(ln.weight is not None for ln in layer_norms(plain))
    assert layer_norms(simple) and all(ln.weight is None for ln in layer_norms(simple))
    names = [n for n, _ in simple.named_parameters() if "norm" in n]
    assert names == []
    assert len(layer_norms(simple)) == len(layer_norms(plain))


def test_postnorm_has_no_final_layernorms_and_prenorm_has_both():
    post, pre = build("postnorm-s-enc-t-dec-w"), build("prenorm-s-enc-t-dec-w")
    assert post.encoder.layer_norm is None and post.decoder.layer_norm is None
    assert pre.encoder.layer_norm is not None and pre.decoder.layer_norm is not None


def test_enc_last_drops_only_the_final_encoder_layernorm():
    pre, enc_last = build("prenorm-s-enc-t-dec-w"), build("prenorm-s-enc-t-dec-w-enc-last")
    assert enc_last.encoder.layer_norm is None
    assert enc_last.decoder.layer_norm is not None
    assert len(layer_norms(pre)) == len(layer_norms(enc_last)) + 1


def encoder_outputs(model: VariantTransformer, tokens: torch.Tensor) -> list[torch.Tensor]:
    out = model.encoder(
        tokens, src_lengths=torch.tensor([tokens.shape[1]]), return_all_hiddens=True
    )
    return out["encoder_states"]


@pytest.mark.parametrize("norm", ["prenorm", "postnorm", "swap-prenorm"])
def test_residual_removal_changes_exactly_the_middle_encoder_layer(norm):
    layers = 3
    with_res, without = (
        build(f"{norm}-s-enc-t-dec-w", layers),
        build(f"{norm}-s-enc-t-dec-w-o", layers),
    )
    without.load_state_dict(with_res.state_dict())  # same weights, only the residual differs
    tokens = torch.tensor([[4, 5, 6, 7, 2]])
    a, b = encoder_outputs(with_res, tokens), encoder_outputs(without, tokens)
    k = middle_layer(layers)  # layer 3 of 3 (ceil(3/2)+1)
    assert k == 3 and middle_layer(6) == 4 and middle_layer(2) == 2
    for index in range(1, layers + 1):
        same = torch.allclose(a[index], b[index])
        assert same == (index < k), f"layer {index}"
    # the removed layer's input is identical: only that layer's computation changed
    assert torch.allclose(a[k - 1], b[k - 1])
    flagged = [layer.attention_residual for layer in without.encoder.layers]
    assert flagged == [index != k for index in range(1, layers + 1)]


def test_placements_compute_different_functions_from_the_same_weights():
    outputs = {}
    tokens = torch.tensor([[4, 5, 6, 7, 2]])
    reference = build("prenorm-s-enc-t-dec-w")
    for system in ("prenorm-s-enc-t-dec-w", "postnorm-s-enc-t-dec-w", "swap-prenorm-s-enc-t-dec-w"):
        model = build(system)
        model.load_state_dict(reference.state_dict(), strict=False)
        outputs[system] = encoder_outputs(model, tokens)[1]
    values = list(outputs.values())
    assert not torch.allclose(values[0], values[1])
    assert not torch.allclose(values[0], values[2])
    assert not torch.allclose(values[1], values[2])
    # swap keeps the identity path: y = x + LN(F(x)) differs from x by a normalised term
    swap = build("swap-prenorm-s-enc-t-dec-w")
    assert swap.encoder.layers[0].placement == "swap"
    assert Variant().layernorm == "post"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("postnorm-t-enc-w", ("post", False, "t-enc", True, True)),
        ("prenorm-simple-s-enc-t-dec-w-o", ("pre", True, "s-enc-t-dec", False, True)),
        ("swap-prenorm-s-enc-t-dec-w", ("swap", False, "s-enc-t-dec", True, True)),
        ("prenorm-s-enc-t-dec-w-enc-last", ("pre", False, "s-enc-t-dec", True, False)),
    ],
)
def test_system_names_parse(name, expected):
    s = System.parse(name)
    assert (s.layernorm, s.simple, s.tag, s.residual, s.encoder_final_norm) == expected


@pytest.mark.parametrize(
    "name", ["swap-postnorm-t-enc-w", "postnorm-t-enc-w-enc-last", "pre-t-enc-w"]
)
def test_bad_system_names_are_rejected(name):
    with pytest.raises(SystemNameError):
        System.parse(name)


def transformer_parameters(vocabulary: int, d: int, ffn: int, layers: int) -> int:
    """A post-norm Transformer's parameters with all embeddings shared (sinusoidal
    positions): per encoder layer self-attention (4 projections with biases), the FFN and 2
    LayerNorms; per decoder layer one attention more and a third LayerNorm."""
    attention, norm = 4 * (d * d + d), 2 * d
    feed_forward = d * ffn + ffn + ffn * d + d
    encoder = attention + feed_forward + 2 * norm
    decoder = 2 * attention + feed_forward + 3 * norm
    return vocabulary * d + layers * (encoder + decoder)


def test_a_runs_shape_reaches_fairseq_and_sizes_the_model(tmp_path):
    """Chapter 4's #0* (Table B.1): layers, heads, embedding and FFN widths set on top of an
    architecture reach fairseq's command line and build a model of exactly that size."""
    shaped = dataclasses.replace(settings(), layers=1, heads=4, embed_dim=24, ffn_dim=40)
    argv = fairseq_args(tmp_path, tmp_path, Variant(), shaped, BatchPlan(1, 512, 1, 1, 512))
    for flag in ("--encoder-layers=1", "--decoder-layers=1", "--encoder-attention-heads=4"):
        assert flag in argv
    assert "--decoder-embed-dim=24" in argv and "--decoder-ffn-embed-dim=40" in argv
    assert not any(
        a.startswith("--encoder-")
        for a in fairseq_args(
            tmp_path, tmp_path, Variant(), settings(), BatchPlan(1, 512, 1, 1, 512)
        )
    )  # no shape set: the architecture's own
    assert depth(shaped) == 1 and depth(settings()) == ARCHITECTURES[f"{MODEL}_tiny"][3]
    # the model fairseq builds from those flags (as its parser: absent options are absent)
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    VariantTransformer.add_args(parser)
    model_flags = [a for a in argv if a.startswith(("--encoder-", "--decoder-"))]
    args = parser.parse_args(model_flags)
    ARCH_CONFIG_REGISTRY[shaped.arch](args)
    model = VariantTransformer.build_model(args, StubTask(dictionary()))
    assert len(model.encoder.layers) == len(model.decoder.layers) == 1
    assert model.encoder.layers[0].self_attn.num_heads == 4
    count = sum(p.numel() for p in model.parameters())
    assert count == transformer_parameters(len(dictionary()), 24, 40, 1)


@pytest.mark.parametrize("patience", [0, 2])
def test_patience_reaches_fairseq_and_stops_after_that_many_worse_validations(tmp_path, patience):
    """Chapter 5 stops a run after 8 validations without a better loss: the setting is
    fairseq's --patience, which its training loop reads through `should_stop_early`."""
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq_cli.train import should_stop_early

    s = dataclasses.replace(settings(), patience=patience)
    argv = fairseq_args(tmp_path, tmp_path, Variant(), s, BatchPlan(1, 512, 1, 1, 512))
    assert (f"--patience={patience}" in argv) == bool(patience)
    cfg = convert_namespace_to_omegaconf(
        options.parse_args_and_arch(options.get_training_parser(), [*argv, "--cpu"])
    )
    should_stop_early.__dict__.pop("best", None)
    stops = [should_stop_early(cfg, loss) for loss in (3.0, 2.5, 2.6, 2.7, 2.8)]
    # the best is 2.5; with patience 2 the second validation after it that is no better stops
    assert stops == ([False] * 5 if not patience else [False, False, False, True, True])
