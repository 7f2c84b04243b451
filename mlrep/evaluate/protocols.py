"""The retrieval benchmarks of the embedding chapters, on top of `retrieval`.

- Tatoeba (thesis 2.4.1, 3.x): per language xx, P@1 xx->eng and eng->xx over that
  language's pairs, the language's score is their mean, the benchmark score the unweighted
  mean over languages. Reads the data layer's normalised folder
  (``test.<xx>-eng.<xx>`` / ``test.<xx>-eng.eng``) and embeds with the caller's encoder.
- Flores many-to-many (2.4.2): P@1 for every ordered pair of the chosen (non-English)
  languages of a multi-way split (``<split>.multiway.<lang>``); each language is embedded once.
  Where the languages do not share every row (a multi-way corpus with gaps, joined on segment
  ids), each pair is scored on the rows both have.
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
from mlrep.evaluate.tfidf import Transductive
from mlrep.io import read_lines

Encode = Callable[[list[str]], np.ndarray]


class BenchmarkError(embeddings.EmbeddingError):
    """A benchmark folder or pool request that cannot be evaluated."""


def fit(encode: Encode, sides: Sequence[Sequence[str]]) -> None:
    """Fit a transductive encoder (`mlrep.evaluate.tfidf.Transductive`: one whose vector space
    comes from the test set) on every side of the test set it is about to encode; a trained
    encoder is left as it is."""
    if isinstance(encode, Transductive):
        encode.fit(sides)


def embed(encode: Encode, lines: list[str], label: str) -> np.ndarray:
    """`encode(lines)` checked: one finite float row per line (`label` names the input)."""
    if not lines:
        raise BenchmarkError(f"{label}: empty file; re-run the data step that writes it")
    vectors = np.asarray(encode(lines))
    if vectors.ndim != 2 or vectors.shape[0] != len(lines):
        raise BenchmarkError(
            f"{label}: the encoder returned shape {vectors.shape} for {len(lines)} lines; "
            "encode must return one row per sentence"
        )
    return embeddings.check(vectors.astype(np.float32, copy=False), f"embeddings of {label}")


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
        sides = [
            read_lines(Path(f"{stem}.{side}"), BenchmarkError)[: limit or None]
            for side in (lang, "eng")
        ]
        fit(encode, sides)
        src, tgt = (
            embed(encode, lines, f"{stem}.{side}")
            for lines, side in zip(sides, (lang, "eng"), strict=True)
        )
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
    ids: dict[str, Sequence[str]] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    min_shared: int = 2,
) -> dict:
    """P@1 of every ordered pair ``l1-l2`` (queries in l1, candidates in l2) and the mean.

    Without `ids` the languages are row-aligned (Flores). With `ids` (one id per row of each
    language) a pair is scored on the rows whose ids both languages have, in id order, so a
    multi-way corpus with gaps yields real gold pairs; ``shared`` records how many. `pairs`
    limits the unordered pairs scored (default: all); a pair sharing fewer than `min_shared`
    rows is not scored but listed under ``skipped``, since P@1 among a handful of candidates
    says little. ``chance`` is each scored pair's P@1 of a random pick (`retrieval.chance`),
    ``hits`` its queries' hits.
    """
    if len(vectors) < 2:
        raise BenchmarkError(f"many-to-many retrieval needs two languages, got {sorted(vectors)}")
    chosen = list(pairs) if pairs is not None else list(combinations(sorted(vectors), 2))
    scores: dict[str, float] = {}
    chance: dict[str, float] = {}
    hits: dict[str, list[int]] = {}
    shared: dict[str, int] = {}
    skipped: list[str] = []
    for a, b in chosen:
        src, tgt = vectors[a], vectors[b]
        if ids is not None:
            rows_a = {sentence_id: row for row, sentence_id in enumerate(ids[a])}
            rows_b = {sentence_id: row for row, sentence_id in enumerate(ids[b])}
            common = sorted(rows_a.keys() & rows_b.keys())
            src = src[[rows_a[i] for i in common]]
            tgt = tgt[[rows_b[i] for i in common]]
        if src.shape[0] < min_shared:
            skipped.append(f"{a}-{b}")
            continue
        result = retrieval.evaluate(src, tgt, margin, k, block_size)
        scores[f"{a}-{b}"] = result["p_at_1_src2tgt"]
        scores[f"{b}-{a}"] = result["p_at_1_tgt2src"]
        half = result["n"]
        hits[f"{a}-{b}"], hits[f"{b}-{a}"] = result["hits"][:half], result["hits"][half:]
        chance[f"{a}-{b}"] = chance[f"{b}-{a}"] = result["chance"]
        shared[f"{a}-{b}"] = int(src.shape[0])
    average = float(np.mean(list(scores.values()))) if scores else float("nan")
    return {
        "pairs": scores,
        "average": average,
        "n_pairs": len(scores),
        "chance": chance,
        "hits": hits,
        "shared": shared,
        "skipped": skipped,
    }


def flores(
    encode: Encode,
    folder: Path,
    languages: Sequence[str],
    split: str = "devtest",
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """Many-to-many P@1 over `languages` of a normalised multi-way Flores folder."""
    paths = {lang: Path(folder) / f"{split}.multiway.{lang}" for lang in languages}
    for lang, path in paths.items():
        if not path.exists():
            raise BenchmarkError(f"{path}: not found; normalise Flores with {lang} selected")
    lines = {lang: read_lines(path, BenchmarkError) for lang, path in paths.items()}
    fit(encode, list(lines.values()))
    vectors = {lang: embed(encode, lines[lang], str(paths[lang])) for lang in languages}
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
    result = ranked(
        src[rows[:queries]], tgt[rows[:queries]], tgt[rows[queries:]], rng, margin, k, block_size
    )
    return {**result, "seed": seed}


def ranked(
    queries: np.ndarray,
    gold: np.ndarray,
    distractors: np.ndarray,
    rng: np.random.Generator,
    margin: str | None = "ratio",
    k: int = 4,
    block_size: int = DEFAULT_BLOCK,
) -> dict:
    """P@1 of each query (row i of `queries`) finding its gold (row i of `gold`) among all gold
    rows and the distractors, shuffled by `rng`: the ParaCrawl protocol once the rows are drawn.

    The distractors may come from the same bitext (its other rows) or from elsewhere in the
    target language (other segments of a multi-way corpus); only the pool matters.
    """
    embeddings.check_aligned(queries, gold, "query embeddings", "gold embeddings")
    embeddings.check_dimensions(gold, distractors, "gold embeddings", "distractor embeddings")
    candidates = np.concatenate([gold, distractors])
    position = rng.permutation(candidates.shape[0])
    shuffled = np.empty_like(candidates)
    shuffled[position] = candidates
    predicted, _ = retrieval.predict(queries, shuffled, margin, k, block_size)
    return {
        "p_at_1": retrieval.p_at_1(predicted, position[: queries.shape[0]]),
        "queries": int(queries.shape[0]),
        "candidates": int(candidates.shape[0]),
        "chance": retrieval.chance(candidates.shape[0]),
        "margin": retrieval.check_margin(margin),
        "k": k,
    }
