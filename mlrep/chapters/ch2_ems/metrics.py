"""The metric names Chapter 2's runs write (`mlrep ch2 evaluate` and `baseline`), which its
tables, claims and figures may read; `mlrep.report.metrics.write` refuses any other name."""

from __future__ import annotations

from mlrep.embed.metrics import PATTERNS as ENCODER_PATTERNS

PATTERNS: tuple[str, ...] = (
    *ENCODER_PATTERNS,
    # the training summary (grid points are judged on valid_loss; the encoder's final_loss and
    # sec_per_1k_steps, Table 2.14's Sec./1k Steps, are ENCODER_PATTERNS')
    "valid_loss",
    # Table 2.3: encoder parameters in millions and parallel pairs trained on (parameters and
    # languages are ENCODER_PATTERNS')
    "parameters_m",
    "parallel_pairs",
)
