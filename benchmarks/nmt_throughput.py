"""NMT training throughput (target tokens/s) and peak memory: the tiny model and Transformer-base.

Reads a prepared IWSLT-shaped dataset (en, it, nl, ro: `snakemake
results/ch8_layernorm/data/iwslt`, the tiny corpus preprocessed and cut), then trains each size
for a few updates in its own process (`mlrep.nmt.train.train`, the code the rules run) and prints
fairseq's own words-per-second of the epoch (wps: target tokens per second), the wall time,
the peak resident memory of the process and, on a GPU, the peak GPU memory. Reference point:
DESIGN's measurement of the same tiny model with plain fairseq-train (0.36 s/update on 2
threads, ``--max-tokens 4096``).

    python benchmarks/nmt_throughput.py --data results/ch8_layernorm/data/iwslt --updates 20 5
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

import nmt_worker

SIZES = ("mlrep_transformer_tiny", "mlrep_transformer_base")


def worker(data: Path, out: Path, arch: str, updates: int, threads: int) -> dict:
    """Train one size in this process; fairseq's epoch line gives wps."""
    import torch

    settings = nmt_worker.settings(arch, updates, threads, fp16=torch.cuda.is_available())
    timed = nmt_worker.timed_train(data / "t-enc" / "bin", out, "postnorm-t-enc-w", settings)
    return {
        "arch": arch,
        "updates": updates,
        "threads": threads,
        **timed,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        "peak_gpu_mib": round(torch.cuda.max_memory_allocated() / 2**20)
        if torch.cuda.is_available()
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("results/ch8_layernorm/data/iwslt"))
    parser.add_argument("--updates", type=int, nargs=2, default=[20, 5], help="tiny, base")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker", nargs=4, metavar=("DATA", "OUT", "ARCH", "UPDATES"))
    args = parser.parse_args()
    if args.worker:
        data, out, arch, updates = args.worker
        print(json.dumps(worker(Path(data), Path(out), arch, int(updates), args.threads)))
        return

    from mlrep.nmt import data, prepare

    stats = data.read_stats(args.data / data.TEXT)
    vocabulary = len((args.data / prepare.DICT).read_text(encoding="utf-8").splitlines())
    print(f"dataset: {stats['s_train']} en-xx pairs x 2 directions, vocabulary {vocabulary}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for arch, updates in zip(SIZES, args.updates, strict=True):
            command = [sys.executable, __file__, "--threads", str(args.threads), "--worker"]
            command += [str(args.data), str(root / arch), arch, str(updates)]
            row = nmt_worker.run_worker(command)
            per_update = row["wall_s"] / row["updates"]
            print(
                f"{arch:24s} {row['device']}: {row['target_tokens_per_s']} target tokens/s "
                f"(fairseq wps), {row['updates']} updates in {row['wall_s']} s incl. start-up "
                f"({per_update:.2f} s/update), peak RSS {row['peak_rss_mib']} MiB"
                + (f", peak GPU {row['peak_gpu_mib']} MiB" if row["peak_gpu_mib"] else "")
            )


if __name__ == "__main__":
    main()
