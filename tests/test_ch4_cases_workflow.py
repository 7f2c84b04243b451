"""Tables 4.10/4.11's texts through Snakemake (`ch4_jass_cases`): one job writes every case of
the scale from the planned systems' test hypotheses, the tables show each system's line beside
the printed one, and a params change to line 0 reruns it on the published reference's line.
The hypotheses are planted (`--allowed-rules` keeps Snakemake from training anything)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import cases as ch4_cases
from mlrep.chapters.ch4_jass import runs, training
from mlrep.paths import Paths
from mlrep.report import render, tables
from mlrep.report.fill import NOT_RUN, fill
from mlrep.report.metrics import collect
from mlrep.report.reference import load_all
from tests.conftest import REPO, copy_workflow, planned_jobs, snakemake
from tests.tiny_runs import jobs_run, set_params

TARGET = "ch4_jass_cases"
RULES = ("ch4_cases", TARGET)
PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))
LINES = 10
PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)


def plant(project: Path, found: list[ch4_cases.Case]) -> None:
    """Each case's test words and its systems' hypotheses: line i names its file and i."""
    for case in found:
        files = training.score_inputs(PATHS, case.systems[0])
        named = {**files, **{s: training.hypotheses(PATHS, s, case.seed) for s in case.systems}}
        for name, path in named.items():
            out = project / path
            out.parent.mkdir(parents=True, exist_ok=True)
            label = runs.finetune(name).start if name in case.systems else name
            out.write_text("".join(f"{label} {i}\n" for i in range(1, LINES + 1)), "utf-8")


def texts(project: Path, table: str) -> dict[str, str]:
    """The measured side of a case table's Text column, by System label."""
    published = PUBLISHED[table]
    filled = fill(DEFINITIONS[table], published, collect(project / "results", "tiny"))
    keys = DEFINITIONS[table].row_keys(published.header, published.rows)
    return {
        row[1]: render.measured_text(filled.cell(key, "Text"), 0.05)
        for row, key in zip(published.rows, keys, strict=True)
    }


def run(project: Path) -> dict[str, int]:
    result = snakemake(project, "--cores", "1", "--allowed-rules", *RULES, "--", TARGET)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return jobs_run(result.stdout + result.stderr)


def test_case_tables_show_each_systems_line_then_the_published_ones(tmp_path):
    project = copy_workflow(tmp_path / "project")
    shutil.copytree(REPO / "reports" / "reference", project / "reports" / "reference")
    # tiny plans no Wikipedia Zh-Ja: a 10k size of it, so Table 4.11 has systems too
    sizes = {"aspec_je": {"10k": 100}, "wiki_jc": {"10k": 100}}
    set_params(project, {"ch4_jass.sizes": sizes})
    section = cfg.load(cfg.load_yaml(project / "params.yaml"))["ch4_jass"]
    found = ch4_cases.cases(section)
    assert [c.table for c in found] == ["thesis-table-4.10", "thesis-table-4.11"]
    plant(project, found)

    assert run(project) == {"ch4_cases": 1, TARGET: 1}
    je = texts(project, "thesis-table-4.10")
    assert je["Reference-Ja"] == "source 3" and je["Reference-En"] == "reference 3"
    assert je["MASS"] == "jaen-mass 3" and je["ENSS"] == "jaen-enss 3"
    assert je["w/o pre-training"] == "vanilla 3"
    assert je["PMASS"] == NOT_RUN  # tiny pre-trains no PMASS
    jc = texts(project, "thesis-table-4.11")
    assert jc["Reference-Zh"] == "source 3" and jc["JASS"] == "jazh-jass 3"
    assert jc["BMASS"] == NOT_RUN

    # line 0: the published Reference-En, spaced as words, on test line 7
    reference = project / training.score_inputs(PATHS, found[0].systems[0])["reference"]
    lines = reference.read_text("utf-8").splitlines()
    lines[6] = " ".join(PUBLISHED["thesis-table-4.10"].rows[1][2].split())
    reference.write_text("".join(x + "\n" for x in lines), "utf-8")
    lines_of = {"thesis-table-4.10": {"line": 0}, "thesis-table-4.11": {"line": 3}}
    set_params(project, {"ch4_jass.cases": lines_of})
    assert run(project) == {"ch4_cases": 1, TARGET: 1}
    je = texts(project, "thesis-table-4.10")
    assert je["MASS"] == "jaen-mass 7" and je["Reference-Ja"] == "source 7"
    assert texts(project, "thesis-table-4.11")["JASS"] == "jazh-jass 3"


def test_full_scale_finds_both_published_sentences_in_one_job(tmp_path):
    project = copy_workflow(tmp_path)
    result = snakemake(project, "-n", "-p", "--cores", "4", TARGET, "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (job,) = planned_jobs(result.stdout)["ch4_cases"]
    assert job.text.count("mlrep eval case ") == 2 and job.text.count("--line 0 ") == 2
    assert "--row Reference-En " in job.text and "--row Reference-Ja " in job.text
    assert job["input"].count("/seed1/test.hyp") == 14 + 8
