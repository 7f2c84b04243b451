"""Chapter 6's grid (`runs`), its score groups (`scores`) and its metric names (`metrics`):
the thesis's inventory of runs, the direction groups against hand computations and against
Table D.8's own printed group rows, and the names the writers produce are declared."""

from __future__ import annotations

import csv
import re

import pytest

from mlrep.chapters.ch6_aligninstruct import runs as grid
from mlrep.chapters.ch6_aligninstruct.metrics import PATTERNS
from mlrep.chapters.ch6_aligninstruct.scores import (
    COMET_AVG,
    METRICS,
    ScoresError,
    group_means,
    groups_of,
    run_metrics,
)
from mlrep.llm.instruct import TYPES
from mlrep.report import figures, fill, reference, tables
from mlrep.report.metrics import collect, compile_template, write
from mlrep.report.tables import AVERAGE
from tests.conftest import REPO

DECLARED = re.compile("|".join(f"(?:{compile_template(p)})" for p in PATTERNS))


def test_the_bloomz24_block_has_31_lora_runs_and_3_noft():
    every = grid.runs()
    b24 = [r for r in every if r.setting == grid.B24]
    trained = [r for r in b24 if r.trains]
    assert len(trained) == 31
    assert [r.name for r in b24 if not r.trains and not r.model] == [
        "7b1-noft",
        "3b-noft",
        "1b1-noft",
    ]
    by_size = {
        size: {r.name.removeprefix(f"{size}-") for r in trained if r.size == size}
        for size in grid.SIZES
    }
    swept = {"mt", "align", "mt-align", "align-then-mt", "mt-align-then-mt", "mt-hint", "mt-revise"}
    assert by_size["3b"] == by_size["1b1"] == swept
    assert by_size["7b1"] - swept == {
        "mt-align-revise",
        "mt-align-hint",
        "mt-hint-revise",
        "mt-align-hint-revise",
        "mt-mono-full",
        "mt-mono-half",
        "mt-mono-full-align",
        "mt-mono-half-align",
        "mt-mono-full-align-hint-revise",
        "mt-mono-half-align-hint-revise",
    }
    paths = [r.path for r in every]
    assert len(paths) == len(set(paths))
    assert all(re.fullmatch(r"bloomz-(24|3)/[a-z0-9]+(-[a-z0-9]+)*", p) for p in paths)


def test_stages_name_known_objectives_and_curricula_have_two():
    for run in grid.trained():
        for stage in run.stages:
            assert set(stage.objectives) <= set(TYPES) and stage.objectives[0] in ("mt", "align")
        assert grid.recipe_name(tuple(s.objectives for s in run.stages)) in run.name
    run = grid.get("bloomz-24/3b-mt-align-then-mt")
    assert [(s.objectives, s.epochs) for s in run.stages] == [(("mt", "align"), 5), (("mt",), 5)]
    run = grid.get("bloomz-24/1b1-align-then-mt")
    assert [s.objectives for s in run.stages] == [("align",), ("mt",)]


def test_curriculum_epochs_are_a_setting():
    assert grid.stage_epochs(2, 5, "each") == [5, 5]
    assert grid.stage_epochs(2, 5, "split") == [3, 2]
    assert grid.stage_epochs(1, 5, "split") == [5]
    assert grid.stage_epochs(3, 7, "split") == [3, 2, 2]
    split = grid.GridSettings(curriculum="split")
    stages = grid.get("bloomz-24/7b1-align-then-mt", split).stages
    assert [s.epochs for s in stages] == [3, 2]
    assert [s.epochs for s in grid.get("bloomz-24/7b1-mt", split).stages] == [5]
    with pytest.raises(grid.GridError, match="cannot be split"):
        grid.stage_epochs(2, 1, "split")


