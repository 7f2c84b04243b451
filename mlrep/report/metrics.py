"""The metrics-file contract between chapters and the report.

Every evaluation step writes one file per run and seed::

    results/<chapter>/<run>/seed<seed>/metrics.json

with this content (JSON object; extra keys are ignored)::

    {
      "chapter": "ch8_layernorm",          # the params.yaml section name of the chapter
      "run": "opus/postnorm-s-enc-t-dec-res",  # the folder between chapter and seed<seed>
      "seed": 10,                           # integer
      "scale": "tiny",                      # the scale the numbers were measured at
      "metrics": {"zst_bleu": 16.8, "zst_off_target": 8.59},   # name -> number
      "bleu_stats": {"zst_bleu": [[hyp_len, ref_len, c1, c2, c3, c4, t1, t2, t3, t4], ...]},
      "sentence_scores": {"zst_off_target": [100.0, 0.0, ...]}
    }

``metrics`` holds the numbers the tables and claims name (a table definition maps each cell to
``run`` + metric name; see ``tables/*.yaml``). Percentages are stored as percentages (8.59, not
0.0859), as the thesis prints them. ``bleu_stats`` is optional: the per-sentence BLEU sufficient
statistics of a BLEU metric (`mlrep.report.stats.sentence_stats` computes them with sacrebleu);
where both sides of a comparison have them, the claims ledger runs a paired bootstrap test.
``sentence_scores`` is optional too: per-sentence scores of a metric that is their mean (an
off-target rate: 100 for a hypothesis in the wrong language, 0 otherwise), bootstrapped alike.
Numbers of other scales are kept on disk but never shown in a report of this scale.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from mlrep.errors import MlrepError
from mlrep.io import sha256_file

METRICS_FILE = "metrics.json"
_REQUIRED = {"chapter": str, "run": str, "seed": int, "scale": str, "metrics": dict}


class MetricsFileError(MlrepError):
    """A metrics.json breaks the contract; the message names the file and the key."""


@dataclass(frozen=True)
class SeedResult:
    """One metrics.json: the numbers of one run at one seed."""

    path: Path
    chapter: str
    run: str
    seed: int
    scale: str
    metrics: dict[str, float]
    bleu_stats: dict[str, list[list[float]]] = field(default_factory=dict)
    sentence_scores: dict[str, list[float]] = field(default_factory=dict)
    sha256: str = ""


def read(path: Path) -> SeedResult:
    """Parse and check one metrics.json."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MetricsFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise MetricsFileError(f"{path}: expected a JSON object (see mlrep/report/metrics.py)")
    for key, kind in _REQUIRED.items():
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise MetricsFileError(
                f"{path}: key {key!r} must be a {kind.__name__} (see mlrep/report/metrics.py)"
            )
    metrics: dict[str, float] = {}
    for name, value in data["metrics"].items():
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise MetricsFileError(f"{path}: metrics.{name} must be a number, got {value!r}")
        metrics[name] = float(value)
    stats = data.get("bleu_stats", {})
    for name, rows in stats.items():
        if not isinstance(rows, list) or any(not isinstance(r, list) or len(r) != 10 for r in rows):
            raise MetricsFileError(
                f"{path}: bleu_stats.{name} must be a list of 10-number rows "
                "[hyp_len, ref_len, c1..c4, t1..t4]"
            )
    scores = data.get("sentence_scores", {})
    for name, values in scores.items():
        if not isinstance(values, list) or any(
            isinstance(v, bool) or not isinstance(v, int | float) for v in values
        ):
            raise MetricsFileError(
                f"{path}: sentence_scores.{name} must be a list of numbers, one per sentence"
            )
    return SeedResult(
        path=path,
        chapter=data["chapter"],
        run=data["run"],
        seed=data["seed"],
        scale=data["scale"],
        metrics=metrics,
        bleu_stats=stats,
        sentence_scores=scores,
        sha256=sha256_file(path),
    )


@dataclass
class Results:
    """Every metrics.json of one scale, indexed by (chapter, run)."""

    scale: str
    runs: dict[tuple[str, str], list[SeedResult]] = field(default_factory=dict)
    other_scales: int = 0

    def seeds(self, chapter: str, run: str) -> list[SeedResult]:
        return self.runs.get((chapter, run), [])

    def files(self) -> list[SeedResult]:
        return [r for group in self.runs.values() for r in group]


def existing_files(results_dir: Path) -> list[str]:
    """Every metrics.json under `results_dir` now (the report rule's inputs), sorted."""
    return sorted(str(p) for p in results_dir.glob(f"*/**/{METRICS_FILE}"))


def collect(results_dir: Path, scale: str) -> Results:
    """Read every metrics.json under `results_dir` and keep those measured at `scale`."""
    found = Results(scale=scale)
    for path in sorted(results_dir.glob(f"*/**/{METRICS_FILE}")) if results_dir.exists() else []:
        result = read(path)
        chapter_folder = path.relative_to(results_dir).parts[0]
        if result.chapter != chapter_folder:
            raise MetricsFileError(
                f"{path}: chapter {result.chapter!r} does not match its folder {chapter_folder!r}"
            )
        if result.scale != scale:
            found.other_scales += 1
            continue
        group = found.runs.setdefault((result.chapter, result.run), [])
        if any(r.seed == result.seed for r in group):
            raise MetricsFileError(
                f"{path}: a second file for run {result.run!r} seed {result.seed}"
            )
        group.append(result)
    return found
