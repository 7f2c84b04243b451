"""The metric names the generic sentence-encoder evaluation writes, declared once for the
chapters that use it (2, and 3 next): each chapter's ``mlrep/chapters/<id>/metrics.py``
includes them (template syntax: `mlrep.report.metrics.compile_template`).
"""

from __future__ import annotations

PATTERNS: tuple[str, ...] = (
    # mlrep.embed.evaluate: Tatoeba P@1 per language, held-out bitext retrieval
    "tatoeba_{lang3}",
    "heldout_{lang}",
    "heldout_avg",
    # mlrep.embed.evaluate: each benchmark's mean over its languages
    "{tatoeba|un|bucc}_avg",
    # mlrep.embed.distill / train: a student's P, P_E, training throughput (LEALLA's speed)
    # and final loss
    "parameters",
    "encoder_parameters",
    "sentences_per_second",
    "sec_per_1k_steps",
    "final_loss",
    # `mlrep embed evaluate`: an encoder's shape (L, d_h, d_ff, H) by the StudentConfig field
    # names (a teacher's: its width, dim) and the languages of its prepared data (English too)
    "layers",
    "dim",
    "ffn_dim",
    "heads",
    "languages",
    # mlrep.embed.benchmarks: Flores pairs and group means, BUCC F1, ParaCrawl and UN P@1
    "flores_{src}-{tgt}",
    "flores_{group}",
    "bucc_{lang}",
    "paracrawl_{lang}",
    "un_{lang}",
    # mlrep.embed.benchmarks: zero-shot classification, train on src and test on tgt
    "{mldoc|amazon_cls|amazon_marc}_{src}-{tgt}",
    "{mldoc|amazon_cls|amazon_marc}_{group}_{src}-{tgt}",
)
