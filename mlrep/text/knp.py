"""Reader for KNP's standard output: Juman++ words and KNP bunsetsu, as the thesis used them.

KNP prints one block per sentence: ``#`` comment lines, a ``* <n>D …`` line opening each
bunsetsu, ``+ <n>D …`` lines opening basic phrases, one morpheme per line (surface form first,
space-separated fields), and ``EOS``. ``@`` lines are Juman's alternative analyses and are
ignored. A morpheme whose surface is ``*`` or ``+`` is told apart from a bunsetsu/phrase line
by the dependency field (``-1D``, ``2P``, …) that only those lines have.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from mlrep.text.lines import TextInputError, read_lines
from mlrep.text.segment import Segmented

_BUNSETSU = re.compile(r"^\* -?\d+[DPIA](\s|$)")
_PHRASE = re.compile(r"^\+ -?\d+[DPIA](\s|$)")


def _surface(line: str) -> str:
    if line.startswith("\\ "):  # an escaped space (Juman writes "\ " for a blank)
        return ""
    return line.split(" ", 1)[0]


def read_knp(path: Path) -> Iterator[Segmented]:
    """Sentences of a KNP output file, in order, as words plus bunsetsu spans."""
    words: list[str] = []
    starts: list[int] = []
    for number, line in enumerate(read_lines(path), start=1):
        if line == "EOS":
            ends = [*starts[1:], len(words)] if starts else []  # an empty line: no bunsetsu
            spans = tuple((s, e) for s, e in zip(starts, ends, strict=True) if e > s)
            yield Segmented(tuple(words), spans)
            words, starts = [], []
        elif not line or line.startswith(("#", "@")) or _PHRASE.match(line):
            continue
        elif _BUNSETSU.match(line):
            starts.append(len(words))
        else:
            if not starts:
                raise TextInputError(
                    f"{path}:{number}: morpheme before any bunsetsu line ('* nD'); "
                    "is this KNP output (knp -tab) rather than plain Juman++ output?"
                )
            surface = _surface(line)
            if surface:
                words.append(surface)
    if words or starts:
        raise TextInputError(f"{path}: the last sentence has no EOS line (truncated file?)")
