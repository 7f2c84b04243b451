"""Table definitions and filling: keys, means over seeds, aggregates, flags, not-run cells."""

import pytest

from mlrep.report import fill, render, tables
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
    t31 = PUBLISHED["thesis-table-3.1"]  # group + "#" label a row, keyed by "#" alone
    keys = DEFINITIONS["thesis-table-3.1"].row_keys(t31.header, t31.rows)
    assert keys[:2] == ["arch-0", "arch-1"] and len(set(keys)) == len(t31.rows)


def test_chapter_7_rows_are_the_run_names_and_table_7_5_keys_its_unnamed_label_column():
    """Tables 7.2-7.4 name their rows by the runs (aliases), as Fig 7.3 and the claims do;
    Table 7.5's label column has an empty header, which ``{}`` names (not ``{}``, ``{}-2``)."""
    systems = ["mnmt", "fixuni", "fixls", "var"]
    floor = tables.FLOOR_ROW  # the copy-the-source row below them
    assert filled("thesis-table-7.2", Results("tiny")).row_keys == ["pivot", *systems, floor]
    assert filled("thesis-table-7.4", Results("tiny")).row_keys == [*systems, floor]
    t75 = PUBLISHED["thesis-table-7.5"]
    definition = DEFINITIONS["thesis-table-7.5"]
    keys = definition.row_keys(t75.header, t75.rows)
    assert keys == ["accuracy", "difference", "predicted", "gold"]
    assert definition.cell_key(t75.header, t75.rows[3], "gold", "de") == [
        tables.CellKey("opus/var", ("gold_bleu_de-en",))
    ]
    t73 = PUBLISHED["thesis-table-7.3"]
    assert DEFINITIONS["thesis-table-7.3"].cell_key(
        t73.header, t73.rows[0], "pivot", "de-fr ←"
    ) == [tables.CellKey("opus/pivot", ("bleu_fr-de",))]


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


def test_published_only_columns_are_never_looked_up(tmp_path):
    write_metrics(tmp_path, "ch8_layernorm", "data/opus", 0, {"n_zero": 30})
    write_metrics(tmp_path, "ch8_layernorm", "opus", 0, {"arch.": 1.0})  # the default key
    t81 = filled("thesis-table-8.1", collect(tmp_path, "tiny"))
    assert t81.cell("opus", "N_zero").measured == 30
    arch = t81.cell("opus", "Arch.")
    assert arch.measured is None and arch.status == fill.PUBLISHED_ONLY
    assert "published only" in render.csv_text(t81)
    (tmp_path / "ch8_layernorm.yaml").write_text("thesis-table-E.1:\n  published_only: [Arch]\n")
    with pytest.raises(tables.TableDefinitionError, match="no column 'Arch'"):
        tables.load(PUBLISHED, tmp_path)


def test_table_7_1_reads_every_statistic_from_the_prepared_data(tmp_path):
    """Each count of Table 7.1 is the prepare row's, compared with the printed one ("2,000"),
    and, being a size, never bolded."""
    stats = {"n_supervised": 12, "n_zero": 30, "s_train": 600, "valid_per_pair": 20}
    write_metrics(tmp_path, "ch7_interlingua", "data/opus", 0, {**stats, "test_per_pair": 25})
    write_metrics(tmp_path, "ch7_interlingua", "data/iwslt", 0, {**stats, "test_per_pair": 9})
    t71 = filled("thesis-table-7.1", collect(tmp_path, "tiny"))
    measured = {c: t71.cell("opus", c).measured for c in t71.value_columns}
    assert measured == {"# Sup.": 12, "# Zero.": 30, "# Train": 600, "# Valid": 20, "# Test": 25}
    assert t71.cell("iwslt", "# Test").measured == 9
    assert t71.cell("opus", "# Valid").published_value == 2000
    assert t71.cell("europarl", "# Sup.").status == fill.NOT_RUN
    assert not any(c.bold_measured or c.bold_published for row in t71.cells for c in row)


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


def bold_rows(table, column, side="published"):
    index = table.value_columns.index(column)
    return {
        key
        for key, row in zip(table.row_keys, table.cells, strict=True)
        if getattr(row[index], f"bold_{side}")
    }


