"""The aligners' input: fast_align's ``source ||| target`` lines, tokens split on whitespace.

Pairs an aligner cannot use (an empty side, a side longer than the length limit) are kept in
place and skipped: their output line is empty, as fast_align prints it, so line n of the output
always belongs to line n of the input, and `Bitext.skipped` counts them for the run's metadata.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from mlrep.align.pharaoh import AlignmentFormatError, read_lines
from mlrep.io import atomic_file, count_lines, decode_line

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


def _check_line_counts(left: int, right: int, source: Path, target: Path) -> None:
    if left != right:
        raise AlignmentFormatError(
            f"{source} has {left} lines but {target} has {right}: the files must be "
            "line-aligned (one sentence pair per line)"
        )


def read_token_pairs(source: Path, target: Path) -> list[tuple[list[str], list[str]]]:
    """The tokens of each line of two line-aligned token files (mismatched line counts are an
    error); what the lexicon steps read, which need no ``|||`` lines."""
    left, right = read_lines(source), read_lines(target)
    _check_line_counts(len(left), len(right), source, target)
    return [(a.split(), b.split()) for a, b in zip(left, right, strict=True)]


def joined_lines(source: Path, target: Path) -> Iterator[str]:
    """``src ||| tgt`` lines from two token files, streamed, so that out-of-domain corpora of
    millions of lines join in flat memory (runs of spaces become one; mismatched line counts
    are an error before the first line)."""
    _check_line_counts(
        count_lines(source, AlignmentFormatError),
        count_lines(target, AlignmentFormatError),
        source,
        target,
    )
    with source.open("rb") as left, target.open("rb") as right:
        for number, sides in enumerate(zip(left, right, strict=True), start=1):
            joined = []
            for name, raw in zip((source, target), sides, strict=True):
                line = decode_line(raw, name, number, AlignmentFormatError)
                if "|||" in line:
                    raise AlignmentFormatError(
                        f"{name}:{number}: contains '|||', fast_align's separator; escape it first"
                    )
                joined.append(" ".join(line.split()))
            yield SEPARATOR.join(joined)


def write_shards(lines: Iterable[str], total: int, outs: list[Path]) -> None:
    """`total` lines into consecutive shards of equal size (the last one shorter), every
    shard replaced only once all are written."""
    per_shard = -(-total // len(outs)) if total else 0
    with ExitStack() as stack:
        handles = [
            stack.enter_context(stack.enter_context(atomic_file(out)).open("w", encoding="utf-8"))
            for out in outs
        ]
        for number, line in enumerate(lines):
            handles[number // per_shard].write(line + "\n")
