"""Figure kinds beyond lines and bars (heatmap, scatter), one-seed series, Chapter 8 names, and
what a reader needs of every line and bar panel: bars from zero, no two series alike, measured
numbers legible beside published ones of another magnitude, every named series accounted for."""

import json
import re

import numpy as np
import pytest
import yaml
from scipy import stats

from mlrep import config
from mlrep.chapters.ch8_layernorm import grid
from mlrep.nmt.metrics import layer_metrics
from mlrep.paths import ReportLayout
from mlrep.report import figures, fill, reference, tables
from mlrep.report.figures import FigureDefinitionError, definitions
from mlrep.report.metrics import Results, collect
from mlrep.report.point_clouds import PointsFileError, kde, read_points
from tests.conftest import REPO
from tests.report_helpers import REFERENCE, ch8_results, write_metrics

DEFS = definitions()
CH8 = "ch8_layernorm"


def test_chapter8_figures_read_the_metric_names_the_analyses_write():
    """fig-8.2/E.1/E.2/E.4 read llr_{sup,zst}_{src,tgt}_{enc,dec}<k> and svcca_l<k>."""
    contract = re.compile(r"^(llr_(sup|zst)_(src|tgt)_(enc|dec)[1-6]|svcca_l[1-6])$")
    for fig in ("fig-8.2", "fig-E.1", "fig-E.2", "fig-E.4"):
        metrics = {m for p in DEFS[fig]["panels"] for s in p["series"] for m in s["metrics"]}
        assert all(contract.match(m) for m in metrics), fig
    titles = [p["title"] for p in DEFS["fig-8.2"]["panels"]]
    assert titles[:3] == ["OPUS supervised", "IWSLT supervised", "Europarl supervised"]
    assert all(t.endswith("zero-shot") for t in titles[3:]) and len(titles) == 6
    assert len(DEFS["fig-E.4"]["panels"]) == 3 * 3 * 2  # pairs × datasets × sup/zero-shot


def _probe_file(path, layers: list[float | None], encoder: int):
    result = {"src": layers, "tgt": [None if v is None else v / 2 for v in layers]}
    path.write_text(json.dumps({**result, "n_encoder_layers": encoder}), encoding="utf-8")
    return path


def _chapter8_metrics(tmp_path, probe_layers: list[float | None], encoder: int) -> dict:
    """What `mlrep nmt metrics` adds for the probes and SVCCA of a model with these layers."""
    sup = _probe_file(tmp_path / "probe_sup.json", probe_layers, encoder)
    zst = _probe_file(tmp_path / "probe_zst.json", [v and v + 1 for v in probe_layers], encoder)
    svcca = tmp_path / "svcca.json"
    svcca.write_text(json.dumps({"svcca": [0.5 + k / 100 for k in range(encoder)]}))
    return layer_metrics({"sup": sup, "zst": zst}, svcca)


def test_llr_of_a_2_plus_2_layer_model_lands_on_the_thesis_encoder_and_decoder_layers(tmp_path):
    """Fig 8.2's L1–L6 are encoder layers and L7–L12 decoder layers, whatever the depth."""
    metrics = _chapter8_metrics(tmp_path, [90.0, 80.0, None, 60.0], encoder=2)
    assert "llr_sup_src_dec1" not in metrics  # a layer without tokens is no number
    write_metrics(tmp_path / "results", CH8, "iwslt/prenorm-s-enc-t-dec-w", 1, metrics)
    panels = figures.panels("fig-8.2", DEFS["fig-8.2"], {}, collect(tmp_path / "results", "tiny"))
    sup, zst = panels[1], panels[4]  # IWSLT supervised / zero-shot
    assert sup.x[6] == "L7" and sup.series[0].label == "Pre-Src"
    assert sup.series[0].measured == [90.0, 80.0, None, None, None, None, None, 60.0] + [None] * 4
    assert sup.series[1].measured[:2] == [45.0, 40.0]  # Pre-Tgt
    assert zst.series[0].measured[7] == 61.0
    assert sup.series[2].measured == [None] * 12  # PostNorm did not run


