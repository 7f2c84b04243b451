"""How long Snakemake takes to plan the DAG (dry run) at each scale, with no data present.

Run from the repository root: ``python benchmarks/plan_time.py [--repeat 3]``. The spine's
target is a full-scale plan in under 10 s on 2 cores; the figure printed is the median wall
time of ``snakemake -n all`` in a temporary copy of the workflow (so nothing is built), with
the time of ``snakemake --version`` (interpreter and import start-up) as the reference. The
copy is the committed tree (``git archive HEAD``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def timed(cmd: list[str], cwd: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        archive = subprocess.run(
            ["git", "archive", "HEAD"], cwd=REPO, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        base = timed([SNAKEMAKE, "--version"], work, args.repeat)
        print(f"snakemake --version (start-up reference): {base:.2f} s")
        for scale in ("tiny", "full"):
            seconds = timed(
                [SNAKEMAKE, "-n", "all", "--config", f"scale={scale}"], work, args.repeat
            )
            print(
                f"snakemake -n all, scale={scale}: {seconds:.2f} s "
                f"({seconds / base:.1f}x start-up; target < 10 s)"
            )


if __name__ == "__main__":
    main()
