"""What BUCC mining with the candidate pre-filter costs (`mlrep.embed.bucc_filter`): the time of
each stage and the peak memory, on a synthetic comparable pair of N × N sentences.

Random token states of XLM-R-large's width stand in for an encoder's layer; a `--gold` share
of the targets are noisy copies of a source (the gold pairs), the rest unrelated, so the
candidates' recall is printed too. The stages: caching both sides' tokens (float16, a
temporary file), the exact k-NN of the pooled vectors both ways, BERT-score of the candidates
with the reference-batch normalisation, and the one-to-one selection.

    python benchmarks/bucc_prefilter.py [--sentences 20000] [--length 100] [--width 1024]
                                        [--k 32] [--gold 0.1] [--device cuda]

On a GPU each clock read waits for the device; the peak is the GPU's allocated memory, and the
process's resident peak (CPU) is printed beside it.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
from pathlib import Path

import numpy as np
import torch
from _timing import clock

from mlrep.embed import bucc_filter
from mlrep.evaluate import mining


def batch(args: argparse.Namespace, seed: int, start: int, rows: int) -> tuple:
    """(states, mask) of sentences start..start+rows of one side, the same on every call."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + start)
    lengths = torch.randint(int(0.4 * args.length), args.length + 1, (rows,), generator=generator)
    states = torch.randn(rows, args.length, args.width, generator=generator)
    return states, torch.arange(args.length)[None, :] < lengths[:, None]


def side(args: argparse.Namespace, seed: int, gold: int):
    """One side's (states, mask) batches; its first `gold` rows are noisy copies of the
    source side's (seed 1) rows of the same numbers."""
    for start in range(0, args.sentences, args.batch):
        rows = min(args.batch, args.sentences - start)
        states, mask = batch(args, seed, start, rows)
        copied = max(0, min(rows, gold - start))
        if copied:
            source, source_mask = batch(args, 1, start, rows)
            states[:copied] = source[:copied] + 0.5 * states[:copied]
            mask[:copied] = source_mask[:copied]
        yield states.to(args.device), mask.to(args.device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=20000, help="per side")
    parser.add_argument("--length", type=int, default=100, help="tokens (the paper's maximum)")
    parser.add_argument("--width", type=int, default=1024, help="XLM-R-large: 1024")
    parser.add_argument("--k", type=int, default=32, help="bucc_candidates")
    parser.add_argument("--gold", type=float, default=0.1, help="share of targets with a source")
    parser.add_argument("--batch", type=int, default=256, help="sentences per encoding batch")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    n, gold = args.sentences, int(args.gold * args.sentences)
    times = {}
    with tempfile.TemporaryDirectory(prefix="bucc-bench-") as folder:
        start = clock(device)
        src = bucc_filter.cache_side(side(args, 1, 0), Path(folder) / "s")
        tgt = bucc_filter.cache_side(side(args, 2, gold), Path(folder) / "t")
        times["cache both sides"] = clock(device) - start
        start = clock(device)
        rows, cols = bucc_filter.candidates(src.pooled, tgt.pooled, args.k)
        times["k-NN both ways"] = clock(device) - start
        start = clock(device)
        scores = bucc_filter.candidate_scores(
            src, tgt, rows, cols, alpha=0.75, batch=256, device=args.device
        )
        times["BERT-score candidates + references"] = clock(device) - start
        start = clock(device)
        mined = bucc_filter.mine(rows, cols, scores, (n, n))
        times["select"] = clock(device) - start
        cache_gb = (src.tokens.nbytes + tgt.tokens.nbytes) / 2**30
    ids = [str(i) for i in range(n)]
    split = mining.Split(
        np.zeros(0), np.zeros(0), ids, ids, {(str(i), str(i)) for i in range(gold)}
    )
    print(f"{n} x {n} sentences, length <= {args.length}, width {args.width}, k {args.k}")
    print(
        f"candidates: {len(rows)} pairs ({len(rows) / n:.1f} a source), recall "
        f"{bucc_filter.recall(rows, cols, split):.1f} %, {len(mined.src)} mined"
    )
    for stage, seconds in times.items():
        print(f"{stage:>36}: {seconds:8.1f} s")
    print(f"{'total':>36}: {sum(times.values()):8.1f} s")
    print(f"token cache on disk: {cache_gb:.2f} GiB")
    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB")
    resident = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"peak resident memory: {resident:.2f} GiB")


if __name__ == "__main__":
    main()
