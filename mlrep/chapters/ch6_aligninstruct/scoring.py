"""Scoring a Chapter 6 run: per test set and direction BLEU, chrF++ and COMET with their
per-sentence statistics (`score`, a ``scores.json``), then the run's metrics.json through the
metrics contract (`metrics`), the averages and groups being `scores.run_metrics`'.

As Chapters 7 and 8 split ``nmt score`` from ``nmt metrics``, scoring and writing the metrics
are two steps: BLEU and chrF++ need a CPU, COMET a GPU at full scale, so a workflow may score
them in two jobs (two score files, ``--metrics bleu chrf`` and ``--metrics comet``) that
`metrics` merges.

* **Protocols** (`mlrep.evaluate.mt`): BLEU is ``sacrebleu`` (tokenizer ``zh`` for Chinese
  targets, ``13a`` otherwise: the thesis names none; the spec's choice), chrF++ is ``chrf++``
  (sacreBLEU chrF, word order 2), COMET ``comet`` ×100 with the checkpoint given (the spec's
  default ``Unbabel/wmt22-comet-da``; at tiny a random stand-in, `mlrep.evaluate.comet_stand_in`,
  whose numbers mean nothing).
* **Hypotheses** are the decoded lines less the one period the templates add after a sentence
  (`mlrep.llm.instruct.strip_terminal`: a model trained on ``{text}.`` writes it back).
* **Floors** (`mlrep.report.metrics.FLOOR`): every metric also scores each direction's source
  lines as the hypothesis, so the claims ledger can tell a model from copying its input.
* **A COMET stand-in** (a checkpoint whose signature carries `mlrep.evaluate.comet.STAND_IN`)
  ran the real code path, but its numbers mean nothing: its names go to the contract's
  ``pending`` with `STAND_IN_REASON`, which the tables print in their cells and which leaves
  every claim on COMET "not run at this scale"; the numbers stay in the file under
  ``stand_in`` (never read by the report) and in the score file.
* **Per-sentence data.** A direction's metric keeps its statistics (``bleu_stats``,
  ``chrf_stats``, COMET's ``sentence_scores``); a group (the mean over its directions) lists
  its directions' statistics with ``groups``, so the claims' paired bootstrap resamples within
  each direction and averages them as the table does. ``comet_avg`` (the mean of four columns
  of equally many directions) lists every direction of the four.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlrep.chapters.ch6_aligninstruct import testsets
from mlrep.chapters.ch6_aligninstruct.runs import Run
from mlrep.chapters.ch6_aligninstruct.scores import (
    COMET_AVG,
    ENGLISH_GROUPS,
    METRICS,
    TESTS,
    groups_of,
    run_metrics,
)
from mlrep.errors import MlrepError
from mlrep.evaluate import mt
from mlrep.evaluate.comet import STAND_IN
from mlrep.io import read_lines
from mlrep.llm.instruct import strip_terminal
from mlrep.report.metrics import FLOOR, joint_signature

if TYPE_CHECKING:
    from mlrep.evaluate.comet import Comet

CHAPTER = "ch6_aligninstruct"
PROTOCOLS = {"bleu": mt.Protocol("sacrebleu"), "chrf": mt.Protocol("chrf++")}
STATS = ("bleu_stats", "chrf_stats", "sentence_scores")
STAND_IN_REASON = "COMET stand-in (random checkpoint): not run at this scale"


class ScoringError(MlrepError):
    """Hypotheses, test sets or score files of a Chapter 6 run that do not fit together."""


def _score(
    metric: str,
    hyps: list[str],
    sources: list[str],
    refs: list[str],
    tgt: str,
    scorer: Comet | None,
    batch_size: int,
) -> mt.Score:
    if metric == "comet":
        if scorer is None:
            raise ScoringError("COMET needs a checkpoint: give --comet-checkpoint")
        return mt.comet(hyps, refs, sources, scorer, batch_size)
    return mt.score(PROTOCOLS[metric], hyps, refs, tgt)


def score(
    run: Run,
    tests: Mapping[str, Path],
    hypotheses: Path,
    languages: Sequence[str],
    metrics: Sequence[str] = ("bleu", "chrf", "comet"),
    scorer: Comet | None = None,
    batch_size: int = 16,
) -> dict[str, Any]:
    """Score every test set and direction of `run`: the hypotheses
    ``<hypotheses>/<test>/<src>-<tgt>.txt`` (`decode.split`'s) against the test set folders
    `tests`. Returns ``{"run", "setting", "scores": {test: {metric: {direction: {...}}}}}``,
    each direction's entry its score, signature, statistics and lines and its floor's."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ScoringError(f"no Chapter 6 metric {unknown[0]!r}; metrics: {', '.join(METRICS)}")
    if not run.directions(languages):
        raise ScoringError(f"{run.path} has no directions without the scale's --languages")
    found: dict[str, dict[str, dict[str, dict]]] = {}
    for test in run.tests:
        if test not in tests:
            raise ScoringError(
                f"{run.path} is scored on {', '.join(run.tests)}: give --tests {test}=FOLDER"
            )
        by_metric: dict[str, dict[str, dict]] = {m: {} for m in metrics}
        for src, tgt in run.directions(languages):
            sources, refs = testsets.read(tests[test], src, tgt)
            path = hypotheses / test / f"{src}-{tgt}.txt"
            if not path.is_file():
                raise ScoringError(
                    f"{path}: no hypotheses; split the run's decoding with `mlrep ch6 split`"
                )
            hyps = [strip_terminal(line) for line in read_lines(path, ScoringError)]
            if len(hyps) != len(refs):
                raise ScoringError(
                    f"{path} has {len(hyps)} hypotheses for {len(refs)} references of "
                    f"{tests[test]}: decode the run's prompts of this test set again"
                )
            for metric in metrics:
                result = _score(metric, hyps, sources, refs, tgt, scorer, batch_size)
                floor = _score(metric, sources, sources, refs, tgt, scorer, batch_size)
                by_metric[metric][f"{src}-{tgt}"] = {
                    "score": result.score,
                    "signature": result.signature,
                    "kind": result.kind,
                    "stats": result.stats,
                    "lines": len(hyps),
                    "floor": floor.score,
                    "floor_stats": floor.stats,
                }
        found[test] = by_metric
    return {"run": run.path, "setting": run.setting, "scores": found}


def merged(documents: Sequence[tuple[Path, dict]], run: Run) -> dict[str, dict[str, dict]]:
    """The per-test, per-metric direction entries of several score files of `run`, each
    (test, metric) from one file only."""
    out: dict[str, dict[str, dict]] = {}
    where: dict[tuple[str, str], Path] = {}
    for path, document in documents:
        if document.get("run") != run.path:
            raise ScoringError(
                f"{path} scores {document.get('run')!r}, not {run.path}: give this run's files"
            )
        for test, by_metric in document["scores"].items():
            for metric, entries in by_metric.items():
                if (test, metric) in where:
                    raise ScoringError(
                        f"{test} {metric} is in {where[test, metric]} and {path}: give each "
                        "metric's scores once"
                    )
                where[test, metric] = path
                out.setdefault(test, {})[metric] = entries
    return out


def _direction(name: str) -> tuple[str, str]:
    src, tgt = name.split("-")
    return src, tgt


def metrics(scored: Mapping[str, Mapping[str, Mapping[str, dict]]], setting: str) -> dict:
    """The contract's parts for `mlrep.report.metrics.write` from merged scores: ``metrics``
    (`scores.run_metrics`, and each one's floor), the per-sentence data of every direction
    and group (and ``comet_avg``), their ``groups`` and ``signatures``."""
    values: dict[str, dict[str, dict[tuple[str, str], float]]] = {}
    floors: dict[str, dict[str, dict[tuple[str, str], float]]] = {}
    parts: dict[str, Any] = {kind: {} for kind in STATS}
    groups: dict[str, list[tuple[str, int]]] = {}
    signatures: dict[str, list[str]] = {}
    for test, by_metric in scored.items():
        for metric, entries in by_metric.items():
            for name, entry in entries.items():
                d = _direction(name)
                values.setdefault(test, {}).setdefault(metric, {})[d] = entry["score"]
                floors.setdefault(test, {}).setdefault(metric, {})[d] = entry["floor"]
                kind = parts[entry["kind"]]
                own = f"{test}_{metric}_{name}"
                kind[own], kind[FLOOR + own] = entry["stats"], entry["floor_stats"]
                signatures[own] = [entry["signature"]]
                for group in groups_of(d, setting):
                    mean = f"{test}_{metric}_{group}"
                    for prefix, stats in (("", entry["stats"]), (FLOOR, entry["floor_stats"])):
                        kind.setdefault(prefix + mean, []).extend(stats)
                        groups.setdefault(prefix + mean, []).append((name, entry["lines"]))
                    signatures.setdefault(mean, []).append(entry["signature"])
    found = run_metrics(values, setting)
    found |= {FLOOR + k: v for k, v in run_metrics(floors, setting).items()}
    if COMET_AVG in found:
        columns = [f"{test}_comet_{group}" for test in TESTS for group in ENGLISH_GROUPS]
        sizes = {len(groups[c]) for c in columns}
        if len(sizes) == 1:  # equally many directions: the mean of means is theirs
            for prefix in ("", FLOOR):
                scores_ = parts["sentence_scores"]
                scores_[prefix + COMET_AVG] = [x for c in columns for x in scores_[prefix + c]]
                groups[prefix + COMET_AVG] = [
                    (f"{c.split('_')[0]}:{d}", n) for c in columns for d, n in groups[prefix + c]
                ]
        signatures[COMET_AVG] = [s for c in columns for s in signatures[c]]
    joint = {k: joint_signature(v) for k, v in signatures.items() if k in found}
    document = {"metrics": found, **parts, "groups": groups, "signatures": joint}
    stand_in = {
        name
        for name in found
        if "_comet_" in name or name.removeprefix(FLOOR) == COMET_AVG
        if STAND_IN in joint.get(name.removeprefix(FLOOR), "")
    }
    return _set_aside(document, stand_in)


def _set_aside(document: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """`document` with `names` moved from its numbers to ``pending`` (their stand-in reason)
    and their values to ``stand_in``."""
    if not names:
        return document
    out = {key: {k: v for k, v in part.items() if k not in names} for key, part in document.items()}
    out["pending"] = {name: STAND_IN_REASON for name in sorted(names)}
    out["stand_in"] = {name: document["metrics"][name] for name in sorted(names)}
    return out


def read_scores(paths: Sequence[Path]) -> list[tuple[Path, dict]]:
    """Score files (`score`'s output), each with its path."""
    documents = []
    for path in paths:
        try:
            documents.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, json.JSONDecodeError) as exc:
            raise ScoringError(f"{path}: not a score file ({exc}); run `mlrep ch6 score`") from None
    return documents