def test_bold_top_marks_the_best_n_distinct_values_of_each_column():
    t43 = filled("thesis-table-4.3", Results("tiny"))
    assert DEFINITIONS["thesis-table-4.3"].bold_top == 3
    # Ja-En 3k: 11.2 (ENSS #13), 10.9 (#6, #17) and 10.6 (JASS #4) are the three best
    # values (rows keyed by the pre-training their fine-tunes start from)
    assert bold_rows(t43, "Ja-En 3k") == {
        "jaen-enss",
        "jaen-mass-brss",
        "jaen-jass-enss",
        "jaen-jass",
    }
    # Table 3.3 bolds scores only: sizes and dimensions are never bold
    t33 = filled("thesis-table-3.3", Results("tiny"))
    assert bold_rows(t33, "d") == bold_rows(t33, "P") == set()
    assert bold_rows(t33, "Ttb.") == {"teacher", "lealla-large", "lealla-base"}
    assert "Bold: the top 3 per column on each side." in render.notes(t33)


def test_bold_top_follows_lower_is_better_and_needs_a_positive_count(tmp_path):
    table = synthetic(
        ["M", "BLEU", "Error"], [["a", "3", "1"], ["b", "2", "2"], ["c", "1", "3"], ["d", "1", "4"]]
    )
    definition = tables.build("t", "ch8_layernorm", {"bold_top": 2}, table)
    result = fill.fill(definition, table, Results("tiny"))
    assert bold_rows(result, "BLEU") == {"a", "b"} and bold_rows(result, "Error") == {"a", "b"}
    for seed in (1, 2):  # two measured values: the better one only
        write_metrics(tmp_path, "ch8_layernorm", "a", seed, {"bleu": 5.0})
        write_metrics(tmp_path, "ch8_layernorm", "b", seed, {"bleu": 6.0})
    result = fill.fill(definition, table, collect(tmp_path, "tiny"))
    assert bold_rows(result, "BLEU", "measured") == {"b"}
    with pytest.raises(tables.TableDefinitionError, match="bold_top must be"):
        tables.build("t", "ch8_layernorm", {"bold_top": 0}, table)


def test_delta_cells_are_differences_of_measured_values_never_the_printed_delta(tmp_path):
    for seed, simple, base in ((1, 10.0, 9.0), (10, 12.0, 9.5)):
        write_metrics(
            tmp_path,
            "ch8_layernorm",
            "opus/prenorm-simple-s-enc-t-dec-w",
            seed,
            {"zst_bleu": simple},
        )
        write_metrics(
            tmp_path, "ch8_layernorm", "opus/prenorm-s-enc-t-dec-w", seed, {"zst_bleu": base}
        )
    # a -simple run whose Table 8.2 counterpart has not run
    write_metrics(
        tmp_path, "ch8_layernorm", "opus/postnorm-simple-s-enc-t-dec-w", 1, {"zst_bleu": 15.0}
    )
    t = filled("thesis-table-E.2", collect(tmp_path, "tiny"))
    delta = t.cell("prenorm-simple-s-enc-t-dec-w", "Zero-shot OPUS Δ vs Table 8.2")
    assert delta.measured == pytest.approx(11.0 - 9.25) and delta.published == "+0.0"
    assert delta.seeds == {1: pytest.approx(1.0), 10: pytest.approx(2.5)}
    assert render.measured_text(delta, 0.05) == "+1.8"
    assert ("ch8_layernorm", "opus/prenorm-s-enc-t-dec-w") in t.runs_used
    missing = t.cell("postnorm-simple-s-enc-t-dec-w", "Zero-shot OPUS Δ vs Table 8.2")
    assert t.cell("postnorm-simple-s-enc-t-dec-w", "Zero-shot OPUS BLEU").measured == 15.0
    assert missing.measured is None and missing.status == fill.NOT_RUN
    assert t.cell("prenorm-simple-s-enc-t-dec-w", "Zero-shot IWSLT Δ vs Table 8.2").status == (
        fill.NOT_RUN
    )
    assert not bold_rows(t, "Zero-shot OPUS Δ vs Table 8.2", "measured")


def test_a_printed_delta_is_checked_against_its_printed_operands():
    table = synthetic(
        ["M", "new", "old", "Δ"], [["x", "5.0", "4.0", "+1.0"], ["y", "5.0", "4.0", "+2.0"]]
    )
    spec = {"cells": {"Δ": {"delta": ["new", "old"]}}}
    result = fill.fill(tables.build("t", "ch8_layernorm", spec, table), table, Results("tiny"))
    assert result.flags == ["row y, column Δ: printed +2.0; new − old is +1.00"]
    for bad, message in (
        ({"delta": ["new"]}, "must be {delta: \\[a, b\\]}"),
        ({"delta": ["new", "nope"]}, "neither a column nor"),
        ({"delta": ["new", "{nope}:bleu"]}, "no label column 'nope'"),
    ):
        with pytest.raises(tables.TableDefinitionError, match=message):
            tables.build("t", "ch8_layernorm", {"cells": {"Δ": bad}}, table)


