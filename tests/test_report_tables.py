"""Table definitions and filling: keys, means over seeds, aggregates, flags, not-run cells."""

import pytest

from mlrep.report import fill, tables
from mlrep.report.metrics import MetricsFileError, Results, collect
from mlrep.report.reference import PublishedTable, Source, load_all
from tests.conftest import REPO
from tests.report_helpers import ch8_results, write_metrics

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)


def filled(table_id, results):
    return fill.fill(DEFINITIONS[table_id], PUBLISHED[table_id], results)


def synthetic(header, rows):
    source = Source("t", "ch8_layernorm", "T", "000_x.txt", 1)
    return PublishedTable("t", header, rows, source)


def test_every_published_table_has_a_definition():
    assert set(DEFINITIONS) == set(PUBLISHED)


def test_row_keys_follow_the_thesis_conventions():
    t82 = filled("thesis-table-8.2", Results("tiny"))
    assert t82.row_keys[:3] == ["pivot", "prenorm-s-enc-t-dec-w", "postnorm-s-enc-t-dec-w"]
    c5 = filled("thesis-table-C.5", Results("tiny"))
    assert c5.row_keys[:2] == ["mlsc", "mlsc-align"]  # "+align" modifies the row above
    assert "mbart-ft-align" in c5.row_keys
    t31 = PUBLISHED["thesis-table-3.1"]  # group + "#" label a row
    keys = DEFINITIONS["thesis-table-3.1"].row_keys(t31.header, t31.rows)
    assert keys[:2] == ["labse-0", "fewer-layers-1"] and len(set(keys)) == len(t31.rows)


def test_cell_templates_name_run_metric_and_seed():
    definition = DEFINITIONS["thesis-table-E.5"]
    table = PUBLISHED["thesis-table-E.5"]
    keys = definition.cell_key(
        table.header, table.rows[0], "prenorm-it-nl", "T-ENC w/ Res. seed 10"
    )
    assert keys == [tables.CellKey("iwslt/prenorm-t-enc-w", ("bleu_it-nl",), 10)]


def test_empty_results_leave_every_measured_cell_not_run():
    for table_id in ("thesis-table-8.2", "thesis-table-E.3", "thesis-table-2.4"):
        for row in filled(table_id, Results("tiny")).cells:
            assert all(c.measured is None and c.status == fill.NOT_RUN for c in row)


def test_measured_cells_are_means_over_seeds(tmp_path):
    ch8_results(tmp_path)
    t = filled("thesis-table-8.2", collect(tmp_path, "tiny"))
    post = t.cell("postnorm-s-enc-t-dec-w", "Zero-shot OPUS BLEU")
    assert post.measured == pytest.approx((16.1 + 17.0 + 18.0) / 3)  # 16 + seed/10
    assert post.seeds == {1: pytest.approx(16.1), 10: pytest.approx(17.0), 20: pytest.approx(18.0)}
    off_target = t.cell("prenorm-s-enc-t-dec-w", "Zero-shot OPUS off-target rate")
    assert off_target.measured == pytest.approx((41 + 50 + 60) / 3)
    assert t.cell("pivot", "Zero-shot OPUS BLEU").status == fill.NOT_RUN  # partial results
    assert (
        post.bold_measured
        and t.cell("postnorm-s-enc-t-dec-w", "Zero-shot OPUS off-target rate").bold_measured
    )


def test_seed_columns_read_one_seed_and_avg_columns_are_recomputed(tmp_path):
    for seed, value in ((1, 5.0), (10, 6.0), (20, 10.0)):
        write_metrics(
            tmp_path,
            "ch8_layernorm",
            "opus/prenorm-s-enc-t-dec-w",
            seed,
            {"bleu_ar-de": value, "bleu_ar-fr": value + 1},
        )
    t = filled("thesis-table-E.3", collect(tmp_path, "tiny"))
    assert t.cell("prenorm-ar-de", "S-ENC-T-DEC w/ Res. seed 10").measured == 6.0
    assert t.cell("prenorm-ar-de", "S-ENC-T-DEC w/ Res. avg.").measured == pytest.approx(7.0)
    # the avg. row needs every direction above it: two of the Pre. rows ran, so it is partial
    avg = t.cell("prenorm-avg.", "S-ENC-T-DEC w/ Res. seed 1")
    assert avg.measured is None and avg.status.startswith("partial")


def test_inconsistent_printed_averages_are_flagged_not_trusted():
    c5 = filled("thesis-table-C.5", Results("tiny"))
    assert c5.flags == ["row mlsc, column Avg.: printed 80.9; the mean of its 5 cells is 80.74"]
    e3 = filled("thesis-table-E.3", Results("tiny"))
    assert {f.split(",")[0] for f in e3.flags} == {"row postnorm-nl-de", "row postnorm-nl-fr"}
    assert filled("thesis-table-E.4", Results("tiny")).flags == []


def test_rounding_within_one_printed_unit_is_not_flagged():
    table = synthetic(
        ["M", "a", "b", "Avg."], [["x", "1.0", "2.1", "1.6"], ["y", "1.0", "2.0", "1.7"]]
    )
    definition = tables.build("t", "ch8_layernorm", {}, table)
    assert definition.aggregates == {"Avg.": ["a", "b"]}
    result = fill.fill(definition, table, Results("tiny"))
    assert len(result.flags) == 1 and "row y" in result.flags[0]  # 1.5 printed as 1.7


def test_a_definition_naming_a_missing_column_fails_clearly(tmp_path):
    (tmp_path / "ch8_layernorm.yaml").write_text("thesis-table-E.1:\n  cells: {Zero-shut: 'a:b'}\n")
    with pytest.raises(
        tables.TableDefinitionError,
        match=r"ch8_layernorm.yaml: thesis-table-E.1: no column 'Zero-shut'",
    ):
        tables.load(PUBLISHED, tmp_path)


def test_metrics_files_break_the_contract_loudly(tmp_path):
    path = write_metrics(tmp_path, "ch8_layernorm", "opus/x", 1, {"zst_bleu": 1.0})
    path.write_text('{"chapter": "ch8_layernorm", "run": "opus/x", "seed": "one"}')
    with pytest.raises(MetricsFileError, match="key 'seed' must be a int"):
        collect(tmp_path, "tiny")
    write_metrics(tmp_path, "ch8_layernorm", "opus/x", 1, {"zst_bleu": 1.0}, scale="full")
    assert collect(tmp_path, "tiny").other_scales == 1
