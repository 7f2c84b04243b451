"""One chapter's results as a flat JSON: what DVC shows as metrics and compares across experiments.

The per-seed metrics.json files stay the source of truth (the report reads them); this summary
exists because `dvc metrics show` and `dvc exp show` want a few fixed files, one per stage, and
a sweep over a hyper-parameter is compared by exactly these numbers. Keys are
``<run>/<metric>`` (mean over the seeds that ran) plus ``<run>/seeds``.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlrep.io import atomic_write_text
from mlrep.report.metrics import collect


def summarise(results_dir: Path, chapter: str, scale: str) -> dict[str, float]:
    """Seed means of every metric of `chapter` measured at `scale`, keyed ``<run>/<metric>``."""
    summary: dict[str, float] = {}
    results = collect(results_dir, scale)
    for (found_chapter, run), seeds in sorted(results.runs.items()):
        if found_chapter != chapter:
            continue
        names = sorted({name for seed in seeds for name in seed.metrics})
        for name in names:
            values = [seed.metrics[name] for seed in seeds if name in seed.metrics]
            summary[f"{run}/{name}"] = round(sum(values) / len(values), 4)
        summary[f"{run}/seeds"] = len(seeds)
    return summary


def write(results_dir: Path, chapter: str, scale: str, out: Path) -> dict[str, float]:
    summary = summarise(results_dir, chapter, scale)
    atomic_write_text(out, json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary
