"""The thesis's data figures, drawn with matplotlib from ``figures.yaml``.

A figure has panels; a panel has series; a series takes its points either from a defined
table (``table`` + ``column`` over ``rows``, or ``row`` over ``columns``) or from results
(``run`` + ``metrics``, one metric per x position, or ``runs`` + ``metric``, one run per x
position). Table series are drawn twice: the published numbers (solid, filled markers) and
the measured ones (dashed, open markers).
A result series may name a ``seed`` when the thesis plots one seed only (Figs E.1, E.2).
A panel with nothing measured and nothing published says "not run at scale …" instead of
being left empty. One style for all: black and greys, a distinct marker, line style and
hatch per series, so every figure reads in greyscale.

Three kinds plot results that are not one value per x position:

* ``heatmap``: a language × language grid (row = source, column = target) per panel; a panel
  names ``run``, ``metric`` (a template with ``{src}`` and ``{tgt}``) and optionally ``minus``,
  a second run whose values are subtracted (mRASP2's Δ accuracy maps). Languages are the
  figure's ``languages``.
* ``points``: 2-D point sets that a chapter wrote as ``file`` (a CSV, format in
  `mlrep.report.point_clouds`) beside the metrics.json of each panel's ``run`` (its lowest
  seed); ``style: kde`` draws each group's density contours, ``style: scatter`` its points;
  ``groups`` picks and orders the groups (mRASP2 Figs 4 and 5: t-SNE of sentence encodings).
* ``scatter``: one point per run; a series names ``x`` and ``y`` metrics and its runs, either
  ``runs_of: <table id>`` (the runs of that table's rows, e.g. one per language) or
  ``runs_under: <prefix>`` (every run of the chapter whose name starts with it). ``xscale: log``
  sets a log x axis.
"""

from __future__ import annotations

import statistics
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mlrep.errors import MlrepError
from mlrep.io import atomic_file
from mlrep.paths import ReportLayout
from mlrep.report import point_clouds
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


@dataclass
class Grid:
    """A heatmap panel: `values[i][j]` for source `labels[i]` and target `labels[j]`."""

    title: str
    labels: list[str]
    values: list[list[float | None]]


@dataclass
class Cloud:
    """A scatter series: one measured (x, y) point per run that has both metrics."""

    label: str
    points: list[tuple[float, float, str]]


@dataclass
class ScatterPanel:
    title: str
    clouds: list[Cloud]


@dataclass
class PointsPanel:
    """A `points` panel: {group: [n, 2]} from the run's CSV, or None where it did not run."""

    title: str
    groups: dict[str, Any] | None


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


def _mean(
    results: Results, chapter: str, run: str, metric: str, seed: int | None = None
) -> float | None:
    """Mean of `metric` over the seeds of `run` (or its one `seed`); None where none has it."""
    values = [
        r.metrics[metric]
        for r in results.seeds(chapter, run)
        if metric in r.metrics and seed in (None, r.seed)
    ]
    return statistics.fmean(values) if values else None


def _result_series(spec: dict[str, Any], results: Results, chapter: str, fig: str) -> Series:
    """One point per x position: ``run`` + ``metrics`` (one metric per x, e.g. per layer) or
    ``runs`` + ``metric`` (one run per x, e.g. one per dataset, Fig 8.3)."""
    if {"run", "metrics"} <= spec.keys():
        points = [(spec["run"], metric) for metric in spec["metrics"]]
    elif {"runs", "metric"} <= spec.keys():
        points = [(run, spec["metric"]) for run in spec["runs"]]
    else:
        raise FigureDefinitionError(
            f"{fig}: result series {spec.get('label')!r} needs run + metrics or runs + metric"
        )
    measured = [_mean(results, chapter, run, metric, spec.get("seed")) for run, metric in points]
    return Series(spec["label"], [None] * len(measured), measured)


