"""Table filling details the main tests leave open, each against a hand count or the statistic
computed directly: the mutants of `mlrep.report.fill` that benchmarks/mutation.py found
surviving.

The bootstrap settings reach the significance marks, average rows average their own group,
aggregates keep per-seed means, printed averages and deltas are checked to one unit of their
last digit, and a delta operand may be a result key.
"""

import pytest

from mlrep.report import fill, tables
from mlrep.report.metrics import Results, collect
from mlrep.report.stats import paired_bootstrap
from tests.report_helpers import write_metrics
from tests.test_report_tables import synthetic

CH8 = "ch8_layernorm"


def _fill(header, rows, spec=None, results=None, **kwargs):
    table = synthetic(header, rows)
    definition = tables.build("t", CH8, spec or {}, table)
    return fill.fill(definition, table, results or Results("tiny"), **kwargs)


def test_bootstrap_settings_come_from_the_report_section():
    assert fill.bootstrap_of({"bootstrap_samples": "300", "bootstrap_seed": 9}) == (300, 9)


def test_significance_uses_the_given_bootstrap_on_the_seeds_both_rows_share(tmp_path):
    # the baseline ran seeds 1 and 2, the other row seeds 2 and 3: only seed 2 is paired
    for seed in (1, 2):
        write_metrics(tmp_path, CH8, "base", seed, {"bleu": 10.0}, bleu_drop={"bleu": 0.3})
    for seed in (2, 3):
        write_metrics(tmp_path, CH8, "new", seed, {"bleu": 11.0}, bleu_drop={"bleu": 0.25})
    spec = {"significance": {"baseline": "base"}}
    result = _fill(
        ["M", "BLEU"],
        [["base", "1"], ["new", "2"]],
        spec,
        collect(tmp_path, "tiny"),
        bootstrap=(300, 4),
    )
    new, base = result.cell("new", "BLEU"), result.cell("base", "BLEU")
    assert base.p_value is None  # the baseline is not compared with itself
    assert new.p_value == paired_bootstrap(new.bleu_stats[2], base.bleu_stats[2], 300, 4)
    assert new.p_value != paired_bootstrap(new.bleu_stats[2], base.bleu_stats[2])


def test_rows_of_several_groups_are_tested_against_the_base_row_above_them(tmp_path):
    """Chapter 5's tables: the +rows under MLSC against MLSC, those under mBART FT against
    mBART FT (a list of baselines); with one baseline every other row is against it."""
    # word-drop rates of the hypotheses: the lower, the better the row's BLEU statistics
    drops = (("mlsc", 0.6), ("mlsc-w2w", 0.3), ("mbart-ft", 0.05), ("mbart-ft-w2w", 0.3))
    for run, drop in drops:
        write_metrics(tmp_path, CH8, run, 1, {"bleu": 1 - drop}, bleu_drop={"bleu": drop})
    rows = [["MLSC", "1"], ["+w2w", "2"], ["mBART FT", "3"], ["+w2w", "4"]]
    found = _fill(
        ["M", "BLEU"],
        rows,
        {"significance": {"baseline": ["mlsc", "mbart-ft"]}},
        collect(tmp_path, "tiny"),
        bootstrap=(200, 1),
    )
    cell = found.cell
    assert cell("mlsc", "BLEU").p_value is None and cell("mbart-ft", "BLEU").p_value is None
    for row, base in (("mlsc-w2w", "mlsc"), ("mbart-ft-w2w", "mbart-ft")):
        expected = paired_bootstrap(
            cell(row, "BLEU").bleu_stats[1], cell(base, "BLEU").bleu_stats[1], 200, 1
        )
        assert cell(row, "BLEU").p_value == expected
    # below its own base, above MLSC: tested against mBART FT it is no gain
    assert cell("mbart-ft-w2w", "BLEU").p_value > 0.5 > cell("mlsc-w2w", "BLEU").p_value
    one = _fill(
        ["M", "BLEU"],
        rows,
        {"significance": {"baseline": "mlsc"}},
        collect(tmp_path, "tiny"),
        bootstrap=(200, 1),
    )
    against_mlsc = paired_bootstrap(
        one.cell("mbart-ft-w2w", "BLEU").bleu_stats[1],
        one.cell("mlsc", "BLEU").bleu_stats[1],
        200,
        1,
    )
    assert one.cell("mbart-ft-w2w", "BLEU").p_value == against_mlsc
    assert one.cell("mbart-ft", "BLEU").p_value is not None


def test_runs_used_are_every_run_the_cells_read(tmp_path):
    for run in ("x", "y"):
        write_metrics(tmp_path, CH8, run, 1, {"a": 1.0})
    result = _fill(
        ["M", "a"], [["x", "1"], ["y", "2"], ["z", "3"]], results=collect(tmp_path, "tiny")
    )
    assert result.runs_used == {(CH8, "x"), (CH8, "y")}


