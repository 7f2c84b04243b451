"""The thesis's data figures, drawn with matplotlib from ``figures.yaml``.

A figure has panels; a panel has series; a series takes its points either from a defined
table (``table`` + ``column`` over ``rows``, or ``row`` over ``columns``) or from results
(``run`` + ``metrics``, one metric per x position, or ``runs`` + ``metric``, one run per x
position, or ``run`` + ``metric_per_x``, below). A panel names its ``x`` positions unless a
series runs down a table's rows (their labels are then the x). Table series are drawn twice:
the published numbers (lines in the series' dash with filled markers; outlined bars) and the
measured ones (short-dashed lines with open markers; filled bars), so no two series of a panel
look alike. Where the two sides differ in magnitude by more than ``SCALE_RATIO`` (a tiny-scale
run beside the thesis), the measured numbers get a y axis of their own on the right. Bars start
at zero. A series with nothing to draw is named in the legend as not run; a panel with nothing
measured and nothing published says "not run at scale …" instead of being left empty. One style
for all: black and greys, a distinct marker, line style and hatch per series (at most six), so
every figure reads in greyscale.

A result series may name a ``seed`` when the thesis plots one seed only (Figs E.1, E.2). Such
a figure may ``choose`` its dataset and seed: ``choose: {dataset: [opus, iwslt], seed: [10,
1]}`` fills ``{dataset}`` and ``{seed}`` in its panels with the first combination, in that
order of preference (the thesis's first), under which something was measured; its caption
(``numbers``) says which was drawn.

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

A line figure with ``numeric_x: true`` places points at their x values, not at category
positions: each x is a number or a label that starts with one (Table A.2's "768 (LaBSE)"), and
the ticks are the x values drawn, labelled with them; ``xscale: log2`` spaces them by powers
of two (Fig 3.1's embedding dimensions, 768 … 32). A table series of such a figure may name
``measured: {runs: [...], metric: m, x_metric: d}`` where its runs do not line up with the
table's rows (a tiny scale's own dimension ladder): its measured side is then one point per run,
at x = that run's ``d``, drawn in the series' measured style beside the published points.

A result series ``run`` + ``metric_per_x: delta1_l{x}`` (a metric name with one ``{x}``)
plots one point per number k for which the run's metrics hold that name with ``{x}`` = k,
at x = k, numerically sorted: the layers the model has (1–30 for BLOOMZ-7b1, 1–4 for the tiny
stand-in; Figs 6.3, D.1), which a fixed list of x would cut to the layers both share. A panel
of such series names no ``x``: its x are every k any of its series' runs holds; a run that
did not run leaves the series "not run".
"""

from __future__ import annotations

import re
import statistics
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from itertools import product
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
MEASURED_LINE = (0, (2, 2))
SIDES = ("published", "measured")
PER_X = "metric_per_x"  # a result series whose x are the numbers its run's metric names hold
# published and measured maxima further apart than this: measured numbers get their own axis
SCALE_RATIO = 10
MAX_TICKS = 12  # labelled x of a numeric panel: more whole numbers are thinned (`_thinned`)
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
    """A series' published and measured values; `at`: the x of each measured value where the
    measured points have x values of their own (``x_metric``), None where they share the
    panel's x."""

    label: str
    published: list[float | None]
    measured: list[float | None]
    at: list[float | None] | None = None


@dataclass
class Panel:
    """One line or bar panel; `numeric`: points sit at their x values (``numeric_x``)."""

    title: str
    x: list[str]
    series: list[Series]
    numeric: bool = False


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


def _table_series(
    spec: dict[str, Any], tables: dict[str, FilledTable], results: Results, chapter: str, fig: str
) -> Series:
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
    published = [c.published_value for c in cells]
    if "measured" not in spec:
        return Series(spec["label"], published, [c.measured for c in cells])
    measured = _result_series({"label": spec["label"], **spec["measured"]}, results, chapter, fig)
    return Series(spec["label"], published, measured.measured, measured.at)


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
    at = None
    if "x_metric" in spec:
        at = [_mean(results, chapter, run, spec["x_metric"], spec.get("seed")) for run, _ in points]
    return Series(spec["label"], [None] * len(measured), measured, at)


def _row_names(panel: dict[str, Any], tables: dict[str, FilledTable]) -> list[str]:
    """The row labels of the first series that runs down a table's rows (Fig 3.1's embedding
    dimensions): the x positions of a panel that names none; [] where no series does."""
    for series in panel["series"]:
        if "table" in series and "column" in series:
            filled = tables[series["table"]]
            rows = [str(r) for r in series.get("rows") or filled.row_keys]
            return [" ".join(filled.labels(filled.row_keys.index(r))) for r in rows]
    return []


def _substitute(value: Any, choice: dict[str, Any]) -> Any:
    """`value` with each ``{name}`` of `choice` filled in; a string that is exactly one
    placeholder becomes the chosen value itself, so ``seed: "{seed}"`` stays a number."""
    if isinstance(value, dict):
        return {k: _substitute(v, choice) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, choice) for v in value]
    if not isinstance(value, str):
        return value
    for name, chosen in choice.items():
        if value == f"{{{name}}}":
            return chosen
        value = value.replace(f"{{{name}}}", str(chosen))
    return value


def _describe(choice: dict[str, Any]) -> str:
    return ", ".join(f"{name} {value}" for name, value in choice.items())


def resolve(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> dict[str, Any]:
    """`spec` with its ``choose`` placeholders filled, for figures the thesis draws from one
    dataset and seed (Figs E.1, E.2: OPUS, seed 10) that a smaller scale may not have run.

    ``choose`` maps each placeholder to its values in order of preference, the thesis's
    first; the first combination (in that order, the first placeholder varying slowest) under
    which some series has a measured value wins, else the thesis's. ``numbers`` then says which
    was drawn and, where it is not the thesis's, what the thesis drew.
    """
    if "choose" not in spec:
        return spec
    names = list(spec["choose"])
    options = [dict(zip(names, v, strict=True)) for v in product(*spec["choose"].values())]
    body = {k: v for k, v in spec.items() if k not in ("choose", "numbers")}

    def measured(choice: dict[str, Any]) -> bool:
        filled = _substitute(body, choice)
        found = panels(fig_id, filled, tables, results)
        return any(v is not None for p in found for s in p.series for v in s.measured)

    found = next((c for c in options if measured(c)), None)
    choice, thesis = found or options[0], _describe(options[0])
    order = "; ".join(f"{name}: {', '.join(map(str, spec['choose'][name]))}" for name in names)
    if found is None:
        note = f"no results for any of ({order}); set up for the thesis's {thesis}"
    elif found == options[0]:
        note = f"drawn from {thesis}, as in the thesis"
    else:
        note = (
            f"drawn from {_describe(found)}, the first with results in the order ({order}); "
            f"the thesis draws {thesis}"
        )
    numbers = f"{spec['numbers']}; {note}" if spec.get("numbers") else note
    return {**_substitute(body, choice), "numbers": numbers}


def panels(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> list[Panel]:
    spec = resolve(fig_id, spec, tables, results)
    out = []
    for panel in spec["panels"]:
        if len(panel["series"]) > len(GREYS):
            raise FigureDefinitionError(
                f"{fig_id}: panel {panel.get('title')!r} has more series than the "
                f"{len(GREYS)} styles that keep them apart"
            )
        specs, numeric = panel["series"], bool(spec.get("numeric_x"))
        if any(PER_X in s for s in specs):
            layers = _x_of_runs(fig_id, spec, panel, results)
            specs = [_at_x(s, layers) for s in specs]
            x, numeric = [str(k) for k in layers], True
        else:
            x = [str(v) for v in panel.get("x") or spec.get("x") or _row_names(panel, tables)]
        series = [
            _table_series(s, tables, results, spec["chapter"], fig_id)
            if "table" in s
            else _result_series(s, results, spec["chapter"], fig_id)
            for s in specs
        ]
        n = {len(s.published) for s in series}
        if len(n) != 1 or len(x) not in n:
            raise FigureDefinitionError(
                f"{fig_id}: series and x of panel {panel.get('title')!r} differ in length "
                "(a panel names its x unless a series runs down a table's rows)"
            )
        if spec.get("numeric_x"):
            if spec.get("kind", "line") != "line":
                raise FigureDefinitionError(f"{fig_id}: numeric_x is for line figures")
            _numbers(fig_id, x)
        out.append(Panel(panel.get("title", ""), x, series, numeric))
    return out


def _x_of_runs(
    fig_id: str, spec: dict[str, Any], panel: dict[str, Any], results: Results
) -> list[int]:
    """The x of a panel of ``metric_per_x`` series: every k for which a seed of a series' run
    holds its template with ``{x}`` = k, numerically sorted, so a 4-layer stand-in plots
    layers 1–4 and a 30-layer model 1–30 from one definition."""
    specs = panel["series"]
    if panel.get("x") or spec.get("x") or not all({"run", PER_X} <= s.keys() for s in specs):
        raise FigureDefinitionError(
            f"{fig_id}: panel {panel.get('title')!r}: {PER_X} series take their x from the "
            f"run's metrics: each series names run + {PER_X}, and the panel names no x"
        )
    found: set[int] = set()
    for series in specs:
        template = series[PER_X]
        if template.count("{x}") != 1:
            raise FigureDefinitionError(
                f"{fig_id}: {PER_X} {template!r} needs one {{x}} where the number goes"
            )
        pattern = re.compile(re.escape(template).replace(re.escape("{x}"), r"(\d+)"))
        for result in results.seeds(spec["chapter"], series["run"]):
            if series.get("seed") in (None, result.seed):
                matches = (pattern.fullmatch(name) for name in result.metrics)
                found.update(int(m.group(1)) for m in matches if m)
    return sorted(found)


def _at_x(series: dict[str, Any], xs: list[int]) -> dict[str, Any]:
    """A ``metric_per_x`` series as a ``run`` + ``metrics`` one over the panel's x."""
    rest = {k: v for k, v in series.items() if k != PER_X}
    return {**rest, "metrics": [series[PER_X].replace("{x}", str(k)) for k in xs]}


_LEADING_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def _numbers(fig_id: str, x: list[str]) -> list[float]:
    """The numeric x of a ``numeric_x`` panel: each label's leading number."""
    out = []
    for label in x:
        match = _LEADING_NUMBER.match(label)
        if match is None:
            raise FigureDefinitionError(
                f"{fig_id}: numeric_x, but x {label!r} does not start with a number"
            )
        out.append(float(match.group(1)))
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
    ax.set_xticks([])
    ax.set_yticks([])
    _legend_below(ax, handles, [str(g) for g in panel.groups], columns=3)
    return True


def _room(ax: Any) -> float:
    """The width in pixels of the panel's column of the figure: what its title and legend may
    take without running into the next panel or off the image (the layout moves the axes, not
    the columns, so this holds before and after it)."""
    grid = ax.get_subplotspec()
    return 0.96 * ax.figure.bbox.width / (grid.get_gridspec().ncols if grid else 1)


def _wrap(text: Any, room: float) -> None:
    """Wrap a title's words at the longest line length whose drawn width fits `room` pixels:
    a count of characters per inch would guess, and a wrong guess cuts the title off."""
    words = text.get_text()
    renderer = text.figure.canvas.get_renderer()
    for width in range(len(words), 0, -1):
        text.set_text(textwrap.fill(words, width))
        if text.get_window_extent(renderer).width <= room:
            return


def _legend_below(ax: Any, handles: list[Any], labels: list[str], columns: int) -> None:
    """The legend under the panel's x axis: below its tick labels and axis label, however
    deep rotated labels make them (an offset in inches, which the layout does not rescale).
    A legend wider than the panel's column goes down to one column, then wraps its labels,
    as a legend that leaves the image loses the names of its series."""
    from matplotlib.transforms import ScaledTranslation

    figure = ax.figure
    renderer = figure.canvas.get_renderer()
    axis = ax.xaxis.get_tightbbox(renderer)
    depth = 0.05 + (ax.bbox.y0 - axis.y0) / figure.dpi if axis is not None else 0.05
    tries = [(labels, columns), (labels, 1)]
    longest = max(map(len, labels), default=0)
    tries += [([textwrap.fill(t, n) for t in labels], 1) for n in range(longest - 1, 0, -1)]
    for shown, ncol in tries:
        legend = ax.legend(
            handles,
            shown,
            frameon=False,
            loc="upper center",
            bbox_to_anchor=(0.5, 0),
            bbox_transform=ax.transAxes + ScaledTranslation(0, -depth, figure.dpi_scale_trans),
            ncol=ncol,
        )
        if legend.get_window_extent(renderer).width <= _room(ax):
            return


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
        _legend_below(ax, *ax.get_legend_handles_labels(), columns=2)
    else:
        _not_run(ax, scale)
    return drawn


def _bar_style(i: int, side: str) -> dict[str, Any]:
    """Published bars are outlined (white), measured bars filled with the series' grey: the
    pair of one series differs at a glance. The hatch tells series apart within each side,
    drawn white on a dark fill so that it stays visible."""
    face = "white" if side == "published" else GREYS[i % 6]
    dark = side == "measured" and float(face) < 0.5
    return {
        "color": face,
        "edgecolor": "black",
        "linewidth": 0.5,
        "hatch": HATCHES[i % 6],
        "hatchcolor": "white" if dark else "black",
    }


def _line_style(i: int, side: str) -> dict[str, Any]:
    """Published lines in the series' own dash with filled markers; measured ones short-dashed
    with open markers."""
    return {
        "color": GREYS[i % 6],
        "marker": MARKERS[i % 6],
        "linestyle": LINES[i % 6] if side == "published" else MEASURED_LINE,
        "markerfacecolor": GREYS[i % 6] if side == "published" else "white",
        "markeredgecolor": "black",
    }


def _scales_differ(panel: Panel) -> bool:
    """Whether the published and the measured numbers of a panel are more than SCALE_RATIO
    apart in magnitude (a tiny-scale BLEU of 0.3 beside a published 29): then the measured ones
    get an axis of their own, or they would lie flat on the published axis."""
    sides = [
        [abs(v) for s in panel.series for v in getattr(s, side) if v is not None] for side in SIDES
    ]
    if not all(sides):
        return False
    low, high = sorted(max(values) for values in sides)
    return high > 0 and (low == 0 or high / low > SCALE_RATIO)


def _thinned(ticks: list[float]) -> list[float]:
    """At most `MAX_TICKS` of many whole-number x: the first and the multiples of the
    smallest step of 1, 2, 5, 10, 20, … that keeps that many (a 30-layer model's 1, 5, 10, …,
    30, as the thesis labels them), since a label per layer would overlap its neighbours."""
    if len(ticks) <= MAX_TICKS or not all(float(t).is_integer() for t in ticks):
        return ticks
    for step in (m * 10**e for e in range(12) for m in (2, 5, 10)):
        kept = [t for t in ticks if t == ticks[0] or t % step == 0]
        if len(kept) <= MAX_TICKS:
            return kept
    return ticks


def _draw_panel(ax: Any, panel: Panel, kind: str, scale: str) -> bool:
    """Draw one panel; return whether any point (published or measured) was drawn.

    A series with nothing to draw is still named in the legend ("not run"), so a title that
    names it is not contradicted by a silent absence. Bars start at zero, on every axis.
    """
    from matplotlib.lines import Line2D

    split = _scales_differ(panel)
    axes = {"published": ax, "measured": ax.twinx() if split else ax}
    handles, labels, drawn = [], [], False
    drawn_x: set[float] = set()
    positions: list[float] = (
        _numbers(panel.title, panel.x) if panel.numeric else list(range(len(panel.x)))
    )
    width = 0.8 / max(len(panel.series), 1)
    for i, series in enumerate(panel.series):
        before = len(handles)
        for side in SIDES:
            values = getattr(series, side)
            at = series.at if side == "measured" and series.at is not None else positions
            points = [
                (p, v) for p, v in zip(at, values, strict=True) if p is not None and v is not None
            ]
            if not points:
                continue
            if at is series.at:  # runs in any order: a line joins them by x
                points.sort()
            drawn = True
            xs, ys = zip(*points, strict=True)
            drawn_x.update(xs)
            where = ", right axis" if split and side == "measured" else ""
            labels.append(
                f"{series.label} ({side}{'' if side == 'published' else ', ' + scale}{where})"
            )
            if kind == "bar":
                offset = (i - (len(panel.series) - 1) / 2) * width
                shift = -width / 4 if side == "published" else width / 4
                bars = [x + offset + shift for x in xs]
                handles.append(axes[side].bar(bars, ys, width / 2, **_bar_style(i, side)))
            else:
                handles.extend(axes[side].plot(xs, ys, **_line_style(i, side)))
        if len(handles) == before:
            handles.append(Line2D([], [], linestyle="none"))
            labels.append(f"{series.label}: not run at {scale}")
    if panel.numeric:  # ticks at every x drawn, labelled with its number
        ticks = _thinned(sorted(drawn_x | set(positions)))
        ax.set_xticks(ticks, [f"{p:g}" for p in ticks])
        ax.set_xticks([], minor=True)
    else:
        rotate = sum(len(x) + 1 for x in panel.x) > 24
        ax.set_xticks(positions, panel.x, rotation=30 if rotate else 0)
    ax.set_title(panel.title)
    if not drawn:
        _not_run(ax, scale)
        return False
    if split:
        unit = ax.get_ylabel()
        ax.set_ylabel(f"{unit} (published)".strip())
        axes["measured"].set_ylabel(f"{unit} (measured, {scale})".strip())
        axes["measured"].spines["right"].set_visible(True)
    if kind == "bar":
        for axis in set(axes.values()):
            low, high = axis.get_ylim()
            axis.set_ylim(min(low, 0), max(high, 0))
    # two columns only where two labels fit beside each other under a panel
    _legend_below(ax, handles, labels, columns=2 if max(map(len, labels)) <= 26 else 1)
    return True


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


def render(
    fig_id: str, spec: dict[str, Any], tables: dict[str, FilledTable], results: Results
) -> tuple[Any, bool]:
    """The matplotlib figure of `fig_id` and whether anything was plotted; the caller closes it."""
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
            # labelled first: a panel with a second y axis names what each side shows
            for axis in ("x", "y"):
                if f"{axis}label" in spec:
                    getattr(ax, f"set_{axis}label")(spec[f"{axis}label"])
            if spec.get("xscale") == "log2":
                ax.set_xscale("log", base=2)
            elif "xscale" in spec:
                ax.set_xscale(spec["xscale"])
            drawn |= draw_one(ax, panel)
        for ax in list(axes.flat)[len(parts) :]:
            ax.set_visible(False)
        # titles wrapped to the width they may take: the layout makes room above and below
        # a title, never beside it, so a title wider than the image is cut off at both edges
        for ax in list(axes.flat)[: len(parts)]:
            _wrap(ax.title, _room(ax))
        _wrap(figure.suptitle(spec["title"], fontsize=9), 0.96 * figure.bbox.width)
        figure.tight_layout()
    return figure, drawn


def draw(
    fig_id: str,
    spec: dict[str, Any],
    tables: dict[str, FilledTable],
    results: Results,
    layout: ReportLayout,
) -> tuple[list[Path], bool]:
    """Write ``<fig_id>.png`` and ``.pdf``; return the files and whether anything was plotted."""
    figure, drawn = render(fig_id, spec, tables, results)
    import matplotlib.pyplot as plt  # after render, which picks the Agg backend

    written = []
    with plt.rc_context(STYLE):
        for suffix in FORMATS:
            target = layout.figure(fig_id, suffix)
            with atomic_file(target, suffix=f".{suffix}") as tmp:
                figure.savefig(tmp, metadata={"CreationDate": None} if suffix == "pdf" else None)
            written.append(target)
    plt.close(figure)
    return written, drawn
