"""The code version, a contract between the library and the workflow.

Every rule that runs ``mlrep <verb>`` passes the digest of the code that verb runs as its `code`
param (`code_version` in workflow/rules/common.smk), so Snakemake's params trigger reruns a job
when, and only when, that code changes; every DVC stage lists as deps the code of the jobs it
runs. The last tests check the promise itself on a workflow whose every job is recorded as done
(``snakemake --touch`` over empty outputs: nothing trains): after an edit to one module,
Snakemake finds the params changed for exactly the jobs whose verb imports that module.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import training as ch4_training
from mlrep.cli import build_parser
from mlrep.closure import Verbs
from tests.conftest import BIN, REPO, copy_workflow, snakemake

VERBS = Verbs(build_parser())
SCALES = ("tiny", "full")


def listing(project: Path, *args: str, pythonpath: Path = REPO) -> list[dict]:
    """The rules or jobs of the workflow in `project` (tests/workflow_jobs.py), with the mlrep
    found on `pythonpath`."""
    env = {
        **os.environ,
        "PYTHONPATH": str(pythonpath),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    result = subprocess.run(
        [sys.executable, str(REPO / "tests" / "workflow_jobs.py"), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def runs_mlrep(shell: str | None) -> bool:
    return shell is not None and VERBS.verb_of(shell) is not None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


@pytest.mark.parametrize("scale", SCALES)
def test_every_rule_that_runs_mlrep_passes_the_code_of_the_verb_it_runs(workdir, scale):
    rules = listing(workdir, "rules", "--config", json.dumps({"scale": scale}))
    wrong = {
        rule["rule"]: (VERBS.verb_of(rule["shell"]), rule["code"])
        for rule in rules
        if runs_mlrep(rule["shell"])
        and rule["code"] != VERBS.closure(VERBS.verb_of(rule["shell"])).digest
    }
    assert wrong == {}, 'these rules need code=code_version("<verb>") of the verb they run'
    assert sum(runs_mlrep(rule["shell"]) for rule in rules) >= 30


def stage_commands(stage: dict) -> list[str]:
    return stage["cmd"] if isinstance(stage["cmd"], list) else [stage["cmd"]]


def covered(path: str, deps: list[str]) -> bool:
    return any(path == dep or path.startswith(dep.rstrip("/") + "/") for dep in deps)


def outs(stage: dict) -> list[str]:
    return [next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs", [])]


def stage_jobs(stages: dict[str, dict], scale: str, workdir: Path) -> dict[str, list[dict]]:
    """The jobs each stage runs: those its Snakemake targets need, less the jobs whose outputs
    another stage owns (the data stage's datasets, which a chapter stage depends on)."""
    targets = {
        name: cmd.split(" -- ", 1)[1].split()
        for name, stage in stages.items()
        for cmd in stage_commands(stage)
        if cmd.startswith("snakemake ")
    }
    jobs = listing(
        workdir,
        "jobs",
        *sorted({t for ts in targets.values() for t in ts}),
        "--config",
        json.dumps({"scale": scale}),
    )
    by_id = {job["id"]: job for job in jobs}
    found = {}
    for name, wanted in targets.items():
        others = [o for other, stage in stages.items() if other != name for o in outs(stage)]
        queue = [
            job["id"]
            for job in jobs
            if job["rule"] in wanted or any(path in wanted for path, _ in job["output"])
        ]
        seen: set[int] = set()
        while queue:
            job = by_id[queue.pop()]
            if job["id"] in seen:
                continue
            seen.add(job["id"])
            if not (job["output"] and all(covered(p, others) for p, _ in job["output"])):
                queue.extend(job["depends"])
        found[name] = [
            by_id[i]
            for i in sorted(seen)
            if not (by_id[i]["output"] and all(covered(p, others) for p, _ in by_id[i]["output"]))
        ]
    return found


@pytest.mark.slow
def test_each_dvc_stage_lists_the_code_and_rule_files_of_the_jobs_it_runs(workdir):
    """A stage whose deps miss a module that one of its jobs imports would not rerun when that
    module changes; the failure names the stage, the missing paths and the verbs that read them."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    missing: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for scale in SCALES:
        for name, jobs in stage_jobs(stages, scale, workdir).items():
            for job in jobs:
                if not covered(job["snakefile"], stages[name]["deps"]):
                    missing[name][job["snakefile"]].add(f"rule {job['rule']}")
                if runs_mlrep(job["shell"]):
                    verb = VERBS.verb_of(job["shell"])
                    for path in VERBS.closure(verb).paths:
                        if not covered(path, stages[name]["deps"]):
                            missing[name][path].add(verb)
    for name, stage in stages.items():
        for verb in filter(None, map(VERBS.verb_of, stage_commands(stage))):
            for path in VERBS.closure(verb).paths:
                if not covered(path, stage["deps"]):
                    missing[name][path].add(verb)
    problems = [
        f"stage {name}: deps miss {path} ({', '.join(sorted(readers))})"
        for name, paths in sorted(missing.items())
        for path, readers in sorted(paths.items())
    ]
    assert not problems, "\n".join(problems)


# `all` and the chapters' summaries at tiny scale: the data, the chapters and the report
TARGETS = (
    "all",
    "results/metrics/ch2_ems.json",
    "results/metrics/ch3_lealla.json",
    "results/metrics/ch7_interlingua.json",
    "results/metrics/ch8_layernorm.json",
)
# the NMT model's decoding steps of Chapter 7 (its pivot runs at tiny, Chapter 8's does not)
CH7_DECODING = ("ch7_translate", "ch7_translate_gold", "ch7_translate_pivot")


def with_mlrep(project: Path) -> dict[str, str]:
    """The environment in which the workflow in `project` imports the mlrep copied there."""
    return {**os.environ, "PYTHONPATH": str(project)}


def statuses(project: Path) -> dict[str, set[str]]:
    """Each rule's output statuses in Snakemake's ``--detailed-summary`` ("ok", "params
    changed", ...): the check its params trigger makes before a run."""
    result = snakemake(project, "--detailed-summary", *TARGETS, env=with_mlrep(project))
    assert result.returncode == 0, result.stderr[-4000:]
    found: dict[str, set[str]] = defaultdict(set)
    for row in csv.DictReader(io.StringIO(result.stdout), delimiter="\t"):
        found[row["rule"]].add(row["status"])
    return found


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """The workflow and a copy of mlrep, every tiny job of `TARGETS` recorded as done without
    running one: each output an empty file or folder, then ``snakemake --touch`` records the
    params (the code versions included) as if the jobs had run."""
    project = copy_workflow(tmp_path_factory.mktemp("recorded"))
    shutil.copytree(REPO / "mlrep", project / "mlrep", ignore=shutil.ignore_patterns("__pycache__"))
    for job in listing(project, "jobs", *TARGETS, pythonpath=project):
        for path, is_directory in job["output"]:
            output = project / path
            if is_directory:
                output.mkdir(parents=True, exist_ok=True)
            else:
                output.parent.mkdir(parents=True, exist_ok=True)
                output.touch()
    touched = snakemake(project, "--touch", "--cores", "1", *TARGETS, env=with_mlrep(project))
    assert touched.returncode == 0, touched.stderr[-4000:]
    assert {rule: found for rule, found in statuses(project).items() if found != {"ok"}} == {}
    return project


# the steps that score Chapter 2's encoders: the trained ones, and the pretrained (mUSE at tiny)
# and TF-IDF baselines, which go through the same evaluation module (and so its imports)
CH2_EVALUATIONS = ("ch2_evaluate", "ch2_grid_evaluate", "ch2_baseline", "ch2_tfidf")
# Chapter 3's scoring steps: the students, the reduced teacher, the teacher and mUSE
CH3_EVALUATIONS = ("ch3_evaluate", "ch3_evaluate_reduced", "ch3_evaluate_pretrained")
# every Chapter 3 verb is `mlrep embed`'s, whose module imports the sentence-encoder model
CH3_RULES = ("ch3_prepare", "ch3_teacher_cache", "ch3_reduce", "ch3_distill", *CH3_EVALUATIONS)
# Chapter 4's fine-tuning jobs, one per start at tiny (rules named in a loop)
CH4_FINETUNING = tuple(
    f"ch4_finetune_{job}"
    for job in ch4_training.finetune_jobs(
        cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "tiny"})["ch4_jass"]
    )
)


