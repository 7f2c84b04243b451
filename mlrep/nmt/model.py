"""The Chapter 8 Transformer variants as one fairseq model with options.

Every sub-layer F (self-attention, cross-attention, FFN) of input x is wrapped by one function,
`_sublayer`, so the LayerNorm placement is a single switch instead of copies of fairseq's layers:

* ``post``:  y = LN(x + F(x))            (fairseq's default)
* ``pre``:   y = x + F(LN(x)), plus a final LN after the encoder and the decoder stacks
* ``swap``:  y = x + LN(F(x)), the final LNs kept (Swap-PreNorm, thesis Appendix E.2)

``--layernorm-simple`` drops every LN's gain and bias (Xu et al., 2019), ``--no-encoder-final-
layernorm`` removes PreNorm's last encoder LN ("w/o Enc-Last"), and ``--drop-residual-layer K``
removes the self-attention residual of encoder layer K (1-based; Liu et al., 2021), so that
layer computes y = F(LN(x)) (pre), LN(F(x)) (post) or LN(F(x)) (swap).

This module registers the model and its architectures when imported; the ``--user-dir`` folder
(`USER_DIR`) imports it and `mlrep.nmt.interlingua` (Chapter 7's model, built on this one) by
their package names, so each registers once however it is reached.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerConfig,
    TransformerDecoderBase,
    TransformerEncoderBase,
    TransformerModel,
    base_architecture,
)
from fairseq.models.transformer_align import TransformerAlignModel
from fairseq.modules.transformer_layer import (
    TransformerDecoderLayerBase,
    TransformerEncoderLayerBase,
)
from torch import Tensor, nn

from mlrep.errors import MlrepError
from mlrep.nmt.variant import PLACEMENTS, Variant

MODEL = "mlrep_transformer"
ALIGN_MODEL = f"{MODEL}_align"  # the same model with one supervised cross-attention head
USER_DIR = Path(__file__).resolve().parent / "mlrep_fairseq"
# the state-dict prefix of `mlrep.nmt.interlingua`'s layers: a checkpoint has it or not
INTERLINGUA_PREFIX = "encoder.interlingua."


class ArchitectureMismatch(MlrepError):
    """A checkpoint of one model loaded into the other (Transformer vs interlingua)."""


def _norm(variant: Variant, dim: int) -> nn.LayerNorm:
    return nn.LayerNorm(dim, elementwise_affine=not variant.simple)


def _sublayer(
    layer: nn.Module,
    x: Tensor,
    norm: nn.Module,
    function: Callable[[Tensor], Tensor],
    placement: str,
    residual: bool = True,
) -> Tensor:
    """One residual block under a LayerNorm placement (the only place placement matters)."""
    shortcut = x
    if placement == "pre":
        x = norm(x)
    x = function(x)
    if placement == "swap":
        x = norm(x)
    x = layer.dropout_module(x)
    if residual:
        x = shortcut + x
    if placement == "post":
        x = norm(x)
    return x


def _ffn(layer: nn.Module, x: Tensor) -> Tensor:
    x = layer.activation_fn(layer.fc1(x))
    x = layer.activation_dropout_module(x)
    return layer.fc2(x)


class VariantEncoderLayer(TransformerEncoderLayerBase):
    def __init__(self, cfg: TransformerConfig, variant: Variant, residual: bool) -> None:
        super().__init__(cfg)
        self.placement = variant.layernorm
        self.attention_residual = residual
        self.self_attn_layer_norm = _norm(variant, self.embed_dim)
        self.final_layer_norm = _norm(variant, self.embed_dim)

    def forward(self, x, encoder_padding_mask: Tensor | None, attn_mask: Tensor | None = None):
        if attn_mask is not None:
            attn_mask = attn_mask.masked_fill(attn_mask.to(torch.bool), -1e8)

        def attend(h: Tensor) -> Tensor:
            out, _ = self.self_attn(
                query=h,
                key=h,
                value=h,
                key_padding_mask=encoder_padding_mask,
                need_weights=False,
                attn_mask=attn_mask,
            )
            return out

        x = _sublayer(
            self, x, self.self_attn_layer_norm, attend, self.placement, self.attention_residual
        )
        return _sublayer(self, x, self.final_layer_norm, lambda h: _ffn(self, h), self.placement)


class VariantDecoderLayer(TransformerDecoderLayerBase):
    def __init__(self, cfg: TransformerConfig, variant: Variant, no_encoder_attn: bool) -> None:
        super().__init__(cfg, no_encoder_attn=no_encoder_attn)
        self.placement = variant.layernorm
        self.self_attn_layer_norm = _norm(variant, self.embed_dim)
        if self.encoder_attn is not None:
            self.encoder_attn_layer_norm = _norm(variant, self.embed_dim)
        self.final_layer_norm = _norm(variant, self.embed_dim)

    def forward(
        self,
        x,
        encoder_out: Tensor | None = None,
        encoder_padding_mask: Tensor | None = None,
        incremental_state: dict[str, dict[str, Tensor | None]] | None = None,
        prev_self_attn_state: list[Tensor] | None = None,
        prev_attn_state: list[Tensor] | None = None,
        self_attn_mask: Tensor | None = None,
        self_attn_padding_mask: Tensor | None = None,
        need_attn: bool = False,
        need_head_weights: bool = False,
    ):
        if prev_self_attn_state is not None or prev_attn_state is not None:
            raise NotImplementedError("mlrep_transformer does not take precomputed states")
        need_attn = need_attn or need_head_weights
        attention: list[Tensor | None] = [None]

        def self_attend(h: Tensor) -> Tensor:
            out, _ = self.self_attn(
                query=h,
                key=h,
                value=h,
                key_padding_mask=self_attn_padding_mask,
                incremental_state=incremental_state,
                need_weights=False,
                attn_mask=self_attn_mask,
            )
            return out

        def cross_attend(h: Tensor) -> Tensor:
            out, attention[0] = self.encoder_attn(
                query=h,
                key=encoder_out,
                value=encoder_out,
                key_padding_mask=encoder_padding_mask,
                incremental_state=incremental_state,
                static_kv=True,
                need_weights=need_attn or (not self.training and self.need_attn),
                need_head_weights=need_head_weights,
            )
            return out

        x = _sublayer(self, x, self.self_attn_layer_norm, self_attend, self.placement)
        if self.encoder_attn is not None and encoder_out is not None:
            x = _sublayer(self, x, self.encoder_attn_layer_norm, cross_attend, self.placement)
        x = _sublayer(self, x, self.final_layer_norm, lambda h: _ffn(self, h), self.placement)
        return x, attention[0], None


class VariantEncoder(TransformerEncoderBase):
    def __init__(self, cfg: TransformerConfig, dictionary, embed_tokens, variant: Variant):
        self.variant = variant
        self.built_layers = 0
        super().__init__(cfg, dictionary, embed_tokens)
        keep_final = variant.layernorm != "post" and variant.encoder_final_norm
        self.layer_norm = _norm(variant, cfg.encoder.embed_dim) if keep_final else None

    def build_encoder_layer(self, cfg: TransformerConfig) -> nn.Module:
        self.built_layers += 1
        residual = self.built_layers != self.variant.drop_residual_layer
        return VariantEncoderLayer(cfg, self.variant, residual)


class VariantDecoder(TransformerDecoderBase):
    def __init__(self, cfg: TransformerConfig, dictionary, embed_tokens, variant: Variant):
        self.variant = variant
        super().__init__(cfg, dictionary, embed_tokens)
        keep_final = variant.layernorm != "post"
        self.layer_norm = _norm(variant, cfg.decoder.embed_dim) if keep_final else None

    def build_decoder_layer(self, cfg: TransformerConfig, no_encoder_attn: bool = False):
        return VariantDecoderLayer(cfg, self.variant, no_encoder_attn)


@register_model(MODEL)
class VariantTransformer(TransformerModel):
    """fairseq's Transformer with the Chapter 8 LayerNorm / residual switches."""

    @classmethod
    def add_args(cls, parser) -> None:
        super().add_args(parser)
        parser.add_argument("--layernorm", choices=PLACEMENTS, help="LayerNorm placement")
        parser.add_argument(
            "--layernorm-simple", action="store_true", help="LayerNorm without gain and bias"
        )
        parser.add_argument(
            "--no-encoder-final-layernorm",
            action="store_true",
            help="drop the LayerNorm after the last encoder layer (PreNorm w/o Enc-Last)",
        )
        parser.add_argument(
            "--drop-residual-layer",
            type=int,
            help="encoder layer (1-based) whose self-attention residual is removed; 0: none",
        )

    @classmethod
    def build_model(cls, args, task):
        _defaults(args)
        if not 0 <= args.drop_residual_layer <= args.encoder_layers:
            raise ValueError(
                f"--drop-residual-layer {args.drop_residual_layer} is not an encoder layer "
                f"(1..{args.encoder_layers}, or 0 for none)"
            )
        return super().build_model(args, task)

    def load_state_dict(self, state_dict, strict=True, model_cfg=None, args=None):
        """fairseq's loading, refusing first a checkpoint of the other model (whose key
        mismatch fairseq would report as a list of hundreds of parameter names)."""
        theirs = any(k.startswith(INTERLINGUA_PREFIX) for k in state_dict)
        ours = any(k.startswith(INTERLINGUA_PREFIX) for k in self.state_dict())
        if theirs != ours:
            kinds = ("an interlingua", "a plain Transformer")
            raise ArchitectureMismatch(
                f"the checkpoint holds {kinds[not theirs]} model but this is "
                f"{kinds[not ours]} model ({type(self).__name__}): train into an empty "
                "folder, or decode with the checkpoint's own architecture"
            )
        return super().load_state_dict(state_dict, strict, model_cfg, args)

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        cfg = TransformerConfig.from_namespace(args)
        return VariantEncoder(cfg, src_dict, embed_tokens, Variant.from_args(args))

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        cfg = TransformerConfig.from_namespace(args)
        return VariantDecoder(cfg, tgt_dict, embed_tokens, Variant.from_args(args))