def test_the_bloomz3_block_and_the_extra_decodings():
    b3 = [r for r in grid.runs() if r.setting == grid.B3]
    assert [r.name for r in b3 if r.trains] == [
        "7b1-de-nl-ru-mt",
        "7b1-de-nl-ru-mt-align",
        "7b1-de-nl-ru-mt-align-hint-revise",
        "7b1-ar-de-fr-nl-ru-zh-mt",
        "7b1-ar-de-fr-nl-ru-zh-mt-align",
        "7b1-ar-de-fr-nl-ru-zh-mt-align-hint-revise",
    ]
    assert grid.get("bloomz-3/7b1-de-nl-ru-mt").languages == ("de", "nl", "ru")
    noft = grid.get("bloomz-3/7b1-noft")
    assert not noft.trains and not noft.model and len(noft.directions([])) == 42
    pivot = grid.get("bloomz-3/7b1-ar-de-fr-nl-ru-zh-mt-align-pivot")
    assert pivot.model == "7b1-ar-de-fr-nl-ru-zh-mt-align" and pivot.pivot and not pivot.trains
    assert len(pivot.directions([])) == 30 and ("en", "de") not in pivot.directions([])
    prompts = [r for r in grid.runs() if r.prompt != "default"]
    assert len(prompts) == 10  # Table D.3: 2 models × PROMPT-1..5 (the default is the run)
    assert {r.model for r in prompts} == {"7b1-mt", "7b1-mt-align"}
    assert all(r.tests == ("opus",) for r in prompts)
    assert grid.get("bloomz-24/7b1-mt").tests == ("opus", "flores")
    assert grid.get("bloomz-24/7b1-mt").directions(["af", "gd"]) == [
        ("en", "af"),
        ("af", "en"),
        ("en", "gd"),
        ("gd", "en"),
    ]
    for run in grid.runs():  # a decoding reads a model the grid trains
        if run.model:
            assert grid.get(f"{run.setting}/{run.model}").trains


def test_trims_keep_the_swept_recipes_at_every_size():
    tiny = grid.GridSettings(swept=("noft", "mt", "mt-align"), bloomz3=False, prompts=False)
    chosen = grid.runs(tiny)
    assert [r.name for r in chosen if r.size != "7b1"] == [
        "3b-noft",
        "1b1-noft",
        "3b-mt",
        "1b1-mt",
        "3b-mt-align",
        "1b1-mt-align",
    ]
    assert sum(r.trains for r in chosen) == 31 - 2 * 5
    assert all(r.setting == grid.B24 for r in chosen)
    one = grid.runs(grid.GridSettings(sizes=("7b1",), bloomz3=False, prompts=False))
    assert {r.size for r in one} == {"7b1"} and sum(r.trains for r in one) == 7 + 10
    with pytest.raises(grid.GridError, match="did you mean 'mt-align'"):
        grid.runs(grid.GridSettings(swept=("mt-algn",)))
    with pytest.raises(grid.GridError, match="no BLOOMZ size '560m'"):
        grid.runs(grid.GridSettings(sizes=("560m",)))
    with pytest.raises(grid.GridError, match="no Chapter 6 run"):
        grid.get("bloomz-24/7b1-mt-p1", grid.GridSettings(prompts=False))


def test_every_language_has_a_prompt_name():
    languages = {*grid.UNSEEN_24, *grid.SEEN, *grid.UNSEEN, "en"}
    assert languages == set(grid.NAMES) and len(grid.UNSEEN_24) == 24


# ---- groups --------------------------------------------------------------------------------


def test_direction_groups():
    assert groups_of(("ar", "de"), grid.B3) == ("overall", "seen-unseen")
    assert groups_of(("ru", "zh"), grid.B3) == ("overall", "unseen-seen")
    assert groups_of(("en", "fr"), grid.B3) == ("en-xx", "en-seen")
    assert groups_of(("nl", "en"), grid.B3) == ("xx-en", "unseen-en")
    assert groups_of(("en", "af"), grid.B24) == ("en-xx",)
    assert groups_of(("af", "en"), grid.B24) == ("xx-en",)
    with pytest.raises(ScoresError, match="neither BLOOMZ\\+3 group"):
        groups_of(("af", "de"), grid.B3)
    with pytest.raises(ScoresError, match="English-centric"):
        groups_of(("af", "gd"), grid.B24)


def test_group_means_against_hand_computation():
    scores = {
        ("ar", "fr"): 20.0,
        ("fr", "zh"): 10.0,  # seen→seen: 15
        ("ar", "de"): 4.0,
        ("zh", "ru"): 2.0,
        ("fr", "nl"): 3.0,  # seen→unseen: 3
        ("de", "ar"): 7.0,  # unseen→seen: 7
        ("de", "nl"): 1.0,
        ("ru", "de"): 5.0,  # unseen→unseen: 3
        ("en", "ar"): 30.0,
        ("en", "de"): 10.0,
        ("en", "nl"): 20.0,  # en→seen 30, en→unseen 15, en→xx 20
        ("fr", "en"): 40.0,
        ("ru", "en"): 10.0,  # seen→en 40, unseen→en 10, xx→en 25
    }
    assert group_means(scores, grid.B3) == {
        "overall": (20 + 10 + 4 + 2 + 3 + 7 + 1 + 5) / 8,  # a mean of directions, not groups
        "seen-seen": 15.0,
        "seen-unseen": 3.0,
        "unseen-seen": 7.0,
        "unseen-unseen": 3.0,
        "en-xx": 20.0,
        "en-seen": 30.0,
        "en-unseen": 15.0,
        "xx-en": 25.0,
        "seen-en": 40.0,
        "unseen-en": 10.0,
    }


