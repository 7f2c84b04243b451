"""OneAligner's sentence-pair scorer (Niu et al. 2022): cross-lingual BERT-score between every
source and every target sentence, then in-batch normalisation against the popular sentence
effect.

f(S, T) is BERT-score's F over token vectors taken from one hidden layer of the encoder:
P averages, over the target's tokens, the best dot product with any source token; R does the
same from the source side; F = 2PR / (P + R). The paper scores with cosines at evaluation but
with raw dot products in training (it found Sentence-BERT's habit of not normalising during
training better), so `cosine` is an argument, not a constant. Padding (and whatever else the
mask drops, e.g. special tokens) never matches and never counts. On raw dot products F has a
pole where P + R = 0; XLM-R's anisotropic hidden states keep their dot products positive, but
an encoder whose token vectors can point apart lets the loss chase that pole.

Normalisation subtracts α times the mean of a score's row and column, s_ij = f_ij − α(r_i + c_j),
so a sentence close to everything loses its head start. Training adds (2α − 1) times the mean of
the whole matrix back, which keeps the mean of s at 0 and does not change any ranking within a
batch. At evaluation the paper normalises within evaluation batches of 256; how one query is
ranked among candidates spread over several batches is not stated, and the default reading here
is: cut the M×N matrix into 256×256 blocks, normalise each block with its own row and column
means (no re-centring term, which would shift each block by its own constant), and take the
argmax over the assembled row. α = 0 gives the paper's "w/o norm." scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from mlrep.embed.objectives import cosine_matrix, global_negatives
from mlrep.errors import MlrepError
from mlrep.evaluate.retrieval import p_at_1
from mlrep.train.distributed import Gather, no_gather

# the hidden layer the paper takes token vectors from (§2.3; hidden_states[layer], 1-based)
MBERT_LAYER = 8
XLMR_BASE_LAYER = 8
XLMR_LARGE_LAYER = 17
ALPHA = 0.75  # normalisation strength, tuned on OPUS-100 dev (§2.2)
TEMPERATURE = 5.0  # the loss's softmax temperature, dividing the logits (§3.2)
EVAL_BATCH = 256  # the evaluation batch the normalisation is computed within (§3.2)
# sentences per side scored at once: bounds memory (BLOCK² × length² dot products, 2.6 GB in
# fp32 at length 100, about three times that at peak with the two masked copies), changes no
# value
BLOCK = 256
# on a CPU, whose caches hold a few MB: 32² × 64² dot products are 16 MB; measured on the tiny
# stand-ins (2 shared cores), a 450 × 450 BUCC matrix took 45 s in blocks of 256 and 5 s in
# length-sorted blocks of 32, 50 Tatoeba pairs 4× less
CPU_BLOCK = 32
SIMILARITIES = ("bertscore", "avg")  # Table 1's "BERT-score" and "Avg. Pooling"


class ScorerError(MlrepError):
    """Token states, masks or a layer choice the scorer cannot use."""


def layer_states(
    encoder: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor, layer: int
) -> torch.Tensor:
    """Token vectors (batch × length × width) from `layer` (1-based) of a Hugging Face encoder.

    ``hidden_states[0]`` is the embedding output, so layer k is ``hidden_states[k]``. A layer
    past the encoder's depth is refused before the encoder runs, because the paper's layer
    numbers belong to specific encoders (8 of 12, 17 of 24).
    """
    depth = int(encoder.config.num_hidden_layers)
    if not 1 <= layer <= depth:
        raise ScorerError(
            f"layer {layer} is not a layer of this {depth}-layer {type(encoder).__name__}; "
            f"choose 1..{depth} (the paper: {MBERT_LAYER} for mBERT and XLM-R-base, "
            f"{XLMR_LARGE_LAYER} for XLM-R-large, about 2/3 of the depth)"
        )
    out = encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    return out.hidden_states[layer]


def content_mask(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, special_ids: Sequence[int]
) -> torch.Tensor:
    """The tokens BERT-score matches: not padding and not one of `special_ids` (<s>, </s>).

    The paper does not say whether special tokens take part; leaving them out is the default
    reading, since every sentence has them and they would match each other in every pair.
    """
    keep = attention_mask != 0  # a new tensor: the caller's mask stays as it was
    for token in special_ids:
        keep &= input_ids != token
    return keep


def _positive(**sizes: int) -> None:
    for name, size in sizes.items():
        if size < 1:
            raise ScorerError(f"{name} is {size}; give a number of sentences of at least 1")


def _check(states: torch.Tensor, mask: torch.Tensor, side: str) -> None:
    if states.dim() != 3 or mask.shape != states.shape[:2]:
        raise ScorerError(
            f"{side}: states {tuple(states.shape)} and mask {tuple(mask.shape)}; give states "
            "as sentences × length × width and a mask of sentences × length"
        )
    empty = (~mask.bool()).all(dim=1).nonzero().flatten()
    if len(empty):
        raise ScorerError(
            f"{side}: sentence(s) {empty[:5].tolist()} have no token left after masking; "
            "drop empty sentences (or keep their special tokens) before scoring"
        )


def _f_of_dots(dots: torch.Tensor, src_mask: torch.Tensor, tgt_mask: torch.Tensor) -> torch.Tensor:
    """F from token dot products ``[..., src len, tgt len]``; the masks broadcast against
    ``[..., src len]`` and ``[..., tgt len]`` (all pairs of a block, or aligned pairs)."""
    low = torch.finfo(dots.dtype).min
    # P: each real target token's best real source token; R: the reverse
    best_src = dots.masked_fill(~src_mask[..., :, None], low).amax(dim=-2)
    best_tgt = dots.masked_fill(~tgt_mask[..., None, :], low).amax(dim=-1)
    precision = torch.where(tgt_mask, best_src, 0).sum(-1) / tgt_mask.sum(-1)
    recall = torch.where(src_mask, best_tgt, 0).sum(-1) / src_mask.sum(-1)
    return 2 * precision * recall / (precision + recall)


def _bertscore_block(
    src: torch.Tensor, src_mask: torch.Tensor, tgt: torch.Tensor, tgt_mask: torch.Tensor
) -> torch.Tensor:
    """F of every (source, target) pair of one block, from all token dot products at once."""
    dots = torch.einsum("mid,njd->mnij", src, tgt)  # sources × targets × src len × tgt len
    return _f_of_dots(dots, src_mask[:, None], tgt_mask[None])


def pair_scores(
    src: torch.Tensor, src_mask: torch.Tensor, tgt: torch.Tensor, tgt_mask: torch.Tensor
) -> torch.Tensor:
    """F of aligned pairs (source p with target p) of token vectors taken as they are: the
    scorer of a candidate list (`mlrep.embed.bucc_filter`), where all pairs would not fit."""
    src_mask, tgt_mask = src_mask.bool(), tgt_mask.bool()
    _check(src, src_mask, "source")
    _check(tgt, tgt_mask, "target")
    return _f_of_dots(torch.einsum("pid,pjd->pij", src, tgt), src_mask, tgt_mask)


def mean_pool(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of each sentence's token vectors over its mask ("Avg. Pooling")."""
    weights = mask.to(states.dtype).unsqueeze(-1)
    return (states * weights).sum(dim=1) / weights.sum(dim=1)


