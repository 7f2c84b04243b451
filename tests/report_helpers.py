"""Fixture results for the report tests: real metrics.json files in a temporary results tree."""

from __future__ import annotations

import json
import random
from pathlib import Path

from mlrep.cli import main
from mlrep.report.stats import sentence_stats
from tests.conftest import REPO

REFERENCE = REPO / "reports" / "reference"

REFERENCES = [
    "the cat sat on the mat near the door",
    "a dog runs quickly in the green park",
    "we will meet again tomorrow at noon",
    "the weather is cold and rainy today",
    "she reads a long book every evening",
    "they built a small house by the river",
    "my brother plays the guitar very well",
    "this train leaves the station at nine",
] * 5


def degrade(text: str, rate: float, rng: random.Random) -> str:
    """Drop words at `rate`: a worse system in a controlled amount."""
    words = [w for w in text.split() if rng.random() >= rate]
    return " ".join(words) or "x"


def write_metrics(
    results: Path,
    chapter: str,
    run: str,
    seed: int,
    metrics: dict[str, float],
    scale: str = "tiny",
    bleu_drop: dict[str, float] | None = None,
    sentence_scores: dict[str, list[float]] | None = None,
) -> Path:
    """One metrics.json; `bleu_drop` adds bleu_stats for a metric at a word-drop rate."""
    folder = results / chapter / run / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    data = {"chapter": chapter, "run": run, "seed": seed, "scale": scale, "metrics": metrics}
    if bleu_drop:
        rng = random.Random(seed)
        data["bleu_stats"] = {
            name: sentence_stats([degrade(r, rate, rng) for r in REFERENCES], REFERENCES)
            for name, rate in bleu_drop.items()
        }
    if sentence_scores:
        data["sentence_scores"] = sentence_scores
    path = folder / "metrics.json"
    path.write_text(json.dumps(data))
    return path


def ch8_results(results: Path, post_better: bool = True, seeds=(1, 10, 20)) -> None:
    """Table 8.2 rows #1 (PreNorm) and #2 (PostNorm) on OPUS, three seeds, with bleu_stats."""
    good, bad = (0.1, 0.5) if post_better else (0.5, 0.1)
    for seed in seeds:
        write_metrics(
            results,
            "ch8_layernorm",
            "opus/postnorm-s-enc-t-dec-w",
            seed,
            {"zst_bleu": 16.0 + seed / 10 if post_better else 9.0, "zst_off_target": 8.0 + seed},
            bleu_drop={"zst_bleu": good},
        )
        write_metrics(
            results,
            "ch8_layernorm",
            "opus/prenorm-s-enc-t-dec-w",
            seed,
            {"zst_bleu": 10.0 if post_better else 12.0 + seed, "zst_off_target": 40.0 + seed},
            bleu_drop={"zst_bleu": bad},
        )


def build_report(results: Path, out: Path, bootstrap_samples: int = 200) -> Path:
    """`mlrep report build` at scale tiny from `results` into `out` (exit status checked)."""
    args = ["report", "build", "--results", str(results), "--reference", str(REFERENCE)]
    args += ["--out", str(out), "--scale", "tiny", "--bootstrap-samples", str(bootstrap_samples)]
    assert main([*args, "--bootstrap-seed", "1"]) == 0
    return out
