"""The metric names OneAligner's runs write (``mlrep embed align-evaluate``), which its tables
may read; `mlrep.report.metrics.write` refuses any other name (template syntax:
`mlrep.report.metrics.compile_template`)."""

from __future__ import annotations

PATTERNS: tuple[str, ...] = (
    # Tatoeba P@1 xx→en per language (Tables 1, 3, 4, 5, 7, 9) and their mean ("Avg. Acc.")
    "tatoeba_{lang}",
    "tatoeba_avg",
    # New-Tatoeba (Table 6): P@1 per built pair (the paper's unprinted Table 10), the means
    # with and without English
    "new_tatoeba_{src}-{tgt}",
    "new_tatoeba_{eng|not_eng}",
    # BUCC-style mining F1 per language and its mean (Table 8)
    "bucc_{lang}",
    "bucc_avg",
    # the share of BUCC gold pairs among the pre-filter's candidates (100: every pair scored)
    "bucc_recall_{lang}",
    # the examples a fine-tuning's pairs offered before the budget (Figure 1's x)
    "train_pairs",
    # Figure 2's per-language points, runs top1-eng/<X> (`mlrep onealigner language-points`):
    # CC-100 size of X (tiny: its pretraining text), Top1 (Eng)'s mean over the pairs with X
    "cc100_gb",
    "new_tatoeba_acc",
)
