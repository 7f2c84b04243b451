"""The aligners' input: fast_align's ``source ||| target`` lines, tokens split on whitespace.

Pairs an aligner cannot use (an empty side, a side longer than the length limit) are kept in
place and skipped: their output line is empty, as fast_align prints it, so line n of the output
always belongs to line n of the input, and `Bitext.skipped` counts them for the run's metadata.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mlrep.align.pharaoh import AlignmentFormatError, read_lines

SEPARATOR = " ||| "


@dataclass
class Bitext:
    source: list[list[str]]
    target: list[list[str]]
    usable: list[bool]
    skipped: Counter[str] = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.source)

    def kept(self) -> list[int]:
        return [n for n, ok in enumerate(self.usable) if ok]


def from_pairs(pairs: list[tuple[list[str], list[str]]], max_length: int) -> Bitext:
    """A bitext from token lists, marking empty and overlong pairs as skipped."""
    text = Bitext([], [], [])
    for source, target in pairs:
        reason = None
        if not source or not target:
            reason = "empty_side"
        elif max(len(source), len(target)) > max_length:
            reason = "over_max_length"
        if reason:
            text.skipped[reason] += 1
        text.source.append(source)
        text.target.append(target)
        text.usable.append(reason is None)
    return text


def split_pair(line: str, where: str) -> tuple[list[str], list[str]]:
    """The tokens of both sides of one ``src ||| tgt`` line."""
    parts = line.split("|||")
    if len(parts) != 2:
        raise AlignmentFormatError(
            f"{where}: expected 'source ||| target' (one '|||'), found {len(parts) - 1}; "
            "escape '|||' inside sentences before aligning"
        )
    return parts[0].split(), parts[1].split()


def read_bitext(path: Path, max_length: int) -> Bitext:
    """Read ``src ||| tgt`` lines; a line without the separator is an error naming the line."""
    lines = read_lines(path)
    return from_pairs(
        [split_pair(line, f"{path}:{n}") for n, line in enumerate(lines, 1)], max_length
    )


def _check_line_counts(left: list[str], right: list[str], source: Path, target: Path) -> None:
    if len(left) != len(right):
        raise AlignmentFormatError(
            f"{source} has {len(left)} lines but {target} has {len(right)}: the files must be "
            "line-aligned (one sentence pair per line)"
        )


def read_token_pairs(source: Path, target: Path) -> list[tuple[list[str], list[str]]]:
    """The tokens of each line of two line-aligned token files (mismatched line counts are an
    error); what the lexicon steps read, which need no ``|||`` lines."""
    left, right = read_lines(source), read_lines(target)
    _check_line_counts(left, right, source, target)
    return [(a.split(), b.split()) for a, b in zip(left, right, strict=True)]


def join_lines(left: list[str], right: list[str], source: Path, target: Path) -> list[str]:
    """``src ||| tgt`` lines from two token files (runs of spaces become one; mismatched
    line counts are an error)."""
    _check_line_counts(left, right, source, target)
    for name, lines in ((source, left), (target, right)):
        for number, line in enumerate(lines, start=1):
            if "|||" in line:
                raise AlignmentFormatError(
                    f"{name}:{number}: contains '|||', fast_align's separator; escape it first"
                )
    return [
        f"{' '.join(a.split())}{SEPARATOR}{' '.join(b.split())}"
        for a, b in zip(left, right, strict=True)
    ]
