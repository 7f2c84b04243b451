"""Fill a defined table: measured cells from results, aggregates, bolding, consistency flags.

Aggregates (an ``avg.`` column, an ``avg.`` row) are recomputed from the cells they summarise,
for the measured side and for the published side alike; a printed average that disagrees with
the mean of its own printed cells by more than one unit of its last digit is flagged, not
trusted. A delta cell (a − b of two measured values of its row) is computed the same way: from
measured values only, its printed Δ checked against its printed operands where both are printed.
A cited row (`TableDef.rows`) is never looked up: its cells keep their printed numbers, read
``cited``, and so are never bold or significant on the measured side; a row bound to another
chapter reads that chapter's results.
A *text* cell reads a named text of a run (metrics.json ``texts``: a case table's sentence and
its translations) at the lowest seed found: it has no value, so it is never averaged, bolded,
tested for significance or read by a claim.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from mlrep.cliutil import positive_int
from mlrep.report.metrics import Results, joint_signature
from mlrep.report.reference import PublishedTable, decimals, number
from mlrep.report.stats import SentenceSet, corpus_bleu, p_exceeds, paired_differences
from mlrep.report.tables import AVERAGE, FLOOR_ROW, CellKey, TableDef

NOT_RUN = "not run"
PUBLISHED_ONLY = "published only"
CITED = "cited"
BLANKS = ("-", "–", "—")
Bootstrap = tuple[int, int]  # (resamples, random seed) of the paired bootstrap


@dataclass(frozen=True)
class ReportSettings:
    """params.yaml ``report``: the options of ``mlrep report build`` and ``summary``."""

    bootstrap_samples: int = field(
        metadata={"type": positive_int, "help": "paired bootstrap resamples"}
    )
    bootstrap_seed: int = field(metadata={"help": "random seed of the bootstrap"})


def bootstrap_of(config: Mapping[str, Any]) -> Bootstrap:
    """The bootstrap of the ``report`` section of params.yaml (the report and the chapter
    summaries test claims with the same one, so their verdicts agree)."""
    return int(config["bootstrap_samples"]), int(config["bootstrap_seed"])


@dataclass
class Cell:
    published: str
    measured: float | None = None
    seeds: dict[int, float] = field(default_factory=dict)
    bleu_stats: dict[int, list[list[float]]] = field(default_factory=dict)
    chrf_stats: dict[int, list[list[float]]] = field(default_factory=dict)
    sentence_scores: dict[int, list[float]] = field(default_factory=dict)
    groups: dict[int, list[tuple[str, int]]] = field(default_factory=dict)  # metrics.py
    signatures: set[str] = field(default_factory=set)  # of its metrics, at every seed read
    aggregate: bool = False
    delta: bool = False
    missing: int = 0  # operands of an aggregate that were not run
    present: int = 0  # operands of an aggregate that were
    flag: str | None = None
    published_only: bool = False  # a column no run measures (TableDef.published_only)
    cited: str | None = None  # the source of a row quoted from prior work (TableDef.rows)
    pending: str | None = None  # why a run has no value yet (metrics.json ``pending``)
    bold_measured: bool = False
    bold_published: bool = False
    p_value: float | None = None
    text: str | None = None  # a text cell's measured text (metrics.json ``texts``)
    text_seed: int | None = None  # the seed it was read at

    def clear_measured(self) -> None:
        """Drop what was measured (value, seeds, per-sentence data): an aggregate or a delta
        recomputes its value from other cells and has no sentences of its own."""
        self.measured, self.seeds = None, {}
        self.bleu_stats, self.chrf_stats, self.sentence_scores, self.groups = {}, {}, {}, {}
        self.signatures = set()

    def test_sets(self, seeds: list[int], kind: str) -> list[SentenceSet] | None:
        """The cell's per-sentence data `kind` (``bleu_stats``, ``chrf_stats`` or
        ``sentence_scores``) at `seeds` as test sets whose `quantity` is the cell's value over
        those seeds: one per group (a direction) of its metric, weighted equally; None if a
        seed lacks the data or the seeds disagree on the groups."""
        data: dict[int, list] = getattr(self, kind)
        if not seeds or any(s not in data for s in seeds):
            return None
        layouts = {s: self.groups.get(s) or [("", len(data[s]))] for s in seeds}
        layout = layouts[seeds[0]]
        if any(other != layout for other in layouts.values()):
            return None
        stacked = np.asarray([data[s] for s in seeds], dtype=float).reshape(
            len(seeds), sum(n for _, n in layout), -1
        )
        bounds = np.cumsum([0] + [n for _, n in layout])
        return [
            SentenceSet(stacked[:, start:end], 1 / len(layout))
            for start, end in itertools.pairwise(bounds)
        ]

    @property
    def published_value(self) -> float | None:
        return number(self.published)

    @property
    def status(self) -> str:
        if self.measured is not None or self.text is not None:
            return "measured"
        if self.cited:
            return CITED
        if self.published_only:
            return PUBLISHED_ONLY
        if self.pending:
            return self.pending
        return f"partial ({self.missing} cells not run)" if self.present else NOT_RUN


@dataclass
class FilledTable:
    definition: TableDef
    published: PublishedTable
    scale: str
    row_keys: list[str]
    cells: list[list[Cell]]  # value columns only, one list per row
    runs_used: set[tuple[str, str]] = field(default_factory=set)
    # what stand-in data the measured side came from (the build reads it from provenance)
    stand_ins: list[str] = field(default_factory=list)
    # the same table filled with each metric's floor (`Results.floors`); None in a floor table
    floor: FilledTable | None = None

    @property
    def value_columns(self) -> list[str]:
        return self.published.header[self.definition.labels :]

    def labels(self, index: int) -> list[str]:
        """A row's label cells; where at this scale the row measures something else than its
        label names (`TableDef.measured_as`), the last one says what."""
        labels = list(self.published.rows[index][: self.definition.labels])
        stands = self.definition.measured_as(self.row_keys[index], self.scale)
        if stands:
            labels[-1] = f"{labels[-1]} (measured at scale {self.scale}: {stands})"
        return labels

    def cell(self, row_key: str, column: str) -> Cell:
        return self.cells[self.row_keys.index(row_key)][self.value_columns.index(column)]

    def signatures(self) -> dict[str, list[tuple[int, int]]]:
        """Each scorer signature behind the measured cells (`joint_signature` of a cell's),
        with the (row, value column) of its cells, in the order of their first cell, column
        by column: how the table's numbers were scored (metrics.json ``signatures``)."""
        found: dict[str, list[tuple[int, int]]] = {}
        for column in range(len(self.value_columns)):
            for row, cells in enumerate(self.cells):
                cell = cells[column]
                if cell.measured is not None and cell.signatures:
                    found.setdefault(joint_signature(cell.signatures), []).append((row, column))
        return found

    @property
    def flags(self) -> list[str]:
        return [
            f"row {key}, column {column}: {cell.flag}"
            for key, row in zip(self.row_keys, self.cells, strict=True)
            for column, cell in zip(self.value_columns, row, strict=True)
            if cell.flag
        ]


def _measure(keys: list[CellKey], results: Results, chapter: str, cell: Cell) -> set:
    """Fill `cell` with the mean over keys of the mean over seeds; return the runs read."""
    per_key: list[dict[int, float]] = []
    used = set()
    for key in keys:
        values = {}
        for result in sorted(results.seeds(chapter, key.run), key=lambda r: r.seed):
            if key.seed is not None and result.seed != key.seed:
                continue
            if len(keys) == 1 and key.metrics[0] in result.texts:  # a text: the lowest seed's
                if cell.text is None:
                    cell.text, cell.text_seed = result.texts[key.metrics[0]], result.seed
                    used.add((chapter, key.run))
                continue
            waiting = [result.pending[m] for m in key.metrics if m in result.pending]
            if waiting:
                cell.pending = waiting[0]
            if all(m in result.metrics for m in key.metrics):
                values[result.seed] = statistics.fmean(result.metrics[m] for m in key.metrics)
                used.add((chapter, key.run))
                cell.signatures |= {
                    result.signatures[m] for m in key.metrics if m in result.signatures
                }
                if len(keys) == 1 and len(key.metrics) == 1:  # one metric: its sentences
                    name = key.metrics[0]
                    if name in result.bleu_stats:
                        cell.bleu_stats[result.seed] = result.bleu_stats[name]
                    if name in result.chrf_stats:
                        cell.chrf_stats[result.seed] = result.chrf_stats[name]
                    if name in result.sentence_scores:
                        cell.sentence_scores[result.seed] = result.sentence_scores[name]
                    if name in result.groups:
                        cell.groups[result.seed] = result.groups[name]
        per_key.append(values)
    if all(per_key):
        cell.measured = statistics.fmean(statistics.fmean(v.values()) for v in per_key)
        common = set.intersection(*(set(v) for v in per_key))
        cell.seeds = {s: statistics.fmean(v[s] for v in per_key) for s in sorted(common)}
    return used


def _tolerance(cells: list[Cell]) -> float:
    """One unit of the coarsest printed digit: arithmetic on rounded cells moves by that much."""
    return 10 ** -min(decimals(c.published) for c in cells) + 1e-9


def _combine(cell: Cell, operands: list[Cell]) -> None:
    """Make `cell` the mean of `operands` (measured side) and check its printed value."""
    cell.aggregate = True
    cell.clear_measured()
    # the average of columns no run measures is not measured either
    cell.published_only = bool(operands) and all(o.published_only for o in operands)
    # a printed "-" is a structural blank (a diagonal, a system without that test): the
    # thesis's averages skip it, so ours do too
    operands = [o for o in operands if o.published.strip() not in BLANKS]
    measured = [o for o in operands if o.measured is not None]
    cell.present, cell.missing = len(measured), len(operands) - len(measured)
    if measured and not cell.missing:
        cell.measured = statistics.fmean(o.measured for o in measured)
        common = set.intersection(*(set(o.seeds) for o in measured))
        cell.seeds = {s: statistics.fmean(o.seeds[s] for o in measured) for s in sorted(common)}
    printed = cell.published_value
    values = [o.published_value for o in operands]
    if printed is not None and values and all(v is not None for v in values):
        mean = statistics.fmean(values)
        if abs(mean - printed) > _tolerance([cell, *operands]):
            cell.flag = (
                f"printed {cell.published}; the mean of its {len(values)} cells is {mean:.2f}"
            )


def _aggregate_rows(filled: FilledTable) -> None:
    """Rows labelled avg. are the mean of the rows above them in the same group.

    Aggregate columns are left to `_aggregate_columns`, so a corner cell is the mean of its
    row's (recomputed) averages, as the thesis's overall averages are.
    """
    definition, rows = filled.definition, filled.published.rows
    start = 0
    for index, row in enumerate(rows):
        if not AVERAGE.match(row[definition.labels - 1].strip()):
            continue
        group = row[0] if definition.labels > 1 else None
        members = [
            i
            for i in range(start, index)
            if (group is None or rows[i][0] == group)
            and not AVERAGE.match(rows[i][definition.labels - 1])
        ]
        for column, name in enumerate(filled.value_columns):
            if name not in definition.aggregates:
                _combine(filled.cells[index][column], [filled.cells[i][column] for i in members])
        start = index + 1


def _aggregate_columns(filled: FilledTable) -> None:
    columns = filled.value_columns
    for cells in filled.cells:
        for column, operands in filled.definition.aggregates.items():
            _combine(cells[columns.index(column)], [cells[columns.index(o)] for o in operands])


def _operand(filled: FilledTable, results: Results, index: int, operand: str) -> Cell:
    """A delta's operand in row `index`: a cell of the table, or a result key measured here."""
    columns = filled.value_columns
    if operand in columns:
        return filled.cells[index][columns.index(operand)]
    definition, row_key = filled.definition, filled.row_keys[index]
    row = filled.published.rows[index]
    key = definition.result_key(filled.published.header, row, row_key, operand)
    cell = Cell(published="")
    if not definition.cited(row_key):
        filled.runs_used |= _measure([key], results, definition.chapter_of(row_key), cell)
    return cell


def _deltas(filled: FilledTable, results: Results) -> None:
    """Fill every delta cell with a − b of its row's measured operands (None if either is)."""
    columns = filled.value_columns
    for index, cells in enumerate(filled.cells):
        for column, (a, b) in filled.definition.deltas.items():
            cell = cells[columns.index(column)]
            cell.delta = True
            cell.clear_measured()
            first, second = _operand(filled, results, index, a), _operand(filled, results, index, b)
            if first.measured is not None and second.measured is not None:
                cell.measured = first.measured - second.measured
                common = sorted(set(first.seeds) & set(second.seeds))
                cell.seeds = {s: first.seeds[s] - second.seeds[s] for s in common}
            printed, pa, pb = cell.published_value, first.published_value, second.published_value
            if printed is None or pa is None or pb is None or b not in columns:
                continue  # the printed Δ can be checked only against printed operands
            if abs(pa - pb - printed) > _tolerance([cell, first, second]):
                cell.flag = f"printed {cell.published}; {a} − {b} is {pa - pb:+.2f}"


def _bold(filled: FilledTable) -> None:
    """Bold the best `bold_top` values per column on each side (ties share a place).

    Delta and ``unranked`` columns are differences, sizes or settings, not scores: never bold.
    """
    definition = filled.definition
    for column_index, column in enumerate(filled.value_columns):
        if column in definition.deltas or column in definition.unranked:
            continue
        column_cells = [
            row[column_index]
            for key, row in zip(filled.row_keys, filled.cells, strict=True)
            if key not in definition.bold_exclude and key not in definition.reference_rows
        ]
        pick = min if column in definition.lower_is_better else max
        for side in ("measured", "published"):
            values = [
                (c.measured if side == "measured" else c.published_value) for c in column_cells
            ]
            present = sorted({v for v in values if v is not None}, reverse=pick is max)
            if len(present) < 2:
                continue
            # the N-th best distinct value; fewer values than N bold all but the worst
            cutoff = present[min(definition.bold_top, len(present) - 1) - 1]
            for cell, value in zip(column_cells, values, strict=True):
                if value is not None and (value >= cutoff if pick is max else value <= cutoff):
                    setattr(cell, f"bold_{side}", True)


def _baselines(filled: FilledTable) -> list[str | None]:
    """Per row, the key of the baseline row it is tested against (None: untested). The
    definition names one baseline row, or a list of them for a table of several groups
    (Chapter 5's MLSC and mBART FT rows): each row is then tested against the last baseline
    listed above it, as its label modifies the nearest base row above it."""
    spec = filled.definition.significance
    named = spec.get("baseline") if spec else None
    wanted = [str(b) for b in (named if isinstance(named, list) else [named] if named else [])]
    current = wanted[0] if len(wanted) == 1 else None
    out: list[str | None] = []
    for key in filled.row_keys:
        if key in wanted:
            current = key
            out.append(None)
        elif key in filled.definition.reference_rows or current not in filled.row_keys:
            out.append(None)
        else:
            out.append(current)
    return out


def _significance(filled: FilledTable, bootstrap: Bootstrap) -> None:
    """p of each cell against its baseline row's (`_baselines`), on the BLEU statistics of
    their common seeds: the same quantity (mean over directions and seeds) as the cells
    print."""
    for row, baseline_key in zip(filled.cells, _baselines(filled), strict=True):
        if baseline_key is None:
            continue
        baseline = filled.cells[filled.row_keys.index(baseline_key)]
        for cell, base in zip(row, baseline, strict=True):
            seeds = sorted(set(cell.bleu_stats) & set(base.bleu_stats))
            ours, theirs = cell.test_sets(seeds, "bleu_stats"), base.test_sets(seeds, "bleu_stats")
            if cell.measured is None or base.measured is None or ours is None or theirs is None:
                continue
            try:
                cell.p_value = p_exceeds(paired_differences(ours, theirs, corpus_bleu, *bootstrap))
            except ValueError:  # not the same test sentences: no paired test
                continue


def _floor_row(filled: FilledTable, floor: FilledTable) -> None:
    """The floor row: per measured column, the mean over rows of their cells' floors (the
    same test sets give every row one floor: chance, or the copied sources' BLEU)."""
    cells = filled.cells[filled.row_keys.index(FLOOR_ROW)]
    for index, column in enumerate(filled.value_columns):
        if column in filled.definition.aggregates or column in filled.definition.deltas:
            continue
        values = [row[index].measured for row in floor.cells if row[index].measured is not None]
        if values:
            cells[index].measured = statistics.fmean(values)


def fill(
    definition: TableDef,
    published: PublishedTable,
    results: Results,
    bootstrap: Bootstrap = (1000, 12345),
    floors: bool = True,
) -> FilledTable:
    """The table with measured cells, recomputed aggregates, bold and significance marks, and
    (`floors`) its `FilledTable.floor`: the same cells, aggregates and deltas over each
    metric's floor, where the claims ledger finds what a side must beat. The definition's
    reference rows (a training-free baseline, the floor row) follow the published rows."""
    header = published.header
    columns = header[definition.labels :]
    blank = [""] * (definition.labels - 1 + len(columns))
    extended = replace(
        published,
        rows=[*published.rows, *([label, *blank] for label in definition.reference_rows.values())],
    )
    filled = FilledTable(
        definition=definition,
        published=extended,
        scale=results.scale,
        row_keys=[*definition.row_keys(header, published.rows), *definition.reference_rows],
        cells=[[Cell(published=v) for v in row[definition.labels :]] for row in extended.rows],
    )
    if definition.descriptive:
        return filled
    if floors:
        filled.floor = fill(definition, published, results.floors(), bootstrap, floors=False)
    for row, key, cells in zip(extended.rows, filled.row_keys, filled.cells, strict=True):
        for column, cell in zip(columns, cells, strict=True):
            if definition.cited(key):  # quoted: no run of any chapter stands for it
                cell.cited = definition.cited(key)
            elif key == FLOOR_ROW and definition.floor_row:
                continue
            elif definition.published_only_in(key, column):
                cell.published_only = True
            elif column not in definition.aggregates and column not in definition.deltas:
                keys = definition.cell_key(header, row, key, column)
                filled.runs_used |= _measure(keys, results, definition.chapter_of(key), cell)
    if filled.floor is not None and definition.floor_row:
        _floor_row(filled, filled.floor)
    _aggregate_rows(filled)
    _aggregate_columns(filled)
    _deltas(filled, results)
    if floors:
        _bold(filled)
        _significance(filled, bootstrap)
    return filled