def at_import(text: str) -> str:
    """A statement that runs whenever the module is imported."""
    return text + '\nlen("code version probe")\n'


def in_function(name: str) -> Callable[[str], str]:
    """A statement added to the body of the top-level function `name`."""

    def change(text: str) -> str:
        function = next(
            node
            for node in ast.parse(text).body
            if isinstance(node, ast.FunctionDef) and node.name == name
        )
        first = function.body[0]
        lines = text.splitlines(keepends=True)
        lines.insert(first.lineno - 1, " " * first.col_offset + "probe = 1\n")
        return "".join(lines)

    return change


def comments_only(text: str) -> str:
    return text.replace('"""', '"""Reworded, and a comment added. ', 1) + "\n# a note\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "change", "reruns"),
    [
        (
            "nmt/model.py",
            at_import,
            {
                "ch8_train",
                "ch8_translate",
                "ch8_states",
                "ch7_train",
                *CH7_DECODING,
                "ch4_pretrain",
                *CH4_FINETUNING,
                "ch4_token_accuracy",
                # Chapter 5: mBART's stand-in and its init, the trainings, their decoding and
                # the retrieval analyses, which load the encoder
                "ch5_mbart_pretrain",
                "ch5_mbart_init",
                "ch5_train",
                "ch5_translate",
                "ch5_retrieval",
            },
        ),
        ("nmt/model.py", comments_only, set()),
        ("embed/model.py", at_import, {"ch2_prepare", "ch2_train", *CH2_EVALUATIONS, *CH3_RULES}),
        # the chapter summaries hold the ledger's verdicts, which `fill` computes
        ("report/fill.py", at_import, {"report", "chapter_summary"}),
        # the off-target rate: not the metric names, which data preparation imports from the
        # same module to check the row it writes
        (
            "nmt/metrics.py",
            in_function("off_target"),
            {"ch8_metrics", "ch7_metrics", "ch5_metrics"},
        ),
        # ... but a statement that runs on import reruns every job whose code imports it, and
        # every job that writes metrics imports each chapter's metric names
        (
            "nmt/metrics.py",
            at_import,
            {
                "ch8_prepare",
                "ch8_metrics",
                "ch7_prepare",
                "ch7_metrics",
                "ch5_prepare",
                "ch5_metrics",
                "ch5_corpus",  # Table 5.1's rows are metrics.json files
                "ch6_metrics",
                "ch6_cosine_metrics",  # Figures 6.3/D.1's deltas are metrics.json files
                "ch2_prepare",  # the shared preparation's module writes metrics too
                *CH2_EVALUATIONS,
                *CH3_EVALUATIONS,
                "onealigner_evaluate",
                "onealigner_evaluate_unsupervised",
                "onealigner_language_points",  # Figure 2's points are metrics.json files
                *CH4_FINETUNING,
                "ch4_token_accuracy",
                "ch4_adequacy",
                "ch4_cases",
                "ch4_human_export",
                "ch4_human_aggregate",
            },
        ),
    ],
    ids=[
        "nmt-model",
        "nmt-model-comments",
        "embed-model",
        "report-fill",
        "nmt-metrics-function",
        "nmt-metrics-import",
    ],
)
def test_a_change_to_a_module_reruns_exactly_the_jobs_that_import_it(
    recorded, module, change, reruns
):
    path = recorded / "mlrep" / module
    original = path.read_text()
    path.write_text(change(original))
    try:
        found = statuses(recorded)
    finally:
        path.write_text(original)
    assert {rule for rule, status in found.items() if "params changed" in status} == reruns
    # every job of those rules, and no job of any other rule
    assert {
        rule: status for rule, status in found.items() if status not in ({"ok"}, {"params changed"})
    } == {}
