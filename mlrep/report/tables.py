"""Table definitions as data: how each cell of a published table is filled from results.

``mlrep/report/tables/<chapter>.yaml`` maps a table id (the name of its reference CSV) to a
definition; every key is optional, so a table listed with ``{}`` gets the defaults::

    thesis-table-8.2:
      labels: 4                 # leading columns that label a row (default: inferred)
      row: "{#}"                # a row's key, from its label cells (default: all labels)
      cells:                    # column -> "<run>:<metric>[@seed]" (default "{row}:<column>")
        Zero-shot OPUS BLEU: "opus/{row}:zst_bleu"
        Both directions: ["{row}:bleu_xy", "{row}:bleu_yx"]   # a list: mean of the keys
        Δ BLEU: {delta: [Zero-shot OPUS BLEU, "base/{row}:zst_bleu"]}  # a − b, see below
      aggregates:               # column -> the columns it averages (default: inferred "avg.")
        Avg.: [de, fr]
      lower_is_better: [Off-target]   # bold the lowest (default: inferred from the header)
      bold_exclude: [LaBSE]     # rows (key) left out of "best per column", as the thesis does
      bold_top: 3               # bold the best 3 per column (default 1), as the thesis marks them
      unranked: [d, P]          # columns that are not scores (sizes, settings): never bold
      published_only: [Arch.]   # columns no run measures (a setting): never looked up
      significance: {baseline: "1", alpha: 0.05}   # mark BLEU cells better than this row
      significance: {baseline: [mlsc, mbart-ft]}   # or: each row against the last one above it
      descriptive: true         # the table describes data or settings: published only
      aliases: {Pre.: prenorm}  # label spellings that name the same thing across tables
      runs: {arch-0: teacher}   # a run a template names -> the run whose results it reads
      vars: {dataset: iwslt}    # constants usable in templates: "{dataset}/{row}:zst_bleu"
      rows:                     # row key -> what differs for that row
        laser-12: {cited: {source: Artetxe and Schwenk (2019)}}   # quoted, never run
        ems: {chapter: ch2_ems, cells: {BUCC de: "{row}:bucc_de"}, published_only: [d]}
        labse: {measured_as: {tiny: the mUSE v3 teacher}}   # at a scale, the row measures this
      baseline_rows: {char-tfidf: "char n-gram TF-IDF (training-free)"}   # run -> label
      floor_row: "chance, 1/candidates (floor)"   # a row of each column's floor

``baseline_rows`` and ``floor_row`` add rows the published table does not have, below its own:
a training-free baseline (a run, filled by the same templates with ``{row}`` = its key) and the
floor of every column (the mean over rows of the cells' ``floor_<metric>``, chance for
retrieval, copy-the-source for BLEU). They read against a blank published value, are never
bolded or tested for significance, and say in their label that they are references, not
systems; their keys are the run and `FLOOR_ROW`.

Placeholders in templates are label columns (``{Layer Norm}``) and ``{row}``; each value is
slugged (lower case, runs of other characters → ``-``). Measured values are the mean over the
seeds found; an aggregate column is the mean of its operand cells, never a copy of a printed one.
A ``delta`` cell is the difference a − b of two measured values of its row, each operand a column
of the table or a result-key template; it is computed, never read from the printed Δ.

``rows`` gives single rows their own binding. A *cited* row (``cited: {source: …}``) is a
baseline the table quotes from prior work: no run is ever looked up for it, its cells read
``cited`` beside the printed number, and its source is shown with the table; it names no runs
(``chapter``, ``cells`` or ``published_only`` beside ``cited`` is an error). A row that another
chapter measures names that ``chapter``: its cells read that chapter's results (Table 3.3's
EMS row reads Chapter 2's ``ems`` run), with the row's own ``cells`` templates and
``published_only`` columns in place of the table's. A row's ``measured_as`` names, per scale,
what its measured side is when that is not what its label names (at scale tiny Table 3.3's
LaBSE row measures the chapter's smaller teacher): its label says so wherever it is shown.

``runs`` resolves a run name, after a template is formatted, to the run whose results hold it:
one training that several rows name (``lealla-small-ams`` is the architecture run ``arch-8``),
or a row whose own name is not its run (Table 3.1's ``arch-0`` is the ``teacher``). Rows keep
their names; only the results folder read changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mlrep import chapters
from mlrep.errors import MlrepError
from mlrep.report.reference import PublishedTable, number

TABLES_PACKAGE = "mlrep.report"
AVERAGE = re.compile(r"^(?P<prefix>.*?)\s*\b(avg\.?|average|mean)(\s*\(.*\))?$", re.IGNORECASE)
_LOWER = re.compile(r"off-target|error|\baer\b|xsim|sec\.|time|loss|rate", re.IGNORECASE)
_KEYS = {
    "labels",
    "row",
    "cells",
    "aggregates",
    "lower_is_better",
    "bold_exclude",
    "bold_top",
    "unranked",
    "published_only",
    "significance",
    "descriptive",
    "title",
    "aliases",
    "vars",
    "rows",
    "runs",
    "baseline_rows",
    "floor_row",
}
_ROW_KEYS = {"cited", "chapter", "cells", "published_only", "measured_as"}
FLOOR_ROW = "floor"  # the key of a table's floor row


class TableDefinitionError(MlrepError):
    """A table definition names a column or key that does not exist."""


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class CellKey:
    """Where a measured cell comes from: mean over `metrics` of `run` (one seed if given)."""

    run: str
    metrics: tuple[str, ...]
    seed: int | None = None


@dataclass(frozen=True)
class RowDef:
    """One row's own binding (``rows``): quoted from `cited` (its source), or measured by
    `chapter` with its own cell templates and published-only columns; `measured_as`: per
    scale, what its measured side stands for where its label names something else."""

    cited: str | None = None
    chapter: str | None = None
    cells: dict[str, list[str]] = field(default_factory=dict)
    published_only: frozenset[str] = frozenset()
    measured_as: dict[str, str] = field(default_factory=dict)


@dataclass
class TableDef:
    table_id: str
    chapter: str
    title: str
    labels: int
    row_template: str
    cells: dict[str, list[str]] = field(default_factory=dict)
    deltas: dict[str, tuple[str, str]] = field(default_factory=dict)  # column -> (a, b)
    aggregates: dict[str, list[str]] = field(default_factory=dict)
    lower_is_better: set[str] = field(default_factory=set)
    bold_exclude: set[str] = field(default_factory=set)
    bold_top: int = 1
    unranked: set[str] = field(default_factory=set)
    published_only: set[str] = field(default_factory=set)
    significance: dict[str, Any] = field(default_factory=dict)
    descriptive: bool = False
    aliases: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    rows: dict[str, RowDef] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)  # run a template names -> run read
    baseline_rows: dict[str, str] = field(default_factory=dict)  # run key -> label
    floor_row: str = ""  # the floor row's label ("": none)

    def cited(self, row_key: str) -> str | None:
        """The source a row is quoted from, None for a row that is measured."""
        return self.rows[row_key].cited if row_key in self.rows else None

    def chapter_of(self, row_key: str) -> str:
        """The chapter whose results a row reads: its own ``chapter``, else the table's."""
        row = self.rows.get(row_key)
        return row.chapter if row and row.chapter else self.chapter

    def measured_as(self, row_key: str, scale: str) -> str | None:
        """What a row's measured side is at `scale` where its label names something else."""
        row = self.rows.get(row_key)
        return row.measured_as.get(scale) if row else None

    def published_only_in(self, row_key: str, column: str) -> bool:
        """Whether no run measures this cell: a published-only column of the table or row."""
        row = self.rows.get(row_key)
        return column in self.published_only or bool(row and column in row.published_only)

    @property
    def reference_rows(self) -> dict[str, str]:
        """The rows added below the published ones, key -> label: baselines, then the floor."""
        floor = {FLOOR_ROW: self.floor_row} if self.floor_row else {}
        return {**self.baseline_rows, **floor}

    def _names(self, header: list[str]) -> list[str]:
        return [*header[: self.labels], *self.variables]

    def _values(self, row: list[str]) -> list[str]:
        labels = [self.aliases.get(v.strip(), v) for v in row[: self.labels]]
        return [*labels, *self.variables.values()]

    def row_keys(self, header: list[str], rows: list[list[str]]) -> list[str]:
        """A unique key per row.

        By the thesis's convention a row labelled ``+align`` modifies the nearest row above
        it without a ``+`` (``mlsc-align``); keys still equal after that get ``-2``, ``-3``.
        """
        keys, seen, base = [], {}, ""
        for row in rows:
            key = _format(self.row_template, self._names(header), self._values(row), None)
            if row[0].strip().startswith("+") and base:
                key = f"{base}-{key}"
            else:
                base = key
            seen[key] = seen.get(key, 0) + 1
            keys.append(key if seen[key] == 1 else f"{key}-{seen[key]}")
        return keys

    def cell_key(
        self, header: list[str], row: list[str], row_key: str, column: str
    ) -> list[CellKey]:
        """The result keys of one cell (several: the cell is their mean)."""
        own = self.rows[row_key].cells if row_key in self.rows else {}
        templates = own.get(column) or self.cells.get(column, [f"{{row}}:{slug(column)}"])
        return [self.result_key(header, row, row_key, t) for t in templates]

    def result_key(self, header: list[str], row: list[str], row_key: str, template: str) -> CellKey:
        """One ``<run>:<metric>[@seed]`` template, formatted for a row."""
        text = _format(template, self._names(header), self._values(row), row_key)
        run, _, metric = text.rpartition(":")
        metric, _, seed = metric.partition("@")
        return CellKey(self.runs.get(run, run), (metric,), int(seed) if seed else None)


