"""Tables 4.8/4.9's human cells through Snakemake (`ch4_jass_human`): blind sheets exported from
the planned systems' test hypotheses, "awaiting human scores" in the tables until a judge's
sheet is returned, then the judges' means in the right rows, and pending again when the return
is taken away. The hypotheses are planted files of known quality (`--allowed-rules` keeps
Snakemake from training anything), so the test runs in seconds, not the chapter's minutes."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import human as ch4_human
from mlrep.chapters.ch4_jass import runs, training
from mlrep.evaluate.human import AWAITING
from mlrep.paths import Paths
from mlrep.report import render, tables
from mlrep.report.fill import fill
from mlrep.report.metrics import collect
from mlrep.report.reference import load_all
from tests.conftest import REPO, copy_workflow, planned_jobs, snakemake
from tests.tiny_runs import jobs_run, set_params

TARGET = "ch4_jass_human"
RULES = ("ch4_human_export", "ch4_human_aggregate", TARGET)
PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))
LINES = 30  # test sentences planted; params.yaml evaluate.human draws 20 of them at tiny
RETURNED = Path("returned")
# the quality of each start's outputs, which a judge reads off each output it is shown
LEVEL = {"vanilla": 1, "jaen-mass": 2, "jaen-hfss": 3, "jaen-enss": 4}
LEVEL |= {"jazh-mass": 3, "jazh-jass": 5}
PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
DIRECTIONS = {corpus: runs.CORPORA[corpus].directions for corpus in ("aspec_je", "wiki_jc")}


def plant(project: Path, evaluations: list[ch4_human.Evaluation]) -> None:
    """Every evaluation's test source and its systems' hypotheses: an output names its test
    line and its start's level, never the system."""
    for e in evaluations:
        source = project / training.score_inputs(PATHS, e.systems[0])["source"]
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text("".join(f"原文 {i}\n" for i in range(LINES)), encoding="utf-8")
        for system in e.systems:
            level = LEVEL[runs.finetune(system).start]
            out = project / training.hypotheses(PATHS, system, e.seed)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("".join(f"訳 {i} q{level}\n" for i in range(LINES)), encoding="utf-8")


def judge(line: int, level: int, strict: int) -> tuple[int, int]:
    """A judge's adequacy and fluency of an output: its level; a score that varies with the
    sentence (a mean over the wrong sentences shows), lower for the strict judge."""
    return level, max(1, 1 + (line + level) % 5 - strict)


def fill_sheet(exported: Path, out: Path, strict: int) -> list[int]:
    """A judge's returned sheet: every row scored from what the row shows (as a blind judge
    scores); returns the test lines the sheet shows."""
    with open(exported, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        _, line, level = row["output"].split()
        row["adequacy"], row["fluency"] = map(str, judge(int(line), int(level[1:]), strict))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows[::-1])
    return sorted({int(row["source"].split()[1]) for row in rows})


def expected(lines: list[int], level: int, judges: tuple[int, ...]) -> dict[str, str]:
    """What a judged row's cells print: each sentence's mean over judges, meaned."""
    per_sentence = [
        [statistics.fmean(judge(line, level, s)[k] for s in judges) for line in lines]
        for k in (0, 1)
    ]
    return {
        criterion: f"{statistics.fmean(scores):.2f}"
        for criterion, scores in zip(("Adequacy", "Fluency"), per_sentence, strict=True)
    }


def cells(project: Path, table: str) -> dict[tuple[str, str], str]:
    """The measured side of a table's human cells, by (row #, column)."""
    published = PUBLISHED[table]
    filled = fill(DEFINITIONS[table], published, collect(project / "results", "tiny"))
    keys = DEFINITIONS[table].row_keys(published.header, published.rows)
    return {
        (row[0], column): render.measured_text(filled.cell(key, column), 0.05)
        for row, key in zip(published.rows, keys, strict=True)
        for column in published.header[2:]
        if not column.startswith("BLEU")
    }


def run(project: Path) -> dict[str, int]:
    result = snakemake(project, "--cores", "1", "--allowed-rules", *RULES, "--", TARGET)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return jobs_run(result.stdout + result.stderr)


