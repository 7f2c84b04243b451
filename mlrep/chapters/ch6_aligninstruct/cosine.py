"""Figures 6.3 and D.1's numbers: per layer, how fine-tuning moved the cross-lingual cosine
similarity of parallel sentences (thesis §6.4.5).

`mlrep llm cosine` writes, per model, ``{"layers": [1..L], "cosine": [...], "pairs": n}``:
each layer's mean cosine of the pairs' mean-pooled states. An analysis (`runs.Analysis`)
compares three models, no FT, MTInstruct and MT+Align, and its metrics are the differences
per layer k: ``delta1_l<k>`` = cos(MTInstruct) − cos(no FT), ``delta2_l<k>`` = cos(MT+Align)
− cos(MTInstruct). Differences are only meaningful layer for layer over the same sentences,
so files whose layers or pair counts differ are refused rather than aligned.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mlrep.errors import MlrepError


class CosineFileError(MlrepError):
    """A cosine file that is not `mlrep llm cosine`'s, or files that do not compare."""


@dataclass(frozen=True)
class LayerCosines:
    """One model's per-layer mean cosine (`cosine[i]` is layer `layers[i]`) over `pairs`."""

    path: Path
    layers: list[int]
    cosine: list[float]
    pairs: int


def read(path: Path) -> LayerCosines:
    """One `mlrep llm cosine` file, checked: layers 1..L, a finite cosine per layer."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CosineFileError(f"{path}: not a readable cosine JSON ({error})") from None
    layers, cosine, pairs = (
        data.get(k) if isinstance(data, dict) else None for k in ("layers", "cosine", "pairs")
    )
    if not isinstance(layers, list) or layers != list(range(1, len(layers) + 1)) or not layers:
        raise CosineFileError(f"{path}: `layers` must be 1..L, got {layers!r}")
    numbers = isinstance(cosine, list) and all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in cosine
    )
    if not numbers or len(cosine) != len(layers):
        raise CosineFileError(f"{path}: `cosine` must be {len(layers)} finite numbers, one a layer")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or pairs < 1:
        raise CosineFileError(f"{path}: `pairs` must be a positive integer, got {pairs!r}")
    return LayerCosines(path, layers, [float(v) for v in cosine], pairs)


def _same(
    models: tuple[LayerCosines, ...], what: str, shown: Callable[[LayerCosines], str]
) -> None:
    if len({shown(m) for m in models}) > 1:
        found = "; ".join(f"{m.path}: {shown(m)}" for m in models)
        raise CosineFileError(
            f"the compared models' cosine files differ in {what} ({found}): Δ1 and Δ2 compare "
            "the same layers over the same sentence pairs"
        )


def deltas(noft: LayerCosines, mt: LayerCosines, mt_align: LayerCosines) -> dict[str, float]:
    """``delta1_l<k>`` = mt − noft and ``delta2_l<k>`` = mt_align − mt at each layer k."""
    models = (noft, mt, mt_align)
    _same(models, "layers", lambda m: f"layers 1..{len(m.layers)}")
    _same(models, "sentence pairs", lambda m: f"{m.pairs} pairs")
    out: dict[str, float] = {}
    for i, k in enumerate(noft.layers):
        out[f"delta1_l{k}"] = mt.cosine[i] - noft.cosine[i]
        out[f"delta2_l{k}"] = mt_align.cosine[i] - mt.cosine[i]
    return out
