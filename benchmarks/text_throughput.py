"""Throughput and peak memory of every `mlrep text` tool, per shard count.

Runs the real commands (``mlrep text …``) as the rules do, on the first --lines lines of the
tiny corpus, with 1..k shards processed by k concurrent processes, and prints sentences/s
(wall clock, start-up included; and start-up excluded for one shard) and the peak resident
memory of the largest process (mosestokenizer's Perl helper is not counted). Reference:
DESIGN.md measured GiNZA at ~50 sentences/s with its full pipeline; the Moses rows compare
the Perl scripts with sacremoses.

    python benchmarks/text_throughput.py --lines 1000 --shards 1 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MLREP = [sys.executable, "-m", "mlrep.cli"]

# name -> (input file of the tiny corpus, mlrep text arguments)
TOOLS = {
    "moses (mosestokenizer, Perl)": (
        "train.en-de.de",
        ["tokenize", "--lang", "de", "--backend", "mosestokenizer"],
    ),
    "moses (sacremoses)": (
        "train.en-de.de",
        ["tokenize", "--lang", "de", "--backend", "sacremoses"],
    ),
    "ja words + bunsetsu (GiNZA, no NER)": ("train.en-ja.ja", ["segment", "--lang", "ja"]),
    "zh words (jieba)": ("train.en-zh.zh", ["segment", "--lang", "zh"]),
    "ko words (kiwi)": ("train.en-ko.ko", ["segment", "--lang", "ko"]),
    "en parse (spaCy en_core_web_sm)": ("train.en-ja.en", ["parse"]),
}


def run(args: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{proc.stderr.read().decode()}")
    return time.perf_counter() - start, usage.ru_maxrss // 1024


def concurrent(commands: list[list[str]]) -> tuple[float, int]:
    start = time.perf_counter()
    procs = [
        subprocess.Popen(c, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for c in commands
    ]
    peak = 0
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            raise SystemExit(f"failed: {proc.args}\n{proc.stderr.read().decode()}")
        peak = max(peak, usage.ru_maxrss // 1024)
    return time.perf_counter() - start, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "results/data/tiny_corpus")
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), help="names of TOOLS")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mlrep-bench-"))
    common = ["--params", str(REPO / "params.yaml"), "--max-chars", "100000", "--max-lines", "0"]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs visible, load average {load}; {args.lines} lines per tool")
    print(f"{'tool':38} {'shards':>6} {'sent/s':>8} {'sent/s excl. start':>18} {'peak MB':>8}")
    try:
        for name in args.tools:
            source, cli = TOOLS[name]
            lines = (args.corpus / source).read_text(encoding="utf-8").splitlines()
            sample, one = work / "sample.txt", work / "one.txt"
            sample.write_text("\n".join(lines[: args.lines]) + "\n", encoding="utf-8")
            one.write_text(lines[0] + "\n", encoding="utf-8")
            io = ["--input", str(one), "--output", str(work / "out1")]
            startup, _ = run([*MLREP, "text", *cli, *common, *io])
            for shards in args.shards:
                commands = [
                    [
                        *MLREP,
                        "text",
                        *cli,
                        *common,
                        "--input",
                        str(sample),
                        "--output",
                        str(work / f"out.{i}"),
                        "--shard",
                        str(i),
                        "--shards",
                        str(shards),
                    ]
                    for i in range(shards)
                ]
                wall, peak = concurrent(commands)
                n = min(args.lines, len(lines))
                excl = " " * 18
                if shards == 1 and wall > startup:
                    excl = f"{n / (wall - startup):18.1f}"
                print(f"{name:38} {shards:6d} {n / wall:8.1f} {excl} {peak:8d}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
