"""Which metric names a chapter's tables, claims and figures read.

The report looks each number up by metric name, and a name that no run writes shows as
"not run" forever, which reads like a run that has not happened yet. `references` lists every
name a chapter's report entries read, with where it is read, so that a test can hold them
against the names the chapter declares (`mlrep.report.metrics.declared`).

Table cells are expanded row by row, as `mlrep.report.fill` fills them: a template such as
``{dataset}/{Layer Norm}-s-enc-t-dec-w:bleu_{Direction}`` names a metric per row, and a column
without a template reads ``{row}:<column slug>``. Aggregate columns and rows read their operand
cells, a delta reads both operands, and a ``published_only`` column or a cited row reads
nothing. A row bound to another chapter (`TableDef.rows`) reads that chapter's names, so Table
3.3's EMS row is held against Chapter 2's declaration. Claims and table series of figures read
table cells, so they resolve through the same definitions; result series of figures name their
metrics directly (a ``metric_per_x`` template by its name at x = 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlrep.report import claims, figures, reference, tables
from mlrep.report.reference import PublishedTable
from mlrep.report.tables import AVERAGE, TableDef


@dataclass(frozen=True)
class Reference:
    """One metric name the report reads, and where (for the failure message)."""

    where: str
    metric: str


@dataclass(frozen=True)
class _Table:
    definition: TableDef
    published: PublishedTable
    row_keys: list[str]

    @classmethod
    def of(cls, definition: TableDef, published: PublishedTable) -> _Table:
        return cls(definition, published, definition.row_keys(published.header, published.rows))

    def _aggregate_row(self, index: int) -> bool:
        return bool(AVERAGE.match(self.published.rows[index][self.definition.labels - 1].strip()))

    def cell(self, index: int, column: str) -> list[tuple[str, str]]:
        """The (chapter, metric name) pairs cell (row `index`, `column`) is computed from."""
        definition, header, key = self.definition, self.published.header, self.row_keys[index]
        if definition.cited(key) or definition.published_only_in(key, column):
            return []
        if self._aggregate_row(index):  # the mean of the rows above: read by those rows
            return [
                name
                for other in range(len(self.row_keys))
                if not self._aggregate_row(other)
                for name in self.cell(other, column)
            ]
        if column in definition.aggregates:
            return [
                name
                for operand in definition.aggregates[column]
                for name in self.cell(index, operand)
            ]
        row, chapter = self.published.rows[index], definition.chapter_of(key)
        if column in definition.deltas:
            names = []
            for operand in definition.deltas[column]:
                if operand in header:
                    names += self.cell(index, operand)
                else:
                    metrics = definition.result_key(header, row, key, operand).metrics
                    names += [(chapter, m) for m in metrics]
            return names
        keys = definition.cell_key(header, row, key, column)
        return [(chapter, m) for k in keys for m in k.metrics]

    def points(self, side: dict[str, Any]) -> list[tuple[int, str]]:
        """A claim side's or figure series' cells: ``row`` + ``columns`` or ``column`` +
        ``rows`` (every row if absent); a row key that does not exist is skipped here, as
        the ledger and the figures report it themselves."""
        if "row" in side:
            pairs = [(str(side["row"]), column) for column in side["columns"]]
        else:
            pairs = [(str(row), side["column"]) for row in side.get("rows") or self.row_keys]
        return [(self.row_keys.index(r), c) for r, c in pairs if r in self.row_keys]


def _tables(reference_dir: Path) -> dict[str, _Table]:
    published = reference.load_all(reference_dir)
    return {
        table_id: _Table.of(definition, published[table_id])
        for table_id, definition in tables.load(published).items()
        if not definition.descriptive  # published only
    }


def references(chapter: str, reference_dir: Path) -> list[Reference]:
    """Every metric name of `chapter`'s results that a table cell, claim or figure reads
    (of any chapter: a row of another chapter's table may read this one's runs)."""
    found = _tables(reference_dir)
    out: list[tuple[str, Reference]] = []
    for table_id, table in found.items():
        for index, key in enumerate(table.row_keys):
            for column in table.published.header[table.definition.labels :]:
                where = f"{table_id} row {key!r} column {column!r}"
                out += [(c, Reference(where, m)) for c, m in table.cell(index, column)]
    for claim in claims.load():
        for side in claims.cell_sides(claim):
            table = found.get(side["table"])
            for index, column in table.points(side) if table else []:
                where = f"claim {claim['id']} ({side['table']} {column!r})"
                out += [(c, Reference(where, m)) for c, m in table.cell(index, column)]
    for fig_id, spec in figures.definitions().items():
        out += _figure(fig_id, spec, found)
    return [ref for owner, ref in out if owner == chapter]


def _figure(
    fig_id: str, spec: dict[str, Any], found: dict[str, _Table]
) -> list[tuple[str, Reference]]:
    """A figure's (chapter, reference) pairs: its table series through their cells, the rest
    of the figure's own chapter."""
    out: list[tuple[str, Reference]] = []
    own = spec["chapter"]
    languages = [str(v) for v in spec.get("languages") or []]
    for panel in spec["panels"]:
        if "metric" in panel:  # a heatmap: one metric per (source, target)
            out += [
                (own, Reference(f"figure {fig_id}", panel["metric"].format(src=s, tgt=t)))
                for s in languages
                for t in languages
                if s != t
            ]
        for series in panel.get("series") or []:
            where = f"figure {fig_id} series {series.get('label')!r}"
            table = found.get(series.get("table", ""))
            names = [n for i, c in table.points(series) for n in table.cell(i, c)] if table else []
            names += [
                (own, m)
                for m in [
                    *series.get("metrics", []),
                    *[series[k] for k in ("metric", "x", "y") if k in series],
                    # the name at x = 1 stands for the names its x are read from
                    *[v.replace("{x}", "1") for k, v in series.items() if k == figures.PER_X],
                ]
            ]
            out += [(c, Reference(where, m)) for c, m in names]
    return out