def _format(template: str, names: list[str], values: list[str], row_key: str | None) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "row" and row_key is not None:
            return row_key
        if name not in names:
            raise TableDefinitionError(f"template {template!r}: no label column {name!r}")
        return slug(values[names.index(name)])

    # "{}" names a label column whose header is empty (Table 7.5's row labels)
    text = re.sub(r"\{([^{}]*)\}", replace, template)
    # an empty label leaves a doubled or dangling separator: "-pivot-" reads "pivot"
    return re.sub(r"(^|/)-+|-+($|/|:)", r"\1\2", re.sub(r"-{2,}", "-", text))


def infer_labels(table: PublishedTable) -> int:
    """Leading columns that label rows: up to the last mostly non-numeric leading column."""
    labels = 1
    for index in range(len(table.header)):
        cells = [row[index] for row in table.rows if row[index].strip() not in ("", "-", "–")]
        numeric = sum(number(c) is not None for c in cells)
        if (cells and numeric * 2 < len(cells)) or table.header[index].strip() == "#":
            labels = index + 1
        elif index >= labels:
            break
    return labels


def infer_aggregates(header: list[str], labels: int) -> dict[str, list[str]]:
    """Columns printed as averages (``Avg.``, ``UN avg.``) and the earlier columns they average."""
    out: dict[str, list[str]] = {}
    values = header[labels:]
    for position, column in enumerate(values):
        match = AVERAGE.match(column)
        if not match:
            continue
        prefix = match.group("prefix").strip()
        if prefix:  # "UN avg.": the UN columns before it
            operands = [c for c in values[:position] if c.startswith(prefix)]
        else:  # "Avg.": the columns since the previous average
            last = max((values.index(a) for a in out), default=-1)
            operands = values[last + 1 : position]
        operands = [c for c in operands if not AVERAGE.match(c)]
        if operands:
            out[column] = operands
    return out


