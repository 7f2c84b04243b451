"""The EMS model: one shared Transformer encoder, mean pooled, with two training-only heads.

Every row of thesis Table 2.14 and every LaBSE-EMS-* baseline is an `EmsConfig` of this one
module (spec §1, §4.4): the generative head is XTR, UGT (XTR plus single-word MLM) or absent;
the contrastive head is the margin softmax with or without the 2-layer projection; the XTR
head takes the target-language embedding or not, and its output matrix is its own or the
encoder's token embedding. Only the encoder is used at inference (`embed`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from mlrep.embed.objectives import bag_of_tokens, kl_to_bag, margin_softmax
from mlrep.embed.settings import EmsConfig

PAD, UNK, MASK = 0, 1, 2  # SentencePiece ids fixed by mlrep.embed.data


@dataclass
class Batch:
    """Pairs (S_l, S_l') as padded token ids plus the language index of each side."""

    src: torch.Tensor
    tgt: torch.Tensor
    src_lang: torch.Tensor
    tgt_lang: torch.Tensor


class Encoder(nn.Module):
    """Token + learned position embeddings, a post-norm Transformer, mean pooling."""

    def __init__(self, config: EmsConfig) -> None:
        super().__init__()
        self.tokens = nn.Embedding(config.vocab_size, config.dim, padding_idx=PAD)
        self.positions = nn.Embedding(config.max_tokens, config.dim)
        layer = nn.TransformerEncoderLayer(
            config.dim,
            config.heads,
            config.ffn_dim,
            config.dropout,
            activation=F.silu,  # swish, as in the EMS code
            batch_first=True,
        )
        self.layers = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
        for block in self.layers.layers:
            block.self_attn.dropout = config.attention_dropout  # Table 2.2 tunes it apart

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Mean of the top-layer states over the non-pad tokens: the sentence embedding."""
        pad = tokens == PAD
        positions = torch.arange(tokens.shape[1], device=tokens.device).unsqueeze(0)
        states = self.layers(
            self.tokens(tokens) + self.positions(positions), mask=None, src_key_padding_mask=pad
        )
        keep = (~pad).unsqueeze(-1).to(states.dtype)
        return (states * keep).sum(1) / keep.sum(1).clamp(min=1.0)


class GenerativeHead(nn.Module):
    """XTR: softmax(W_emb · swish(W_fc [W_la e(<2l'>); u] + b_fc)) over the vocabulary."""

    def __init__(self, config: EmsConfig, encoder: Encoder) -> None:
        super().__init__()
        la_dim = config.la_dim if config.language_embedding else 0
        width = config.dim + la_dim
        self.languages = nn.Embedding(config.languages, la_dim) if la_dim else None
        # tied: the hidden layer maps to the encoder width so W_emb can be its token matrix
        self.fc = nn.Linear(width, config.dim if config.share_embeddings else width)
        self.out = None if config.share_embeddings else nn.Linear(width, config.vocab_size, False)
        # a plain list: the tied matrix stays registered once, under the encoder
        self.tied = [encoder.tokens] if config.share_embeddings else []

    def forward(self, sentence: torch.Tensor, language: torch.Tensor) -> torch.Tensor:
        parts = [sentence] if self.languages is None else [self.languages(language), sentence]
        hidden = F.silu(self.fc(torch.cat(parts, dim=-1)))
        if self.out is not None:
            return self.out(hidden)
        return hidden @ self.tied[0].weight.T


class EmsModel(nn.Module):
    """Encoder plus the heads `config` asks for; `loss` is the thesis's per-pair joint loss."""

    def __init__(self, config: EmsConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = Encoder(config)
        self.generative = (
            GenerativeHead(config, self.encoder) if config.generative != "none" else None
        )
        self.projection = (
            nn.Sequential(
                nn.Linear(config.dim, config.dim),
                nn.ReLU(),
                nn.Linear(config.dim, config.cntrs_dim),
            )
            if config.contrastive and config.projection
            else None
        )

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.encoder(tokens)

    def loss_terms(self, batch: Batch, generator: torch.Generator | None = None) -> dict:
        """Each objective's batch sum (``xtr``, ``mlm``, ``cntrs``) and the joint ``loss``.

        UGT masks one token per sentence (drawn from `generator`) and adds its prediction from
        the sentence's own embedding and language to XTR (our reading of Mao et al. 2021).
        """
        config = self.config
        src, tgt = batch.src, batch.tgt
        if config.generative == "ugt":
            src, src_masked = _mask_one(src, generator)
            tgt, tgt_masked = _mask_one(tgt, generator)
        u, v = self.encoder(src), self.encoder(tgt)
        terms: dict[str, torch.Tensor] = {}
        if self.generative is not None:
            bag_src = bag_of_tokens(batch.src, config.vocab_size, (PAD,))
            bag_tgt = bag_of_tokens(batch.tgt, config.vocab_size, (PAD,))
            terms["xtr"] = kl_to_bag(bag_tgt, self.generative(u, batch.tgt_lang)) + kl_to_bag(
                bag_src, self.generative(v, batch.src_lang)
            )
            if config.generative == "ugt":
                terms["mlm"] = F.cross_entropy(
                    self.generative(u, batch.src_lang), src_masked, reduction="sum"
                ) + F.cross_entropy(self.generative(v, batch.tgt_lang), tgt_masked, reduction="sum")
        if config.contrastive:
            a, b = (self.projection(u), self.projection(v)) if self.projection else (u, v)
            terms["cntrs"] = margin_softmax(a, b, config.temperature, config.margin)
        terms["loss"] = sum(terms.values()) / len(src)
        return terms


def _mask_one(tokens: torch.Tensor, generator: torch.Generator | None) -> tuple:
    """Replace one random non-pad token per row with MASK; return (masked, the hidden ids)."""
    lengths = (tokens != PAD).sum(1).clamp(min=1)
    draws = torch.rand(len(tokens), generator=generator).to(tokens.device)
    position = (draws * lengths).long()
    rows = torch.arange(len(tokens), device=tokens.device)
    hidden = tokens[rows, position].clone()
    masked = tokens.clone()
    masked[rows, position] = MASK
    return masked, hidden


def count_parameters(module: nn.Module | None) -> int:
    return 0 if module is None else sum(p.numel() for p in module.parameters())