def test_every_table_sits_in_the_chapter_its_source_names():
    # appendix A is LEALLA's, B JASS's, D AlignInstruct's: results are read from that chapter
    for table_id, definition in DEFINITIONS.items():
        assert definition.chapter == PUBLISHED[table_id].source.chapter, table_id
    assert DEFINITIONS["thesis-table-A.2"].chapter == "ch3_lealla"
    assert DEFINITIONS["thesis-table-B.2"].chapter == "ch4_jass"
    assert DEFINITIONS["thesis-table-D.6"].chapter == "ch6_aligninstruct"


def test_reference_rows_show_the_baseline_and_the_floor_unranked(tmp_path):
    """Table 2.4 ends in the TF-IDF baseline's row (its run, the same templates) and the
    chance row (each column's floor); neither is bolded, even where it is the best value."""
    from mlrep.report.metrics import Scores, write
    from mlrep.report.tables import FLOOR_ROW

    for run, value in (("ems", 2.0), ("ams-joint", 3.0), ("char-tfidf", 30.0)):
        scores = Scores()
        scores.add("tatoeba_deu", value, 100 / 200)
        write(
            tmp_path / "ch2_ems" / run / "seed0" / "metrics.json",
            "ch2_ems",
            run,
            0,
            "tiny",
            scores.metrics,
        )
    definition = DEFINITIONS["thesis-table-2.4"]
    filled = fill.fill(definition, PUBLISHED["thesis-table-2.4"], collect(tmp_path, "tiny"))
    assert filled.row_keys[-2:] == ["char-tfidf", FLOOR_ROW]
    assert [filled.labels(i)[0] for i in (-2, -1)] == list(definition.reference_rows.values())
    tfidf, floor = filled.cell("char-tfidf", "deu"), filled.cell(FLOOR_ROW, "deu")
    assert (tfidf.measured, tfidf.published) == (30.0, "")
    assert floor.measured == 0.5 and filled.floor.cell("ems", "deu").measured == 0.5
    assert not tfidf.bold_measured and not floor.bold_measured
    assert filled.cell("ams-joint", "deu").bold_measured  # the best measured system
    assert filled.cell(FLOOR_ROW, "afr").measured is None  # no run wrote it


def test_table_8_2_floor_row_is_the_copied_sources_bleu(tmp_path):
    from mlrep.report.tables import FLOOR_ROW
    from tests.report_helpers import copy_source, drop, nmt_run

    post = nmt_run(tmp_path, "opus/postnorm-s-enc-t-dec-w", 1, drop(0.1))
    nmt_run(tmp_path, "opus/prenorm-s-enc-t-dec-w", 1, copy_source(0.2))
    floor = filled("thesis-table-8.2", collect(tmp_path, "tiny")).cell(
        FLOOR_ROW, "Zero-shot OPUS BLEU"
    )
    assert floor.measured == pytest.approx(post["metrics"]["floor_zst_bleu"]) and floor.measured > 0
    assert not floor.bold_measured and floor.p_value is None


@pytest.mark.parametrize(
    ("table_id", "architecture"),
    [
        ("thesis-table-3.1", ["L", "d_h", "H", "P", "P_E"]),
        ("thesis-table-A.3", ["L", "d_h", "d_ff", "H", "P", "P_E"]),
    ],
)
def test_architecture_columns_are_shapes_not_scores(tmp_path, table_id, architecture):
    """Tables 3.1 and A.3: the deepest or widest student is not the best, so its L, d_h, d_ff,
    H, P and P_E are bold on neither side; the scores beside them still are."""
    shape = ("layers", "dim", "ffn_dim", "heads", "parameters", "encoder_parameters")
    for run, size in (("teacher", 12.0), ("arch-1", 6.0)):
        metrics = dict.fromkeys([*shape, "tatoeba_avg"], size)
        write_metrics(tmp_path, "ch3_lealla", run, 1, metrics)
    table = filled(table_id, collect(tmp_path, "tiny"))
    for column in architecture:
        assert table.cell("arch-1", column).measured == 6.0, column
        for side in ("published", "measured"):
            assert bold_rows(table, column, side) == set(), (column, side)
    assert bold_rows(table, "Tatoeba") == {"arch-0"}
    assert bold_rows(table, "Tatoeba", "measured") == {"arch-0"}


