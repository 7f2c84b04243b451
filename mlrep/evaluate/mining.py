"""BUCC-style bitext mining: margin-scored candidates, greedy 1-1 selection, F1 at a threshold.

The protocol of the BUCC 2018 evaluations in the thesis (the sentence-transformers
``bucc2018.py`` recipe, with exact search): every source sentence proposes its best target
and every target its best source (ratio margin over k = 4 neighbours each way); the pooled
proposals are sorted by score and kept greedily when neither side is used yet. A decision
threshold is then chosen where F1 against the gold pairs of the training split peaks, and
applied unchanged to the test split, so the test number involves no oracle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlrep.evaluate import embeddings, retrieval, search
from mlrep.evaluate.search import DEFAULT_BLOCK
from mlrep.io import read_lines


class MiningError(embeddings.EmbeddingError):
    """Mining input that does not fit together (ids vs embeddings, gold pairs)."""


@dataclass(frozen=True)
class Mined:
    """Selected pairs, best first: row numbers of both sides and their margin scores."""

    src: np.ndarray
    tgt: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True)
class Split:
    """One BUCC split: embeddings, the sentence ids of their rows, and the gold id pairs."""

    src: np.ndarray
    tgt: np.ndarray
    src_ids: list[str]
    tgt_ids: list[str]
    gold: set[tuple[str, str]]


def mine(
    src: np.ndarray,
    tgt: np.ndarray,
    k: int = 4,
    margin: str = "ratio",
    block_size: int = DEFAULT_BLOCK,
) -> Mined:
    """Candidates from both directions, sorted by score, each sentence used at most once."""
    embeddings.check_dimensions(src, tgt, "source embeddings", "target embeddings")
    forward, backward = search.mutual_knn(src, tgt, k, block_size)
    assert backward is not None
    return select(
        *retrieval.best_candidates(forward, backward, margin),
        *retrieval.best_candidates(backward, forward, margin),
    )


def select(
    fwd_tgt: np.ndarray, fwd_score: np.ndarray, bwd_src: np.ndarray, bwd_score: np.ndarray
) -> Mined:
    """Pool the best target of every source and the best source of every target, sort by
    score (forward first among equals) and keep a pair when both sides are still unused."""
    src_rows = np.concatenate([np.arange(len(fwd_tgt)), bwd_src])
    tgt_rows = np.concatenate([fwd_tgt, np.arange(len(bwd_src))])
    scores = np.concatenate([fwd_score, bwd_score])
    order = np.argsort(-scores, kind="stable")
    used_src = np.zeros(len(fwd_tgt), dtype=bool)
    used_tgt = np.zeros(len(bwd_src), dtype=bool)
    keep = []
    for i in order:
        s, t = src_rows[i], tgt_rows[i]
        if not used_src[s] and not used_tgt[t]:
            used_src[s] = used_tgt[t] = True
            keep.append(i)
    chosen = np.asarray(keep, dtype=np.int64)
    return Mined(src_rows[chosen], tgt_rows[chosen], scores[chosen])


def _hits(mined: Mined, split: Split) -> np.ndarray:
    return np.array(
        [
            (split.src_ids[s], split.tgt_ids[t]) in split.gold
            for s, t in zip(mined.src, mined.tgt, strict=True)
        ],
        dtype=bool,
    )


def _prf(correct: int, predicted: int, gold: int) -> dict:
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    return {
        "precision": 100 * precision,
        "recall": 100 * recall,
        "f1": 100 * f1,
        "mined": predicted,
        "correct": correct,
        "gold": gold,
    }


def best_threshold(mined: Mined, split: Split) -> tuple[float, dict]:
    """The score threshold where F1 on `split` peaks, and that F1 (the oracle on this split).

    Only cuts between different scores are considered, because a threshold keeps every pair
    scoring at least as high; the first (highest) threshold wins among equal F1.
    """
    hits = np.cumsum(_hits(mined, split))
    n = len(mined.scores)
    if n == 0:
        return float("inf"), _prf(0, 0, len(split.gold))
    cut = np.ones(n, dtype=bool)
    cut[:-1] = mined.scores[:-1] > mined.scores[1:]
    predicted = np.arange(1, n + 1)
    f1 = 2 * hits / (predicted + len(split.gold))
    f1[~cut] = -1.0
    best = int(np.argmax(f1))
    return float(mined.scores[best]), _prf(int(hits[best]), best + 1, len(split.gold))


def apply_threshold(mined: Mined, split: Split, threshold: float) -> dict:
    """Precision, recall and F1 of the pairs scoring at least `threshold`."""
    kept = mined.scores >= threshold
    correct = int(_hits(mined, split)[kept].sum())
    return _prf(correct, int(kept.sum()), len(split.gold))


def kept_pairs(mined: Mined, split: Split, threshold: float) -> list[tuple[str, str, float, bool]]:
    """(source id, target id, score, in gold) of every pair kept at `threshold`, best first;
    the pairs outside the gold are where a mined example like thesis Table 2.8 comes from."""
    hits = _hits(mined, split)
    return [
        (split.src_ids[s], split.tgt_ids[t], float(score), bool(hit))
        for s, t, score, hit in zip(mined.src, mined.tgt, mined.scores, hits, strict=True)
        if score >= threshold
    ]


def evaluate(
    train: Split,
    test: Split | None = None,
    k: int = 4,
    margin: str = "ratio",
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """Threshold chosen on `train`'s gold; its oracle F1, the F1 on `test` at that threshold,
    and the pairs kept at it ("pairs": of the test split when there is one)."""
    mined = mine(train.src, train.tgt, k, margin, block_size)
    threshold, train_scores = best_threshold(mined, train)
    result = {"margin": margin, "k": k, "threshold": threshold, "train": train_scores}
    result["pairs"] = kept_pairs(mined, train, threshold)
    if test is not None:
        test_mined = mine(test.src, test.tgt, k, margin, block_size)
        result["test"] = apply_threshold(test_mined, test, threshold)
        result["pairs"] = kept_pairs(test_mined, test, threshold)
    return result


def hide_gold(rows: int, gold_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A BUCC-style comparable pair from `rows` aligned translations (a parallel split of a
    multi-way corpus): which rows each side keeps, as (source rows, target rows).

    A seeded `gold_fraction` of the rows keeps both sides (the gold pairs); every other row is
    given to one side only, alternately, so each side also holds sentences whose translation
    is absent, the non-parallel majority that makes mining hard. Rows are returned sorted.
    """
    if not 0 < gold_fraction < 1:
        raise MiningError(f"gold_fraction must lie strictly between 0 and 1, got {gold_fraction}")
    order = np.random.default_rng(seed).permutation(rows)
    n_gold = max(1, round(gold_fraction * rows))
    gold, rest = order[:n_gold], order[n_gold:]
    return np.sort(np.concatenate([gold, rest[0::2]])), np.sort(np.concatenate([gold, rest[1::2]]))


