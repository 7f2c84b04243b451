"""Figure kinds beyond lines and bars (heatmap, scatter), one-seed series, Chapter 8 names."""

import re

import numpy as np
import pytest

from mlrep.paths import ReportLayout
from mlrep.report import figures, fill, reference, tables
from mlrep.report.figures import FigureDefinitionError, definitions
from mlrep.report.metrics import Results, collect
from mlrep.report.point_clouds import PointsFileError, kde, read_points
from tests.report_helpers import REFERENCE, write_metrics

DEFS = definitions()


def test_chapter8_figures_read_the_metric_names_the_analyses_write():
    """fig-8.2/E.1/E.2/E.4 read llr_{sup,zst}_{src,tgt}_l<k> and svcca_l<k> (mlrep eval …)."""
    contract = re.compile(r"^(llr_(sup|zst)_(src|tgt)_l([1-9]|1[0-2])|svcca_l[1-6])$")
    for fig in ("fig-8.2", "fig-E.1", "fig-E.2", "fig-E.4"):
        metrics = {m for p in DEFS[fig]["panels"] for s in p["series"] for m in s["metrics"]}
        assert all(contract.match(m) for m in metrics), fig
    titles = [p["title"] for p in DEFS["fig-8.2"]["panels"]]
    assert titles[:3] == ["OPUS supervised", "IWSLT supervised", "Europarl supervised"]
    assert all(t.endswith("zero-shot") for t in titles[3:]) and len(titles) == 6
    assert len(DEFS["fig-E.4"]["panels"]) == 3 * 3 * 2  # pairs × datasets × sup/zero-shot


def test_one_seed_series_ignore_the_other_seeds(tmp_path):
    run = "opus/prenorm-s-enc-t-dec-w"
    for seed, value in ((1, 0.2), (10, 0.5), (20, 0.9)):
        write_metrics(tmp_path, "ch8_layernorm", run, seed, {"svcca_l1": value})
    (panel,) = figures.panels("fig-E.1", DEFS["fig-E.1"], {}, collect(tmp_path, "tiny"))
    assert panel.series[0].measured[:2] == [0.5, None]


def ted_results(tmp_path):
    chapter = "mrasp2"
    write_metrics(tmp_path, chapter, "m-transformer", 1, {"tedm_top1_de-en": 70.0})
    write_metrics(tmp_path, chapter, "mrasp2-w-o-aa", 1, {"tedm_top1_de-en": 74.0})
    write_metrics(tmp_path, chapter, "mrasp2-w-o-aa", 2, {"tedm_top1_de-en": 76.0})
    write_metrics(
        tmp_path, chapter, "mrasp2", 1, {"tedm_top1_de-en": 80.0, "tedm_top1_en-de": 90.0}
    )
    return collect(tmp_path, "tiny")


def test_heatmap_cells_are_differences_of_seed_means(tmp_path):
    grid_a, grid_b = figures.grids("mrasp2-fig-3", DEFS["mrasp2-fig-3"], ted_results(tmp_path))
    de, en = grid_a.labels.index("de"), grid_a.labels.index("en")
    assert len(grid_a.labels) == 15 and grid_a.values[de][en] == pytest.approx(5.0)  # 75 − 70
    assert grid_b.values[de][en] == pytest.approx(5.0)  # 80 − 75
    assert grid_b.values[en][de] is None  # no mRASP2 w/o AA value to subtract
    assert all(grid_a.values[i][i] is None for i in range(15))


def test_scatter_points_are_runs_with_both_metrics(tmp_path):
    chapter = "oneligner"
    write_metrics(tmp_path, chapter, "af", 1, {"train_pairs": 300.0, "avg.-acc.": 40.0})
    write_metrics(tmp_path, chapter, "de", 1, {"train_pairs": 5000.0, "avg.-acc.": 80.0})
    write_metrics(tmp_path, chapter, "ar", 1, {"avg.-acc.": 50.0})  # no pair count: no point
    write_metrics(tmp_path, chapter, "top1-eng/fr", 1, {"cc100_gb": 56.0, "new_tatoeba_acc": 88.0})
    results = collect(tmp_path, "tiny")
    published = reference.load_all(REFERENCE)
    defined = tables.load(published)
    filled = {
        "oneligner-table-9": fill.fill(
            defined["oneligner-table-9"], published["oneligner-table-9"], results
        )
    }
    (fig1,) = figures.scatter_panels("oneligner-fig-1", DEFS["oneligner-fig-1"], filled, results)
    assert sorted(fig1.clouds[0].points) == [(300.0, 40.0, "af"), (5000.0, 80.0, "de")]
    (fig2,) = figures.scatter_panels("oneligner-fig-2", DEFS["oneligner-fig-2"], {}, results)
    assert fig2.clouds[0].points == [(56.0, 88.0, "fr")]


