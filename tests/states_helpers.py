"""Synthetic hidden-states files whose layers carry known language information."""

from __future__ import annotations

from collections.abc import Callable
from itertools import permutations
from pathlib import Path

import numpy as np

from mlrep.evaluate.states import write_states

LANGS = ("de", "en", "fr")
WIDTH = 16

# A layer's states: f(rng, rows, src_of_row, tgt_of_row) -> float [rows, WIDTH]
LayerFn = Callable[[np.random.Generator, int, np.ndarray, np.ndarray], np.ndarray]


def _code(langs: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.array(LANGS), langs)


def noise(rng, rows, src, tgt):
    return rng.normal(size=(rows, WIDTH))


def carries_src(rng, rows, src, tgt):
    """Noise plus a source-language offset in the first dimensions."""
    out = noise(rng, rows, src, tgt)
    out[np.arange(rows), _code(src)] += 6.0
    return out


def carries_tgt(rng, rows, src, tgt):
    out = noise(rng, rows, src, tgt)
    out[np.arange(rows), 8 + _code(tgt)] += 6.0
    return out


def carries_both(rng, rows, src, tgt):
    out = carries_src(rng, rows, src, tgt)
    out[np.arange(rows), 8 + _code(tgt)] += 6.0
    return out


def directions(per_direction: int) -> tuple[list[str], list[str]]:
    """Every ordered pair of LANGS, `per_direction` sentences each."""
    pairs = [p for p in permutations(LANGS, 2) for _ in range(per_direction)]
    return [s for s, _ in pairs], [t for _, t in pairs]


def write_synthetic(
    path: Path,
    encoder: list[LayerFn],
    decoder: list[LayerFn],
    per_direction: int,
    seed: int,
    src_lang: list[str] | None = None,
    tgt_lang: list[str] | None = None,
) -> Path:
    """A states npz: 2–7 source tokens and 1–6 generated tokens per sentence."""
    rng = np.random.default_rng(seed)
    if src_lang is None:
        src_lang, tgt_lang = directions(per_direction)
    n = len(src_lang)
    src, tgt = np.array(src_lang), np.array(tgt_lang)
    sentence = np.repeat(np.arange(n), rng.integers(2, 8, size=n))
    decoder_sentence = np.repeat(np.arange(n), rng.integers(1, 7, size=n))
    layers = [f(rng, len(sentence), src[sentence], tgt[sentence]) for f in encoder]
    layers += [
        f(rng, len(decoder_sentence), src[decoder_sentence], tgt[decoder_sentence]) for f in decoder
    ]
    write_states(
        path,
        layers,
        len(encoder),
        sentence,
        src_lang,
        tgt_lang,
        decoder_sentence if decoder else None,
    )
    return path
