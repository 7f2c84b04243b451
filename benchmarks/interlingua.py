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
import sys
import tempfile
import time
from pathlib import Path

import nmt_worker

SYSTEMS = ("var", "none")  # TrainSettings.interlingua: VAR, MNMT


def worker(data: Path, out: Path, arch: str, interlingua: str, updates: int, threads: int) -> dict:
    """Train and decode one system in this process."""
    import torch

    from mlrep.nmt.decode import BeamSettings, Translator
    from mlrep.nmt.train import BEST
    from mlrep.nmt.translate import translate

    torch.set_num_threads(threads)
    # a checkpoint at the last update: decoding loads it
    settings = nmt_worker.settings(
        arch, updates, threads, save_interval_updates=updates, interlingua=interlingua
    )
    timed = nmt_worker.timed_train(data / "s-enc-t-dec" / "bin", out, interlingua, settings)
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
        "train_wall_s": timed["wall_s"],
        "target_tokens_per_s": timed["target_tokens_per_s"],
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
            rows[system] = nmt_worker.run_worker(command)
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
