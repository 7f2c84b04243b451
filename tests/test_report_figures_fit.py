"""Every figure's titles and legends lie inside its image: a title or legend cut off at an
edge (Fig 6.1's title, wider than its one panel) loses words a reader needs. Each figure of
figures.yaml is rendered with no results and with a result for every metric it names,
beside the published tables, and measured through matplotlib's own renderer."""

import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from mlrep.report import figures, fill, reference, tables
from mlrep.report.metrics import Results, SeedResult
from tests.report_helpers import REFERENCE

DEFS = figures.definitions()
LAYERS = 30  # BLOOMZ-7b1's: the longest per-layer x a figure draws


class _EveryMetric(dict):
    """Metrics that hold every name, each with a value of its own (from its hash), and list
    the per-layer names a ``metric_per_x`` series looks for."""

    def __contains__(self, name: object) -> bool:
        return True

    def __missing__(self, name: str) -> float:
        return 1 + zlib.crc32(name.encode()) % 60


@dataclass
class _EveryRun(Results):
    """Results in which every run of every chapter has one seed with every metric."""

    def seeds(self, chapter: str, run: str) -> list[SeedResult]:
        names = {f"delta{d}_l{k}": 0.01 * d * k for d in (1, 2) for k in range(1, LAYERS + 1)}
        return [SeedResult(Path(chapter, run), chapter, run, 1, self.scale, _EveryMetric(names))]


def _filled(results: Results) -> dict[str, fill.FilledTable]:
    """Every table a figure reads (its series' ``table``, a scatter's ``runs_of``), filled."""
    published = reference.load_all(REFERENCE)
    defined = tables.load(published)
    series = [s for d in DEFS.values() for p in d["panels"] for s in p.get("series", [])]
    wanted = {s[k] for s in series for k in ("table", "runs_of") if k in s}
    return {t: fill.fill(defined[t], published[t], results) for t in sorted(wanted)}


def _outside(figure) -> list[str]:
    """The titles and legends of `figure` whose drawn box leaves the figure's."""
    renderer = figure.canvas.get_renderer()
    box = figure.bbox
    texts = figure.texts + [a.title for a in figure.axes if a.get_visible()]  # suptitle first
    legends = [a.get_legend() for a in figure.axes if a.get_visible() and a.get_legend()]
    out = []
    for artist in [t for t in texts if t.get_text()] + legends:
        drawn = artist.get_window_extent(renderer)
        if not (
            drawn.x0 >= box.x0 - 0.5
            and drawn.y0 >= box.y0 - 0.5
            and drawn.x1 <= box.x1 + 0.5
            and drawn.y1 <= box.y1 + 0.5
        ):
            name = artist.get_text() if hasattr(artist, "get_text") else "legend"
            out.append(f"{name!r} at {drawn.bounds} outside {box.bounds}")
    return out


@pytest.mark.parametrize("measured", [False, True], ids=["no results", "every metric"])
def test_every_title_and_legend_lies_inside_its_figure(measured):
    import matplotlib.pyplot as plt

    results = _EveryRun("tiny") if measured else Results("tiny")
    filled = _filled(results)
    cut = {}
    for fig_id, spec in DEFS.items():
        figure, _ = figures.render(fig_id, spec, filled, results)
        figure.canvas.draw()
        if outside := _outside(figure):
            cut[fig_id] = outside
        plt.close(figure)
    assert not cut, cut
