"""+align (Garg et al., 2019) on the variant Transformer: the attention its criterion supervises
is one head of one decoder layer, the options are checked, and training through `mlrep nmt
train` learns the links (the alignment loss falls) or refuses a data-bin without them."""

from __future__ import annotations

import argparse
import dataclasses
import re

import pytest
import torch
from fairseq.models import ARCH_CONFIG_REGISTRY

from mlrep.nmt import prepare, train
from mlrep.nmt.data import Direction, NmtDataError
from mlrep.nmt.decode import Translator
from mlrep.nmt.model import ALIGN_MODEL, MODEL, VariantAlignTransformer, align_arch
from mlrep.nmt.train import BEST
from tests.learning import assert_loss_falls
from tests.nmt_helpers import (  # noqa: F401
    BEAM,
    StubTask,
    corpus,
    encoded,
    one_batch,
    run,
    settings,
    train_command,
)
from tests.test_nmt_alignments import PIECES, cut_dataset
from tests.test_nmt_contrastive import DICT, batch

TINY = f"{MODEL}_tiny"


def build(**options) -> VariantAlignTransformer:
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    VariantAlignTransformer.add_args(parser)
    args = parser.parse_args([])
    for name, value in options.items():
        setattr(args, name, value)
    ARCH_CONFIG_REGISTRY[align_arch(TINY)](args)
    args.dropout = 0.0
    torch.manual_seed(0)
    return VariantAlignTransformer.build_model(args, StubTask(DICT)).eval()


@pytest.mark.parametrize("layer", [None, 1])
def test_the_supervised_attention_is_the_first_head_of_its_layer(layer):
    """The model's returned attention (what the criterion reads) is head 0 of the alignment
    layer's cross-attention: the penultimate layer by default (layer 0 of the tiny 2-layer
    decoder), and the layer asked for otherwise."""
    model = build(**({} if layer is None else {"alignment_layer": layer}))
    expected = 0 if layer is None else layer
    assert model.alignment_layer == expected and model.alignment_heads == 1
    heads: dict[int, torch.Tensor | None] = {}
    for index, decoder_layer in enumerate(model.decoder.layers):
        decoder_layer.encoder_attn.register_forward_hook(
            lambda _m, _i, out, index=index: heads.__setitem__(index, out[1])
        )
    sample = batch()
    with torch.no_grad():
        _, extra = model(**sample["net_input"])
    attention = extra["attn"][0]
    bsz, tgt = sample["target"].shape
    assert attention.shape == (bsz, tgt, sample["net_input"]["src_tokens"].size(1))
    per_head = heads[expected]
    assert per_head is not None and per_head.shape[0] == 2  # the tiny model's two heads
    torch.testing.assert_close(attention, per_head[0])
    assert not torch.allclose(per_head[0], per_head[1])  # one head, not their mean
    # the other layer gives no per-head weights (in eval mode fairseq's layers return their
    # heads' mean, which the alignment never reads)
    assert all(heads[i] is None or heads[i].dim() == 3 for i in heads if i != expected)


@pytest.mark.parametrize(
    ("options", "complaint"),
    [({"alignment_layer": 2}, "not a decoder layer"), ({"alignment_heads": 3}, "not 1..2")],
)
def test_alignment_options_outside_the_model_are_refused(options, complaint):
    with pytest.raises(ValueError, match=complaint):
        build(**options)


TRAIN_ALIGNMENT_LOSS = r"\btrain\W+epoch \d+ \|.*?\| alignment_loss ([-+.\deE]+) \|"


def test_align_training_learns_the_links(tmp_path):
    """The alignment loss falls through `mlrep nmt train` on a data-bin binarised with its
    links (`tests.test_nmt_alignments`'s two en-ja pairs, both directions: one batch)."""
    out = cut_dataset(tmp_path)
    prepare.binarise(out, ["en", "ja"], "s-enc-t-dec", out / "s-enc-t-dec", links=out / "align")
    s = dataclasses.replace(settings(max_update=30, save_interval_updates=30), lr=0.01)
    argv = [*train_command(out, tmp_path / "run", s=s), "--alignment-weight", "1.0"]
    result = run(argv)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"arch='{align_arch(TINY)}'" in result.stderr or align_arch(TINY) in result.stderr
    losses = [float(x) for x in re.findall(TRAIN_ALIGNMENT_LOSS, result.stderr)]
    assert len(losses) == 30
    # measured: first-5 mean 1.56, last-5 mean 0.42 (ratio 0.27); with the alignment loss's
    # weight near 0 (--alignment-weight 1e-9, so fairseq still logs it): 1.71 → 1.67 (0.98)
    assert_loss_falls(losses, window=5, below=0.6, what="training alignment loss")
    # the checkpoint decodes through the ordinary path (fairseq's generator reads the decoder)
    translator = Translator(tmp_path / "run" / BEST, out / "s-enc-t-dec" / "bin", "s-enc-t-dec")
    assert isinstance(translator.model, VariantAlignTransformer)
    [hypothesis] = translator.generate([" ".join(PIECES[0][0])], [Direction("en", "ja")], BEAM)
    assert hypothesis and all(isinstance(piece, str) for piece in hypothesis)


def test_align_training_refuses_a_data_bin_without_links(one_batch, tmp_path):  # noqa: F811
    s = settings(max_update=2, save_interval_updates=2)
    result = run([*train_command(one_batch, tmp_path, s=s), "--alignment-weight", "0.05"])
    assert result.returncode != 0
    assert "no train.align.src-tgt.bin, but alignment-weight is 0.05" in result.stderr
    assert not (tmp_path / "checkpoint_last.pt").exists()


@pytest.mark.parametrize("other", [{"contrastive": True}, {"interlingua": "var"}])
def test_align_does_not_combine_with_another_criterion(other):
    s = dataclasses.replace(settings(), alignment_weight=0.05, **other)
    with pytest.raises(NmtDataError, match="set interlingua to none and contrastive to false"):
        train._model_flags(s)
    alone = dataclasses.replace(settings(), alignment_weight=0.05)
    assert train.model_name(alone) == ALIGN_MODEL
    assert f"--arch={align_arch(TINY)}" in train._model_flags(alone)
