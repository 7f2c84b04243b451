"""Layer-wise cosine similarity of parallel sentences' hidden states (Figures 6.3 and D.1).

For each pair, each side is run through the model alone (the raw sentence: no prompt, no
special tokens), each layer's hidden states are mean-pooled over the sentence's tokens, and
the two sides' pooled vectors are compared by cosine; each layer's value is the mean over the
pairs. The layers reported are 1..L, the outputs of the L decoder blocks, as many as the model
has; the embedding output (``hidden_states[0]``) is left out, as the figures' axes start at
the first layer. In `transformers`' BLOOM the last entry is taken after the final layer norm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from mlrep.errors import MlrepError
from mlrep.llm.base import Base


class CosineError(MlrepError):
    """Sides of different lengths, or an empty sentence."""


@torch.no_grad()
def pooled(base: Base, sentences: Sequence[str], batch_size: int, max_tokens: int) -> torch.Tensor:
    """(layers, sentences, hidden) float32 mean-pooled states of blocks 1..L. Padding sits on
    the right, so a causal model's states of the real tokens do not see it."""
    tokenizer: Any = base.tokenizer
    tokenizer.padding_side = "right"
    layers: list[torch.Tensor] = []
    for start in range(0, len(sentences), batch_size):
        batch = tokenizer(
            list(sentences[start : start + batch_size]),
            add_special_tokens=False,
            padding=True,
            truncation=True,
            max_length=max_tokens,
            return_tensors="pt",
        ).to(base.device)
        states = base.model(**batch, output_hidden_states=True).hidden_states[1:]
        mask = batch["attention_mask"].unsqueeze(-1).float()
        layers.append(torch.stack([(s.float() * mask).sum(1) / mask.sum(1) for s in states]).cpu())
    return torch.cat(layers, dim=1)


def layer_cosines(
    base: Base, src: Sequence[str], tgt: Sequence[str], batch_size: int, max_tokens: int
) -> list[float]:
    """Mean cosine over the pairs of (`src`, `tgt`) for each layer 1..L, in layer order."""
    if len(src) != len(tgt) or not src:
        raise CosineError(f"{len(src)} source and {len(tgt)} target sentences: give equal, ≥ 1")
    if any(not line.strip() for line in (*src, *tgt)):
        raise CosineError("an empty sentence has no tokens to pool; drop the pair")
    base.model.eval()
    a = pooled(base, src, batch_size, max_tokens)
    b = pooled(base, tgt, batch_size, max_tokens)
    return F.cosine_similarity(a, b, dim=-1).mean(dim=1).tolist()
