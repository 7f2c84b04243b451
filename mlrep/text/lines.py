"""Line-oriented text files for the preprocessing steps: strict reading, shards, metadata.

Every step maps one input line to one output line so parallel files stay aligned. Bad input
is handled here once for all tools: invalid UTF-8 is an error naming file and line (a silent
replacement would change the text the thesis models see); empty lines and lines longer than
``max_chars`` are passed through as empty / unchanged and *counted* in the metadata
written beside the output (``OUTPUT.meta.json``), never fed to a library that may crash on them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mlrep.cliutil import non_negative, positive_int
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, count_lines, read_line_range
from mlrep.io import read_lines as read_text_lines

META_SUFFIX = ".meta.json"


class TextInputError(MlrepError):
    """An input text file that cannot be processed as it is."""


@dataclass(frozen=True)
class Limits:
    """params.yaml ``preprocess.max_chars`` and ``max_lines``: the options of the line steps.
    Only the steps that read the corpus take `max_lines` (later steps keep every line)."""

    max_chars: int = field(
        metadata={"type": positive_int, "help": "longer lines are passed through, not processed"}
    )
    max_lines: int = field(
        default=0, metadata={"type": non_negative, "help": "keep the input's first lines (0: all)"}
    )


@dataclass
class Counts:
    """What a step did to its lines; summed over shards by `gather`."""

    lines: int = 0
    processed: int = 0
    empty: int = 0  # written as empty lines
    overlong: int = 0  # longer than max_chars: passed through, not processed
    failed: int = 0  # given to the tool, which gave no analysis (e.g. no tree): passed through
    extra: dict[str, Any] = field(default_factory=dict)  # tool names, versions, settings

    def add(self, other: Counts) -> None:
        self.lines += other.lines
        self.processed += other.processed
        self.empty += other.empty
        self.overlong += other.overlong
        self.failed += other.failed
        self.extra = self.extra or other.extra


def read_lines(path: Path) -> list[str]:
    """All lines of a UTF-8 file without their line ends; bad input is a `TextInputError`."""
    return read_text_lines(path, TextInputError)


def read_block(
    path: Path, max_lines: int, shard: int | None, shards: int | None
) -> tuple[list[str], int]:
    """The lines of shard `shard` of `shards` (all when None) of the file's first `max_lines`
    lines (all when 0: the small scales' cap on text per file), and the file's length.

    The first lines are a fair sample because corpus files are ordered by a hash of the
    segment (mlrep.data.tiny_corpus); both sides of a pair keep the same lines. Only the
    shard's own lines are read into memory, so many shard jobs of a large corpus stay small.
    """
    total = count_lines(path, TextInputError)
    kept = min(total, max_lines) if max_lines else total
    block = range(kept) if shards is None else shard_range(kept, shard or 0, shards)
    return read_line_range(path, block.start, block.stop, TextInputError), total


def shard_range(total: int, shard: int, shards: int) -> range:
    """Line indices of shard `shard` (0-based) of `shards` contiguous, near-equal blocks."""
    if not 0 <= shard < shards:
        raise TextInputError(f"shard {shard} is outside 0..{shards - 1}")
    start = total * shard // shards
    return range(start, total * (shard + 1) // shards)


def process(
    lines: list[str],
    transform: Callable[[list[str]], list[str]],
    max_chars: int,
    passthrough: Callable[[str], str] = str,
    failed: Callable[[str], bool] | None = None,
) -> tuple[list[str], Counts]:
    """Apply `transform` to the lines it can take, in one batch (tools are faster batched).

    Empty lines stay empty; lines over `max_chars` become ``passthrough(line)`` (the line
    itself unless the output format needs otherwise): a bound on what a tool is given, so one
    runaway line cannot stall or exhaust a parser. `failed` tells outputs that carry no
    analysis (counted, not errors).
    """
    counts = Counts(lines=len(lines))
    todo: list[int] = []
    out = list(lines)
    for index, line in enumerate(lines):
        if not line.strip():
            counts.empty += 1
            out[index] = ""
        elif len(line) > max_chars:
            counts.overlong += 1
            out[index] = passthrough(line)
        else:
            todo.append(index)
    done = transform([lines[i] for i in todo])
    if len(done) != len(todo):
        raise TextInputError(f"tool returned {len(done)} lines for {len(todo)} inputs")
    for index, text in zip(todo, done, strict=True):
        out[index] = text
    counts.processed = len(todo)
    counts.failed = sum(1 for text in done if failed and failed(text))
    return out, counts


def write_output(path: Path, lines: list[str], counts: Counts) -> None:
    """Write `lines` and their metadata atomically (metadata last: it marks completion)."""
    if any("\n" in line for line in lines):
        raise TextInputError(f"{path}: a tool produced a line break inside a line")
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    atomic_write_text(meta_path(path), json.dumps(asdict(counts), indent=2, sort_keys=True) + "\n")


def meta_path(path: Path) -> Path:
    return path.with_name(path.name + META_SUFFIX)


def read_counts(path: Path) -> Counts:
    meta = meta_path(path)
    if not meta.exists():
        raise TextInputError(f"{meta}: missing; rebuild {path} with its mlrep text command")
    return Counts(**json.loads(meta.read_text(encoding="utf-8")))


def gather(parts: list[Path], out: Path) -> Counts:
    """Concatenate shard outputs in order and sum their metadata."""
    total = Counts()
    lines: list[str] = []
    for part in parts:
        lines.extend(read_lines(part))
        total.add(read_counts(part))
    if total.lines != len(lines):
        raise TextInputError(f"{out}: shards hold {len(lines)} lines, metadata {total.lines}")
    write_output(out, lines, total)
    return total
