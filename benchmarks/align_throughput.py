"""Word-alignment throughput, peak memory and AER on the synthetic cipher corpus.

Prints, per backend: sentence pairs/s for one direction, for both directions with 1 and 2
shards run in parallel on 2 cores, peak resident memory of one aligner process, and AER of each
direction and of grow-diag-final-and. Reference points: eflomal's own CLI (``eflomal-align``,
both directions in one run) and systran-align (fast_align's original C++ library, which returns
only its own symmetrized links).

    python benchmarks/align_throughput.py --sentences 10000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlrep.align import cipher
from mlrep.align.pharaoh import GoldLine, read_alignments
from mlrep.align.score import score
from mlrep.align.symmetrize import symmetrize

BIN = Path(sys.executable).parent
FAST_ALIGN_FLAGS = ["-d", "-o", "-v"]


def run(commands: list[list[str]]) -> tuple[float, float]:
    """Run commands in parallel; (wall seconds, largest peak RSS in MiB among them)."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in commands
    ]
    peak = 0
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{commands} failed: {proc.stderr.read().decode()}")
        peak = max(peak, usage.ru_maxrss)
    return time.perf_counter() - start, peak / 1024


def aligner(bitext: Path, out: Path, backend: str, reverse: bool) -> list[str]:
    flags = FAST_ALIGN_FLAGS + (["-r"] if reverse else [])
    return [
        str(BIN / "mlrep"),
        "align",
        "-i",
        str(bitext),
        *flags,
        "--backend",
        backend,
        "--out",
        str(out),
    ]


def gdfa_aer(gold: list[GoldLine], forward: Path, reverse: Path) -> float:
    merged = [
        frozenset(symmetrize("grow-diag-final-and", f, r))
        for f, r in zip(read_alignments(forward), read_alignments(reverse), strict=True)
    ]
    return score(gold, merged).aer


def shard(lines: list[str], folder: Path, count: int) -> list[Path]:
    size = -(-len(lines) // count)
    paths = []
    for k in range(count):
        path = folder / f"shard{count}.{k}.txt"
        path.write_text("".join(lines[k * size : (k + 1) * size]), encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pairs = cipher.generate(cipher.CipherSettings(sentences=args.sentences, seed=args.seed))
    gold = [GoldLine(p.links, p.links) for p in pairs]
    n = len(pairs)
    tokens = sum(len(p.source) + len(p.target) for p in pairs)
    print(f"cipher corpus: {n} sentence pairs, {tokens} tokens; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines = [f"{' '.join(p.source)} ||| {' '.join(p.target)}\n" for p in pairs]
        bitext = folder / "bitext.txt"
        bitext.write_text("".join(lines), encoding="utf-8")
        for backend in ("fast_align", "eflomal"):
            fwd, rev = folder / f"{backend}.fwd", folder / f"{backend}.rev"
            seconds, peak = run([aligner(bitext, fwd, backend, False)])
            run([aligner(bitext, rev, backend, True)])
            print(
                f"{backend:10s} one direction: {n / seconds:8.0f} pairs/s, peak {peak:6.0f} MiB; "
                f"AER fwd {score(gold, read_alignments(fwd)).aer:.3f} "
                f"rev {score(gold, read_alignments(rev)).aer:.3f} "
                f"gdfa {gdfa_aer(gold, fwd, rev):.3f}"
            )
            for shards in (1, 2):
                pieces = shard(lines, folder, shards)
                commands = [
                    aligner(p, p.with_suffix(f".{d}.{backend}"), backend, d == "rev")
                    for p in pieces
                    for d in ("fwd", "rev")
                ]
                seconds, peak = run(commands)
                print(
                    f"{backend:10s} both directions, {shards} shard(s), {len(commands)} processes "
                    f"on 2 cores: {n / seconds:8.0f} pairs/s, peak {peak:6.0f} MiB per process"
                )
        fwd, rev = folder / "cli.fwd", folder / "cli.rev"
        command = [str(BIN / "eflomal-align"), "-i", str(bitext), "-f", str(fwd), "-r", str(rev)]
        seconds, peak = run([command])
        print(
            f"reference eflomal-align CLI, both directions in one run: {n / seconds:8.0f} pairs/s, "
            f"peak {peak:6.0f} MiB; AER gdfa {gdfa_aer(gold, fwd, rev):.3f}"
        )
        out = folder / "systran.txt"
        script = (
            "import sys, systran_align as s\n"
            "src, f, b, out = sys.argv[1:]\n"
            "s.generate_alignment_probabilities(src, f, b, favor_diagonal=True, "
            "optimize_tension=True, variational_bayes=True)\n"
            "pairs = [l.split(' ||| ') for l in open(src, encoding='utf-8')]\n"
            "res = s.Aligner(f, b).align_batch([p[0].split() for p in pairs], "
            "[p[1].split() for p in pairs])\n"
            "open(out, 'w').write(''.join(' '.join(f'{i}-{j}' for i, j in sorted(r['alignments']))"
            " + '\\n' for r in res))\n"
        )
        command = [
            sys.executable,
            "-c",
            script,
            str(bitext),
            str(folder / "sf"),
            str(folder / "sb"),
            str(out),
        ]
        seconds, peak = run([command])
        print(
            f"reference systran-align (fast_align's C++ library, train both directions + its own "
            f"symmetrization): {n / seconds:8.0f} pairs/s, peak {peak:6.0f} MiB; "
            f"AER {score(gold, read_alignments(out)).aer:.3f}"
        )


if __name__ == "__main__":
    main()
