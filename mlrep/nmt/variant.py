"""The Transformer's LayerNorm and residual switches, apart from the model so that the CLI and
the chapters can name a variant without importing fairseq.

The switches are generic NMT machinery (PreNorm vs PostNorm, Xu et al. 2019's LayerNorm without
gain and bias, Liu et al. 2021's dropped middle residual); which combinations a chapter trains
and what it calls them is the chapter's business (Chapter 8: `mlrep.chapters.ch8_layernorm`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

PLACEMENTS = ("pre", "post", "swap")


@dataclass(frozen=True)
class Variant:
    """The architecture switches (defaults: fairseq's PostNorm Transformer)."""

    layernorm: str = "post"
    simple: bool = False
    encoder_final_norm: bool = True
    drop_residual_layer: int = 0

    @classmethod
    def of(
        cls,
        encoder_layers: int,
        layernorm: str = "post",
        layernorm_simple: bool = False,
        encoder_final_norm: bool = True,
        middle_residual: bool = True,
    ) -> Variant:
        """A variant by the switches `mlrep nmt train` takes (its option names), "w/o Res."
        given as dropping the middle layer's residual, whichever layer that is at this depth."""
        drop = 0 if middle_residual else middle_layer(encoder_layers)
        return cls(layernorm, layernorm_simple, encoder_final_norm, drop)

    @classmethod
    def from_args(cls, args: Any) -> Variant:
        return cls(
            layernorm=args.layernorm,
            simple=bool(args.layernorm_simple),
            encoder_final_norm=not args.no_encoder_final_layernorm,
            drop_residual_layer=int(args.drop_residual_layer),
        )

    def fairseq_flags(self) -> list[str]:
        """The flags of `mlrep.nmt.model`'s ``add_args`` that build this variant."""
        flags = [f"--layernorm={self.layernorm}"]
        if self.simple:
            flags.append("--layernorm-simple")
        if not self.encoder_final_norm:
            flags.append("--no-encoder-final-layernorm")
        flags.append(f"--drop-residual-layer={self.drop_residual_layer}")
        return flags


def middle_layer(layers: int) -> int:
    """The encoder layer whose residual "w/o Res." removes (Liu et al., 2021): 4 of 6, 2 of 2."""
    return min(math.ceil(layers / 2) + 1, layers)
