"""The metric names Chapter 5's runs write, which its tables, claims and figures may read: the
generic NMT ones (`mlrep.nmt.metrics`: tokenized BLEU per direction and its means) and the
encoder's retrieval P@1 on the validation sets (`mlrep nmt retrieval`, Tables C.4-C.9)."""

from __future__ import annotations

from mlrep.nmt.metrics import PATTERNS as NMT_PATTERNS

PATTERNS: tuple[str, ...] = (
    *NMT_PATTERNS,
    # retrieval: sentence P@1 over each pair's validation set and word P@1 over its w2w-aligned
    # units in 512-token batches, both directions averaged; and their means over the pairs
    "{sent|word}_p_at_1_{src}-{tgt}",
    "{sent|word}_p_at_1",
)
