"""`snakemake --profile slurm` against a live single-node SLURM with one (fake) GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from mlrep.train.checkpoint import Checkpoints
from mlrep.train.signals import EXIT_PREEMPTED
from tests.conftest import REPO, copy_workflow, snakemake
from tests.slurm_cluster import LocalSlurm, unavailable

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(unavailable() is not None, reason=str(unavailable())),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    slurm = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    slurm.start()
    try:
        yield slurm
    finally:
        slurm.stop()


def _workflow_copy(root: Path, override: dict) -> Path:
    copy_workflow(root)
    os.symlink(os.readlink(REPO / "slurm"), root / "slurm")
    (root / "override.yaml").write_text(yaml.safe_dump(override))
    return root


def _snakemake(workdir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    result = snakemake(workdir, *args, "--configfile", "override.yaml", timeout=600, env=env)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result


OVERRIDE = {
    # downloads are shared with the other tests; one small package keeps the corpus quick
    "paths": {"resources": str(REPO / "resources")},
    "data": {"tiny_corpus": {"packages": ["sphinx"], "min_segments": 50}},
    "resources": {"gpu_train": {"gpu": 1}},
}
CORPUS = "results/data/tiny_corpus"
PROBE = "results/cluster/probe.json"


@pytest.mark.network
def test_profile_runs_jobs_under_slurm_and_matches_a_local_run(cluster, tmp_path):
    on_slurm = _workflow_copy(tmp_path / "slurm", OVERRIDE)
    _snakemake(on_slurm, cluster.env, "--profile", "slurm", CORPUS, PROBE)

    # every results folder names the SLURM job that produced it
    corpus_job = json.loads((on_slurm / CORPUS / "provenance.json").read_text())["slurm"]
    probe = json.loads((on_slurm / PROBE).read_text())
    assert corpus_job["SLURM_JOB_ID"] and probe["slurm"]["SLURM_JOB_ID"]
    assert corpus_job["SLURM_JOB_ID"] != probe["slurm"]["SLURM_JOB_ID"]
    # the GPU-requesting rule really asked SLURM for a GPU
    assert "gpu" in (cluster.job_field(probe["slurm"]["SLURM_JOB_ID"], "TresPerJob") or "")
    assert "gpu" not in (cluster.job_field(corpus_job["SLURM_JOB_ID"], "TresPerJob") or "")

    local = _workflow_copy(tmp_path / "local", OVERRIDE)
    _snakemake(local, os.environ.copy(), "--cores", "2", CORPUS)
    produced = sorted(p.name for p in (local / CORPUS).iterdir())
    assert produced == sorted(p.name for p in (on_slurm / CORPUS).iterdir())
    for name in produced:
        if name != "provenance.json":  # host, job id and time differ by design
            assert (local / CORPUS / name).read_bytes() == (on_slurm / CORPUS / name).read_bytes()


def _sbatch(cluster: LocalSlurm, log: Path, command: list[str]) -> str:
    out = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--mem=1000",
            f"--chdir={REPO}",
            f"--output={log}",
            "--wrap",
            "srun " + " ".join(command),  # a job step, as the executor plugin runs rules
        ],
        env=cluster.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return out.stdout.strip().split(";")[0]


def _wait_until_done(cluster: LocalSlurm, job: str, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    while (state := cluster.job_field(job, "JobState")) in {"PENDING", "RUNNING", "COMPLETING"}:
        assert time.monotonic() < deadline, f"job {job} still {state}"
        time.sleep(1)
    return state or ""


def test_training_job_signalled_by_slurm_resumes_bit_identically(cluster, tmp_path):
    reference, interrupted = tmp_path / "reference", tmp_path / "interrupted"
    job = [sys.executable, "-m", "tests.train_job"]
    subprocess.run([*job, str(reference)], cwd=REPO, check=True, timeout=120)

    first = _sbatch(cluster, tmp_path / "first.log", [*job, str(interrupted), "--sleep", "0.2"])
    deadline = time.monotonic() + 120
    while not Checkpoints(interrupted).steps():
        assert time.monotonic() < deadline, (tmp_path / "first.log").read_text()
        time.sleep(0.2)
    # what SLURM sends to the job's steps before a time limit (the profile's --signal=USR1@…)
    subprocess.run(["scancel", "--signal=USR1", first], env=cluster.env, check=True)
    _wait_until_done(cluster, first)
    assert cluster.job_field(first, "ExitCode") == f"{EXIT_PREEMPTED}:0"
    stopped_at = Checkpoints(interrupted).steps()[-1]
    assert stopped_at < 60

    second = _sbatch(cluster, tmp_path / "second.log", [*job, str(interrupted)])
    assert _wait_until_done(cluster, second) == "COMPLETED"
    assert f"resumed from step {stopped_at}" in (tmp_path / "second.log").read_text()
    final = Checkpoints(interrupted).load_latest()
    assert final["step"] == 60
    expected = Checkpoints(reference).load_latest()["model"]
    assert all(torch.equal(final["model"][k], expected[k]) for k in expected)


EMS_MODEL = "results/ch2_ems/ems/seed1/model/model.pt"
EMS_TRAIN = {
    "paths": OVERRIDE["paths"],
    "chapters": ["ch2_ems"],
    "resources": {"gpu_train": {"gpu": 1, "threads": 1}},
    "ch2_ems": {
        "prepare": {"max_pairs": 60, "heldout_pairs": 10},
        "model": {"layers": 1},
        # long enough to be signalled between two checkpoints, short enough for CI
        "train": {"steps": 300, "checkpoint_every": 10},
    },
}


def _ch2_train_job(cluster: LocalSlurm) -> str | None:
    """The SLURM job id of the running ch2_train rule (the plugin puts the rule in the comment)."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "RUNNING", "-o", "%i %k"],
        env=cluster.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return next(
        (j for j, c in (line.split(" ", 1) for line in out.splitlines()) if "ch2_train" in c), None
    )


