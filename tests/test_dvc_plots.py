"""`dvc plots show` renders offline through the template `mlrep report dvc-template` writes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, dump_dom_offline
from tests.conftest import REPO

BIN = Path(sys.executable).parent


def run(cwd: Path, *cmd: str) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]


@pytest.fixture(scope="module")
def plots(tmp_path_factory) -> Path:
    """A git + DVC project with the repository's .dvc/config and one plot, rendered."""
    root = tmp_path_factory.mktemp("dvcplots")
    run(root, "git", "init", "-q")
    run(root, "dvc", "init", "-q")
    shutil.copy(REPO / ".dvc" / "config", root / ".dvc" / "config")
    run(root, "mlrep", "report", "dvc-template")
    (root / "loss.csv").write_text("step,loss\n1,3.0\n2,2.4\n3,2.1\n4,1.9\n")
    (root / "dvc.yaml").write_text("plots:\n  - loss.csv:\n      x: step\n      y: loss\n")
    run(root, "dvc", "plots", "show", "-o", "plots")
    return root / "plots" / "index.html"


def test_the_page_dvc_writes_loads_no_script_from_the_network(plots):
    page = plots.read_text()
    assert re.findall(r"<script[^>]+src=", page) == []
    assert "cdn.jsdelivr" not in page
    assert "vegaEmbed('#loss_csv'" in page


@pytest.mark.skipif(CHROMIUM is None, reason="Debian `chromium` is not installed")
def test_the_plot_is_drawn_in_a_browser_without_network(plots, tmp_path):
    dom, foreign = dump_dom_offline(plots, tmp_path)
    # vega-embed replaced the empty div with a drawn chart (an SVG of marks)
    assert re.search(r'<div id="loss_csv"[^>]*vega-embed', dom)
    assert 'class="marks"' in dom
    assert foreign == set()
