"""One chapter's headline numbers as JSON: the metrics DVC shows for the chapter's stage.

`dvc metrics show`, `dvc metrics diff` and `dvc exp show` compare these files across commits and
experiments, so they hold what a researcher compares there, not every number a run writes (the
per-seed metrics.json files in the run folders keep every language and direction, and stay what
the report reads). The numbers come from the report's own machinery, so they are the ones its
tables and ledger print:

* per table of the chapter (``tables/<chapter>.yaml``), the measured averages the thesis
  prints: its average columns and rows (``Avg.``, ``Tatoeba Avg. (58)``, ``Pre. avg.``) as
  `fill` computes them, under ``<table>.<column>.<row>``;
* per claim of the chapter (``claims.yaml``), the measured sides and the verdict, under
  ``claims.<id>.a``, ``claims.<id>.b`` and ``claims.<id>.verdict``.

DVC joins the levels of the JSON with dots, so names are built without any: a table is its id
without ``thesis-`` and with ``_`` for other characters (``thesis-table-8.2`` → ``table_8_2``,
``ems-paper-table-4`` → ``ems_paper_table_4``), a column or row is lower-cased with ``-`` for
other characters (``Tatoeba Avg. (58)`` → ``tatoeba-avg-58``; rows by their table key, e.g.
``prenorm-avg``). A value that was not measured is left out, a side of a claim too (a cited
side, quoted from a paper, as well); a verdict
is always there (``not run at this scale`` until both sides ran).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mlrep.io import atomic_write_text
from mlrep.report import claims, fill, reference, tables
from mlrep.report.metrics import collect
from mlrep.report.tables import AVERAGE

DIGITS = 4  # rounding of every value: differences below it are noise in a comparison


def table_name(table_id: str) -> str:
    """A table's key: ``thesis-table-E.5`` → ``table_E_5``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", table_id.removeprefix("thesis-"))


def label_name(text: str) -> str:
    """A column's or row's key: ``S-ENC-T-DEC w/ Res. avg.`` → ``s-enc-t-dec-w-res-avg``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def averages(table: fill.FilledTable) -> dict[str, dict[str, float]]:
    """The measured averages `table` prints, ``{column: {row: value}}``.

    `fill` recomputes printed average columns and rows (``aggregate`` cells); a column defined
    as the mean of several result keys is an average too when its header says so.
    """
    out: dict[str, dict[str, float]] = {}
    for row, cells in zip(table.row_keys, table.cells, strict=True):
        for column, cell in zip(table.value_columns, cells, strict=True):
            if cell.measured is not None and (cell.aggregate or AVERAGE.match(column)):
                value = round(cell.measured, DIGITS)
                out.setdefault(label_name(column), {})[label_name(row)] = value
    return out


def verdicts(ledger: list[claims.Verdict]) -> dict[str, dict[str, float | str]]:
    """Per claim its measured sides (those that ran: not a figure claim's b, the number it
    tests against), a correlation's measured r, and its verdict."""
    out: dict[str, dict[str, float | str]] = {}
    for verdict in ledger:
        sides = {"a": verdict.measured_a}
        if not claims.figure_claim(verdict.claim):
            sides["b"] = verdict.measured_b
        entry: dict[str, float | str] = {
            side: round(value, DIGITS)
            for side, value in sides.items()
            if value is not None and side not in verdict.cited  # a cited side never ran
        }
        r = (verdict.correlation or {}).get("measured_r")
        if r is not None:
            entry["r"] = round(r, DIGITS)
        out[verdict.claim["id"]] = {**entry, "verdict": verdict.outcome}
    return out


def summarise(
    results_dir: Path, reference_dir: Path, chapter: str, scale: str, bootstrap: fill.Bootstrap
) -> dict[str, Any]:
    """The headline numbers of `chapter` at `scale` (module docstring), as nested dicts."""
    results = collect(results_dir, scale)
    published = reference.load_all(reference_dir)
    definitions = tables.load(published)
    chapter_claims = [c for c in claims.load() if c["chapter"] == chapter]
    own = [tid for tid, d in definitions.items() if d.chapter == chapter]
    needed = {*own, *(side["table"] for c in chapter_claims for side in claims.cell_sides(c))}
    filled = {
        tid: fill.fill(definitions[tid], published[tid], results, bootstrap)
        for tid in needed & definitions.keys()
    }
    summary: dict[str, Any] = {}
    for tid in own:
        found = averages(filled[tid])
        if found:
            summary[table_name(tid)] = found
    if chapter_claims:
        summary["claims"] = verdicts(claims.ledger(chapter_claims, filled, bootstrap, results))
    return summary


def count(summary: dict[str, Any]) -> int:
    """How many values `dvc metrics show` lists for `summary` (its leaves)."""
    return sum(count(v) if isinstance(v, dict) else 1 for v in summary.values())


def write(
    results_dir: Path,
    reference_dir: Path,
    chapter: str,
    scale: str,
    bootstrap: fill.Bootstrap,
    out: Path,
) -> dict[str, Any]:
    summary = summarise(results_dir, reference_dir, chapter, scale, bootstrap)
    atomic_write_text(out, json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary
