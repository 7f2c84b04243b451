"""Human evaluation of translations (Tables 4.8, 4.9): blind sheets out, 1–5 judgements back.

`export` draws test sentences with a seed and writes two files kept apart: the *sheet* the
judges fill (CSV, one row per sentence and system: item, anonymous label, source, output,
empty ``adequacy`` and ``fluency``) and the *key* (JSON) saying which system each label of each
item is. Judges see the source and the outputs only: no reference, no system name, and the
systems' order (labels A, B, …) is drawn anew for every sentence, so position tells nothing.

`aggregate` reads the returned sheets (one per judge) against their key and gives each system
the mean over sentences of its 1–5 scores (a sentence's score: the mean over judges), under the
metric names of `PATTERNS`. A sheet whose scores are all still empty has not been returned:
the result is then *pending* with the reason `AWAITING`, which the report prints in the cells
in place of a number (``pending`` in `mlrep.report.metrics`). Anything else a judge may have
broken (a score missing, outside 1–5 or not whole; a row doubled, deleted or relabelled; a
sheet of another export) stops with the file, the line and the fix.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import re
import statistics
import string
from dataclasses import dataclass, field
from pathlib import Path

from mlrep.cliutil import positive_int
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, read_lines
from mlrep.report.metrics import METRICS_FILE, compile_template, write

CRITERIA = ("adequacy", "fluency")
# the metric names `aggregate` writes, for the declaration of each chapter that judges
# (template syntax: `mlrep.report.metrics.compile_template`)
PATTERNS: tuple[str, ...] = ("{adequacy|fluency}_{src}-{tgt}",)
AWAITING = "awaiting human scores"
LOWEST, HIGHEST = 1, 5
COLUMNS = ("item", "label", "source", "output", *CRITERIA)
LABELS = string.ascii_uppercase
_DIRECTION = re.compile(compile_template("{src}-{tgt}"))
# a system name becomes a run folder: no separators, no hidden files
_SYSTEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_FIX = f"write a whole number from {LOWEST} (worst) to {HIGHEST} (best)"


class HumanEvalError(MlrepError):
    """A sheet, key or system output that does not fit the human evaluation; the message
    names the file, the line and the fix."""


@dataclass(frozen=True)
class HumanSettings:
    """params.yaml ``evaluate.human``: the options of ``mlrep eval human-export``."""

    sentences: int = field(
        default=100,
        metadata={"type": positive_int, "help": "test sentences drawn for the judges"},
    )
    seed: int = field(
        default=1, metadata={"help": "seed of the draw and of each sentence's order of systems"}
    )


def _digest(text: str) -> str:
    """A short fingerprint of a source sentence or an output: the key recognises its own sheet
    by it (the other direction's sheet has the same item ids and labels; a sheet exported before
    a system was retrained has the same sources and labels, not the same outputs) without
    holding the text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Key:
    """Which system each label of each item is, and what the sheet was drawn from."""

    direction: str
    systems: tuple[str, ...]
    lines: dict[str, int]  # item -> line of the test file (1-based)
    sources: dict[str, str]  # item -> `_digest` of its source
    labels: dict[str, dict[str, str]]  # item -> label -> system
    outputs: dict[str, dict[str, str]]  # item -> label -> `_digest` of the output shown

    def as_json(self, settings: HumanSettings, source: Path) -> str:
        items = [
            {
                "item": item,
                "line": self.lines[item],
                "source": self.sources[item],
                "labels": self.labels[item],
                "outputs": self.outputs[item],
            }
            for item in self.labels
        ]
        document = {
            "direction": self.direction,
            "systems": list(self.systems),
            "test_source": str(source),
            "sentences": settings.sentences,
            "seed": settings.seed,
            "items": items,
        }
        return json.dumps(document, indent=1, ensure_ascii=False) + "\n"

    def metric(self, criterion: str) -> str:
        return f"{criterion}_{self.direction}"


def _check_direction(direction: str) -> None:
    if not _DIRECTION.fullmatch(direction):
        raise HumanEvalError(
            f"direction {direction!r} is not <src>-<tgt> language codes; write it like ja-zh"
        )


def draw(
    source: list[str], outputs: dict[str, list[str]], direction: str, settings: HumanSettings
) -> tuple[list[list[str]], Key]:
    """The sheet's rows (header first) and the key: `settings.sentences` lines of the test
    set drawn with `settings.seed`, in file order, each with every system's output under a
    label drawn for that sentence. Systems are taken in sorted order before drawing, so the
    order they are named in does not change the sheet."""
    _check_direction(direction)
    systems = tuple(sorted(outputs))
    if len(systems) > len(LABELS):
        raise HumanEvalError(f"{len(systems)} systems; a sheet labels at most {len(LABELS)}")
    rng = random.Random(settings.seed)
    lines = sorted(rng.sample(range(len(source)), settings.sentences))
    rows = [list(COLUMNS)]
    key = Key(direction, systems, {}, {}, {}, {})
    for number, line in enumerate(lines, start=1):
        item = str(number)
        order = rng.sample(systems, len(systems))
        key.lines[item], key.sources[item] = line + 1, _digest(source[line])
        key.labels[item] = dict(zip(LABELS, order, strict=False))
        key.outputs[item] = {
            label: _digest(outputs[system][line]) for label, system in key.labels[item].items()
        }
        rows += [
            [item, label, source[line], outputs[system][line], "", ""]
            for label, system in key.labels[item].items()
        ]
    return rows, key


def export(
    source: Path,
    outputs: dict[str, Path],
    direction: str,
    settings: HumanSettings,
    sheet: Path,
    key_path: Path,
) -> Key:
    """Draw (`draw`) and write the sheet and its key, each atomically."""
    if sheet.resolve() == key_path.resolve():
        raise HumanEvalError(
            f"{sheet}: the sheet and the key are one path; the key is kept apart from the "
            "judges, give it another --key"
        )
    for name in outputs:
        if not _SYSTEM.fullmatch(name):
            raise HumanEvalError(
                f"system name {name!r} names its run folder: use letters, digits, . _ -"
            )
    text = read_lines(source, HumanEvalError)
    found = {name: read_lines(path, HumanEvalError) for name, path in outputs.items()}
    for name, path in outputs.items():
        if len(found[name]) != len(text):
            raise HumanEvalError(
                f"{path}: {len(found[name])} lines, but the test source {source} has "
                f"{len(text)}; give system {name!r}'s detokenized output of that test set"
            )
    if settings.sentences > len(text):
        raise HumanEvalError(
            f"{source}: {len(text)} test sentences, fewer than the {settings.sentences} to "
            "draw; lower --sentences"
        )
    rows, key = draw(text, found, direction, settings)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    atomic_write_text(sheet, buffer.getvalue())
    atomic_write_text(key_path, key.as_json(settings, source))
    return key


def read_key(path: Path) -> Key:
    """A key `export` wrote."""
    if not path.exists():
        raise HumanEvalError(f"{path}: file not found; give the key written with the sheet")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        key = Key(
            data["direction"],
            tuple(data["systems"]),
            {str(i["item"]): int(i["line"]) for i in data["items"]},
            {str(i["item"]): str(i["source"]) for i in data["items"]},
            {str(i["item"]): dict(i["labels"]) for i in data["items"]},
            {str(i["item"]): dict(i["outputs"]) for i in data["items"]},
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise HumanEvalError(
            f"{path}: not a key written by `mlrep eval human-export` ({exc!r}); export again"
        ) from None
    _check_direction(key.direction)
    for item, labels in key.labels.items():
        if sorted(labels.values()) != sorted(key.systems) or set(key.outputs[item]) != set(labels):
            raise HumanEvalError(
                f"{path}: item {item} labels {sorted(labels.values())}, not each of the "
                f"systems {list(key.systems)} once; the key was edited: export again"
            )
    return key


Scores = dict[tuple[str, str], dict[str, int]]  # (item, label) -> criterion -> score


def _score(text: str, where: str, criterion: str) -> int:
    if not text.strip():
        raise HumanEvalError(f"{where}: no {criterion} score; {_FIX}")
    try:
        value = int(text.strip())
    except ValueError:
        raise HumanEvalError(
            f"{where}: {criterion} {text.strip()!r} is not a whole number; {_FIX}"
        ) from None
    if not LOWEST <= value <= HIGHEST:
        raise HumanEvalError(f"{where}: {criterion} {value} is outside {LOWEST}-{HIGHEST}; {_FIX}")
    return value


def read_sheet(path: Path, key: Key, key_path: Path) -> Scores | None:
    """A returned sheet's scores, checked against its key; None while every score cell is
    empty (the sheet is the exported one, not returned yet). Rows may come back in any order
    and with extra columns (a judge's comments)."""
    if not path.exists():
        raise HumanEvalError(f"{path}: file not found")
    # utf-8-sig: a spreadsheet program saving CSV may prefix a byte-order mark
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise HumanEvalError(
                f"{path}:1: no column {', '.join(missing)}; keep the exported header "
                f"({','.join(COLUMNS)})"
            )
        rows: dict[tuple[str, str], tuple[int, dict[str, str]]] = {}
        for row in reader:
            where = f"{path}:{reader.line_num}"
            item, label = (row["item"] or "").strip(), (row["label"] or "").strip()
            if item not in key.labels:
                raise HumanEvalError(
                    f"{where}: item {item!r} is not in the key {key_path}; this sheet is not "
                    "from that export, or its item column was edited: restore it"
                )
            if label not in key.labels[item]:
                raise HumanEvalError(
                    f"{where}: unknown label {label!r} for item {item} (the key {key_path} "
                    f"has {', '.join(key.labels[item])}); restore the exported label"
                )
            if _digest(row["source"] or "") != key.sources[item]:
                raise HumanEvalError(
                    f"{where}: the source of item {item} is not the one the key {key_path} "
                    "drew; this sheet belongs to another export (direction or seed): pair it "
                    "with its own key, or restore the source"
                )
            if _digest(row["output"] or "") != key.outputs[item][label]:
                raise HumanEvalError(
                    f"{where}: the output of item {item} label {label} is not the one the key "
                    f"{key_path} holds; the system's output changed after this sheet was "
                    "exported (a retrained model): have the new sheet judged, or restore the output"
                )
            if (item, label) in rows:
                raise HumanEvalError(
                    f"{where}: duplicate row for item {item} label {label} (also line "
                    f"{rows[item, label][0]}); delete one"
                )
            rows[item, label] = (reader.line_num, row)
    absent = [f"{i}/{b}" for i, labels in key.labels.items() for b in labels if (i, b) not in rows]
    if absent:
        shown = ", ".join(absent[:5]) + (" …" if len(absent) > 5 else "")
        raise HumanEvalError(
            f"{path}: {len(absent)} rows of the key {key_path} are missing (item/label "
            f"{shown}); restore them from the exported sheet"
        )
    if all(not (row[c] or "").strip() for _, row in rows.values() for c in CRITERIA):
        return None
    return {
        cell: {c: _score(row[c] or "", f"{path}:{line}", c) for c in CRITERIA}
        for cell, (line, row) in rows.items()
    }


@dataclass(frozen=True)
class Judged:
    """Per system, each metric's mean and its per-sentence scores (item order); while no
    sheet is returned, none of them, and every system's metrics `pending`."""

    metrics: dict[str, dict[str, float]]
    sentence_scores: dict[str, dict[str, list[float]]]
    pending: dict[str, str]
    judges: int

    def write_runs(self, out: Path, chapter: str, group: str, seed: int, scale: str) -> None:
        """One metrics.json per system, ``<out>/<system>/seed<seed>/``, run ``<group>/<system>``
        (each written atomically; other seeds' files are left as they are)."""
        for system, values in self.metrics.items():
            write(
                out / system / f"seed{seed}" / METRICS_FILE,
                chapter,
                f"{group}/{system}",
                seed,
                scale,
                values,
                sentence_scores=self.sentence_scores.get(system),
                pending=self.pending,
                judges=self.judges,
            )


def aggregate(sheets: list[Path], key_path: Path) -> Judged:
    """Mean adequacy and fluency per system over the key's sentences (each sentence's score
    the mean over the sheets, one per judge). Every sheet must be complete, or all of them
    unreturned: then every metric is pending."""
    key = read_key(key_path)
    found = [(path, read_sheet(path, key, key_path)) for path in sheets]
    returned = [scores for _, scores in found if scores is not None]
    if not returned:
        pending = {key.metric(c): AWAITING for c in CRITERIA}
        return Judged({s: {} for s in key.systems}, {}, pending, 0)
    if len(returned) < len(found):
        path = next(p for p, scores in found if scores is None)
        raise HumanEvalError(
            f"{path}: no scores, while other sheets are returned; score it, or leave it out"
        )
    metrics: dict[str, dict[str, float]] = {s: {} for s in key.systems}
    sentences: dict[str, dict[str, list[float]]] = {s: {} for s in key.systems}
    for criterion in CRITERIA:
        for system in key.systems:
            per_item = [
                statistics.fmean(scores[item, label][criterion] for scores in returned)
                for item, labels in key.labels.items()
                for label, judged in labels.items()
                if judged == system
            ]
            sentences[system][key.metric(criterion)] = per_item
            metrics[system][key.metric(criterion)] = statistics.fmean(per_item)
    return Judged(metrics, sentences, {}, len(returned))
