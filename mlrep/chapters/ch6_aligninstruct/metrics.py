"""The metric names Chapter 6's runs write, which its tables, claims and figures may read
(`mlrep.chapters.ch6_aligninstruct.scores` makes the scores' names; the test sets are
OPUS-100 and Flores-200, the metrics BLEU, chrF++ and COMET)."""

from __future__ import annotations

PATTERNS: tuple[str, ...] = (
    # per direction, each test set and metric (Tables D.5-D.12)
    "{opus|flores}_{bleu|chrf|comet}_{src}-{tgt}",
    # BLOOMZ+24: the means over the languages of en→xx and xx→en (Tables 6.2-6.5, D.3);
    # BLOOMZ+3 (OPUS only) has these two besides its groups (Tables 6.6, D.1, D.4, D.8-D.12)
    "{opus|flores}_{bleu|chrf|comet}_{en-xx|xx-en}",
    "opus_{bleu|chrf|comet}_{overall|seen-seen|seen-unseen|unseen-seen|unseen-unseen}",
    "opus_{bleu|chrf|comet}_{en-seen|en-unseen|seen-en|unseen-en}",
    # Figure 6.1: the mean of a BLOOMZ+24 run's four COMET columns
    "comet_avg",
    # Figures 6.3, D.1: per layer, Δ1 = cos(MTInstruct) − cos(no FT), Δ2 = cos(MT+Align) −
    # cos(MTInstruct) of parallel validation sentences' mean-pooled states
    "delta{1|2}_l{k}",
)
