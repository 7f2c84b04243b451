"""Pharaoh alignment text (``0-0 1-2 …``) and gold files with sure and possible links.

A link ``i-j`` joins source word i and target word j (0-based), the orientation fast_align
prints in both directions and atools expects. Gold files mark possible links ``i?j``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mlrep.errors import MlrepError
from mlrep.io import read_lines as read_text_lines

Link = tuple[int, int]
_LINK = re.compile(r"^(\d+)([-?])(\d+)$")


class AlignmentFormatError(MlrepError):
    """An alignment or bitext file that cannot be read; the message names file, line and fix."""


@dataclass(frozen=True)
class GoldLine:
    """The gold links of one sentence pair: sure links are also possible (S ⊆ P)."""

    sure: frozenset[Link]
    possible: frozenset[Link]


def format_links(links: Iterable[Link]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(set(links)))


def _tokens(line: str, where: str) -> Iterator[tuple[int, str, int]]:
    for token in line.split():
        match = _LINK.match(token)
        if not match:
            raise AlignmentFormatError(
                f"{where}: {token!r} is not a link; expected i-j (sure) or i?j (possible)"
            )
        yield int(match.group(1)), match.group(2), int(match.group(3))


def parse_links(line: str, where: str = "<links>") -> frozenset[Link]:
    """The links of one Pharaoh line; possible-link marks are refused (test output has none)."""
    links = set()
    for i, mark, j in _tokens(line, where):
        if mark == "?":
            raise AlignmentFormatError(f"{where}: {i}?{j} is a gold 'possible' link, not a link")
        links.add((i, j))
    return frozenset(links)


def parse_gold(line: str, where: str = "<gold>") -> GoldLine:
    sure, possible = set(), set()
    for i, mark, j in _tokens(line, where):
        possible.add((i, j))
        if mark == "-":
            sure.add((i, j))
    return GoldLine(frozenset(sure), frozenset(possible))


def read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 text file without their newlines; bad input is an AlignmentFormatError."""
    return read_text_lines(path, AlignmentFormatError)


def read_alignments(path: Path) -> list[frozenset[Link]]:
    return [parse_links(line, f"{path}:{n}") for n, line in enumerate(read_lines(path), 1)]


def read_gold(path: Path) -> list[GoldLine]:
    return [parse_gold(line, f"{path}:{n}") for n, line in enumerate(read_lines(path), 1)]