def _table(table: str) -> list[dict[str, str]]:
    path = REPO / "reports" / "reference" / f"thesis-table-{table}.csv"
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("table", ["D.8", "D.9", "D.10", "D.11", "D.12"])
def test_group_means_reproduce_the_thesis_group_rows(table):
    """The printed per-direction scores (1 decimal for BLEU and chrF++, 2 for COMET) averaged
    by `group_means` give the printed group and average rows, within that rounding."""
    rows = _table(table)
    labels = {
        "avg.": {"Zero-shot": "overall", "Supervised en→xx": "en-xx", "Supervised xx→en": "xx-en"}
    }
    for metric in ("BLEU", "chrF++", "COMET"):
        scores = {
            tuple(row["Direction"].split("-")): float(row[metric])
            for row in rows
            if re.fullmatch(r"[a-z]{2}-[a-z]{2}", row["Direction"])
        }
        assert len(scores) == 42
        means = group_means(scores, grid.B3)
        for row in rows:
            if row["Direction"] == "avg.":
                group = labels["avg."][row["Block"]]
            elif "→" in row["Direction"]:
                group = row["Direction"].replace("→", "-")
            else:
                continue
            assert means[group] == pytest.approx(float(row[metric]), abs=0.051), (metric, row)


def test_bloomz24_means_and_the_figure_average():
    scores = {
        "opus": {
            "bleu": {("en", "af"): 10.0, ("af", "en"): 20.0, ("en", "gd"): 30.0, ("gd", "en"): 0.0},
            "comet": {
                ("en", "af"): 60.0,
                ("af", "en"): 70.0,
                ("en", "gd"): 50.0,
                ("gd", "en"): 80.0,
            },
        },
        "flores": {
            "comet": {
                ("en", "af"): 40.0,
                ("af", "en"): 50.0,
                ("en", "gd"): 20.0,
                ("gd", "en"): 30.0,
            }
        },
    }
    metrics = run_metrics(scores, grid.B24)
    assert metrics["opus_bleu_en-xx"] == 20.0 and metrics["opus_bleu_xx-en"] == 10.0
    assert metrics["opus_bleu_en-gd"] == 30.0
    assert metrics["flores_comet_en-xx"] == 30.0 and metrics["flores_comet_xx-en"] == 40.0
    assert metrics[COMET_AVG] == (55.0 + 75.0 + 30.0 + 40.0) / 4
    assert COMET_AVG not in run_metrics({"opus": scores["opus"]}, grid.B24)  # no Flores: none
    assert all(DECLARED.fullmatch(name) for name in metrics)
    with pytest.raises(ScoresError, match="no Chapter 6 metric 'ter'"):
        run_metrics({"opus": {"ter": {}}}, grid.B24)


def test_every_bloomz3_name_is_declared():
    six = grid.LANGUAGE_SETS[grid.PIVOT_SET]
    directions = grid.get("bloomz-3/7b1-noft").directions(six)
    scores = {"opus": {m: dict.fromkeys(directions, 1.0) for m in ("bleu", "chrf", "comet")}}
    metrics = run_metrics(scores, grid.B3)
    assert len(metrics) == 3 * (42 + 11)
    assert all(DECLARED.fullmatch(name) for name in metrics)
    assert not DECLARED.fullmatch("opus_bleu_overall_x") and not DECLARED.fullmatch(
        "flores_bleu_overall"
    )


# ---- the report reads what the runs write -------------------------------------------------


def _written(run: grid.Run) -> set[str]:
    """Every metric name `run` writes: its scores' names at the thesis's languages."""
    languages = grid.UNSEEN_24 if run.setting == grid.B24 else grid.LANGUAGE_SETS[grid.PIVOT_SET]
    directions = run.directions(languages)
    scores = {test: {m: dict.fromkeys(directions, 1.0) for m in METRICS} for test in run.tests}
    return set(run_metrics(scores, run.setting))


