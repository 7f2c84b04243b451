"""How long Snakemake takes to plan the documented full-scale dry runs, and how many jobs each
plans.

Run from the repository root: ``python benchmarks/dag_planning.py [--repeat 3] [--rev HEAD]``.
Compares the commands users plan a thesis-scale run with (docs/preprocessing.md, README.md,
docs/chapters/ch8_layernorm.md), run as tests/test_docs_commands.py runs them (``snakemake -n``
in a copy of the workflow with the `slurm` profile link, nothing built), against
``snakemake --version`` (interpreter and import start-up). Their cost is mostly Snakemake's
own per job (rule matching, input, params and resources per job, the printed plan), so the job
count is printed beside the time. The workflow and the `mlrep` it imports come from a committed
tree (``git archive REV``), so two revisions compare on the same machine: ``--rev HEAD~1`` for
the figures before a change. Both figures are medians; the CPU time (user + system of the
snakemake process) varies less than the wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
COMMANDS = {
    "docs/preprocessing.md": ["preprocess", "alignments", "--config", "scale=full"],
    "README.md": ["--profile", "slurm", "all", "--config", "scale=full"],
    "docs/chapters/ch8_layernorm.md": [
        "--profile",
        "slurm",
        "ch8_layernorm",
        "--config",
        "scale=full",
    ],
}


def children_cpu() -> float:
    """User + system seconds of this process's finished children."""
    times = os.times()
    return times.children_user + times.children_system


def timed(args: list[str], cwd: Path, tree: Path, repeat: int) -> tuple[float, float, str]:
    """Median wall and CPU seconds of `snakemake args` in `cwd` with the `mlrep` of `tree`
    (not the installed one), and its output."""
    walls, cpus, output = [], [], ""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for _ in range(repeat):
        cpu, start = children_cpu(), time.perf_counter()
        result = subprocess.run(
            [SNAKEMAKE, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
        )
        walls.append(time.perf_counter() - start)
        cpus.append(children_cpu() - cpu)
        output = result.stdout
    return statistics.median(walls), statistics.median(cpus), output


def job_count(output: str) -> int:
    """The total of the dry run's job stats table."""
    return int(re.findall(r"^total\s+(\d+)$", output, re.MULTILINE)[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--rev", default="HEAD", help="the committed tree to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree, work = Path(tmp) / "tree", Path(tmp) / "workflow"
        tree.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.rev], cwd=REPO, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        # what the docs test copies (tests/conftest.py `copy_workflow`), with the slurm link
        work.mkdir()
        for name in ("Snakefile", "params.yaml"):
            shutil.copy(tree / name, work / name)
        shutil.copytree(tree / "workflow", work / "workflow")
        os.symlink(os.readlink(tree / "slurm"), work / "slurm")
        wall, cpu, _ = timed(["--version"], work, tree, args.repeat)
        print(f"{args.rev}: snakemake --version (start-up reference): {wall:.1f} s")
        for where, command in COMMANDS.items():
            wall, cpu, output = timed(["-n", *command], work, tree, args.repeat)
            print(
                f"{args.rev}: snakemake -n {' '.join(command)} ({where}): {job_count(output)} "
                f"jobs, {wall:.1f} s wall, {cpu:.1f} s CPU ({1000 * wall / job_count(output):.1f} "
                "ms a job)"
            )


if __name__ == "__main__":
    main()
