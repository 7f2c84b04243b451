"""The metric names Chapter 5's runs write, which its tables, claims and figures may read: the
generic NMT ones (`mlrep.nmt.metrics`: tokenized BLEU per direction and its means) and the
encoder's retrieval P@1 on the validation sets (`mlrep nmt retrieval`, Tables C.4-C.9), and
Table 5.1's corpus sizes and word links per pair (`mlrep.chapters.ch5_wordcl.corpora`)."""

from __future__ import annotations

from mlrep.nmt.metrics import PATTERNS as NMT_PATTERNS

PATTERNS: tuple[str, ...] = (
    *NMT_PATTERNS,
    # retrieval: sentence P@1 over each pair's validation set and word P@1 over its w2w-aligned
    # units in 512-token batches, both directions averaged; and their means over the pairs
    "{sent|word}_p_at_1_{src}-{tgt}",
    "{sent|word}_p_at_1",
    # Table 5.1, run corpora/<pair> (seed 0): training and OD pairs, the units of each kind of
    # links over the training lines and per training line
    "{train|od}_pairs",
    "n_{w2w|fa}",
    "{w2w|fa}_per_sentence",
)