def score_matrix(
    src: torch.Tensor,
    src_mask: torch.Tensor,
    tgt: torch.Tensor,
    tgt_mask: torch.Tensor,
    *,
    similarity: str = "bertscore",
    cosine: bool = True,
    block: int | None = None,
) -> torch.Tensor:
    """f(S_m, T_n) for every source m and target n: an M×N matrix.

    `src` (M × length × width) and `tgt` (N × length' × width) are token states, their masks
    True on the tokens that count. ``bertscore`` scores `block` × `block` sentence pairs at a
    time (their token dot products are the memory; default `BLOCK`, `CPU_BLOCK` on a CPU),
    each side sorted by length and each block cut to its longest sentence, so padding is
    scored only up to the longest of similar lengths (no value changes but for the rounding of
    the sums); ``avg`` mean-pools each sentence over its mask and takes one dot product per
    pair. `cosine` L2-normalises the token (or pooled) vectors first: evaluation does, training
    does not.
    """
    if similarity not in SIMILARITIES:
        raise ScorerError(f"unknown similarity {similarity!r}; choose one of {SIMILARITIES}")
    if block is None:
        block = CPU_BLOCK if src.device.type == "cpu" else BLOCK
    _positive(block=block)
    src_mask, tgt_mask = src_mask.bool(), tgt_mask.bool()
    _check(src, src_mask, "source")
    _check(tgt, tgt_mask, "target")
    if similarity == "avg":
        pooled_src, pooled_tgt = mean_pool(src, src_mask), mean_pool(tgt, tgt_mask)
        return cosine_matrix(pooled_src, pooled_tgt) if cosine else pooled_src @ pooled_tgt.T
    if cosine:
        src, tgt = F.normalize(src, dim=-1), F.normalize(tgt, dim=-1)
    src_order, tgt_order = (
        torch.argsort(mask.sum(1), stable=True) for mask in (src_mask, tgt_mask)
    )
    src, src_mask, tgt, tgt_mask = (
        src[src_order],
        src_mask[src_order],
        tgt[tgt_order],
        tgt_mask[tgt_order],
    )
    targets = [_cut(tgt[n : n + block], tgt_mask[n : n + block]) for n in range(0, len(tgt), block)]
    rows = []
    for m in range(0, len(src), block):
        s, sm = _cut(src[m : m + block], src_mask[m : m + block])
        rows.append(torch.cat([_bertscore_block(s, sm, t, tm) for t, tm in targets], dim=1))
    # back to the callers' order: row i is src[i], column j tgt[j]
    return torch.cat(rows, dim=0)[torch.argsort(src_order)][:, torch.argsort(tgt_order)]