def test_every_table_cell_reads_a_metric_its_run_writes():
    published = reference.load_all(REPO / "reports" / "reference")
    definitions = {
        table_id: definition
        for table_id, definition in tables.load(published).items()
        if definition.chapter == "ch6_aligninstruct" and not definition.descriptive
    }
    assert len(definitions) == 16  # 6.2-6.6, D.1, D.3-D.12
    written = {run.path: _written(run) for run in grid.runs()}
    cells = 0
    for table_id, definition in definitions.items():
        table = published[table_id]
        keys = definition.row_keys(table.header, table.rows)
        for row, key in zip(table.rows, keys, strict=True):
            if AVERAGE.match(row[definition.labels - 1].strip()):
                continue  # recomputed from the rows above
            for column in table.header[definition.labels :]:
                if definition.published_only_in(key, column):
                    continue
                for cell in definition.cell_key(table.header, row, key, column):
                    assert cell.run in written, (table_id, key, column, cell.run)
                    assert set(cell.metrics) <= written[cell.run], (table_id, key, column, cell)
                    cells += 1
    # 6.2-6.5: rows × 12; 6.6 and D.1: per block 5 zero-shot rows and 6 supervised × 3;
    # D.3 12 × 6; D.4 20 × 3; D.5-D.7 24 languages × 12; D.8-D.12 50 directions/groups × 3
    per_block = 5 * 3 + 6 * 3
    assert cells == (18 + 12 + 6 + 7) * 12 + 7 * per_block + 72 + 60 + 3 * 24 * 12 + 5 * 50 * 3


def test_figures_read_runs_of_the_grid():
    figures_ = {
        k: v for k, v in figures.definitions().items() if v["chapter"] == "ch6_aligninstruct"
    }
    analyses = {a.path for a in grid.analyses()}
    written = {run.path: _written(run) for run in grid.runs()}
    for fig_id, spec in figures_.items():
        for panel in spec["panels"]:
            for series in panel["series"]:
                for run in series.get("runs") or [series["run"]]:
                    if fig_id == "fig-6.1":
                        assert series["metric"] in written[run], (fig_id, run)
                    else:
                        assert run in analyses, (fig_id, run)
                        template = series["metric_per_x"]  # every layer the models have
                        assert DECLARED.fullmatch(template.replace("{x}", "30"))
    for analysis in grid.analyses():
        for model in analysis.compared:
            assert grid.get(f"{analysis.setting}/{model}").model == ""


def test_written_scores_fill_the_cells_that_name_them(tmp_path):
    """A run's metrics written through the contract land in the cells of its rows: Table
    6.2's 7b1 MTInstruct row, Table 6.6's supervised xx→en row (bound row by row) and Table
    D.8's group row."""
    results = tmp_path / "results"
    b24 = grid.get("bloomz-24/7b1-mt")
    scores = {
        test: {
            m: {d: 10.0 * (k + 1) for k, d in enumerate(b24.directions(["af", "gd"]))}
            for m in METRICS
        }
        for test in b24.tests
    }
    b3 = grid.get("bloomz-3/7b1-noft")
    directions = b3.directions([])
    b3_scores = {"opus": {m: {d: float(k) for k, d in enumerate(directions)} for m in METRICS}}
    for run, found in ((b24, scores), (b3, b3_scores)):
        out = results / "ch6_aligninstruct" / run.path / "seed0" / "metrics.json"
        write(out, "ch6_aligninstruct", run.path, 0, "tiny", run_metrics(found, run.setting))
    collected = collect(results, "tiny")
    published = reference.load_all(REPO / "reports" / "reference")
    definitions = tables.load(published)

    def cell(table_id: str, row: str, column: str) -> float | None:
        filled = fill.fill(definitions[table_id], published[table_id], collected)
        columns = published[table_id].header[definitions[table_id].labels :]
        return filled.cells[filled.row_keys.index(row)][columns.index(column)].measured

    # en-af 10, af-en 20, en-gd 30, gd-en 40
    assert cell("thesis-table-6.2", "7b1-mt", "OPUS en→xx BLEU") == pytest.approx(20.0)
    assert cell("thesis-table-6.2", "7b1-mt", "Flores xx→en COMET") == pytest.approx(30.0)
    assert cell("thesis-table-6.2", "7b1-align", "OPUS en→xx BLEU") is None
    xx_en = [k for k, (s, t) in enumerate(directions) if t == "en"]
    assert cell("thesis-table-6.6", "7b1-noft", "Supervised BLEU") == pytest.approx(sum(xx_en) / 6)
    seen_seen = [k for k, (s, t) in enumerate(directions) if s in grid.SEEN and t in grid.SEEN]
    assert cell("thesis-table-D.8", "zero-shot-group-seen-seen", "COMET") == pytest.approx(
        sum(seen_seen) / 6
    )
