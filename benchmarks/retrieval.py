"""Retrieval and mining time and peak memory: blocked exact search against brute force.

Each measurement runs in a fresh process. Its peak resident memory is read from the kernel
(VmHWM) after the peak was reset once the inputs were built, so it is the peak of the method
itself with its inputs resident. Embeddings are random vectors with planted translations
(queries are noisy copies of some candidates), float32, so both methods have real work and
a checkable answer.

- ParaCrawl-style retrieval: 2,000 queries among 10k / 100k / 200k candidates, ratio margin,
  k = 4 (`mlrep.evaluate.retrieval.predict`) against brute force: the whole
  queries x candidates matrix in torch, top-k over its rows and columns, the same margin.
- BUCC-style mining (`mlrep.evaluate.mining.mine`, both directions): n x n for n = 10k
  against the same brute force, and n = 200k blocked only (its full matrix needs 160 GB).

Prints wall and CPU seconds of the method (CPU time is the steadier figure on a shared
machine), peak MiB of the process, the ratios blocked/brute, and whether the answers agree.

    OMP_NUM_THREADS=1 python benchmarks/retrieval.py   # docs/evaluation.md figures (~40 min)
    OMP_NUM_THREADS=1 python benchmarks/retrieval.py --sizes 10000 --mining-sizes 10000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERIES = 2000


def data(n_queries: int, n_candidates: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidates, and queries that are noisy copies of the first `n_queries` candidates."""
    rng = np.random.default_rng(seed)
    candidates = rng.standard_normal((n_candidates, dim), dtype=np.float32)
    queries = candidates[:n_queries] + rng.standard_normal((n_queries, dim), dtype=np.float32)
    return queries, candidates


def brute_force(queries: np.ndarray, candidates: np.ndarray, k: int, mine: bool) -> np.ndarray:
    """The same answer from the full similarity matrix: every query's best ratio-margin
    candidate, or with `mine` the selected pairs as a candidate row per query (-1: none)."""
    import torch

    from mlrep.evaluate import mining

    q = torch.nn.functional.normalize(torch.from_numpy(queries), dim=1)
    c = torch.nn.functional.normalize(torch.from_numpy(candidates), dim=1)
    sims = q @ c.T
    fwd_scores, fwd_idx = (t.numpy() for t in torch.topk(sims, k, dim=1))
    bwd_scores, bwd_idx = (t.T.numpy() for t in torch.topk(sims, k, dim=0))
    mean_q = fwd_scores.astype(np.float64).mean(axis=1)
    mean_c = bwd_scores.astype(np.float64).mean(axis=1)
    fwd_margin = fwd_scores / ((mean_q[:, None] + mean_c[fwd_idx]) / 2)
    fwd_best = fwd_margin.argmax(axis=1)
    rows = np.arange(len(fwd_best))
    if not mine:
        return fwd_idx[rows, fwd_best]
    bwd_margin = bwd_scores / ((mean_c[:, None] + mean_q[bwd_idx]) / 2)
    bwd_best = bwd_margin.argmax(axis=1)
    cols = np.arange(len(bwd_best))
    mined = mining.select(
        fwd_idx[rows, fwd_best],
        fwd_margin[rows, fwd_best],
        bwd_idx[cols, bwd_best],
        bwd_margin[cols, bwd_best],
    )
    return pairs_by_query(mined, len(queries))


def pairs_by_query(mined, n_queries: int) -> np.ndarray:
    answer = np.full(n_queries, -1)
    answer[mined.src] = mined.tgt
    return answer


def worker(args: argparse.Namespace) -> None:
    """One measurement: build the data, time the method, save its answer."""
    from mlrep.evaluate import mining, retrieval

    queries, candidates = data(args.queries, args.candidates, args.dim, args.seed)
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak: measure the method only
    start, cpu = time.perf_counter(), time.process_time()
    if args.method in ("brute", "brute-mine"):
        answer = brute_force(queries, candidates, 4, mine=args.method == "brute-mine")
    elif args.method == "blocked":
        answer = retrieval.predict(queries, candidates, "ratio", 4, args.block_size)[0]
    else:
        mined = mining.mine(queries, candidates, 4, "ratio", args.block_size)
        answer = pairs_by_query(mined, args.queries)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    np.save(args.answer, answer)
    peak = int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0]) / 1024
    Path(f"{args.answer}.time").write_text(f"{elapsed} {cpu} {peak}\n")


def measure(method: str, queries: int, candidates: int, dim: int, block: int, tmp: Path):
    """((wall, CPU) seconds of the method, its peak MiB, its answer), in a fresh process."""
    answer = tmp / f"{method}-{queries}-{candidates}.npy"
    command = [sys.executable, __file__, "--worker", method, "--queries", str(queries)]
    command += ["--candidates", str(candidates), "--dim", str(dim), "--block-size", str(block)]
    command += ["--answer", str(answer)]
    proc = subprocess.Popen(command)
    if proc.wait() != 0:
        raise SystemExit(f"{method} worker failed")
    wall, cpu, peak = (float(v) for v in Path(f"{answer}.time").read_text().split())
    return (wall, cpu), peak, np.load(answer)


def report(name: str, blocked, brute) -> None:
    (wall, cpu), peak = blocked[0], blocked[1]
    line = f"{name:<24} blocked {wall:7.1f} s wall {cpu:7.1f} s CPU {peak:6.0f} MiB"
    if brute is None:
        print(f"{line} | brute force: full matrix does not fit, not run", flush=True)
        return
    (b_wall, b_cpu), b_peak = brute[0], brute[1]
    same = np.array_equal(blocked[2], brute[2])
    print(
        f"{line} | brute {b_wall:7.1f} s wall {b_cpu:7.1f} s CPU {b_peak:6.0f} MiB | "
        f"blocked/brute: CPU x{cpu / b_cpu:.2f}, memory x{peak / b_peak:.2f} | "
        f"same answers: {same}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=1024, help="embedding size (EMS/LASER: 1024)")
    parser.add_argument("--block-size", type=int, default=4096)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 200_000])
    parser.add_argument("--mining-sizes", type=int, nargs="*", default=[10_000, 200_000])
    parser.add_argument(
        "--worker", choices=["brute", "brute-mine", "blocked", "mine"], help=argparse.SUPPRESS
    )
    parser.add_argument("--queries", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--candidates", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--answer", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.method = args.worker
        worker(args)
        return
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"dim {args.dim}, block {args.block_size}, float32, OMP_NUM_THREADS={threads}")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for n in args.sizes:
            blocked = measure("blocked", QUERIES, n, args.dim, args.block_size, tmp)
            brute = measure("brute", QUERIES, n, args.dim, args.block_size, tmp)
            report(f"retrieval {QUERIES} x {n}", blocked, brute)
        for n in args.mining_sizes:
            mined = measure("mine", n, n, args.dim, args.block_size, tmp)
            fits = n * n * 4 < 8 << 30
            brute = measure("brute-mine", n, n, args.dim, args.block_size, tmp) if fits else None
            report(f"mining {n} x {n}", mined, brute)


if __name__ == "__main__":
    main()
