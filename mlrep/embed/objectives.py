"""The training objectives of EMS (thesis §2.2, spec §4): XTR and the margin softmax family.

Both are written as batch sums so the joint loss is ``(L_XTR + L_cntrs) / |B|`` exactly as in
the thesis (Eq. 2.12). The contrastive loss and LaBSE's additive margin softmax (AMS) are one
function: AMS with margin 0 is the symmetric in-batch InfoNCE of EMS, and AMS "without
temperature" is temperature 1, so every LaBSE-EMS-* baseline is a setting, not a copy.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlrep.train.distributed import Gather, no_gather


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


def ams(
    a: torch.Tensor,
    b: torch.Tensor,
    temperature: float,
    margin: float,
    gather: Gather = no_gather,
) -> torch.Tensor:
    """LaBSE's bidirectional AMS, L_ams = (1/N) Σ_i [L(x_i, y_i) + L(y_i, x_i)] (LEALLA Eq. 3.2):
    the margin softmax above as a batch mean. `gather` assembles the batch: with
    `mlrep.train.distributed.gather_processes` under a process group, every device's pairs are
    each pair's negatives (LaBSE and LEALLA share them across their TPU cores) and N is the
    global batch."""
    a, b = gather(a), gather(b)
    return margin_softmax(a, b, temperature, margin) / len(a)


def feature_distillation(teacher: torch.Tensor, student: torch.Tensor) -> torch.Tensor:
    """(1/N) Σ_i ‖t_i − s_i‖²₂ for one side of the pairs (Eq. 3.3 sums the two sides): the
    student's projected vectors `student` regress the teacher's `teacher` row by row."""
    return (teacher - student).pow(2).sum(dim=-1).mean()


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """φ(a_i, b_j) for every pair of rows: the N×N in-batch similarities."""
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def logit_distillation(
    teacher: tuple[torch.Tensor, torch.Tensor],
    student: tuple[torch.Tensor, torch.Tensor],
    temperature: float,
) -> torch.Tensor:
    """(1/N²) Σ_ij ((φ(x_i^t, y_j^t) − φ(x_i^s, y_j^s)) / T)² (Eq. 3.4): the student copies the
    teacher's whole in-batch similarity matrix, negatives included, by squared error (not KL),
    so it can do so at its own width."""
    return ((cosine_matrix(*teacher) - cosine_matrix(*student)) / temperature).pow(2).mean()


def global_negatives(scores: torch.Tensor, temperature: float) -> torch.Tensor:
    """OneAligner's contrastive loss (Niu et al. 2022, §2.4) over N×N normalised scores whose
    diagonal holds the aligned pairs, as a batch mean.

    Each positive s_ii competes with *all* N² − N off-diagonal scores, not only its row's N − 1
    ("global" in-batch negatives), so one score threshold has to separate every translation
    from every non-translation. The logits are the scores divided by `temperature` (the paper's
    "softmax temperature", 5.0):
    L = −(1/N) Σ_i log(exp(s_ii/τ) / (exp(s_ii/τ) + Σ_{m≠n} exp(s_mn/τ))).
    """
    logits = scores / temperature
    eye = torch.eye(len(scores), dtype=torch.bool, device=scores.device)
    negatives = torch.logsumexp(logits.masked_fill(eye, float("-inf")).flatten(), dim=0)
    positives = logits.diagonal()
    return (torch.logaddexp(positives, negatives) - positives).mean()