def _defaults(args: Any) -> None:
    args.layernorm = getattr(args, "layernorm", None) or "post"
    args.layernorm_simple = getattr(args, "layernorm_simple", False)
    args.no_encoder_final_layernorm = getattr(args, "no_encoder_final_layernorm", False)
    args.drop_residual_layer = getattr(args, "drop_residual_layer", None) or 0
    # fairseq builds the final LayerNorms only when normalize_before is set; the variant layers
    # ignore the flag and use their own placement
    args.encoder_normalize_before = args.layernorm != "post"
    args.decoder_normalize_before = args.layernorm != "post"
    args.share_all_embeddings = getattr(args, "share_all_embeddings", True)
    base_architecture(args)


def sized(embed: int, ffn: int, heads: int, layers: int) -> Callable[[Any], None]:
    def architecture(args: Any) -> None:
        args.encoder_embed_dim = getattr(args, "encoder_embed_dim", embed)
        args.encoder_ffn_embed_dim = getattr(args, "encoder_ffn_embed_dim", ffn)
        args.encoder_attention_heads = getattr(args, "encoder_attention_heads", heads)
        args.encoder_layers = getattr(args, "encoder_layers", layers)
        args.decoder_embed_dim = getattr(args, "decoder_embed_dim", embed)
        args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", ffn)
        args.decoder_attention_heads = getattr(args, "decoder_attention_heads", heads)
        args.decoder_layers = getattr(args, "decoder_layers", layers)
        _defaults(args)

    return architecture


