"""Which metric names a chapter's tables, claims and figures read.

The report looks each number up by metric name, and a name that no run writes shows as
"not run" forever, which reads like a run that has not happened yet. `references` lists every
name a chapter's report entries read, with where it is read, so that a test can hold them
against the names the chapter declares (`mlrep.report.metrics.declared`).

Table cells are expanded row by row, as `mlrep.report.fill` fills them: a template such as
``{dataset}/{Layer Norm}-s-enc-t-dec-w:bleu_{Direction}`` names a metric per row, and a column
without a template reads ``{row}:<column slug>``. Aggregate columns and rows read their operand
cells, a delta reads both operands, and a ``published_only`` column reads nothing. Claims and
table series of figures read table cells, so they resolve through the same definitions;
result series of figures name their metrics directly.
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

    def cell(self, index: int, column: str) -> list[str]:
        """The metric names cell (row `index`, `column`) is computed from."""
        definition, header = self.definition, self.published.header
        if column in definition.published_only:
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
        row, key = self.published.rows[index], self.row_keys[index]
        if column in definition.deltas:
            names = []
            for operand in definition.deltas[column]:
                if operand in header:
                    names += self.cell(index, operand)
                else:
                    names += definition.result_key(header, row, key, operand).metrics
            return names
        return [m for k in definition.cell_key(header, row, key, column) for m in k.metrics]

    def points(self, side: dict[str, Any]) -> list[tuple[int, str]]:
        """A claim side's or figure series' cells: ``row`` + ``columns`` or ``column`` +
        ``rows`` (every row if absent); a row key that does not exist is skipped here, as
        the ledger and the figures report it themselves."""
        if "row" in side:
            pairs = [(str(side["row"]), column) for column in side["columns"]]
        else:
            pairs = [(str(row), side["column"]) for row in side.get("rows") or self.row_keys]
        return [(self.row_keys.index(r), c) for r, c in pairs if r in self.row_keys]


def _tables(chapter: str, reference_dir: Path) -> dict[str, _Table]:
    published = reference.load_all(reference_dir)
    return {
        table_id: _Table.of(definition, published[table_id])
        for table_id, definition in tables.load(published).items()
        if definition.chapter == chapter and not definition.descriptive  # published only
    }


def references(chapter: str, reference_dir: Path) -> list[Reference]:
    """Every metric name `chapter`'s measured table cells, claims and figures read."""
    found = _tables(chapter, reference_dir)
    out: list[Reference] = []
    for table_id, table in found.items():
        for index, key in enumerate(table.row_keys):
            for column in table.published.header[table.definition.labels :]:
                where = f"{table_id} row {key!r} column {column!r}"
                out += [Reference(where, m) for m in table.cell(index, column)]
    for claim in claims.load():
        if claim["chapter"] != chapter:
            continue
        for side in (claim["a"], claim["b"]):
            table = found.get(side["table"])
            for index, column in table.points(side) if table else []:
                where = f"claim {claim['id']} ({side['table']} {column!r})"
                out += [Reference(where, m) for m in table.cell(index, column)]
    for fig_id, spec in figures.definitions().items():
        if spec["chapter"] == chapter:
            out += _figure(fig_id, spec, found)
    return out


def _figure(fig_id: str, spec: dict[str, Any], found: dict[str, _Table]) -> list[Reference]:
    out: list[Reference] = []
    languages = [str(v) for v in spec.get("languages") or []]
    for panel in spec["panels"]:
        if "metric" in panel:  # a heatmap: one metric per (source, target)
            out += [
                Reference(f"figure {fig_id}", panel["metric"].format(src=s, tgt=t))
                for s in languages
                for t in languages
                if s != t
            ]
        for series in panel.get("series") or []:
            where = f"figure {fig_id} series {series.get('label')!r}"
            table = found.get(series.get("table", ""))
            names = [m for i, c in table.points(series) for m in table.cell(i, c)] if table else []
            names += [
                *series.get("metrics", []),
                *[series[k] for k in ("metric", "x", "y") if k in series],
            ]
            out += [Reference(where, m) for m in names]
    return out