@pytest.mark.slow
def test_tables_4_8_and_4_9_await_their_judges_then_show_their_scores(tmp_path):
    project = copy_workflow(tmp_path / "project")
    # tiny plans no Wikipedia Ja-Zh: a 10k size of it, so Table 4.8 has systems too
    sizes = {"aspec_je": {"3k": 30, "10k": 100}, "wiki_jc": {"10k": 100}}
    set_params(project, {"ch4_jass.sizes": sizes, "ch4_jass.human.returned": str(RETURNED)})
    section = cfg.load(cfg.load_yaml(project / "params.yaml"))["ch4_jass"]
    evaluations = {e.direction: e for e in ch4_human.evaluations(section)}
    assert sorted(evaluations) == ["en-ja", "ja-en", "ja-zh", "zh-ja"]
    plant(project, list(evaluations.values()))

    assert run(project) == {"ch4_human_export": 4, "ch4_human_aggregate": 1, TARGET: 1}
    sheets = project / "results/ch4_jass/human/sheets"
    assert sorted(p.name for p in sheets.iterdir()) == sorted(
        f"{e.name}.csv" for e in evaluations.values()
    )
    for sheet in sheets.iterdir():  # blind: no system, no key beside it
        assert not any(start in sheet.read_text(encoding="utf-8") for start in LEVEL)
    # no return: each planned system's cells await the judges; the unplanned read "not run"
    waiting = {**cells(project, "thesis-table-4.8"), **cells(project, "thesis-table-4.9")}
    assert waiting[("4", "Adequacy Ja-Zh")] == waiting[("1", "Fluency En-Ja")] == AWAITING
    assert waiting[("2", "Adequacy Ja-Zh")] == waiting[("2", "Fluency Ja-En")] == "not run"
    assert sum(text == AWAITING for text in waiting.values()) == 4 * 3 + 4 * 4

    # two judges return Ja-En, one returns Ja-Zh (the sheet renamed; any name will do)
    ja_en, ja_zh = evaluations["ja-en"], evaluations["ja-zh"]
    exported = {e: project / ch4_human.sheet(PATHS, e.name) for e in (ja_en, ja_zh)}
    folder = project / RETURNED
    lines_en = fill_sheet(exported[ja_en], folder / ja_en.name / "judge a.csv", 0)
    assert fill_sheet(exported[ja_en], folder / ja_en.name / "b.csv", 1) == lines_en
    lines_zh = fill_sheet(exported[ja_zh], folder / ja_zh.name / "judge.csv", 0)
    assert len(lines_en) == len(lines_zh) == 20
    assert run(project) == {"ch4_human_aggregate": 1, TARGET: 1}  # the return is noticed

    scored = cells(project, "thesis-table-4.9")
    for number, start in (
        ("0", "vanilla"),
        ("1", "jaen-mass"),
        ("3", "jaen-hfss"),
        ("4", "jaen-enss"),
    ):
        for criterion, text in expected(lines_en, LEVEL[start], (0, 1)).items():
            assert scored[(number, f"{criterion} Ja-En")] == text, (number, criterion)
        assert scored[(number, "Adequacy En-Ja")] == AWAITING  # that sheet is not back
    assert scored[("2", "Adequacy Ja-En")] == "not run"
    assert scored[("1", "Adequacy Ja-En")] != scored[("3", "Adequacy Ja-En")]
    scored = cells(project, "thesis-table-4.8")
    for number, start in (("0", "vanilla"), ("1", "jazh-mass"), ("4", "jazh-jass")):
        assert scored[(number, "Adequacy Ja-Zh")] == f"{LEVEL[start]:.2f}"
        assert (
            scored[(number, "Fluency Ja-Zh")] == expected(lines_zh, LEVEL[start], (0,))["Fluency"]
        )
        assert scored[(number, "Fluency Zh-Ja")] == AWAITING

    # a judge's sheet corrected in place (stricter fluency): its file is newer, it is noticed
    fill_sheet(exported[ja_en], folder / ja_en.name / "judge a.csv", 2)
    assert run(project) == {"ch4_human_aggregate": 1, TARGET: 1}
    stricter = expected(lines_en, 4, (2, 1))["Fluency"]
    assert stricter != expected(lines_en, 4, (0, 1))["Fluency"]
    assert cells(project, "thesis-table-4.9")[("4", "Fluency Ja-En")] == stricter
    # the Ja-Zh return taken back: its cells await again
    (folder / ja_zh.name / "judge.csv").unlink()
    assert run(project) == {"ch4_human_aggregate": 1, TARGET: 1}
    assert cells(project, "thesis-table-4.8")[("4", "Adequacy Ja-Zh")] == AWAITING
    assert cells(project, "thesis-table-4.9")[("4", "Adequacy Ja-En")] == "4.00"


def test_full_scale_exports_100_sentences_per_sheet_of_tables_4_8_and_4_9(tmp_path):
    project = copy_workflow(tmp_path)
    result = snakemake(project, "-n", "-p", "--cores", "4", TARGET, "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    exports = {job.values("wildcards")["name"]: job for job in planned["ch4_human_export"]}
    assert sorted(exports) == sorted(
        f"{corpus}.{d}.10k.seed1" for corpus in ("aspec_je", "wiki_jc") for d in DIRECTIONS[corpus]
    )
    for job in exports.values():
        assert "--sentences 100 " in job.text and job["input"].count("/seed1/test.hyp") == 5
    (aggregate,) = planned["ch4_human_aggregate"]
    assert aggregate.text.count("mlrep eval human-aggregate ") == 4
    # nothing returned at full yet: each reads its blank sheet (pending)
    assert aggregate.text.count("--sheets results/ch4_jass/human/sheets/") == 4
    assert len(aggregate["output"].split(", ")) == 20
