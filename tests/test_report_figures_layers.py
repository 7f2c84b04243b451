"""Figures over a model's layers (Figs 6.3, D.1) plot every layer the model has: a
``metric_per_x`` series takes its x from the layer numbers its run's metrics hold."""

import pytest

from mlrep.report import figures
from mlrep.report.figures import FigureDefinitionError, definitions
from mlrep.report.metrics import Results, collect
from tests.report_helpers import write_metrics

DEFS = definitions()
CH6 = "ch6_aligninstruct"
B24 = "bloomz-24/7b1-cosine"


def _layers(tmp_path, run: str, layers: int) -> Results:
    """A cosine analysis of a model with `layers` layers: Δ1 = k / 100, Δ2 = −k / 100."""
    deltas = {f"delta1_l{k}": k / 100 for k in range(1, layers + 1)}
    deltas |= {f"delta2_l{k}": -k / 100 for k in range(1, layers + 1)}
    write_metrics(tmp_path, CH6, run, 1, deltas)
    return collect(tmp_path, "tiny")


@pytest.mark.parametrize("layers", [4, 30])
def test_fig_6_3_draws_a_point_per_layer_of_the_model(tmp_path, layers):
    """A 4-layer stand-in draws layers 1–4, BLOOMZ-7b1 all 30, in numeric order (10 after 9)."""
    results = _layers(tmp_path, B24, layers)
    (panel,) = figures.panels("fig-6.3", DEFS["fig-6.3"], {}, results)
    assert panel.numeric and panel.x == [str(k) for k in range(1, layers + 1)]
    delta1, delta2 = panel.series
    assert delta1.measured == pytest.approx([k / 100 for k in range(1, layers + 1)])
    assert delta2.measured == pytest.approx([-k / 100 for k in range(1, layers + 1)])
    figure, drawn = figures.render("fig-6.3", DEFS["fig-6.3"], {}, results)
    line = figure.axes[0].get_lines()[0]
    assert drawn and list(line.get_xdata()) == list(range(1, layers + 1))
    # a label per layer up to 12; 30 would overlap, so the thesis's 1, 5, 10, …, 30
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels == (
        [str(k) for k in range(1, 5)] if layers == 4 else ["1", "5", "10", "15", "20", "25", "30"]
    )
    import matplotlib.pyplot as plt

    plt.close(figure)


def test_a_panel_of_fig_d_1_whose_run_is_missing_reads_not_run(tmp_path):
    results = _layers(tmp_path, "bloomz-3/7b1-de-nl-ru-cosine", 4)
    first, second, _ = figures.panels("fig-D.1", DEFS["fig-D.1"], {}, results)
    assert first.x == ["1", "2", "3", "4"]
    assert second.x == [] and [s.measured for s in second.series] == [[], []]
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots()
    assert not figures._draw_panel(ax, second, "line", "tiny")
    assert "not run at scale tiny" in [t.get_text() for t in ax.texts]
    plt.close(figure)


def test_one_seed_and_other_names_do_not_add_x(tmp_path):
    """Only names that are the template with a number count, and only the named seed's."""
    write_metrics(tmp_path, CH6, B24, 1, {"delta1_l1": 0.1, "delta1_l2": 0.2, "delta2_l9": 0.9})
    write_metrics(tmp_path, CH6, B24, 2, {"delta1_l1": 0.3, "delta1_l7": 0.7})
    series = [{"label": "Δ1", "run": B24, "metric_per_x": "delta1_l{x}", "seed": 1}]
    spec = {"chapter": CH6, "panels": [{"series": series}]}
    (panel,) = figures.panels("fig-x", spec, {}, collect(tmp_path, "tiny"))
    assert panel.x == ["1", "2"] and panel.series[0].measured == [0.1, 0.2]


@pytest.mark.parametrize(
    ("panel", "message"),
    [
        ({"x": [1, 2], "series": [{"label": "s", "run": "r", "metric_per_x": "d{x}"}]}, "no x"),
        ({"series": [{"label": "s", "runs": ["r"], "metric_per_x": "d{x}"}]}, "run \\+"),
        ({"series": [{"label": "s", "run": "r", "metric_per_x": "d"}]}, "needs one \\{x\\}"),
    ],
)
def test_per_x_definitions_that_cannot_work_are_refused(panel, message):
    spec = {"chapter": CH6, "panels": [panel]}
    with pytest.raises(FigureDefinitionError, match=f"fig-x: .*{message}"):
        figures.panels("fig-x", spec, {}, Results("tiny"))