def test_every_chapter_8_figure_draws_from_the_runs_the_full_grid_writes(tmp_path):
    """Each result series of Figs 8.2, 8.3, E.1, E.2 and E.4 names a run the full grid
    writes and metrics its steps write; Fig 8.3's PreNorm/PostNorm bars come from Table 8.2."""
    raw = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    section = config.load({**raw, "scale": "full"})[CH8]
    layer = _chapter8_metrics(tmp_path, [float(k) for k in range(50, 62)], encoder=6)
    results_dir = tmp_path / "results"
    for dataset, system, seed in grid.scored_runs(section):
        bleu = {"zst_bleu": 10.0 + seed, "sup_bleu": 30.0, "zst_off_target": 5.0}
        metrics = bleu if system == "pivot" else {**bleu, **layer}
        write_metrics(results_dir, CH8, f"{dataset}/{system}", seed, metrics, scale="full")
    results = collect(results_dir, "full")
    published = reference.load_all(REFERENCE)
    table = tables.load(published)["thesis-table-8.2"]
    filled = {"thesis-table-8.2": fill.fill(table, published["thesis-table-8.2"], results)}
    layout = ReportLayout(tmp_path / "reports")
    chapter_8 = [fig for fig, spec in DEFS.items() if spec["chapter"] == CH8]
    assert sorted(chapter_8) == ["fig-8.2", "fig-8.3", "fig-E.1", "fig-E.2", "fig-E.4"]
    for fig in chapter_8:
        for panel in figures.panels(fig, DEFS[fig], filled, results):
            for series in panel.series:
                assert None not in series.measured, (fig, panel.title, series.label)
        written, drawn = figures.draw(fig, DEFS[fig], filled, results, layout)
        assert drawn and written[0].stat().st_size > 0, fig
    (with_res, _) = figures.panels("fig-8.3", DEFS["fig-8.3"], filled, results)
    swap = next(s for s in with_res.series if s.label == "Swap-PreNorm")
    assert swap.measured == [pytest.approx(10 + 31 / 3)] * 3  # mean over seeds 1, 10, 20


def test_result_series_need_one_run_or_one_metric_per_x(tmp_path):
    spec = {"chapter": CH8, "panels": [{"series": [{"label": "s", "run": "r", "metric": "m"}]}]}
    with pytest.raises(FigureDefinitionError, match="needs run \\+ metrics or runs \\+ metric"):
        figures.panels("fig-x", spec, {}, Results("tiny"))


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
    chapter = "onealigner"
    # Table 9's rows read the en-<xx> runs (its `runs` map), Fig 1 their pair counts
    write_metrics(tmp_path, chapter, "en-af", 1, {"train_pairs": 300.0, "tatoeba_avg": 40.0})
    write_metrics(tmp_path, chapter, "en-de", 1, {"train_pairs": 5000.0, "tatoeba_avg": 80.0})
    write_metrics(tmp_path, chapter, "en-ar", 1, {"tatoeba_avg": 50.0})  # no pair count
    write_metrics(tmp_path, chapter, "top1-eng/fr", 1, {"cc100_gb": 56.0, "new_tatoeba_acc": 88.0})
    results = collect(tmp_path, "tiny")
    published = reference.load_all(REFERENCE)
    defined = tables.load(published)
    filled = {
        "onealigner-table-9": fill.fill(
            defined["onealigner-table-9"], published["onealigner-table-9"], results
        )
    }
    (fig1,) = figures.scatter_panels("onealigner-fig-1", DEFS["onealigner-fig-1"], filled, results)
    assert sorted(fig1.clouds[0].points) == [(300.0, 40.0, "en-af"), (5000.0, 80.0, "en-de")]
    (fig2,) = figures.scatter_panels("onealigner-fig-2", DEFS["onealigner-fig-2"], {}, results)
    assert fig2.clouds[0].points == [(56.0, 88.0, "fr")]


