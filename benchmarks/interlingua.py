"""The variable-length interlingua (VAR) against the plain multilingual Transformer (MNMT) of
the same width: training throughput (target tokens/s) and decoding throughput (sentences/s).

VAR pays for a second encoder pass per update (the target through encoder and interlingua, for
L_IA) and for the length classifier; at decoding its decoder attends to len_I interlingua
states instead of the source's. Each system trains for a few updates in its own process
(`mlrep.nmt.train.train`, the code the rules run; fairseq's epoch wps is the training figure),
then decodes every test direction with `mlrep.nmt.translate` (beam 5, as the thesis decodes;
one process, the loaded model). Reads a prepared dataset with its s-enc-t-dec binary
(`snakemake results/ch8_layernorm/data/iwslt`); runs on the CPU unless a GPU is visible.

    python benchmarks/interlingua.py --data results/ch8_layernorm/data/iwslt --updates 20
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYSTEMS = ("var", "none")  # TrainSettings.interlingua: VAR, MNMT
_WPS = re.compile(r"\bwps ([0-9.]+)")


def worker(data: Path, out: Path, arch: str, interlingua: str, updates: int, threads: int) -> dict:
    """Train and decode one system in this process."""
    import torch

    from mlrep.nmt.decode import BeamSettings, Translator
    from mlrep.nmt.train import BEST, TrainSettings, train
    from mlrep.nmt.translate import translate
    from mlrep.nmt.variant import Variant

    torch.set_num_threads(threads)
    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    # fairseq's progress bar logs its epoch line through this logger
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
        save_interval_updates=updates,
        seed=1,
        threads=threads,
        interlingua=interlingua,
    )
    start = time.perf_counter()
    train(data / "s-enc-t-dec" / "bin", out, interlingua, Variant(), settings)
    train_wall = time.perf_counter() - start
    wps = [float(m.group(1)) for line in lines if (m := _WPS.search(line))]
    translator = Translator(out / BEST, data / "s-enc-t-dec" / "bin", "s-enc-t-dec")
    beam = BeamSettings(beam=5, max_len_a=1.2, max_len_b=10, batch_size=64)
    start = time.perf_counter()
    summary = translate(translator, data, out / "hyp", beam)
    decode_wall = time.perf_counter() - start
    sentences = sum(summary["lines"].values())
    hypotheses = [x for f in (out / "hyp").glob("*.sub") for x in f.read_text().splitlines()]
    lengths = [int(x) for f in (out / "hyp").glob("*.len") for x in f.read_text().split()]
    return {
        "interlingua": interlingua,
        "updates": updates,
        "train_wall_s": round(train_wall, 1),
        "target_tokens_per_s": wps[-1] if wps else None,
        "sentences": sentences,
        "decode_wall_s": round(decode_wall, 1),
        "sentences_per_s": round(sentences / decode_wall, 1),
        # what decoding time depends on besides the model: output and interlingua lengths
        "mean_hypothesis_subwords": round(sum(len(h.split()) for h in hypotheses) / sentences, 1),
        "mean_interlingua_length": round(sum(lengths) / len(lengths), 1) if lengths else None,
        "device": translator.device,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("results/ch8_layernorm/data/iwslt"))
    parser.add_argument("--arch", default="mlrep_transformer_tiny", help="the size of both")
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker", nargs=3, metavar=("DATA", "OUT", "INTERLINGUA"))
    args = parser.parse_args()
    if args.worker:
        data, out, interlingua = args.worker
        row = worker(Path(data), Path(out), args.arch, interlingua, args.updates, args.threads)
        print(json.dumps(row))
        return

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for system in SYSTEMS:
            command = [sys.executable, __file__, "--threads", str(args.threads)]
            command += ["--arch", args.arch, "--updates", str(args.updates), "--worker"]
            command += [str(args.data), str(Path(tmp) / system), system]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            rows[system] = json.loads(result.stdout.strip().splitlines()[-1])
    for system, row in rows.items():
        name = "MNMT" if system == "none" else system.upper()
        print(
            f"{name:5s} {args.arch} on {row['device']}, {args.threads} threads: train "
            f"{row['target_tokens_per_s']} target tokens/s (fairseq wps, {row['updates']} "
            f"updates in {row['train_wall_s']} s incl. start-up); decode "
            f"{row['sentences_per_s']} sentences/s ({row['sentences']} in "
            f"{row['decode_wall_s']} s, "
            f"mean hypothesis {row['mean_hypothesis_subwords']} subwords, mean interlingua "
            f"length {row['mean_interlingua_length']})"
        )
    mnmt, var = rows["none"], rows["var"]
    train_ratio = var["target_tokens_per_s"] / mnmt["target_tokens_per_s"]
    decode_ratio = var["sentences_per_s"] / mnmt["sentences_per_s"]
    print(f"VAR / MNMT: training {train_ratio:.2f}x, decoding {decode_ratio:.2f}x")


if __name__ == "__main__":
    main()