def _cut(states: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A block's states and mask without the positions no sentence of it uses (padding)."""
    length = int(mask.any(dim=0).nonzero().max()) + 1
    return states[:, :length], mask[:, :length]


def normalize(scores: torch.Tensor, alpha: float = ALPHA, recentre: bool = False) -> torch.Tensor:
    """In-batch normalisation of one batch's M×N scores f (Eq. of §2.2 and its footnote 3).

    s_ij = f_ij − α((1/N) Σ_n f_in + (1/M) Σ_m f_mj), plus (2α − 1)(1/MN) Σ f_mn with
    `recentre` (training): that constant makes the mean of s zero, so the logits of the loss
    stay near 0 whatever the scale of the raw dot products.
    """
    out = scores - alpha * (scores.mean(dim=1, keepdim=True) + scores.mean(dim=0, keepdim=True))
    if recentre:
        out = out + (2 * alpha - 1) * scores.mean()
    return out


def normalize_blocks(
    scores: torch.Tensor, alpha: float = ALPHA, batch: int = EVAL_BATCH
) -> torch.Tensor:
    """Evaluation's normalisation: each `batch` × `batch` block of `scores` normalised with its
    own means (the last blocks may be smaller), without the re-centring term."""
    _positive(batch=batch)
    out = torch.empty_like(scores)
    for m in range(0, scores.shape[0], batch):
        for n in range(0, scores.shape[1], batch):
            out[m : m + batch, n : n + batch] = normalize(
                scores[m : m + batch, n : n + batch], alpha
            )
    return out


@torch.no_grad()
def evaluation_scores(
    src: torch.Tensor,
    src_mask: torch.Tensor,
    tgt: torch.Tensor,
    tgt_mask: torch.Tensor,
    *,
    similarity: str = "bertscore",
    alpha: float = ALPHA,
    batch: int = EVAL_BATCH,
    block: int | None = None,
) -> torch.Tensor:
    """Retrieval scores s of every source (query) against every target (candidate): cosine
    `similarity`, normalised within `batch`-sized blocks; α = 0 leaves f unnormalised."""
    f = score_matrix(src, src_mask, tgt, tgt_mask, similarity=similarity, cosine=True, block=block)
    return normalize_blocks(f, alpha, batch) if alpha else f


def training_scores(
    src: torch.Tensor,
    src_mask: torch.Tensor,
    tgt: torch.Tensor,
    tgt_mask: torch.Tensor,
    *,
    alpha: float = ALPHA,
    gather: Gather = no_gather,
    block: int | None = None,
) -> torch.Tensor:
    """The loss's N×N logits before the temperature: BERT-score on raw dot products over the
    batch `gather` assembles (S_i aligned with T_i), normalised with the re-centring term."""
    src, src_mask, tgt, tgt_mask = (gather(x) for x in (src, src_mask, tgt, tgt_mask))
    f = score_matrix(
        src, src_mask, tgt, tgt_mask, similarity="bertscore", cosine=False, block=block
    )
    return normalize(f, alpha, recentre=True)


def training_loss(
    src: torch.Tensor,
    src_mask: torch.Tensor,
    tgt: torch.Tensor,
    tgt_mask: torch.Tensor,
    *,
    temperature: float = TEMPERATURE,
    alpha: float = ALPHA,
    gather: Gather = no_gather,
) -> torch.Tensor:
    """OneAligner's loss on a batch of aligned token states (row i of `src` translates row i of
    `tgt`): `objectives.global_negatives` over the `training_scores` of the gathered batch."""
    scores = training_scores(src, src_mask, tgt, tgt_mask, alpha=alpha, gather=gather)
    return global_negatives(scores, temperature)


def precision_at_1(scores: torch.Tensor) -> float:
    """P@1 (percent) of row i retrieving column i: xx→en with xx sentences as rows."""
    predicted = scores.argmax(dim=1).cpu().numpy()
    return p_at_1(predicted, np.arange(scores.shape[0]))
