"""Case tables: one test sentence, its reference and each system's translation of it, as texts
a published table prints beside the thesis's (``texts`` in `mlrep.report.metrics`).

The sentence is a line of the test set: a 1-based line number, or 0 to find the line whose
reference is the published one. The thesis prints its references as text (full-width digits,
no word spaces), and the test set holds words, so the two are compared after Unicode NFKC and
with all whitespace removed (`normalized`). `write_case` stores the chosen line's source,
reference and every system's hypothesis under the names of `PATTERNS`, with the line number.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from mlrep.cliutil import non_negative
from mlrep.errors import MlrepError
from mlrep.io import read_lines
from mlrep.report.metrics import write

PREFIX = "case_"
SOURCE, REFERENCE = f"{PREFIX}source", f"{PREFIX}reference"
# the text names `write_case` writes (a system's: case_<name>), for the declaration of each
# chapter with a case table (template syntax: `mlrep.report.metrics.compile_template`)
PATTERNS: tuple[str, ...] = ("case_{name}",)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class CaseSettings:
    """A case table's sentence (params.yaml, per table: ``<section>.cases.<table>``)."""

    line: int = field(
        metadata={
            "type": non_negative,
            "help": "the test line shown (1-based); 0: the line with the published reference",
        }
    )


class CaseError(MlrepError):
    """A case that cannot be drawn: no such line, no line matching the published reference."""


def normalized(text: str) -> str:
    """`text` as the published/test comparison sees it: NFKC, no whitespace."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", text))


def find_line(references: list[str], published: str, where: str) -> int:
    """The 1-based line of the first reference equal to `published` (`normalized`); `where`
    names the reference file in the error when none is."""
    wanted = normalized(published)
    for number, line in enumerate(references, start=1):
        if normalized(line) == wanted:
            return number
    raise CaseError(
        f"{where}: no line matches the published reference {published!r} (after NFKC and "
        "whitespace removal); check that the test set is the thesis's, or give the line number"
    )


def published_text(path: Path, row: str, column: str) -> str:
    """The cell of `column` in the row of a published table (a CSV) that has a cell `row`."""
    with open(path, encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    if column not in header:
        raise CaseError(f"{path}: no column {column!r}; columns: {header}")
    found = [r for r in rows if row in (c.strip() for c in r)]
    if len(found) != 1:
        raise CaseError(f"{path}: {len(found)} rows labelled {row!r}; expected exactly one")
    return found[0][header.index(column)]


def write_case(
    out: Path,
    chapter: str,
    run: str,
    seed: int,
    scale: str,
    line: int,
    source: Path,
    reference: Path,
    systems: dict[str, Path],
    published: str | None = None,
) -> dict[str, str]:
    """Write the case's metrics.json and return its texts: line `line` (1-based), or where
    `line` is 0 the line whose reference is `published`, of `source`, `reference` and each
    system's hypotheses (name -> file, all aligned with the test set)."""
    references = read_lines(reference, CaseError)
    if line == 0:
        if published is None:
            raise CaseError("line 0 finds the published reference's line: give the reference")
        line = find_line(references, published, str(reference))
    if not 1 <= line <= len(references):
        raise CaseError(f"{reference}: line {line} is not in its {len(references)} lines")
    texts = {SOURCE: _line(source, line), REFERENCE: references[line - 1]}
    for name, path in systems.items():
        texts[PREFIX + name] = _line(path, line)
    write(out, chapter, run, seed, scale, {}, texts=texts, line=line)
    return texts


def _line(path: Path, line: int) -> str:
    lines = read_lines(path, CaseError)
    if line > len(lines):
        raise CaseError(f"{path}: {len(lines)} lines, so no line {line}; is it the test set's?")
    return lines[line - 1]
