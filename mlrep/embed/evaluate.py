"""Evaluate a trained encoder: Tatoeba P@1 per language and held-out bitext retrieval.

Retrieval and the Tatoeba protocol are the evaluation suite's (`mlrep.evaluate`); this module only
turns text into embeddings the way the model was trained (lower-case, SentencePiece,
truncation, mean pooling with dropout off) and names the metrics the Chapter 2 tables read:
``tatoeba_<iso3>`` (mean of both directions, spec §5.1), ``heldout_<lang>`` and
``heldout_avg`` for the embedded corpus's test split.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from mlrep.embed.data import PairArrays, Tokenizer, pad_ids
from mlrep.embed.model import EmsModel
from mlrep.evaluate import protocols, retrieval

Encode = Callable[[list[str]], np.ndarray]


def encoder(model: EmsModel, tokenizer: Tokenizer, batch_size: int) -> Encode:
    """``encode(sentences) -> float32 array``, batched by length so padding stays small."""

    def encode(sentences: list[str]) -> np.ndarray:
        return embed_ids(model, tokenizer.ids(sentences), batch_size)

    return encode


def embed_ids(model: EmsModel, ids: list[list[int]], batch_size: int) -> np.ndarray:
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.zeros((len(ids), model.config.dim), dtype=np.float32)
    model.eval()
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            tokens = pad_ids([ids[i] for i in chunk]).to(model.encoder.tokens.weight.device)
            out[chunk] = model.embed(tokens).cpu().numpy()
    return out


def p_at_1(src: np.ndarray, tgt: np.ndarray) -> float:
    """Mean P@1 of both directions by cosine nearest neighbour (Tatoeba's protocol)."""
    return float(retrieval.evaluate(src, tgt)["p_at_1"])


def tatoeba(encode: Encode, folder: Path, limit: int = 0) -> dict[str, float]:
    """``tatoeba_<lang>`` for every language of the normalised benchmark (the suite's protocol;
    `limit` keeps the first pairs of each language, 0: all)."""
    result = protocols.tatoeba(encode, folder, limit=limit)
    return {f"tatoeba_{lang}": r["p_at_1"] for lang, r in result["languages"].items()}


def heldout(model: EmsModel, data: PairArrays, languages: list[str], batch_size: int) -> dict:
    """P@1 of the embedded corpus's test pairs, per language and averaged."""
    scores = {}
    for index in sorted(set(data.tgt_lang.tolist())):
        rows = np.flatnonzero(data.tgt_lang == index)
        if len(rows) < 2:
            continue
        src = [
            data.src_tokens[data.src_offsets[r] : data.src_offsets[r + 1]].tolist() for r in rows
        ]
        tgt = [
            data.tgt_tokens[data.tgt_offsets[r] : data.tgt_offsets[r + 1]].tolist() for r in rows
        ]
        scores[f"heldout_{languages[index]}"] = p_at_1(
            embed_ids(model, tgt, batch_size), embed_ids(model, src, batch_size)
        )
    if scores:
        scores["heldout_avg"] = statistics.fmean(scores.values())
    return scores
