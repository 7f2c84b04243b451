"""The metric names Chapter 3's runs write (`mlrep embed evaluate`, `distill`, `reduce`),
which its tables and figures may read; `mlrep.report.metrics.write` refuses any other name."""

from __future__ import annotations

from mlrep.embed.metrics import PATTERNS as ENCODER_PATTERNS

PATTERNS: tuple[str, ...] = (
    *ENCODER_PATTERNS,
    # Tables 3.1/A.3: a run's shape (L, d_h, d_ff, H) by the StudentConfig field names, and P
    "layers",
    "dim",
    "ffn_dim",
    "heads",
    "parameters",
    # Table 3.3's La.: languages trained on
    "languages",
)
