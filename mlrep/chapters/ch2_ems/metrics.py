"""The metric names Chapter 2's runs write (`mlrep ch2 evaluate` and `baseline`), which its
tables, claims and figures may read; `mlrep.report.metrics.write` refuses any other name."""

from __future__ import annotations

from mlrep.embed.metrics import PATTERNS as ENCODER_PATTERNS

PATTERNS: tuple[str, ...] = (
    *ENCODER_PATTERNS,
    # the training summary (grid points are judged on valid_loss; Table 2.14's Sec./1k Steps)
    "final_loss",
    "valid_loss",
    "sec_per_1k_steps",
    # Table 2.3: encoder parameters (inference), languages and parallel pairs trained on
    "parameters",
    "parameters_m",
    "languages",
    "parallel_pairs",
)
