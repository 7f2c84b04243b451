"""BERT-style student encoders of LEALLA (thesis Ch. 3): any (layers, dim, heads, ffn_dim).

The student is `transformers`' own ``BertModel``, the class LaBSE is, so a student of LaBSE's
shape *is* LaBSE's architecture and the parameter columns of Tables 3.1/A.3 (P, P_E) are
counted from the built model (`parameter_counts`), never typed in. Thin-deep shapes are
many layers of small ``dim``; MobileBERT-like ones set ``ffn_dim == dim``.

Input ids are those of `mlrep.embed.data` (pad 0, no [CLS]); the student prepends its own
[CLS], one extra vocabulary row (id ``vocab_size``), so its sentence vector can be the [CLS]
pooler (dense + tanh over the first state, LEALLA's) or, as Chapter 2's, the mean of the
token states (the pooler is then not built).
"""

from __future__ import annotations

import torch
from torch import nn

from mlrep.embed.model import PAD
from mlrep.embed.settings import StudentConfig


class Student(nn.Module):
    """``forward(tokens) -> (batch, dim)`` sentence vectors of padded id rows."""

    def __init__(self, config: StudentConfig) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        self.config = config
        self.cls = config.vocab_size
        self.bert = BertModel(
            BertConfig(
                vocab_size=config.vocab_size + 1,
                hidden_size=config.dim,
                num_hidden_layers=config.layers,
                num_attention_heads=config.heads,
                intermediate_size=config.ffn_dim,
                hidden_dropout_prob=config.dropout,
                attention_probs_dropout_prob=config.attention_dropout,
                max_position_embeddings=config.max_tokens + 1,
                pad_token_id=PAD,
            ),
            add_pooling_layer=config.pooling == "cls",
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        cls = torch.full((len(tokens), 1), self.cls, dtype=tokens.dtype, device=tokens.device)
        ids = torch.cat([cls, tokens], dim=1)
        mask = ids != PAD
        out = self.bert(input_ids=ids, attention_mask=mask.long())
        if self.config.pooling == "cls":
            return out.pooler_output
        keep = mask[:, 1:].unsqueeze(-1).to(out.last_hidden_state.dtype)
        return (out.last_hidden_state[:, 1:] * keep).sum(1) / keep.sum(1).clamp(min=1.0)

    embed = forward


def parameter_counts(bert: nn.Module) -> dict[str, int]:
    """P (every parameter) and P_E (the Transformer layers': the thesis's "encoder parameters
    except the word embedding layer", which also leaves out positions and pooler, as its
    LaBSE row 471M / 85M shows) of a ``BertModel`` (a `Student`'s ``bert``, or LaBSE)."""
    return {
        "parameters": sum(p.numel() for p in bert.parameters()),
        "encoder_parameters": sum(p.numel() for p in bert.encoder.parameters()),
    }