def build(table_id: str, chapter: str, spec: dict[str, Any], table: PublishedTable) -> TableDef:
    """A definition from its YAML entry, with every default filled from the published table."""
    unknown = set(spec) - _KEYS
    if unknown:
        raise TableDefinitionError(
            f"{table_id}: unknown keys {sorted(unknown)}; allowed {sorted(_KEYS)}"
        )
    labels = int(spec.get("labels") or infer_labels(table))
    header = table.header
    cells, deltas = _cells(table_id, header, spec.get("cells") or {})
    aggregates = spec.get("aggregates")
    aggregates = infer_aggregates(header, labels) if aggregates is None else aggregates
    lower = set(spec.get("lower_is_better") or [c for c in header[labels:] if _LOWER.search(c)])
    operands = [x for ops in aggregates.values() for x in ops]
    unranked = [str(c) for c in spec.get("unranked") or []]
    published_only = [str(c) for c in spec.get("published_only") or []]
    for column in [*cells, *deltas, *aggregates, *lower, *operands, *unranked, *published_only]:
        if column not in header:
            raise TableDefinitionError(f"{table_id}: no column {column!r}; columns: {header}")
    bold_top = spec.get("bold_top", 1)
    if not isinstance(bold_top, int) or isinstance(bold_top, bool) or bold_top < 1:
        raise TableDefinitionError(f"{table_id}: bold_top must be a whole number ≥ 1")
    definition = TableDef(
        table_id=table_id,
        chapter=chapter,
        title=spec.get("title") or table.source.label,
        labels=labels,
        row_template=spec.get("row") or "-".join(f"{{{h}}}" for h in header[:labels]),
        cells=cells,
        deltas=deltas,
        aggregates=aggregates,
        lower_is_better=lower,
        bold_exclude=set(map(str, spec.get("bold_exclude") or [])),
        bold_top=bold_top,
        unranked=set(unranked),
        published_only=set(published_only),
        significance=dict(spec.get("significance") or {}),
        descriptive=bool(spec.get("descriptive", False)),
        aliases={str(k): str(v) for k, v in (spec.get("aliases") or {}).items()},
        runs=_mapping(table_id, "runs", spec.get("runs")),
        variables={str(k): str(v) for k, v in (spec.get("vars") or {}).items()},
        baseline_rows={str(k): str(v) for k, v in (spec.get("baseline_rows") or {}).items()},
        floor_row=str(spec.get("floor_row") or ""),
    )
    if FLOOR_ROW in definition.baseline_rows:
        raise TableDefinitionError(f"{table_id}: {FLOOR_ROW!r} is the floor row's key")
    keys = definition.row_keys(header, table.rows)  # every template placeholder exists
    definition.rows = _rows(definition, header[labels:], keys, spec.get("rows") or {})
    for row, key in zip(table.rows, keys, strict=True):
        for operand in (o for pair in deltas.values() for o in pair if o not in header):
            definition.result_key(header, row, key, operand)
        for templates in definition.rows[key].cells.values() if key in definition.rows else ():
            for template in templates:
                definition.result_key(header, row, key, template)
    return definition