def _with_corpus(root: Path, tiny_project) -> Path:
    """`root` with the session's tiny corpus (tests/tiny_runs.py), so only training runs."""
    shutil.copytree(tiny_project.root / CORPUS, root / CORPUS, symlinks=True)
    return root


@pytest.mark.network
def test_a_chapter_training_rule_preempted_under_slurm_is_retried_and_resumes(
    cluster, tiny_project, tmp_path
):
    local = _with_corpus(_workflow_copy(tmp_path / "local", EMS_TRAIN), tiny_project)
    _snakemake(local, os.environ.copy(), "--cores", "2", EMS_MODEL)

    on_slurm = _with_corpus(_workflow_copy(tmp_path / "slurm", EMS_TRAIN), tiny_project)
    env = {**cluster.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    driver = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "snakemake"),
            "--profile",
            "slurm",
            EMS_MODEL,
            "--configfile",
            "override.yaml",
        ],
        cwd=on_slurm,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        checkpoints = Checkpoints(on_slurm / "results/ch2_ems/ems/seed1/model/checkpoints")
        deadline = time.monotonic() + 300
        while not checkpoints.steps() or (job := _ch2_train_job(cluster)) is None:
            assert time.monotonic() < deadline and driver.poll() is None, "training never started"
            time.sleep(0.2)
        # SLURM's warning before the time limit, as the profile's --signal=USR1@300 sends it
        subprocess.run(["scancel", "--signal=USR1", job], env=cluster.env, check=True, timeout=30)
        _wait_until_done(cluster, job)
        stopped_at = checkpoints.steps()[-1]
        output, _ = driver.communicate(timeout=600)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, output[-4000:]
    # the trainer saved and exited; the step's own Snakemake outlived the signal and reported
    # the rule as failed, so the driver's retry resubmitted it
    first_log = (on_slurm / "results/logs/slurm/rule_ch2_train/ems_1" / f"{job}.log").read_text()
    assert "Error in rule ch2_train" in first_log and "User defined signal" not in first_log
    assert 0 < stopped_at < 300
    # Snakemake's retry resubmitted the rule and the new job resumed where the first stopped
    log = (on_slurm / "results/logs/ch2_ems/ems/train_seed1.log").read_text()
    assert f"resumed from step {stopped_at}" in log, log[-2000:]
    # bit-identical to the uninterrupted local run: weights and every step's losses
    curve = "loss.tsv"
    assert (on_slurm / EMS_MODEL).with_name(curve).read_bytes() == (local / EMS_MODEL).with_name(
        curve
    ).read_bytes()
    resumed, expected = (
        torch.load(d / EMS_MODEL, weights_only=True)["state"] for d in (on_slurm, local)
    )
    assert resumed.keys() == expected.keys()
    assert all(torch.equal(resumed[k], expected[k]) for k in expected)
