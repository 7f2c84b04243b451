"""Evaluate a trained encoder: Tatoeba P@1 per language and held-out bitext retrieval.

Retrieval and the Tatoeba protocol are the evaluation suite's (`mlrep.evaluate`); this module only
turns text into embeddings the way the model was trained (lower-case, SentencePiece,
truncation, mean pooling with dropout off) and names the metrics the Chapter 2 tables read:
``tatoeba_<iso3>`` (mean of both directions, spec §5.1), ``heldout_<lang>`` and
``heldout_avg`` for the embedded corpus's test split. Each comes with its chance floor
(``floor_<name>``, 1/candidates) and each query's hit as sentence scores
(`mlrep.report.metrics.Scores`), so the claims ledger can test a P@1 against chance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from mlrep.embed.data import PairArrays, Tokenizer, pad_ids
from mlrep.evaluate import protocols, retrieval
from mlrep.report.metrics import Scores

Encode = Callable[[list[str]], np.ndarray]
Embedder = torch.nn.Module  # a model with ``embed(tokens) -> (batch, dim)``


def encoder(model: Embedder, tokenizer: Tokenizer, batch_size: int) -> Encode:
    """``encode(sentences) -> float32 array``, batched by length so padding stays small."""

    def encode(sentences: list[str]) -> np.ndarray:
        return embed_ids(model, tokenizer.ids(sentences), batch_size)

    return encode


def embed_ids(model: Embedder, ids: list[list[int]], batch_size: int) -> np.ndarray:
    """Sentence vectors of tokenised sentences by any model with ``embed(tokens)`` (EMS, a
    LEALLA student), dropout off, in length-sorted batches, rows in input order."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    device = next(model.parameters()).device
    parts = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            tokens = pad_ids([ids[i] for i in order[start : start + batch_size]]).to(device)
            parts.append(model.embed(tokens).cpu().numpy())
    out = np.empty((len(ids), parts[0].shape[1]), dtype=np.float32)
    out[order] = np.concatenate(parts)
    return out


class Memo:
    """An encoder that encodes each distinct list of sentences once.

    Scoring the teacher through several reduction layers runs each benchmark's protocol once
    per layer, and every run asks the teacher for the same lists of sentences: the teacher's
    vectors are computed by the first and read back by the others, which only project them
    (so the stored arrays are never handed out to be changed). `clear` forgets them between
    benchmarks, so memory holds one benchmark's vectors at a time.
    """

    def __init__(self, encode: Encode) -> None:
        self._encode = encode
        self._seen: dict[tuple[str, ...], np.ndarray] = {}
        self.encoded = 0  # sentences actually encoded: what the memo saves is testable

    def __call__(self, sentences: list[str]) -> np.ndarray:
        key = tuple(sentences)
        if key not in self._seen:
            self._seen[key] = self._encode(sentences)
            self.encoded += len(sentences)
        return self._seen[key]

    def clear(self) -> None:
        self._seen.clear()


def tatoeba(encode: Encode, folder: Path, limit: int = 0, languages: Sequence[str] = ()) -> Scores:
    """``tatoeba_<lang>`` for `languages` of the normalised benchmark (empty: every language of
    the folder; the suite's protocol; `limit` keeps the first pairs of each language, 0: all),
    with chance and hits."""
    result = protocols.tatoeba(encode, folder, languages=languages, limit=limit)
    scores = Scores()
    for lang, r in result["languages"].items():
        scores.add(f"tatoeba_{lang}", r["p_at_1"], r["chance"], r["hits"])
    return scores


def heldout(model: Embedder, data: PairArrays, languages: list[str], batch_size: int) -> Scores:
    """P@1 of the embedded corpus's test pairs (both directions, cosine), per language and
    averaged, with chance and hits."""

    def embed(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        src = [
            data.src_tokens[data.src_offsets[r] : data.src_offsets[r + 1]].tolist() for r in rows
        ]
        tgt = [
            data.tgt_tokens[data.tgt_offsets[r] : data.tgt_offsets[r + 1]].tolist() for r in rows
        ]
        return embed_ids(model, src, batch_size), embed_ids(model, tgt, batch_size)

    return heldout_by_language(embed, data.tgt_lang, languages)


def heldout_by_language(
    embed: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    tgt_lang: np.ndarray,
    languages: list[str],
) -> Scores:
    """``heldout_<lang>`` and ``heldout_avg`` of any encoder: `embed(rows)` gives the (source,
    target) vectors of those test rows, so a model and a teacher's cached vectors (through a
    reduction layer) are scored by one protocol."""
    scores = Scores()
    for index in sorted(set(tgt_lang.tolist())):
        rows = np.flatnonzero(tgt_lang == index)
        if len(rows) < 2:
            continue
        src, tgt = embed(rows)
        r = retrieval.evaluate(tgt, src)
        scores.add(f"heldout_{languages[index]}", r["p_at_1"], r["chance"], r["hits"])
    if scores.metrics:
        scores.mean("heldout_avg", [k for k in scores.metrics if k.startswith("heldout_")])
    return scores
