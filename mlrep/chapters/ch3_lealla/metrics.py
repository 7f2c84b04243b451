"""The metric names Chapter 3's runs write (`mlrep embed evaluate`, `distill`, `reduce`),
which its tables and figures may read; `mlrep.report.metrics.write` refuses any other name."""

from __future__ import annotations

from mlrep.embed.metrics import PATTERNS as ENCODER_PATTERNS

# Tables 3.1/A.3's shape (L, d_h, d_ff, H: layers, dim, ffn_dim, heads) and P (parameters),
# Table 3.3's La. (languages): ENCODER_PATTERNS, which `mlrep embed evaluate` writes
PATTERNS: tuple[str, ...] = (*ENCODER_PATTERNS,)
