"""The metric names Chapter 7's runs write, which its tables, claims and figure may read:
the generic NMT ones (`mlrep.nmt.metrics`: BLEU and its from/to-English means, the gold-length
BLEU, the length predictor's accuracy, the per-epoch validation NMT loss), as every step of the
chapter is `mlrep nmt`'s."""

from __future__ import annotations

from mlrep.nmt.metrics import PATTERNS

__all__ = ["PATTERNS"]
