"""The training objectives of EMS (thesis §2.2, spec §4): XTR and the margin softmax family.

Both are written as batch sums so the joint loss is ``(L_XTR + L_cntrs) / |B|`` exactly as in
the thesis (Eq. 2.12). The contrastive loss and LaBSE's additive margin softmax (AMS) are one
function: AMS with margin 0 is the symmetric in-batch InfoNCE of EMS, and AMS "without
temperature" is temperature 1, so every LaBSE-EMS-* baseline is a setting, not a copy.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def bag_of_tokens(tokens: torch.Tensor, vocab_size: int, ignore: tuple[int, ...]) -> torch.Tensor:
    """p_S(w) = N_w / |S| per row of `tokens` (batch × length), `ignore` ids (pad) not counted.

    The translation's bag of tokens is XTR's target: word order and position are dropped, so
    the sentence vector only has to say *which* subwords the translation contains.
    """
    keep = torch.ones_like(tokens, dtype=torch.bool)
    for token in ignore:
        keep &= tokens != token
    counts = torch.zeros(tokens.shape[0], vocab_size, dtype=torch.float32, device=tokens.device)
    counts.scatter_add_(1, tokens, keep.to(torch.float32))
    return counts / counts.sum(dim=1, keepdim=True).clamp(min=1.0)


def kl_to_bag(target: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """Σ_rows KL(p ‖ softmax(logits)), with 0 · log 0 = 0 (the exact KL, entropy term included)."""
    log_q = F.log_softmax(logits, dim=-1)
    log_p = torch.where(target > 0, target, torch.ones_like(target)).log()
    return (target * (log_p - log_q)).sum()


def margin_softmax(
    a: torch.Tensor, b: torch.Tensor, temperature: float, margin: float
) -> torch.Tensor:
    """Symmetric in-batch loss over cosine similarities, summed over the batch.

    Row j of `a` and of `b` are translations; every other row of the batch is a negative.
    The positive's cosine is lowered by `margin` (AMS, Yang et al. 2019) and all cosines are
    divided by `temperature`; the cross-entropy runs over rows (a→b) and columns (b→a).
    """
    similarity = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T
    eye = torch.eye(len(a), dtype=similarity.dtype, device=similarity.device)
    logits = (similarity - margin * eye) / temperature
    gold = torch.arange(len(a), device=similarity.device)
    return F.cross_entropy(logits, gold, reduction="sum") + F.cross_entropy(
        logits.T, gold, reduction="sum"
    )