def read_ids(path: Path, rows: int) -> list[str]:
    """Sentence ids, one per embedding row: the first tab field of each line (BUCC files are
    ``id<TAB>sentence``; a plain list of ids works too)."""
    ids = [line.split("\t", 1)[0] for line in read_lines(path, MiningError)]
    if len(ids) != rows:
        raise MiningError(
            f"{path}: {len(ids)} ids but the embeddings have {rows} rows; embed exactly the "
            "sentences of this file, in its order"
        )
    seen: set[str] = set()
    for number, sentence_id in enumerate(ids, start=1):
        if not sentence_id or sentence_id in seen:
            what = "empty id" if not sentence_id else f"duplicate id {sentence_id!r}"
            raise MiningError(f"{path}:{number}: {what}; every sentence needs its own id")
        seen.add(sentence_id)
    return ids


def read_gold(path: Path, src_ids: list[str], tgt_ids: list[str]) -> set[tuple[str, str]]:
    """Gold pairs ``src_id<TAB>tgt_id``, each id checked against the sentence files."""
    known_src, known_tgt = set(src_ids), set(tgt_ids)
    gold: set[tuple[str, str]] = set()
    for number, line in enumerate(read_lines(path, MiningError), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise MiningError(f"{path}:{number}: expected 'source_id<TAB>target_id', got {line!r}")
        if fields[0] not in known_src or fields[1] not in known_tgt:
            raise MiningError(
                f"{path}:{number}: pair {fields[0]!r}/{fields[1]!r} names an id absent from the "
                "sentence files; use the gold file of the same split and language pair"
            )
        gold.add((fields[0], fields[1]))
    if not gold:
        raise MiningError(f"{path}: no gold pairs; recall is undefined without them")
    return gold


def load_split(src_emb: Path, tgt_emb: Path, src_ids: Path, tgt_ids: Path, gold: Path) -> Split:
    """A split from files: two embedding matrices, their id files and the gold pairs."""
    src, tgt = embeddings.load(src_emb), embeddings.load(tgt_emb)
    embeddings.check_dimensions(src, tgt, str(src_emb), str(tgt_emb))
    sids, tids = read_ids(src_ids, src.shape[0]), read_ids(tgt_ids, tgt.shape[0])
    return Split(src, tgt, sids, tids, read_gold(gold, sids, tids))