def test_new_kinds_draw_png_and_pdf_and_say_when_nothing_ran(tmp_path):
    layout = ReportLayout(tmp_path / "reports")
    results = ted_results(tmp_path / "results")
    written, drawn = figures.draw("mrasp2-fig-3", DEFS["mrasp2-fig-3"], {}, results, layout)
    assert drawn and [p.suffix for p in written] == [".png", ".pdf"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    _, drawn = figures.draw(
        "onealigner-fig-2", DEFS["onealigner-fig-2"], {}, Results("tiny"), layout
    )
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


def _filled(results: Results, *table_ids: str) -> dict[str, fill.FilledTable]:
    """The named tables filled from the published CSVs and `results`."""
    published = reference.load_all(REFERENCE)
    defined = tables.load(published)
    return {t: fill.fill(defined[t], published[t], results) for t in table_ids}


def _tables_of(spec: dict) -> set[str]:
    return {s["table"] for p in spec["panels"] for s in p.get("series", []) if "table" in s}


def _panel_axes(figure) -> list[list]:
    """The axes of each drawn panel: its own and, where it has one, its right-hand twin."""
    groups: dict[tuple, list] = {}
    for ax in figure.axes:  # the panels first, twins after them
        if ax.get_visible():
            groups.setdefault(ax.get_position().bounds, []).append(ax)
    return list(groups.values())


def _legend(ax) -> list[tuple[str, tuple]]:
    """(label, what the key shows) per legend entry: a bar's fill, outline and hatch (a hatch
    in the colour of its fill shows nothing), a line's colour, dash, marker and marker fill."""
    legend = ax.get_legend()
    entries = []
    for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
        if hasattr(handle, "get_hatch"):
            face = tuple(handle.get_facecolor())
            hatch = handle.get_hatch() if tuple(handle.get_hatchcolor()) != face else ""
            style = ("bar", face, tuple(handle.get_edgecolor()), hatch or "")
        else:
            style = (
                "line",
                handle.get_color(),
                handle.get_linestyle(),
                handle.get_marker(),
                handle.get_markerfacecolor(),
            )
        entries.append((text.get_text(), style))
    return entries


def _two_sided(n: int) -> list[figures.Series]:
    return [figures.Series(f"s{i}", [20.0 + i, 25.0 + i], [18.0 + i, 26.0 + i]) for i in range(n)]


@pytest.mark.parametrize("kind", ["line", "bar"])
def test_no_two_series_of_a_panel_look_alike(kind):
    """Up to the six styles, every published and every measured series has a key of its own;
    a panel with more series than styles is refused."""
    import matplotlib.pyplot as plt

    for n in range(1, len(figures.GREYS) + 1):
        figure, ax = plt.subplots()
        figures._draw_panel(ax, figures.Panel("p", ["a", "b"], _two_sided(n)), kind, "tiny")
        styles = [style for _, style in _legend(ax)]
        plt.close(figure)
        assert len(styles) == 2 * n and len(set(styles)) == 2 * n, (kind, n, styles)
    series = [{"label": str(i), "run": "r", "metrics": ["m"]} for i in range(7)]
    spec = {"chapter": CH8, "x": ["a"], "panels": [{"title": "crowded", "series": series}]}
    with pytest.raises(FigureDefinitionError, match="more series than the 6 styles"):
        figures.panels("fig-x", spec, {}, Results("tiny"))


def test_every_bar_starts_at_zero_and_fig_8_3_keeps_published_and_measured_apart(tmp_path):
    """Each bar panel of figures.yaml (published numbers, plus Chapter 8 runs) has a y axis
    from zero; in Fig 8.3 the measured PreNorm and PostNorm bars look unlike the published."""
    import matplotlib.pyplot as plt

    ch8_results(tmp_path)  # OPUS #1 / #2 BLEU 10 and about 17: the published scale
    results = collect(tmp_path, "tiny")
    bars = [fig for fig, spec in DEFS.items() if spec.get("kind") == "bar"]
    assert {"fig-3.3", "fig-5.2", "fig-5.3", "fig-8.3"} <= set(bars)
    for fig in bars:
        filled = _filled(results, *_tables_of(DEFS[fig]))
        figure, _ = figures.render(fig, DEFS[fig], filled, results)
        for axes in _panel_axes(figure):
            for ax in axes:
                assert ax.get_ylim()[0] <= 0 <= ax.get_ylim()[1], (fig, axes[0].get_title())
        if fig == "fig-8.3":
            with_res = _panel_axes(figure)[0]
            assert len(with_res) == 1  # one scale: one axis
            keys = dict(_legend(with_res[0]))
            assert keys["PreNorm (published)"] != keys["PreNorm (measured, tiny)"]
            assert len(set(keys.values())) == len(keys)
        plt.close(figure)


def test_measured_numbers_an_order_of_magnitude_off_get_their_own_axis(tmp_path):
    """Fig 8.3 at tiny: BLEU 0.3 beside the published 4.9 to 29.2 goes on a labelled right-hand
    axis (also from zero); numbers within SCALE_RATIO of the published share the left one."""
    import matplotlib.pyplot as plt

    def panel_of(bleu: float) -> list:
        results_dir = tmp_path / str(bleu)
        for system in ("prenorm-s-enc-t-dec-w", "postnorm-s-enc-t-dec-w"):
            write_metrics(results_dir, CH8, f"iwslt/{system}", 1, {"zst_bleu": bleu})
        results = collect(results_dir, "tiny")
        spec = DEFS["fig-8.3"]
        figure, _ = figures.render("fig-8.3", spec, _filled(results, "thesis-table-8.2"), results)
        axes = _panel_axes(figure)[0]
        plt.close(figure)
        return axes

    left, right = panel_of(0.3)  # 29.2 / 0.3 > 10
    assert left.get_ylabel() == "BLEU (published)"
    assert right.get_ylabel() == "BLEU (measured, tiny)" and right.get_ylim()[0] == 0
    assert max(p.get_height() for p in right.patches) == pytest.approx(0.3)
    assert max(p.get_height() for p in left.patches) == pytest.approx(29.2)
    assert "PreNorm (measured, tiny, right axis)" in dict(_legend(left))
    (alone,) = panel_of(29.2 / figures.SCALE_RATIO)  # exactly SCALE_RATIO apart: one axis
    assert alone.get_ylabel() == "BLEU"


def test_a_series_without_numbers_is_named_in_the_legend(tmp_path):
    """Fig 8.3's title names Swap-PreNorm: where its runs did not run, the legend says so."""
    import matplotlib.pyplot as plt

    ch8_results(tmp_path)
    results = collect(tmp_path, "tiny")
    figure, drawn = figures.render(
        "fig-8.3", DEFS["fig-8.3"], _filled(results, "thesis-table-8.2"), results
    )
    labels = [label for label, _ in _legend(_panel_axes(figure)[0][0])]
    plt.close(figure)
    assert drawn and "Swap-PreNorm: not run at tiny" in labels
    assert "PostNorm (measured, tiny)" in labels


def test_fig_e1_draws_the_first_dataset_and_seed_that_ran_and_says_which(tmp_path):
    """Pinned to OPUS seed 10 by the thesis, Fig E.1 draws IWSLT seed 1 where only that ran
    (the tiny grid), OPUS seed 10 once it ran, and says which in its panel title and caption."""
    spec = DEFS["fig-E.1"]
    assert spec["choose"] == {"dataset": ["opus", "iwslt", "europarl"], "seed": [10, 1, 20]}
    nothing = figures.resolve("fig-E.1", spec, {}, Results("tiny"))
    assert "no results for any of" in nothing["numbers"]
    assert nothing["panels"][0]["title"] == "drawn: opus, seed 10"
    run = "iwslt/postnorm-s-enc-t-dec-w"
    write_metrics(tmp_path, CH8, run, 1, {"svcca_l1": 0.4})
    iwslt = figures.resolve("fig-E.1", spec, {}, collect(tmp_path, "tiny"))
    assert iwslt["panels"][0]["title"] == "drawn: iwslt, seed 1"
    assert iwslt["numbers"].endswith("the thesis draws dataset opus, seed 10")
    (panel,) = figures.panels("fig-E.1", spec, {}, collect(tmp_path, "tiny"))
    assert panel.series[1].measured[0] == 0.4 and panel.series[0].measured[0] is None
    write_metrics(tmp_path, CH8, "opus/prenorm-s-enc-t-dec-w", 10, {"svcca_l2": 0.7})
    opus = figures.resolve("fig-E.1", spec, {}, collect(tmp_path, "tiny"))
    assert opus["panels"][0]["series"][0]["seed"] == 10  # a number, as the results have it
    assert opus["numbers"].endswith("drawn from dataset opus, seed 10, as in the thesis")
    assert (
        figures.resolve("fig-E.2", DEFS["fig-E.2"], {}, collect(tmp_path, "tiny"))["panels"][0][
            "title"
        ]
        == "drawn: opus, seed 10"
    )


def test_x_positions_default_to_the_table_rows_a_series_runs_down():
    """Fig 3.1 plots Table A.2's rows: its x are their labels (the embedding dimensions)."""
    (panel,) = figures.panels(
        "fig-3.1", DEFS["fig-3.1"], _filled(Results("tiny"), "thesis-table-A.2"), Results("tiny")
    )
    assert panel.x[:3] == ["768 (LaBSE)", "512", "384"] and panel.x[-1] == "32"
    spec = {"chapter": CH8, "panels": [{"series": [{"label": "s", "run": "r", "metrics": ["m"]}]}]}
    with pytest.raises(FigureDefinitionError, match="a panel names its x"):
        figures.panels("fig-x", spec, {}, Results("tiny"))


CH3 = "ch3_lealla"
# the runs Chapter 3 writes under results/ch3_lealla/: the full-width teacher, the teacher
# through a dimension-reduction layer, and LEALLA per size and loss (none: AMS+FD+LD)
CH3_RUN = re.compile(
    r"^(teacher|reduce-\d+|lealla-(small|base|large)(-(ams|fd|ld|ams-fd|ams-ld|ams-df|ams-syn))?)$"
)


def test_chapter3_figures_and_appendix_tables_name_the_chapter_3_runs():
    """Fig 3.1's measured runs and the rows of Tables A.1 and A.4 (Fig 3.3's) are runs that
    Chapter 3 writes: teacher, reduce-<dim>, lealla-<size>[-<loss>]."""
    published = reference.load_all(REFERENCE)
    defined = tables.load(published)
    for table_id in ("thesis-table-A.1", "thesis-table-A.4"):
        keys = defined[table_id].row_keys(published[table_id].header, published[table_id].rows)
        assert all(CH3_RUN.match(k) for k in keys), keys
    runs = {r for s in DEFS["fig-3.1"]["panels"][0]["series"] for r in s["measured"]["runs"]}
    assert all(CH3_RUN.match(r) for r in runs) and {"teacher", "reduce-16", "reduce-512"} <= runs


def _ch3_reduction_results(tmp_path) -> Results:
    """A tiny scale's ladder: a 512-d teacher reduced to 384 and 16 (no reduce-512 run)."""
    for run, dim, score in (
        ("teacher", 512, 90.0),
        ("reduce-384", 384, 88.0),
        ("reduce-16", 16, 40.0),
    ):
        metrics = {"dim": dim, "tatoeba_avg": score, "un_avg": score - 5, "bucc_avg": score - 1}
        write_metrics(tmp_path, CH3, run, 1, metrics)
    return collect(tmp_path, "tiny")


def test_fig_3_1_places_points_at_the_embedding_dimensions(tmp_path):
    """Fig 3.1's x is the embedding dimension, not the row's position: the published points
    at Table A.2's 768 … 32 and the measured ones at each run's own dimension, on a log2 axis
    whose ticks read the dimensions."""
    import matplotlib.pyplot as plt

    results = _ch3_reduction_results(tmp_path)
    filled = _filled(results, "thesis-table-A.2")
    (panel,) = figures.panels("fig-3.1", DEFS["fig-3.1"], filled, results)
    tatoeba = panel.series[0]
    assert panel.numeric and tatoeba.published[0] == 83.7
    measured = {x: v for x, v in zip(tatoeba.at, tatoeba.measured, strict=True) if v}
    assert measured == {512: 90.0, 384: 88.0, 16: 40.0}
    figure, drawn = figures.render("fig-3.1", DEFS["fig-3.1"], filled, results)
    ax = _panel_axes(figure)[0][0]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    lines = dict(zip(texts, ax.get_lines(), strict=True))  # every series has both sides
    plt.close(figure)
    assert drawn and ax.get_xscale() == "log"
    published = [768, 512, 384, 256, 192, 128, 64, 32]
    assert list(lines["Tatoeba (published)"].get_xdata()) == published
    assert list(lines["Tatoeba (measured, tiny)"].get_xdata()) == [16, 384, 512]
    assert list(lines["Tatoeba (measured, tiny)"].get_ydata()) == [40.0, 88.0, 90.0]
    assert list(ax.get_xticks()) == sorted([*published, 16])
    assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["16", "32"]


def test_numeric_x_needs_numbers_and_a_line_figure():
    series = [{"label": "s", "run": "r", "metrics": ["m"]}]
    spec = {"chapter": CH3, "numeric_x": True, "x": ["a"], "panels": [{"series": series}]}
    with pytest.raises(FigureDefinitionError, match="'a' does not start with a number"):
        figures.panels("fig-x", spec, {}, Results("tiny"))
    with pytest.raises(FigureDefinitionError, match="numeric_x is for line figures"):
        figures.panels("fig-x", {**spec, "kind": "bar"}, {}, Results("tiny"))


def test_fig_3_3_draws_measured_bars_beside_the_published_from_the_lealla_runs(tmp_path):
    """Fig 3.3 reads Table A.4: lealla-<size>-<loss> for AMS+FD and AMS+LD, lealla-<size> for
    the full model (AMS+FD+LD) and, for AMS alone, the architecture run that trained it
    (arch-8 for small), each bar beside its published one."""
    import matplotlib.pyplot as plt

    un = dict.fromkeys(("un_es", "un_fr", "un_ru", "un_zh"), 50.0)
    write_metrics(tmp_path, CH3, "lealla-small", 1, {"tatoeba_avg": 70.0, **un})
    write_metrics(tmp_path, CH3, "lealla-base-ams-fd", 1, {"tatoeba_avg": 60.0})
    write_metrics(tmp_path, CH3, "arch-8", 1, {"tatoeba_avg": 65.0})
    results = collect(tmp_path, "tiny")
    filled = _filled(results, "thesis-table-A.4")
    tatoeba, un_panel = figures.panels("fig-3.3", DEFS["fig-3.3"], filled, results)
    by_label = {s.label: s for s in tatoeba.series}
    assert by_label["AMS+FD+LD"].measured == [70.0, None, None]
    assert by_label["AMS+FD"].measured == [None, 60.0, None]
    assert by_label["AMS"].measured == [65.0, None, None]
    assert by_label["AMS"].published == [80.3, 81.7, 82.9]
    assert un_panel.series[3].measured[0] == 50.0  # UN avg.: the mean of the four UN cells
    figure, _ = figures.render("fig-3.3", DEFS["fig-3.3"], filled, results)
    labels = dict(_legend(_panel_axes(figure)[0][0]))
    plt.close(figure)
    assert {"AMS+FD+LD (published)", "AMS+FD+LD (measured, tiny)"} <= set(labels)


def test_fig_5_2_has_the_thesis_three_panels():
    """Fig 5.2 of the thesis: 626.II MLSC, 626.II mBART FT, then 626.I, each over its own pairs."""
    results = Results("tiny")
    filled = _filled(results, *_tables_of(DEFS["fig-5.2"]))
    figure, _ = figures.render("fig-5.2", DEFS["fig-5.2"], filled, results)
    axes = [axes[0] for axes in _panel_axes(figure)]
    assert [ax.get_title() for ax in axes] == [
        "626.II, MLSC (Table C.6)",
        "626.II, mBART FT (Table C.6)",
        "626.I, MLSC (Table C.5)",
    ]
    assert [t.get_text() for t in axes[0].get_xticklabels()][:2] == ["en-tr", "en-ro"]
    assert [t.get_text() for t in axes[2].get_xticklabels()][:2] == ["en-ja", "en-vi"]