def panels(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> list[Panel]:
    out = []
    for panel in spec["panels"]:
        series = [
            _table_series(s, tables, fig_id)
            if "table" in s
            else _result_series(s, results, spec["chapter"], fig_id)
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


def grids(fig_id: str, spec: dict[str, Any], results: Results) -> list[Grid]:
    """The heatmap panels: per (source, target) the mean of `metric`, less `minus`'s mean."""
    languages = [str(v) for v in spec.get("languages") or []]
    if not languages:
        raise FigureDefinitionError(f"{fig_id}: a heatmap needs `languages`")
    out = []
    for panel in spec["panels"]:
        values: list[list[float | None]] = []
        for src in languages:
            row: list[float | None] = []
            for tgt in languages:
                metric = panel["metric"].format(src=src, tgt=tgt)
                value = (
                    None if src == tgt else _mean(results, spec["chapter"], panel["run"], metric)
                )
                if value is not None and "minus" in panel:
                    base = _mean(results, spec["chapter"], panel["minus"], metric)
                    value = None if base is None else value - base
                row.append(value)
            values.append(row)
        out.append(Grid(panel.get("title", ""), languages, values))
    return out


def _scatter_runs(
    fig_id: str,
    series: dict[str, Any],
    tables: dict[str, FilledTable],
    results: Results,
    chapter: str,
) -> list[str]:
    if "runs_of" in series:
        table = tables.get(series["runs_of"])
        if table is None:
            raise FigureDefinitionError(f"{fig_id}: no defined table {series['runs_of']!r}")
        return list(table.row_keys)
    prefix = series["runs_under"]
    return sorted(run for c, run in results.runs if c == chapter and run.startswith(prefix))


def scatter_panels(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> list[ScatterPanel]:
    """The scatter panels: a point per run of each series that has both its metrics."""
    out = []
    for panel in spec["panels"]:
        clouds = []
        for series in panel["series"]:
            if ("runs_of" in series) == ("runs_under" in series):
                raise FigureDefinitionError(
                    f"{fig_id}: scatter series {series.get('label')!r} needs one of runs_of, "
                    "runs_under"
                )
            points = []
            for run in _scatter_runs(fig_id, series, tables, results, spec["chapter"]):
                x = _mean(results, spec["chapter"], run, series["x"])
                y = _mean(results, spec["chapter"], run, series["y"])
                if x is not None and y is not None:
                    points.append((x, y, run.rsplit("/", 1)[-1]))
            clouds.append(Cloud(series["label"], points))
        out.append(ScatterPanel(panel.get("title", ""), clouds))
    return out


def points_panels(fig_id: str, spec: dict[str, Any], results: Results) -> list[PointsPanel]:
    """Each panel's point sets, read from ``file`` beside its run's first metrics.json."""
    if "file" not in spec or spec.get("style") not in ("kde", "scatter"):
        raise FigureDefinitionError(f"{fig_id}: a points figure needs `file` and style kde|scatter")
    out = []
    for panel in spec["panels"]:
        seeds = sorted(results.seeds(spec["chapter"], panel["run"]), key=lambda r: r.seed)
        source = seeds[0].path.parent / spec["file"] if seeds else None
        groups = None
        if source is not None and source.exists():
            found = point_clouds.read_points(source)
            wanted = [str(g) for g in spec.get("groups") or found]
            groups = {g: found[g] for g in wanted if g in found}
        out.append(PointsPanel(panel.get("title", ""), groups or None))
    return out


def _draw_points(ax: Any, panel: PointsPanel, style: str, scale: str) -> bool:
    """Density contours (``kde``) or markers (``scatter``) per group, one grey and style each."""
    import numpy as np
    from matplotlib.lines import Line2D

    ax.set_title(panel.title)
    if not panel.groups:
        _not_run(ax, scale)
        return False
    handles = []
    every = np.concatenate(list(panel.groups.values()))
    low, high = every.min(axis=0), every.max(axis=0)
    pad = 0.1 * (high - low + 1e-9)
    xs = np.linspace(low[0] - pad[0], high[0] + pad[0], 80)
    ys = np.linspace(low[1] - pad[1], high[1] + pad[1], 80)
    for i, (group, points) in enumerate(panel.groups.items()):
        grey, line = GREYS[i % 6], LINES[i % 6]
        if style == "kde":
            density = point_clouds.kde(points, xs, ys)
            ax.contour(xs, ys, density, levels=5, colors=[grey], linestyles=[line], linewidths=0.8)
            handles.append(Line2D([], [], color=grey, linestyle=line, label=group))
        else:
            handles.append(
                ax.scatter(
                    points[:, 0],
                    points[:, 1],
                    s=12,
                    marker=MARKERS[i % 6],
                    facecolors=grey,
                    edgecolors="black",
                    linewidths=0.4,
                    label=group,
                )
            )
    ax.legend(
        handles=handles, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3
    )
    ax.set_xticks([])
    ax.set_yticks([])
    return True


def _not_run(ax: Any, scale: str) -> None:
    ax.text(0.5, 0.5, f"not run at scale {scale}", ha="center", va="center", transform=ax.transAxes)


def _draw_grid(ax: Any, grid: Grid, scale: str) -> bool:
    """A greyscale heatmap (darker = larger) with each cell's value written in it."""
    import numpy as np

    values = np.array([[np.nan if v is None else v for v in row] for row in grid.values])
    ticks = range(len(grid.labels))
    ax.set_xticks(ticks, grid.labels, rotation=90)
    ax.set_yticks(ticks, grid.labels)
    ax.set_xlabel("target")
    ax.set_ylabel("source")
    ax.set_title(grid.title)
    if np.isnan(values).all():
        _not_run(ax, scale)
        return False
    image = ax.imshow(np.ma.masked_invalid(values), cmap="Greys")
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    middle = np.nanmin(values) + (np.nanmax(values) - np.nanmin(values)) / 2
    for (i, j), value in np.ndenumerate(values):
        if not np.isnan(value):
            colour = "white" if value > middle else "black"
            ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=4, color=colour)
    return True


def _draw_scatter(ax: Any, panel: ScatterPanel, scale: str) -> bool:
    drawn = False
    for i, cloud in enumerate(panel.clouds):
        if not cloud.points:
            continue
        drawn = True
        xs, ys, _ = zip(*cloud.points, strict=True)
        ax.scatter(
            xs,
            ys,
            label=f"{cloud.label} (measured, {scale})",
            marker=MARKERS[i % 6],
            facecolors=GREYS[i % 6],
            edgecolors="black",
            linewidths=0.5,
        )
        for x, y, name in cloud.points:
            ax.annotate(name, (x, y), fontsize=5, xytext=(2, 2), textcoords="offset points")
    ax.set_title(panel.title)
    if drawn:
        ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    else:
        _not_run(ax, scale)
    return drawn


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
        _not_run(ax, scale)
    return drawn


def _kind(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> tuple[list[Any], Callable[[Any, Any], bool], tuple[float, float]]:
    """The panels of a figure, the function drawing one, and a panel's size in inches."""
    kind, scale = spec.get("kind", "line"), results.scale
    if kind in ("line", "bar"):
        return (
            panels(fig_id, spec, tables, results),
            lambda ax, panel: _draw_panel(ax, panel, kind, scale),
            (3.4, 3.6),
        )
    if kind == "scatter":
        return (
            scatter_panels(fig_id, spec, tables, results),
            lambda ax, panel: _draw_scatter(ax, panel, scale),
            (3.4, 3.6),
        )
    if kind == "points":
        return (
            points_panels(fig_id, spec, results),
            lambda ax, panel: _draw_points(ax, panel, spec["style"], scale),
            (3.4, 3.6),
        )
    if kind == "heatmap":
        return grids(fig_id, spec, results), lambda ax, grid: _draw_grid(ax, grid, scale), (5, 4.6)
    raise FigureDefinitionError(
        f"{fig_id}: kind {kind!r} is not one of line, bar, scatter, heatmap, points"
    )


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

    parts, draw_one, (width, height) = _kind(fig_id, spec, tables, results)
    columns = min(len(parts), int(spec.get("columns", 3)))
    rows = -(-len(parts) // columns)
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(
            rows, columns, figsize=(width * columns, height * rows), squeeze=False
        )
        drawn = False
        for ax, panel in zip(axes.flat, parts, strict=False):
            drawn |= draw_one(ax, panel)
            for axis in ("x", "y"):
                if f"{axis}label" in spec:
                    getattr(ax, f"set_{axis}label")(spec[f"{axis}label"])
            if "xscale" in spec:
                ax.set_xscale(spec["xscale"])
        for ax in list(axes.flat)[len(parts) :]:
            ax.set_visible(False)
        # wrapped to the figure width, so a one-panel figure keeps its whole title
        figure.suptitle(textwrap.fill(spec["title"], int(15 * width * columns)), fontsize=9)
        figure.tight_layout()
        written = []
        for suffix in FORMATS:
            target = layout.figure(fig_id, suffix)
            with atomic_file(target, suffix=f".{suffix}") as tmp:
                figure.savefig(tmp, metadata={"CreationDate": None} if suffix == "pdf" else None)
            written.append(target)
        plt.close(figure)
    return written, drawn