# name -> (d_model, FFN, heads, layers per stack); base and big are the thesis's sizes
ARCHITECTURES = {
    f"{MODEL}_tiny": (64, 128, 2, 2),
    f"{MODEL}_base": (512, 2048, 8, 6),
    f"{MODEL}_big": (1024, 4096, 16, 6),
}
register_model_architecture(MODEL, MODEL)(sized(*ARCHITECTURES[f"{MODEL}_base"]))
for _name, _size in ARCHITECTURES.items():
    register_model_architecture(MODEL, _name)(sized(*_size))


@register_model(ALIGN_MODEL)
class VariantAlignTransformer(VariantTransformer):
    """Garg et al. (2019)'s joint alignment and translation (Chapter 5's +align) on the variant
    Transformer: the mean of `alignment_heads` cross-attention heads of decoder layer
    `alignment_layer` is the attention fairseq's ``label_smoothed_cross_entropy_with_alignment``
    supervises with the batch's links. The forward passes are fairseq's `TransformerAlignModel`'s
    (Garg et al.'s own implementation); only the layers under them are ours, so +align keeps
    every LayerNorm placement of the model it is compared with."""

    forward = TransformerAlignModel.forward
    forward_decoder = TransformerAlignModel.forward_decoder

    @classmethod
    def add_args(cls, parser) -> None:
        super().add_args(parser)
        parser.add_argument("--alignment-heads", type=int, help="cross-attention heads supervised")
        parser.add_argument(
            "--alignment-layer",
            type=int,
            help="decoder layer supervised, 0-based (default: the penultimate, as Garg et al.)",
        )
        parser.add_argument(
            "--full-context-alignment",
            action="store_true",
            help="supervise attention computed without the future mask",
        )

    @classmethod
    def build_model(cls, args, task):
        """The variant model, with the alignment options kept on it: fairseq builds the model
        from a `TransformerConfig`, which has no field for them."""
        model = super().build_model(args, task)
        args.alignment_heads = getattr(args, "alignment_heads", None) or 1
        layer = getattr(args, "alignment_layer", None)
        args.alignment_layer = max(args.decoder_layers - 2, 0) if layer is None else layer
        args.full_context_alignment = getattr(args, "full_context_alignment", False)
        if not 0 <= args.alignment_layer < args.decoder_layers:
            raise ValueError(
                f"--alignment-layer {args.alignment_layer} is not a decoder layer "
                f"(0..{args.decoder_layers - 1})"
            )
        if not 1 <= args.alignment_heads <= args.decoder_attention_heads:
            raise ValueError(
                f"--alignment-heads {args.alignment_heads} is not 1..{args.decoder_attention_heads}"
            )
        model.alignment_heads = args.alignment_heads
        model.alignment_layer = args.alignment_layer
        model.full_context_alignment = args.full_context_alignment
        return model


def align_arch(arch: str) -> str:
    """The +align architecture of a Transformer size (``mlrep_transformer_base`` ->
    ``mlrep_transformer_align_base``): the ``arch`` setting names the size of both."""
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown arch {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
    return arch.replace(MODEL, ALIGN_MODEL, 1)


register_model_architecture(ALIGN_MODEL, ALIGN_MODEL)(sized(*ARCHITECTURES[f"{MODEL}_base"]))
for _name, _size in ARCHITECTURES.items():
    register_model_architecture(ALIGN_MODEL, align_arch(_name))(sized(*_size))
