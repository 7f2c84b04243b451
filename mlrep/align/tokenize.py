"""Word tokenization of aligner input until the preprocessing rules supply tokenized text.

Alignments are extracted on word-tokenized text (ch5 §3.2); ``moses`` runs sacremoses' port of
the Moses tokenizer per language (escaping off, so ``|`` and ``&`` stay readable), ``none``
trusts the input to be tokenized already (e.g. by `mlrep.text`'s segmenters for ja/zh).
"""

from __future__ import annotations

from collections.abc import Sequence

METHODS = ("moses", "none")


def lines(text: Sequence[str], lang: str, method: str) -> list[str]:
    if method == "none":
        return [" ".join(line.split()) for line in text]
    if method != "moses":
        raise ValueError(f"unknown tokenization {method!r}; choose one of {', '.join(METHODS)}")
    from sacremoses import MosesTokenizer

    tokenizer = MosesTokenizer(lang=lang.split("_")[0])
    return [tokenizer.tokenize(line, escape=False, return_str=True) for line in text]
