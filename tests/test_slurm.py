"""`snakemake --profile slurm` against a live single-node SLURM with one (fake) GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.slurm_cluster import LocalSlurm, unavailable

BIN = Path(sys.executable).parent
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
    root.mkdir()
    for name in ("Snakefile", "params.yaml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "workflow", root / "workflow")
    os.symlink(os.readlink(REPO / "slurm"), root / "slurm")
    (root / "override.yaml").write_text(yaml.safe_dump(override))
    return root


def _snakemake(workdir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    env = {**env, "PATH": f"{BIN}{os.pathsep}{env['PATH']}"}
    result = subprocess.run(
        [str(BIN / "snakemake"), *args, "--configfile", "override.yaml"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
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
