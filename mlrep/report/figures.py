"""The thesis's data figures, drawn with matplotlib from ``figures.yaml``.

A figure has panels; a panel has series; a series takes its points either from a defined
table (``table`` + ``column`` over ``rows``, or ``row`` over ``columns``) or from results
(``run`` + ``metrics``, one metric per x position). Table series are drawn twice: the
published numbers (solid, filled markers) and the measured ones (dashed, open markers).
A panel with nothing measured and nothing published says "not run at scale …" instead of
being left empty. One style for all: black and greys, a distinct marker, line style and
hatch per series, so every figure reads in greyscale.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mlrep.errors import MlrepError
from mlrep.io import atomic_file
from mlrep.paths import ReportLayout
from mlrep.report.fill import FilledTable
from mlrep.report.metrics import Results

FORMATS = ("png", "pdf")  # the first is embedded in the HTML report
GREYS = ("0.0", "0.45", "0.7", "0.25", "0.55", "0.85")
MARKERS = ("o", "s", "^", "D", "v", "P")
LINES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (1, 1)))
HATCHES = ("", "//", "..", "xx", "\\\\", "--")
STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "figure.dpi": 150,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
}


class FigureDefinitionError(MlrepError):
    """figures.yaml names a table, row or column that does not exist."""


@dataclass
class Series:
    label: str
    published: list[float | None]
    measured: list[float | None]


@dataclass
class Panel:
    title: str
    x: list[str]
    series: list[Series]


def definitions(path: Path | None = None) -> dict[str, dict[str, Any]]:
    source = path or Path(str(resources.files("mlrep.report") / "figures.yaml"))
    return yaml.safe_load(source.read_text(encoding="utf-8")) or {}


def _table_series(spec: dict[str, Any], tables: dict[str, FilledTable], fig: str) -> Series:
    filled = tables.get(spec["table"])
    if filled is None:
        raise FigureDefinitionError(f"{fig}: no defined table {spec['table']!r}")
    if "column" in spec:
        points = [(row, spec["column"]) for row in spec.get("rows") or filled.row_keys]
    else:
        points = [(spec["row"], column) for column in spec["columns"]]
    cells = []
    for row, column in points:
        try:
            cells.append(filled.cell(str(row), column))
        except ValueError:
            raise FigureDefinitionError(
                f"{fig}: {spec['table']} has no cell row {row!r} column {column!r}; "
                f"rows {filled.row_keys}"
            ) from None
    return Series(spec["label"], [c.published_value for c in cells], [c.measured for c in cells])


def _result_series(spec: dict[str, Any], results: Results, chapter: str) -> Series:
    seeds = results.seeds(chapter, spec["run"])
    measured = []
    for metric in spec["metrics"]:
        values = [r.metrics[metric] for r in seeds if metric in r.metrics]
        measured.append(statistics.fmean(values) if values else None)
    return Series(spec["label"], [None] * len(measured), measured)


def panels(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> list[Panel]:
    out = []
    for panel in spec["panels"]:
        series = [
            _table_series(s, tables, fig_id)
            if "table" in s
            else _result_series(s, results, spec["chapter"])
            for s in panel["series"]
        ]
        n = {len(s.published) for s in series}
        x = [str(v) for v in panel.get("x") or spec.get("x") or []]
        if len(n) != 1 or (x and len(x) not in n):
            raise FigureDefinitionError(
                f"{fig_id}: series and x of panel {panel.get('title')!r} differ in length"
            )
        out.append(Panel(panel.get("title", ""), x or [str(i + 1) for i in range(n.pop())], series))
    return out


def _draw_panel(ax: Any, panel: Panel, kind: str, scale: str) -> bool:
    """Draw one panel; return whether any point (published or measured) was drawn."""
    drawn, low = False, []
    positions = list(range(len(panel.x)))
    width = 0.8 / max(len(panel.series), 1)
    for i, series in enumerate(panel.series):
        style = {"color": GREYS[i % 6]}
        for side, values in (("published", series.published), ("measured", series.measured)):
            points = [(p, v) for p, v in zip(positions, values, strict=True) if v is not None]
            if not points:
                continue
            drawn = True
            xs, ys = zip(*points, strict=True)
            low.append(min(ys))
            label = f"{series.label} ({side}{'' if side == 'published' else ', ' + scale})"
            if kind == "bar":
                offset = (i - (len(panel.series) - 1) / 2) * width
                shift = -width / 4 if side == "published" else width / 4
                ax.bar(
                    [x + offset + shift for x in xs],
                    ys,
                    width / 2,
                    label=label,
                    edgecolor="black",
                    linewidth=0.5,
                    hatch=HATCHES[i % 6] if side == "published" else "oo",
                    **style,
                )
            else:
                ax.plot(
                    xs,
                    ys,
                    label=label,
                    marker=MARKERS[i % 6],
                    linestyle=LINES[i % 6] if side == "published" else (0, (2, 2)),
                    markerfacecolor=style["color"] if side == "published" else "white",
                    markeredgecolor="black",
                    **style,
                )
    ax.set_xticks(positions, panel.x, rotation=30 if max(map(len, panel.x)) > 4 else 0)
    ax.set_title(panel.title)
    if drawn:
        ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
        if kind == "bar" and min(low) > 0:
            # bars that differ by a point or two: start the axis near them, not at zero
            ax.set_ylim(bottom=0.9 * min(low))
    else:
        ax.text(
            0.5, 0.5, f"not run at scale {scale}", ha="center", va="center", transform=ax.transAxes
        )
    return drawn


def draw(
    fig_id: str,
    spec: dict[str, Any],
    tables: dict[str, FilledTable],
    results: Results,
    layout: ReportLayout,
) -> tuple[list[Path], bool]:
    """Write ``<fig_id>.png`` and ``.pdf``; return the files and whether anything was plotted."""
    import matplotlib  # here, not at import: the Snakefile reads the definitions cheaply

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = panels(fig_id, spec, tables, results)
    columns = min(len(parts), int(spec.get("columns", 3)))
    rows = -(-len(parts) // columns)
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(
            rows, columns, figsize=(3.4 * columns, 3.6 * rows), squeeze=False
        )
        drawn = False
        for ax, panel in zip(axes.flat, parts, strict=False):
            drawn |= _draw_panel(ax, panel, spec.get("kind", "line"), results.scale)
            ax.set_xlabel(spec.get("xlabel", ""))
            ax.set_ylabel(spec.get("ylabel", ""))
        for ax in list(axes.flat)[len(parts) :]:
            ax.set_visible(False)
        figure.suptitle(spec["title"], fontsize=9)
        figure.tight_layout()
        written = []
        for suffix in FORMATS:
            target = layout.figure(fig_id, suffix)
            with atomic_file(target, suffix=f".{suffix}") as tmp:
                figure.savefig(tmp, metadata={"CreationDate": None} if suffix == "pdf" else None)
            written.append(target)
        plt.close(figure)
    return written, drawn
