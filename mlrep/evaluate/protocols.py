"""The retrieval benchmarks of the embedding chapters, on top of `retrieval`.

- Tatoeba (thesis 2.4.1, 3.x): per language xx, P@1 xx->eng and eng->xx over that
  language's pairs, the language's score is their mean, the benchmark score the unweighted
  mean over languages. Reads the data layer's normalised folder
  (``test.<xx>-eng.<xx>`` / ``test.<xx>-eng.eng``) and embeds with the caller's encoder.
- Flores many-to-many (2.4.2): P@1 for every ordered pair of the chosen (non-English)
  languages of a multi-way split (``<split>.multiway.<lang>``); each language is embedded once.
- ParaCrawl-style pools (2.4.4): a fixed number of queries searched among a larger pool of
  candidates (their gold translations plus distractors), ratio margin, k = 4 by default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np

from mlrep.evaluate import embeddings, retrieval
from mlrep.evaluate.search import DEFAULT_BLOCK
from mlrep.io import read_lines

Encode = Callable[[list[str]], np.ndarray]


class BenchmarkError(embeddings.EmbeddingError):
    """A benchmark folder or pool request that cannot be evaluated."""


def _embed(encode: Encode, path: Path, limit: int = 0) -> np.ndarray:
    lines = read_lines(path, BenchmarkError)[: limit or None]
    if not lines:
        raise BenchmarkError(f"{path}: empty file; re-run the data step that writes it")
    vectors = np.asarray(encode(lines))
    if vectors.ndim != 2 or vectors.shape[0] != len(lines):
        raise BenchmarkError(
            f"{path}: the encoder returned shape {vectors.shape} for {len(lines)} lines; "
            "encode must return one row per sentence"
        )
    return embeddings.check(vectors.astype(np.float32, copy=False), f"embeddings of {path}")


def tatoeba_languages(folder: Path) -> list[str]:
    """Languages of a normalised Tatoeba folder, from its ``test.<xx>-eng.eng`` files."""
    found = sorted(p.name[len("test.") : -len("-eng.eng")] for p in folder.glob("test.*-eng.eng"))
    if not found:
        raise BenchmarkError(
            f"{folder}: no test.<xx>-eng.eng files; run `mlrep data normalize laser_tatoeba_v1`"
        )
    return found


def tatoeba(
    encode: Encode,
    folder: Path,
    languages: Sequence[str] | None = None,
    limit: int = 0,
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """Tatoeba P@1 per language (xx is the source side, eng the target) and the average.

    `limit` keeps the first pairs of each language (0: all) for trimmed runs; fewer
    candidates per query make P@1 higher than the full protocol's.
    """
    folder = Path(folder)
    chosen = list(languages) if languages else tatoeba_languages(folder)
    per_language = {}
    for lang in chosen:
        stem = folder / f"test.{lang}-eng"
        if not Path(f"{stem}.{lang}").exists():
            raise BenchmarkError(
                f"{stem}.{lang}: not found; languages present: {tatoeba_languages(folder)}"
            )
        src = _embed(encode, Path(f"{stem}.{lang}"), limit)
        tgt = _embed(encode, Path(f"{stem}.eng"), limit)
        per_language[lang] = retrieval.evaluate(src, tgt, block_size=block_size)
    return {
        "languages": per_language,
        "average": float(np.mean([r["p_at_1"] for r in per_language.values()])),
        "n_languages": len(per_language),
    }


def many_to_many(
    vectors: dict[str, np.ndarray],
    margin: str | None = None,
    k: int = 4,
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """P@1 of every ordered pair ``l1-l2`` (queries in l1, candidates in l2) and the mean."""
    if len(vectors) < 2:
        raise BenchmarkError(f"many-to-many retrieval needs two languages, got {sorted(vectors)}")
    pairs: dict[str, float] = {}
    for a, b in combinations(sorted(vectors), 2):
        result = retrieval.evaluate(vectors[a], vectors[b], margin, k, block_size)
        pairs[f"{a}-{b}"] = result["p_at_1_src2tgt"]
        pairs[f"{b}-{a}"] = result["p_at_1_tgt2src"]
    return {"pairs": pairs, "average": float(np.mean(list(pairs.values()))), "n_pairs": len(pairs)}


def flores(
    encode: Encode,
    folder: Path,
    languages: Sequence[str],
    split: str = "devtest",
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """Many-to-many P@1 over `languages` of a normalised multi-way Flores folder."""
    vectors = {}
    for lang in languages:
        path = Path(folder) / f"{split}.multiway.{lang}"
        if not path.exists():
            raise BenchmarkError(f"{path}: not found; normalise Flores with {lang} selected")
        vectors[lang] = _embed(encode, path)
    return many_to_many(vectors, block_size=block_size)


def pool(
    src: np.ndarray,
    tgt: np.ndarray,
    queries: int,
    candidates: int,
    seed: int,
    margin: str | None = "ratio",
    k: int = 4,
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """P@1 of `queries` random source rows among `candidates` target rows: their gold rows
    plus random distractors, in random order (one seeded draw, recorded in the result)."""
    embeddings.check_aligned(src, tgt, "query-side embeddings", "candidate-side embeddings")
    if not 0 < queries <= candidates <= src.shape[0]:
        raise BenchmarkError(
            f"a pool needs 0 < queries ({queries}) <= candidates ({candidates}) <= aligned "
            f"pairs ({src.shape[0]}); lower the sizes or supply more pairs"
        )
    rng = np.random.default_rng(seed)
    rows = rng.permutation(src.shape[0])[:candidates]
    query_rows = rows[:queries]
    position = rng.permutation(candidates)
    pool_rows = np.empty(candidates, dtype=np.int64)
    pool_rows[position] = rows
    predicted, _ = retrieval.predict(src[query_rows], tgt[pool_rows], margin, k, block_size)
    return {
        "p_at_1": retrieval.p_at_1(predicted, position[:queries]),
        "queries": queries,
        "candidates": candidates,
        "seed": seed,
        "margin": retrieval.check_margin(margin),
        "k": k,
    }
