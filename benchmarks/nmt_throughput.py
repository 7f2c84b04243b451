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
import logging
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = ("mlrep_transformer_tiny", "mlrep_transformer_base")
_WPS = re.compile(r"\bwps ([0-9.]+)")


def worker(data: Path, out: Path, arch: str, updates: int, threads: int) -> dict:
    """Train one size in this process; fairseq's epoch line gives wps."""
    import torch

    from mlrep.nmt.train import TrainSettings, train
    from mlrep.nmt.variant import Variant

    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    # fairseq's progress bar logs its epoch line through this logger (renamed to "train")
    logging.getLogger("fairseq.logging.progress_bar").addHandler(Capture())
    settings = TrainSettings(
        arch=arch,
        dropout=0.1,
        lr=5e-4,
        max_epoch=0,
        max_update=updates,
        max_tokens=4096,
        warmup_updates=4000,
        label_smoothing=0.1,
        save_interval_updates=10**6,
        seed=1,
        threads=threads,
        fp16=torch.cuda.is_available(),
    )
    start = time.perf_counter()
    train(data / "t-enc" / "bin", out, "postnorm-t-enc-w", Variant(), settings)
    wall = time.perf_counter() - start
    wps = [float(m.group(1)) for line in lines if (m := _WPS.search(line))]
    return {
        "arch": arch,
        "updates": updates,
        "threads": threads,
        "wall_s": round(wall, 1),
        "target_tokens_per_s": wps[-1] if wps else None,
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
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            row = json.loads(result.stdout.strip().splitlines()[-1])
            per_update = row["wall_s"] / row["updates"]
            print(
                f"{arch:24s} {row['device']}: {row['target_tokens_per_s']} target tokens/s "
                f"(fairseq wps), {row['updates']} updates in {row['wall_s']} s incl. start-up "
                f"({per_update:.2f} s/update), peak RSS {row['peak_rss_mib']} MiB"
                + (f", peak GPU {row['peak_gpu_mib']} MiB" if row["peak_gpu_mib"] else "")
            )


if __name__ == "__main__":
    main()