def test_one_metric_cells_carry_their_per_sentence_scores(tmp_path):
    write_metrics(tmp_path, CH8, "x", 1, {"rate": 50.0}, sentence_scores={"rate": [100.0, 0.0]})
    result = _fill(["M", "rate"], [["x", "40"]], results=collect(tmp_path, "tiny"))
    assert result.cell("x", "rate").sentence_scores == {1: [100.0, 0.0]}


def test_an_average_column_is_the_mean_of_its_cells_seed_by_seed(tmp_path):
    for seed, a, b in ((1, 1.0, 3.0), (2, 2.0, 6.0)):
        write_metrics(tmp_path, CH8, "x", seed, {"a": a, "b": b})
    result = _fill(
        ["M", "a", "b", "Avg."], [["x", "1.0", "2.0", "1.5"]], results=collect(tmp_path, "tiny")
    )
    avg, a = result.cell("x", "Avg."), result.cell("x", "a")
    assert avg.aggregate is True and a.aggregate is False
    assert avg.measured == pytest.approx(3.0)
    assert avg.seeds == {1: pytest.approx(2.0), 2: pytest.approx(4.0)}


def test_an_average_printed_blank_is_not_checked():
    result = _fill(["M", "a", "b", "Avg."], [["x", "1.0", "2.0", "–"]])
    assert result.flags == []


def test_a_printed_average_one_unit_off_is_rounding_and_two_units_off_is_flagged():
    result = _fill(
        ["M", "a", "b", "Avg."],
        [["x", "1.0", "2.0", "1.6"], ["y", "1.0", "2.0", "1.4"], ["z", "1.0", "2.0", "1.7"]],
    )
    assert result.flags == ["row z, column Avg.: printed 1.7; the mean of its 2 cells is 1.50"]


def test_average_rows_average_the_rows_since_the_previous_average(tmp_path):
    for run, value in (("x", 1.0), ("y", 3.0), ("z", 5.0)):
        write_metrics(tmp_path, CH8, run, 1, {"s": value})
    rows = [["x", "1.0"], ["y", "3.0"], ["avg.", "2.0"], ["z", "5.0"], ["avg.", "5.0"]]
    result = _fill(["M", "s"], rows, results=collect(tmp_path, "tiny"))
    assert result.flags == []
    first, second = (result.cells[i][0] for i in (2, 4))
    assert (first.measured, second.measured) == (pytest.approx(2.0), pytest.approx(5.0))


def test_average_rows_of_a_group_average_that_group_only(tmp_path):
    for run, value in (("g1-x", 1.0), ("g1-y", 3.0), ("g2-x", 5.0), ("g2-y", 9.0)):
        write_metrics(tmp_path, CH8, run, 1, {"s": value})
    rows = [
        ["g1", "x", "1.0"],
        ["g1", "y", "3.0"],
        ["g2", "x", "5.0"],
        ["g2", "y", "9.0"],
        ["g2", "avg.", "7.0"],
    ]
    result = _fill(["G", "D", "s"], rows, results=collect(tmp_path, "tiny"))
    assert result.definition.labels == 2
    assert result.flags == []
    assert result.cells[4][0].measured == pytest.approx(7.0)


DELTA = {"cells": {"Δ": {"delta": ["new", "old"]}, "Δ2": {"delta": ["new", "old2"]}}}


def test_deltas_unprintable_or_with_blank_operands_are_skipped_not_the_rest_of_the_row():
    header = ["M", "new", "old", "old2", "Δ", "Δ2"]
    rows = [
        ["x", "5.0", "4.0", "3.0", "–", "+1.0"],  # Δ printed blank; Δ2 wrong: 5 − 3 is 2
        ["y", "–", "4.0", "3.0", "+1.0", "+2.0"],  # 'new' printed blank
        ["z", "5.0", "–", "3.0", "+1.0", "+2.0"],  # 'old' printed blank
    ]
    result = _fill(header, rows, DELTA)
    assert result.flags == ["row x, column Δ2: printed +1.0; new − old2 is +2.00"]


def test_a_delta_of_a_result_key_and_a_column_pairs_their_common_seeds(tmp_path):
    for seed, base, column in ((1, 2.0, 5.0), (2, 4.0, 6.0)):
        write_metrics(tmp_path, CH8, "x", seed, {"a": column, "base": base})
    write_metrics(tmp_path, CH8, "x", 3, {"a": 7.0})
    spec = {"cells": {"Δ": {"delta": ["a", "{row}:base"]}}}
    result = _fill(["M", "a", "Δ"], [["x", "6.0", "+3.0"]], spec, collect(tmp_path, "tiny"))
    delta = result.cell("x", "Δ")
    assert delta.measured == pytest.approx(6.0 - 3.0)
    assert delta.seeds == {1: pytest.approx(3.0), 2: pytest.approx(2.0)}
    spec = {"cells": {"Δ": {"delta": ["{row}:base", "a"]}}}
    result = _fill(["M", "a", "Δ"], [["x", "6.0", "-3.0"]], spec, collect(tmp_path, "tiny"))
    assert result.cell("x", "Δ").measured == pytest.approx(3.0 - 6.0)