def _mapping(table_id: str, key: str, value: Any) -> dict[str, str]:
    """A ``{name: name}`` entry (``runs``, a row's ``measured_as``): non-empty strings only."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int) and str(k) and str(v) for k, v in value.items()
    ):
        raise TableDefinitionError(f"{table_id}: {key} must map names to non-empty names")
    return {str(k): str(v) for k, v in value.items()}


def _rows(
    definition: TableDef, columns: list[str], keys: list[str], spec: dict[str, Any]
) -> dict[str, RowDef]:
    """The ``rows`` entry: each key a row of the table, cited or bound to a chapter's runs
    (its own templates only for columns that read results: not an average or a Δ)."""
    computed = {*definition.aggregates, *definition.deltas}
    out: dict[str, RowDef] = {}
    for key, entry in spec.items():
        where = f"{definition.table_id}: row {key!r}"
        if str(key) not in keys:
            raise TableDefinitionError(f"{where} is not a row; rows: {keys}")
        if not isinstance(entry, dict) or not entry or set(entry) - _ROW_KEYS:
            raise TableDefinitionError(f"{where}: allowed keys {sorted(_ROW_KEYS)}")
        if "cited" in entry:
            cited = entry["cited"]
            if not isinstance(cited, dict) or set(cited) != {"source"} or not cited["source"]:
                raise TableDefinitionError(f"{where}: cited must be {{source: <citation>}}")
            if set(entry) != {"cited"}:
                raise TableDefinitionError(
                    f"{where}: a cited row is quoted, so it names no runs "
                    f"({sorted(set(entry) - {'cited'})} beside cited)"
                )
            out[str(key)] = RowDef(cited=str(cited["source"]))
            continue
        chapter = entry.get("chapter")
        if chapter is not None and chapter not in chapters.ids():
            raise TableDefinitionError(f"{where}: no chapter {chapter!r}; {chapters.ids()}")
        cells = {
            str(c): v if isinstance(v, list) else [v] for c, v in (entry.get("cells") or {}).items()
        }
        published_only = frozenset(str(c) for c in entry.get("published_only") or [])
        for column in [*cells, *published_only]:
            if column not in columns or column in computed:
                raise TableDefinitionError(
                    f"{where}: {column!r} is not a column that reads results; columns: {columns}"
                )
        measured_as = _mapping(where, "measured_as", entry.get("measured_as"))
        out[str(key)] = RowDef(
            chapter=chapter, cells=cells, published_only=published_only, measured_as=measured_as
        )
    return out


def _cells(
    table_id: str, header: list[str], spec: dict[str, Any]
) -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
    """Split a ``cells`` entry into result-key templates and ``{delta: [a, b]}`` cells."""
    cells: dict[str, list[str]] = {}
    deltas: dict[str, tuple[str, str]] = {}
    for column, value in spec.items():
        if isinstance(value, dict):
            pair = value.get("delta")
            if set(value) != {"delta"} or not isinstance(pair, list) or len(pair) != 2:
                raise TableDefinitionError(
                    f"{table_id}: cell {column!r}: a mapping must be {{delta: [a, b]}}"
                )
            for operand in pair:
                if operand not in header and ":" not in str(operand):
                    raise TableDefinitionError(
                        f"{table_id}: delta {column!r}: {operand!r} is neither a column nor "
                        "a <run>:<metric> template"
                    )
            deltas[column] = (str(pair[0]), str(pair[1]))
        else:
            cells[column] = value if isinstance(value, list) else [value]
    for column, pair in deltas.items():
        if any(operand in deltas for operand in pair):
            raise TableDefinitionError(f"{table_id}: delta {column!r}: an operand is a delta")
    return cells, deltas


def definition_files(folder: Path | None = None) -> list[Path]:
    base = folder or Path(str(resources.files(TABLES_PACKAGE) / "tables"))
    return sorted(base.glob("*.yaml"))


def load(tables: dict[str, PublishedTable], folder: Path | None = None) -> dict[str, TableDef]:
    """Every table definition, checked against its published table (ordered by chapter file)."""
    out: dict[str, TableDef] = {}
    for path in definition_files(folder):
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for table_id, spec in entries.items():
            if table_id not in tables:
                raise TableDefinitionError(f"{path}: {table_id} has no published table")
            if table_id in out:
                raise TableDefinitionError(f"{path}: {table_id} is defined twice")
            try:
                out[table_id] = build(table_id, path.stem, spec or {}, tables[table_id])
            except TableDefinitionError as exc:
                raise TableDefinitionError(f"{path}: {exc}") from None
    return out
