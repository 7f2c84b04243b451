"""BUCC mining with a candidate pre-filter: token-level BERT-score on a short list of pairs.

A BUCC language at full has about 10^5 sentences per side, so BERT-score of every pair (10^10
pairs of 100 × 100 token dot products) is out of reach; the paper describes no pre-filter.
This one is a deviation (docs/chapters/onealigner.md), measured by its recall:

1. **Candidates.** Each sentence's mean-pooled vector of the scored layer (the paper's "Avg.
   Pooling" sentence vector) is searched exactly by cosine in blocks, in both directions
   (`mlrep.evaluate.search.mutual_knn`, Chapter 2/3's UN and BUCC search): every source gets
   its k nearest targets and every target its k nearest sources; the union of both lists is
   the candidate set. ``recall`` is the share of gold pairs it contains, the ceiling of the
   mining recall.
2. **Scores.** BERT-score (cosine over content tokens) of each candidate pair. The in-batch
   normalisation subtracts α times a row mean and a column mean. Over all pairs these are the
   means within the pair's 256 × 256 evaluation block (`bertscore.normalize_blocks`), which
   need every pair of the block. Here the row mean of a source is its mean f against one fixed
   *reference batch* of `eval_batch` targets spread evenly over the target side (rows 0, n/b,
   2n/b, …), and the column mean of a target its mean against such a batch of sources: the
   same statistic (f against an arbitrary batch of 256 partners), costing 256 pairs per
   sentence instead of a block per candidate. When a side has at most `eval_batch` sentences
   the reference batch is that whole side and the scores equal the all-pairs path's (to float
   rounding with a float32 cache; tested); `align_eval` sends a k of at least the larger
   side's size, where every pair would be a candidate, to the all-pairs path itself.
3. **Mining.** Each source proposes its best-scoring candidate target and each target its best
   candidate source; then `mining.select` and the threshold protocol, as over all pairs.

**Memory.** Token states of a side do not fit at once (10^5 × 100 × 1024 fp32 is 41 GB). Each
side is encoded once, batch by batch; only its content tokens (no padding, no special tokens),
L2-normalised and in float16, are appended to a file in a temporary folder (``TMPDIR``) and
read back as a memory map, so the process holds one block while the page cache keeps what
fits (a side of 4 × 10^5 BUCC sentences of ~35 tokens at width 1024: ~29 GB on disk). Candidate
pairs are scored `PAIR_BLOCK` at a time on the encoder's device, each block's sentences gathered
from the map; fp16 token vectors move scores by about 1e-3, which the all-pairs path (fp32)
does not.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from mlrep.embed import bertscore
from mlrep.evaluate import mining, search

CACHE_DTYPE = np.float16  # the cached token vectors: half the memory, scores within ~1e-3
PAIR_BLOCK = 4096  # candidate pairs scored at once: 4096 × 100² fp32 dot products, 164 MB
SENTENCE_BLOCK = 256  # sentences per block against a reference batch (as `bertscore.BLOCK`)


@dataclass(frozen=True)
class TokenCache:
    """One side's content-token vectors: unit length, concatenated in sentence order (rows
    ``offsets[i]:offsets[i + 1]`` are sentence i), and each sentence's mean-pooled vector."""

    tokens: np.ndarray  # (tokens, width), CACHE_DTYPE, usually a memory map
    offsets: np.ndarray  # (sentences + 1,), int64
    pooled: np.ndarray  # (sentences, width), float32: the mean of the raw states

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def padded(self, rows: np.ndarray, device: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Sentences `rows` as float32 states (rows × longest × width) and mask on `device`.
        A padding position repeats the cache's first token: the mask keeps it out of every
        score, so it is not zeroed."""
        starts, lengths = self.offsets[rows], np.diff(self.offsets)[rows]
        positions = np.arange(int(lengths.max()))
        mask = positions[None, :] < lengths[:, None]
        index = np.where(mask, starts[:, None] + positions[None, :], 0)
        states = torch.from_numpy(np.asarray(self.tokens[index.ravel()]))
        states = states.reshape(*index.shape, -1).to(device).float()
        return states, torch.from_numpy(mask).to(device)


def cache_side(
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]], path: Path, dtype: type = CACHE_DTYPE
) -> TokenCache:
    """A `TokenCache` of (states, mask) batches (`hf_encoder.batches`), its tokens written to
    `path` in `dtype` and mapped back."""
    lengths, pooled, width = [], [], 0
    with open(path, "wb") as out:
        for states, mask in batches:
            mask = mask.bool()
            pooled.append(bertscore.mean_pool(states.float(), mask).cpu().numpy())
            unit = F.normalize(states.float(), dim=-1)[mask]
            out.write(unit.cpu().numpy().astype(dtype).tobytes())
            lengths.append(mask.sum(dim=1).cpu().numpy())
            width = states.shape[-1]
    offsets = np.concatenate([[0], np.cumsum(np.concatenate(lengths))]).astype(np.int64)
    tokens = np.memmap(path, dtype=dtype, mode="r", shape=(int(offsets[-1]), width))
    return TokenCache(tokens, offsets, np.concatenate(pooled).astype(np.float32))


def candidates(
    src: np.ndarray, tgt: np.ndarray, k: int, block_size: int = search.DEFAULT_BLOCK
) -> tuple[np.ndarray, np.ndarray]:
    """(source rows, target rows) of every pair where the target is among the source's k
    nearest targets or the source among the target's k nearest sources (cosine of the
    vectors), each pair once, sorted by source then target."""
    forward, backward = search.mutual_knn(src, tgt, k, block_size)
    assert backward is not None
    rows = np.concatenate(
        [np.repeat(np.arange(len(src)), forward.indices.shape[1]), backward.indices.ravel()]
    )
    cols = np.concatenate(
        [forward.indices.ravel(), np.repeat(np.arange(len(tgt)), backward.indices.shape[1])]
    )
    pairs = np.unique(rows * len(tgt) + cols)
    return pairs // len(tgt), pairs % len(tgt)


def recall(rows: np.ndarray, cols: np.ndarray, split: mining.Split) -> float:
    """Percent of `split`'s gold pairs among the candidate pairs (rows, cols): the most of the
    gold that mining over these candidates can find."""
    src_row = {sentence: row for row, sentence in enumerate(split.src_ids)}
    tgt_row = {sentence: row for row, sentence in enumerate(split.tgt_ids)}
    width = len(split.tgt_ids)  # a pair as one number: 10^7 candidates stay an array
    gold = [src_row[s] * width + tgt_row[t] for s, t in split.gold]
    hits = np.isin(np.asarray(gold, dtype=np.int64), rows.astype(np.int64) * width + cols).sum()
    return 100.0 * int(hits) / len(split.gold)


def reference_rows(size: int, batch: int) -> np.ndarray:
    """`batch` rows spread evenly over a side of `size` (all of them when it has no more)."""
    return np.unique(np.linspace(0, size - 1, min(size, batch)).round().astype(np.int64))


def _reference_means(
    side: TokenCache, other: TokenCache, batch: int, device: str, queries_first: bool
) -> torch.Tensor:
    """Each sentence of `side`'s mean f against `other`'s reference batch."""
    ref, ref_mask = other.padded(reference_rows(len(other), batch), device)
    means = []
    for start in range(0, len(side), SENTENCE_BLOCK):
        rows = np.arange(start, min(start + SENTENCE_BLOCK, len(side)))
        states, mask = side.padded(rows, device)
        pair = (states, mask, ref, ref_mask) if queries_first else (ref, ref_mask, states, mask)
        f = bertscore.score_matrix(*pair, cosine=False)
        means.append(f.mean(dim=1) if queries_first else f.mean(dim=0))
    return torch.cat(means)


@torch.no_grad()
def candidate_scores(
    src: TokenCache,
    tgt: TokenCache,
    rows: np.ndarray,
    cols: np.ndarray,
    *,
    alpha: float,
    batch: int,
    device: str,
) -> np.ndarray:
    """The normalised score of each candidate pair (rows[p], cols[p]): f − α(source mean
    against the target reference batch + target mean against the source reference batch)."""
    f = torch.empty(len(rows), dtype=torch.float32)
    for start in range(0, len(rows), PAIR_BLOCK):
        stop = min(start + PAIR_BLOCK, len(rows))
        s_rows, s_inverse = np.unique(rows[start:stop], return_inverse=True)
        t_rows, t_inverse = np.unique(cols[start:stop], return_inverse=True)
        (s, s_mask), (t, t_mask) = src.padded(s_rows, device), tgt.padded(t_rows, device)
        s_index, t_index = torch.from_numpy(s_inverse), torch.from_numpy(t_inverse)
        f[start:stop] = bertscore.pair_scores(
            s[s_index], s_mask[s_index], t[t_index], t_mask[t_index]
        ).cpu()
    if alpha:
        row_mean = _reference_means(src, tgt, batch, device, queries_first=True).cpu()
        col_mean = _reference_means(tgt, src, batch, device, queries_first=False).cpu()
        f -= alpha * (row_mean[rows] + col_mean[cols])
    return f.numpy()


def _best(keys: np.ndarray, others: np.ndarray, scores: np.ndarray, size: int) -> tuple:
    """For each key 0..size-1: its best-scoring partner (the lower row among equals) and that
    score. The k-NN of both directions gives every key at least one candidate."""
    order = np.lexsort((others, -scores, keys))
    first = order[np.r_[True, keys[order][1:] != keys[order][:-1]]]
    assert len(first) == size
    return others[first], scores[first]


def mine(rows: np.ndarray, cols: np.ndarray, scores: np.ndarray, sizes: tuple) -> mining.Mined:
    """`align_eval.mine` over candidate pairs only: each source's best candidate target and
    each target's best candidate source, kept one-to-one, best first."""
    forward = _best(rows, cols, scores, sizes[0])
    backward = _best(cols, rows, scores, sizes[1])
    return mining.select(*forward, *backward)


def mine_prefiltered(
    sides: tuple[Iterable, Iterable],
    split: mining.Split,
    k: int,
    *,
    alpha: float,
    batch: int,
    device: str,
) -> tuple[mining.Mined, float]:
    """Mined pairs of two encoded sides ((states, mask) batches each) over their k-NN
    candidates, and the candidates' recall of `split`'s gold (percent)."""
    with tempfile.TemporaryDirectory(prefix="mlrep-bucc-") as folder:
        src = cache_side(sides[0], Path(folder) / "source")
        tgt = cache_side(sides[1], Path(folder) / "target")
        rows, cols = candidates(src.pooled, tgt.pooled, k)
        scores = candidate_scores(src, tgt, rows, cols, alpha=alpha, batch=batch, device=device)
    return mine(rows, cols, scores, (len(split.src_ids), len(split.tgt_ids))), recall(
        rows, cols, split
    )