def test_new_kinds_draw_png_and_pdf_and_say_when_nothing_ran(tmp_path):
    layout = ReportLayout(tmp_path / "reports")
    results = ted_results(tmp_path / "results")
    written, drawn = figures.draw("mrasp2-fig-3", DEFS["mrasp2-fig-3"], {}, results, layout)
    assert drawn and [p.suffix for p in written] == [".png", ".pdf"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    _, drawn = figures.draw("oneligner-fig-2", DEFS["oneligner-fig-2"], {}, Results("tiny"), layout)
    assert not drawn


def tsne_results(tmp_path, text):
    """mRASP2 runs with a metrics.json and, beside the lowest seed's, a points CSV."""
    for run in ("m-transformer", "mrasp2"):
        for seed in (2, 1):
            path = write_metrics(tmp_path, "mrasp2", run, seed, {"tedm_top1": 80.0})
            if seed == 1:
                (path.parent / "tedm_tsne.csv").write_text(text, encoding="utf-8")
    return collect(tmp_path, "tiny")


def test_points_panels_read_the_csv_beside_the_run_and_keep_the_named_groups(tmp_path):
    rng = np.random.default_rng(0)
    rows = [f"{x},{y},{g}" for g in ("ko", "de", "en", "ja") for x, y in rng.normal(size=(5, 2))]
    results = tsne_results(tmp_path, "x,y,group\n" + "\n".join(rows) + "\n")
    first, second = figures.points_panels("mrasp2-fig-4", DEFS["mrasp2-fig-4"], results)
    assert list(first.groups) == ["en", "ja", "de"] and first.groups["de"].shape == (5, 2)
    assert second.title == "mRASP2"
    layout = ReportLayout(tmp_path / "reports")
    assert figures.draw("mrasp2-fig-4", DEFS["mrasp2-fig-4"], {}, results, layout)[1]
    (missing,) = figures.points_panels("mrasp2-fig-5", DEFS["mrasp2-fig-5"], results)
    assert missing.groups is None  # no tedm_multiway.csv: not run


def test_points_file_errors_name_file_and_line(tmp_path):
    results = tsne_results(tmp_path, "x,y,group\n0.5,1.0,en\n0.5,oops,de\n")
    with pytest.raises(PointsFileError, match=r"tedm_tsne.csv:3: expected x,y,group"):
        figures.points_panels("mrasp2-fig-4", DEFS["mrasp2-fig-4"], results)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(PointsFileError, match=r"bad\.csv:1: the header must be x,y,group"):
        read_points(bad)


def test_kde_matches_scipy_and_integrates_to_one():
    stats = pytest.importorskip("scipy.stats")
    points = np.random.default_rng(1).normal(size=(400, 2)) @ np.array([[1.0, 0.6], [0.0, 0.8]])
    xs, ys = np.linspace(-5, 5, 60), np.linspace(-4, 4, 50)
    ours = kde(points, xs, ys)
    grid_x, grid_y = np.meshgrid(xs, ys)
    theirs = stats.gaussian_kde(points.T)(np.vstack([grid_x.ravel(), grid_y.ravel()]))
    assert ours == pytest.approx(theirs.reshape(ours.shape), abs=1e-12)
    assert ours.sum() * (xs[1] - xs[0]) * (ys[1] - ys[0]) == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "pie", "panels": []}, "kind 'pie' is not one of"),
        ({"kind": "heatmap", "panels": [{"run": "r", "metric": "m"}]}, "needs `languages`"),
        (
            {"kind": "scatter", "panels": [{"series": [{"label": "s", "x": "a", "y": "b"}]}]},
            "needs one of runs_of, runs_under",
        ),
        ({"kind": "points", "style": "kde", "panels": []}, "needs `file` and style kde|scatter"),
    ],
)
def test_bad_definitions_name_the_figure(tmp_path, spec, message):
    spec = {"chapter": "mrasp2", "title": "t", **spec}
    with pytest.raises(FigureDefinitionError, match=f"fig-x: .*{message}|fig-x: {message}"):
        figures.draw("fig-x", spec, {}, Results("tiny"), ReportLayout(tmp_path))