def test_onealigner_table_6_keeps_the_not_of_not_english():
    """ "Top1 (¬ Eng)" is a run of its own, not a second "top1-eng"; the two New Tatoeba
    columns read two metrics."""
    t6 = DEFINITIONS["onealigner-table-6"]
    published = PUBLISHED["onealigner-table-6"]
    keys = t6.row_keys(published.header, published.rows)
    assert keys == ["top1-eng", "top1-not-eng"]
    metrics = {
        t6.cell_key(published.header, published.rows[0], keys[0], c)[0].metrics
        for c in published.header[1:]
    }
    assert len(metrics) == len(published.header) - 1


def test_a_runs_map_reads_a_named_run_from_the_run_that_holds_it(tmp_path):
    """``runs``: a run a template names is read from another folder (one training that
    several rows name); the row keeps its name, and every other run is read as named."""
    published = synthetic(["Run", "Score"], [["shared", "1.0"], ["own", "2.0"]])
    spec = {"cells": {"Score": "{row}:score"}, "runs": {"shared": "trained"}}
    definition = tables.build("t", "ch8_layernorm", spec, published)
    assert definition.row_keys(published.header, published.rows) == ["shared", "own"]
    keys = [definition.cell_key(published.header, r, r[0], "Score")[0] for r in published.rows]
    assert [k.run for k in keys] == ["trained", "own"]
    write_metrics(tmp_path, "ch8_layernorm", "trained", 1, {"score": 5.0})
    write_metrics(tmp_path, "ch8_layernorm", "shared", 1, {"score": 9.0})  # not read
    table = fill.fill(definition, published, collect(tmp_path, "tiny"))
    assert table.cell("shared", "Score").measured == 5.0
    for wrong in (["shared"], {"shared": ""}, {"shared": None}):
        with pytest.raises(tables.TableDefinitionError, match="runs must map names"):
            tables.build("t", "ch8_layernorm", {"runs": wrong}, published)


def test_a_row_says_what_it_measures_at_a_scale_where_its_label_names_another_model():
    published = synthetic(["Model", "Score"], [["Big", "1.0"], ["Small", "2.0"]])
    spec = {"rows": {"big": {"measured_as": {"tiny": "a stand-in"}}}}
    definition = tables.build("t", "ch8_layernorm", spec, published)
    tiny = fill.fill(definition, published, Results("tiny"))
    assert tiny.labels(0) == ["Big (measured at scale tiny: a stand-in)"]
    assert tiny.labels(1) == ["Small"]
    assert fill.fill(definition, published, Results("full")).labels(0) == ["Big"]
    assert "| Big (measured at scale tiny: a stand-in) |" in render.markdown(tiny)
    bad = {"rows": {"big": {"measured_as": "a stand-in"}}}
    with pytest.raises(tables.TableDefinitionError, match="measured_as must map names"):
        tables.build("t", "ch8_layernorm", bad, published)


def test_table_5_1_reads_each_pairs_corpus_row_and_names_corpora_as_printed(tmp_path):
    """Table 5.1's sizes and link counts are the run corpora/<pair>'s (`mlrep ch5 corpora`);
    its corpus names are labels, as printed; a pair no system ran reads "not run"."""
    row = {"train_pairs": 600, "od_pairs": 0, "n_w2w": 640, "n_fa": 1300}
    write_metrics(tmp_path, "ch5_wordcl", "corpora/en-kk", 0, row)
    t51 = filled("thesis-table-5.1", collect(tmp_path, "tiny"))
    assert t51.value_columns == ["Size", "OD Size", "N (w2w)", "N (FA)"]
    measured = {c: t51.cell("en-kk", c).measured for c in t51.value_columns}
    assert measured == {"Size": 600, "OD Size": 0, "N (w2w)": 640, "N (FA)": 1300}
    assert t51.cell("en-kk", "N (FA)").published_value == 279429
    assert t51.cell("en-it", "Size").status == fill.NOT_RUN
    assert not any(c.bold_measured or c.bold_published for r in t51.cells for c in r)
    assert "| en-kk | WMT19 | WMT19 | WMT19 | 0.6k / 124k | 0.0k / 851k | 640 / 124,511 | " in (
        render.markdown(t51)
    )
