"""Fixture results for the report tests: real metrics.json files in a temporary results tree."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from mlrep.cli import main
from mlrep.nmt.data import Direction
from mlrep.nmt.score import score
from mlrep.report.metrics import FLOOR, write
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
    """Table 8.2 rows #1 (PreNorm) and #2 (PostNorm) on OPUS, three seeds, with bleu_stats.

    A table fixture: its printed numbers are typed in, not derived from its statistics, so the
    claims ledger refuses to bootstrap them (claims are tested on `nmt_run`)."""
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


# Chapter 8's zero-shot directions for `nmt_run`, one with a Chinese target (sacrebleu's zh
# tokenizer) and of another size, so a score pooled over directions differs from their mean.
ZERO_SHOT = (Direction("de", "fr"), Direction("fr", "de"), Direction("de", "zh"))
SUPERVISED = (Direction("en", "de"), Direction("de", "en"))
# the "source" side: every other word changed, so copying it scores a small BLEU, as copying
# a German source into French does
SOURCES = [" ".join(w.upper() if i % 2 else w for i, w in enumerate(r.split())) for r in REFERENCES]
ZH_REFERENCES = [
    "我 今天 去 学校 上课",
    "他 每天 早上 喝 一 杯 茶",
    "我们 明天 在 公园 见面",
    "这 本 书 非常 有意思",
    "她 的 妹妹 住 在 北京",
    "火车 九 点 从 车站 出发",
] * 4
System = Callable[[list[str], list[str], random.Random], list[str]]  # sources, references


def drop(rate: float) -> System:
    """A system that outputs the reference with words dropped at `rate`."""
    return lambda sources, references, rng: [degrade(r, rate, rng) for r in references]


def copy_source(rate: float = 0.0) -> System:
    """A system that copies the source (words dropped at `rate`): the floor, or below it."""
    return lambda sources, references, rng: [degrade(s, rate, rng) for s in sources]


def nmt_run(
    results: Path,
    run: str,
    seed: int,
    system: System | Mapping[str, System],
    directions: Sequence[Direction] = ZERO_SHOT,
    floor: bool = True,
    off_target: Mapping[str, list[int]] | None = None,
) -> dict:
    """One Chapter 8 run's metrics.json, derived as the chapter derives it: hypotheses of
    `system` (one per direction name, or one for all) scored by `mlrep.nmt.score`, so every
    value and its bleu_stats / groups come from the same text, and so is its copy-the-source
    floor (kept with `floor`, dropped without). `off_target`: per zero-shot direction, 1 for
    each off-target sentence (the rate and its per-sentence scores both follow; floor: all
    off)."""
    text, hyps = (results.parent / f"{results.name}-{part}" for part in "th")
    hyp_dir = hyps / run / str(seed)
    for folder in (text, hyp_dir):
        folder.mkdir(parents=True, exist_ok=True)
    for d in directions:
        references = ZH_REFERENCES if d.tgt == "zh" else REFERENCES
        sources = SOURCES[: len(references)]
        (text / f"test.{d.name}.{d.src}").write_text("\n".join(sources) + "\n", "utf-8")
        (text / f"test.{d.name}.{d.tgt}").write_text("\n".join(references) + "\n", "utf-8")
        chosen = system[d.name] if isinstance(system, Mapping) else system
        lines = chosen(sources, references, random.Random(f"{run}/{seed}/{d.name}"))
        (hyp_dir / f"{d.name}.hyp").write_text("\n".join(lines) + "\n", "utf-8")
    scored = score(hyp_dir, text, directions)
    metrics, stats, groups = (
        {k: v for k, v in scored[part].items() if floor or not k.startswith(FLOOR)}
        for part in ("metrics", "bleu_stats", "groups")
    )
    sentences: dict[str, list[float]] = {}
    if off_target:
        flags = {name: [100.0 * f for f in found] for name, found in off_target.items()}
        metrics["zst_off_target"] = sum(sum(f) / len(f) for f in flags.values()) / len(flags)
        sentences["zst_off_target"] = [f for found in flags.values() for f in found]
        groups["zst_off_target"] = [(name, len(found)) for name, found in flags.items()]
        if floor:
            metrics[FLOOR + "zst_off_target"] = 100.0
            sentences[FLOOR + "zst_off_target"] = [100.0] * len(sentences["zst_off_target"])
            groups[FLOOR + "zst_off_target"] = groups["zst_off_target"]
    out = results / "ch8_layernorm" / run / f"seed{seed}" / "metrics.json"
    return write(
        out,
        "ch8_layernorm",
        run,
        seed,
        "tiny",
        metrics,
        bleu_stats=stats,
        sentence_scores=sentences,
        groups=groups,
    )
