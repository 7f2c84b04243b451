"""The metric names Chapter 7's runs write, which its tables, claims and figure may read:
the generic NMT ones (`mlrep.nmt.metrics`), as every step of the chapter is `mlrep nmt`'s,
and those of the interlingua steps.

The latter are written by `mlrep nmt score` and `mlrep nmt metrics` for any interlingua
model, so they belong in `mlrep.nmt.metrics.PATTERNS` once the interlingua model lands there;
they are declared here until then (a name declared twice is harmless).
"""

from __future__ import annotations

from mlrep.nmt.metrics import PATTERNS as NMT_PATTERNS

PATTERNS: tuple[str, ...] = (
    *NMT_PATTERNS,
    # score: the means over the supervised directions from and to English (Tables 7.2, 7.4)
    "{from_en|to_en}_bleu",
    # metrics --gold-scores: the non-English→English directions decoded with the gold
    # (English reference) interlingua length, and their mean (Table 7.5)
    "gold_bleu_{src}-{tgt}",
    "gold_to_en_bleu",
    # metrics, from the `.len` files: the length predictor's accuracy (%) and mean absolute
    # difference from the gold length per non-English source language, and over all (Table 7.5)
    "len_{acc|diff}_{src}",
    "len_{acc|diff}",
    # metrics, from the validation log: the NMT loss at the end of epoch k (Fig 7.3); for
    # MNMT fairseq's `loss`, for an interlingua model its criterion's `nmt_loss`
    "valid_nmt_loss_{k}",
)
