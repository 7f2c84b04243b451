"""Bitext retrieval: P@1 in both directions and LASER's xSIM error, by cosine or margin score.

Scoring follows LASER's ``xsim.py`` definitions. ``absolute`` is the plain cosine nearest
neighbour. ``ratio`` and ``distance`` are the margin scores of Artetxe & Schwenk (2019): a
candidate y of query x is scored cos(x, y) / m or cos(x, y) - m with
m = (mean cos of x to its k nearest candidates + mean cos of y to its k nearest queries) / 2,
and the best-scoring of x's k cosine neighbours is retrieved. The margin corrects for hubs
(sentences close to everything), which matters for mining and large candidate pools.

xSIM error is the percentage of source rows whose retrieved target is not their own row
(LASER's index error, source -> target, with the chosen scoring); given the target sentences
it is LASER's textual error instead, where retrieving an identical duplicate of the gold
sentence counts as correct (Tatoeba repeats English sentences).

Every P@1 comes with its chance level, 100 / candidates: the P@1 of picking a candidate at
random, the floor a retrieval score must beat before it says anything (the report's
``floor_<metric>``), and with each query's hit (1: its gold row retrieved), the per-sentence
scores the report's paired bootstrap resamples.
"""

from __future__ import annotations

import numpy as np

from mlrep.evaluate import embeddings, search
from mlrep.evaluate.search import DEFAULT_BLOCK, Neighbours
from mlrep.evaluate.settings import MARGINS


def check_margin(margin: str | None) -> str:
    """`margin` by its LASER name; None means plain cosine (``absolute``)."""
    name = margin or "absolute"
    if name not in MARGINS:
        raise embeddings.EmbeddingError(f"unknown margin {margin!r}; choose one of {MARGINS}")
    return name


def best_candidates(
    forward: Neighbours, backward: Neighbours | None, margin: str | None
) -> tuple[np.ndarray, np.ndarray]:
    """(index, score) of the best candidate of every query under `margin`.

    `backward` (the candidates' own neighbours among the queries) is needed for the margin
    scores; among equal scores the nearer cosine neighbour, then the lower index, wins.
    """
    name = check_margin(margin)
    if name == "absolute":
        return forward.indices[:, 0], forward.scores[:, 0].astype(np.float64)
    assert backward is not None, "margin scores need the backward neighbours"
    cos = forward.scores.astype(np.float64)
    mean_query = cos.mean(axis=1)
    mean_candidate = backward.scores.astype(np.float64).mean(axis=1)
    denominator = (mean_query[:, None] + mean_candidate[forward.indices]) / 2
    scores = cos / denominator if name == "ratio" else cos - denominator
    best = scores.argmax(axis=1)
    rows = np.arange(len(best))
    return forward.indices[rows, best], scores[rows, best]


def predict(
    queries: np.ndarray,
    candidates: np.ndarray,
    margin: str | None = None,
    k: int = 4,
    block_size: int = DEFAULT_BLOCK,
) -> tuple[np.ndarray, np.ndarray]:
    """Retrieved row of every query among the candidates, and of every candidate among the
    queries (both from one pass over the similarity blocks)."""
    width = 1 if check_margin(margin) == "absolute" else k
    forward, backward = search.mutual_knn(queries, candidates, width, block_size)
    assert backward is not None
    return (
        best_candidates(forward, backward, margin)[0],
        best_candidates(backward, forward, margin)[0],
    )


def chance(candidates: int) -> float:
    """P@1 (percent) of a query that picks one of `candidates` at random."""
    if candidates < 1:
        raise embeddings.EmbeddingError("chance needs at least one candidate")
    return 100.0 / candidates


def p_at_1(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Percentage of queries whose retrieved row is the gold row."""
    return 100.0 * float(np.mean(predicted == gold))


def evaluate(
    src: np.ndarray,
    tgt: np.ndarray,
    margin: str | None = None,
    k: int = 4,
    block_size: int = DEFAULT_BLOCK,
    tgt_text: list[str] | None = None,
) -> dict:
    """P@1 src->tgt, tgt->src, their mean, and xSIM error (all percent) for aligned rows;
    `tgt_text` (the target sentences) makes the xSIM error textual, as LASER's option does.
    ``chance`` is the P@1 of a random pick among the n candidates; ``hits`` is 1 or 0 per
    query, src->tgt queries first, so its mean ×100 is ``p_at_1``."""
    embeddings.check_aligned(src, tgt, "source embeddings", "target embeddings")
    if tgt_text is not None and len(tgt_text) != tgt.shape[0]:
        raise embeddings.EmbeddingError(
            f"{len(tgt_text)} target sentences for {tgt.shape[0]} target embeddings; give the "
            "sentences that were embedded, in order"
        )
    src2tgt, tgt2src = predict(src, tgt, margin, k, block_size)
    gold = np.arange(src.shape[0])
    forward, backward = p_at_1(src2tgt, gold), p_at_1(tgt2src, gold)
    xsim = 100.0 - forward
    if tgt_text is not None:
        xsim = 100.0 * float(np.mean([tgt_text[p] != tgt_text[i] for i, p in enumerate(src2tgt)]))
    return {
        "p_at_1_src2tgt": forward,
        "p_at_1_tgt2src": backward,
        "p_at_1": (forward + backward) / 2,
        "xsim_error": xsim,
        "xsim_textual": tgt_text is not None,
        "n": int(src.shape[0]),
        "chance": chance(src.shape[0]),
        "hits": [int(h) for h in np.concatenate([src2tgt == gold, tgt2src == gold])],
        "margin": check_margin(margin),
        "k": k,
    }
