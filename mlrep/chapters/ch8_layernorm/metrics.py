"""The metric names Chapter 8's runs write, which its tables, claims and figures may read:
the generic NMT ones (`mlrep.nmt.metrics`), as every step of the chapter is `mlrep nmt`'s."""

from __future__ import annotations

from mlrep.nmt.metrics import PATTERNS

__all__ = ["PATTERNS"]
