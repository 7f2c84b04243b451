"""mBART-class architectures of `mlrep.nmt.model`'s Transformer (Chapter 5's mBART FT).

mBART (Liu et al., 2020) is fairseq's ``bart`` model under ``mbart_large_architecture`` trained
with ``--encoder-normalize-before --decoder-normalize-before``: PreNorm layers with the final
LayerNorms, a LayerNorm on the embeddings (``layernorm_embedding``), learned positions for 1024
tokens, scaled embeddings, GELU, no attention or FFN dropout, one embedding matrix shared by the
encoder, the decoder and the output projection. The architectures here set every one of those
fields, so a released mBART checkpoint (converted by `mlrep.nmt.mbart_init`) loads into
``mlrep_transformer`` strictly and computes what it computed in fairseq's ``bart``; the model is
ours rather than ``bart`` so fine-tuning goes through the same training, decoding and analysis
code as every other system.

Registered on import; the ``--user-dir`` folder imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fairseq.models import register_model_architecture

from mlrep.nmt.model import MODEL, ArchitectureMismatch, sized

MAX_POSITIONS = 1024  # mBART's learned positions (fairseq adds padding_idx + 1 rows)

# name -> (d_model, FFN, heads, layers per stack); large is mBART-25's shape (§4.1)
MBART_ARCHITECTURES = {
    f"{MODEL}_mbart_tiny": (64, 128, 2, 2),
    f"{MODEL}_mbart_large": (1024, 4096, 16, 12),
}


def _mbart(embed: int, ffn: int, heads: int, layers: int) -> Callable[[Any], None]:
    size = sized(embed, ffn, heads, layers)

    def architecture(args: Any) -> None:
        args.layernorm = getattr(args, "layernorm", None) or "pre"
        if args.layernorm != "pre":
            # swap-norm has PreNorm's state dict: an mBART checkpoint would load into it
            # without a word and compute another function
            raise ArchitectureMismatch(
                f"mBART is PreNorm: train it with layernorm pre, not {args.layernorm}"
            )
        args.layernorm_embedding = getattr(args, "layernorm_embedding", True)
        args.encoder_learned_pos = getattr(args, "encoder_learned_pos", True)
        args.decoder_learned_pos = getattr(args, "decoder_learned_pos", True)
        args.no_scale_embedding = getattr(args, "no_scale_embedding", False)
        args.activation_fn = getattr(args, "activation_fn", "gelu")
        args.attention_dropout = getattr(args, "attention_dropout", 0.0)
        args.activation_dropout = getattr(args, "activation_dropout", 0.0)
        args.max_source_positions = getattr(args, "max_source_positions", MAX_POSITIONS)
        args.max_target_positions = getattr(args, "max_target_positions", MAX_POSITIONS)
        size(args)

    return architecture


for _name, _size in MBART_ARCHITECTURES.items():
    register_model_architecture(MODEL, _name)(_mbart(*_size))
