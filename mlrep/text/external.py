"""Analyses made outside the workflow (KNP, Enju output) lined up with the corpus lines.

Users who have Juman++/KNP or Enju parse a corpus file themselves, one sentence per line, and
place the output where the workflow looks for it (`mlrep.paths.Paths.external_analysis`);
the `segment` and `parse` steps then take each line's analysis from that file instead of
running GiNZA or spaCy, so sharding, ``max_lines``, ``max_chars`` and the counts stay those of
the substitute tools. A file made from another corpus, or one that skipped or split a line,
would silently misalign every later sentence, so each sentence's letters and digits are
compared with its corpus line (NFKC, ignoring spaces and punctuation, which the tools may
rewrite: Juman++ escapes spaces, Enju may rewrite quotes).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from mlrep.text.lines import TextInputError, read_lines

T = TypeVar("T")


def letters(text: str) -> str:
    """The letters and digits of `text`, NFKC-normalised: what any tokenizer keeps."""
    return "".join(c for c in unicodedata.normalize("NFKC", text) if c.isalnum())


def line_up(
    analyses: Sequence[T], corpus: Sequence[str], source: Path, words: Callable[[T], Sequence[str]]
) -> dict[str, T]:
    """Corpus line → its analysis, for the first ``len(analyses)`` lines of the corpus."""
    if len(analyses) > len(corpus):
        raise TextInputError(
            f"{source}: {len(analyses)} sentences for a corpus of {len(corpus)} lines; "
            "it must hold one sentence per corpus line, in order"
        )
    table: dict[str, T] = {}
    for number, (line, analysis) in enumerate(zip(corpus, analyses, strict=False), start=1):
        text = "".join(words(analysis))
        if letters(text) != letters(line):
            raise TextInputError(
                f"{source}: sentence {number} reads {text[:60]!r} but corpus line {number} is "
                f"{line[:60]!r}; parse the corpus file itself, one sentence per line"
            )
        table.setdefault(line, analysis)
    return table


def look_up(table: dict[str, T], lines: Sequence[str], source: Path) -> list[T]:
    """The analyses of `lines`; a line past the end of the file is an error."""
    for line in lines:
        if line not in table:
            raise TextInputError(
                f"{source}: covers {len(table)} distinct lines, not {line[:60]!r}; parse every "
                "line the step reads (preprocess.max_lines)"
            )
    return [table[line] for line in lines]


def analyser(
    analyses: Sequence[T], corpus: Path, source: Path, words: Callable[[T], Sequence[str]]
) -> Callable[[Sequence[str]], list[T]]:
    """``analyse(batch)``: the analyses of `source` for lines of the corpus file `corpus`, in
    place of running a tool on them (checked against the corpus by `line_up`)."""
    table = line_up(analyses, read_lines(corpus), source, words)
    return lambda batch: look_up(table, batch, source)
