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
      "chrf_stats": {"chrf_en-de": [[24 chrF++ n-gram counts], ...]},
      "sentence_scores": {"zst_off_target": [100.0, 0.0, ...]},
      "groups": {"zst_bleu": [["de-fr", 200], ["fr-de", 200], ...]},
      "pending": {"adequacy_ja-zh": "awaiting human scores"},
      "signatures": {"zst_bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.3"},
      "texts": {"case_mass": "The network structure of the water ..."}
    }

``metrics`` holds the numbers the tables and claims name (a table definition maps each cell to
``run`` + metric name; see ``tables/*.yaml``). Percentages are stored as percentages (8.59, not
0.0859), as the thesis prints them. ``bleu_stats`` is optional: the per-sentence BLEU sufficient
statistics of a BLEU metric (`mlrep.report.stats.sentence_stats` computes them with sacrebleu);
where both sides of a comparison have them, the claims ledger runs a paired bootstrap test.
``chrf_stats`` are the same for a chrF++ metric: per sentence, the hypothesis, reference and
matching n-gram counts of each character order 1–6 and word order 1–2
(`mlrep.report.stats.chrf_sentence_stats`), which sum to the corpus score.
``sentence_scores`` is optional too: per-sentence scores of a metric that is their mean (an
off-target rate: 100 for a hypothesis in the wrong language, 0 otherwise), bootstrapped alike.
``groups`` says how a metric's per-sentence data splits into test sets when the metric is the
mean of their scores: ``zst_bleu`` is the mean of the zero-shot directions' corpus BLEU (each
with its own tokenizer), so its ``bleu_stats`` list the directions' sentences in the order
and the numbers given there, and the bootstrap resamples within each and averages the
directions' scores (`mlrep.report.stats.SentenceSet`). Without ``groups`` the list is one test
set whose corpus score is the metric.

``pending`` is optional: a metric the run will have but cannot measure yet, with the reason
its table cells print in place of a number (human judgements not returned yet:
`mlrep.evaluate.human`); a name is either measured or pending, never both.

``signatures`` is optional: the scorer's signature of a measured metric (sacreBLEU's, with
the segmentation before it where the words were segmented for scoring), so a table says how
each of its numbers was scored (`mlrep.report.render.notes`). A metric that is the mean of
test sets scored in several ways has their distinct signatures joined (`joint_signature`). A
signature belongs to a name in ``metrics``: one for a metric not measured is refused.

``texts`` is optional: named strings a table prints as they are, not numbers (a test
sentence's source, reference and a system's translation of it: a case table). A text cell
reads ``measured text / published text``; it is never averaged, bolded, marked † or read by a
claim (`mlrep.report.fill`). Its names are declared like the metrics', and a name is either a
number or a text, never both.

**Floors.** ``floor_<name>`` (`FLOOR`) is the floor of metric ``<name>``, written by the same
run into the same file, with its own per-sentence data and groups under the floor's name: the
score that needs no model (chance, 1/candidates, for retrieval; copy-the-source BLEU for
BLEU), on the same test sentences. The claims ledger judges a claim only where both sides lie
beyond their floor (`Results.floors`, `mlrep.report.claims`). The floor of a declared name is
declared.
Numbers of other scales are kept on disk but never shown in a report of this scale.

Every writer goes through `write`, which refuses a metric name that its chapter does not
declare: each chapter lists the names it writes as ``PATTERNS`` in
``mlrep/chapters/<id>/metrics.py`` (templates, see `compile_template`), and a test checks that
every name its tables, claims and figures read matches one of them. A misspelt name then fails
where it is written or where it is read, instead of showing as "not run" in the report.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from mlrep import chapters
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, sha256_file

METRICS_FILE = "metrics.json"
FLOOR = "floor_"  # prefix of a metric's floor (module docstring)
# the seed of a run no seed trains (a pretrained baseline, a frozen teacher): its one result
# stands at every seed of the runs it is compared with; the chapters' training seeds are >= 1
UNTRAINED_SEED = 0
_REQUIRED = {"chapter": str, "run": str, "seed": int, "scale": str, "metrics": dict}

# What a ``{placeholder}`` of a metric-name template stands for. Language codes are those of
# the data layer (``de``, ``zh_Hant``); ``{lang3}`` is an ISO 639-3 code (Tatoeba's).
PLACEHOLDERS = {
    "lang": r"[a-z]{2,3}(?:_[A-Za-z]+)?",
    "src": r"[a-z]{2,3}(?:_[A-Za-z]+)?",
    "tgt": r"[a-z]{2,3}(?:_[A-Za-z]+)?",
    "lang3": r"[a-z]{3}",
    "k": r"[1-9][0-9]*",
    "group": r"[a-z0-9]+",
    "name": r"[a-z0-9]+(?:[-_.][a-z0-9]+)*",  # a run's or system's name (``jaen-mass``)
}
_FIELD = re.compile(r"\{([^{}]*)\}")
SIGNATURE_JOIN = " + "  # between the distinct signatures of a mean (`joint_signature`)


class MetricsFileError(MlrepError):
    """A metrics.json breaks the contract; the message names the file and the key."""


class MetricNameError(MlrepError):
    """A metric name, or a template declaring names, that its chapter does not declare."""


def joint_signature(signatures: Iterable[str]) -> str:
    """One signature for numbers scored under `signatures` (a mean over directions with
    their own tokenizers, a cell over several metrics): the distinct ones, sorted, joined by
    `SIGNATURE_JOIN`, so the same set reads the same whatever the order or nesting."""
    parts = {part for s in signatures for part in s.split(SIGNATURE_JOIN)}
    return SIGNATURE_JOIN.join(sorted(parts))


def compile_template(template: str) -> str:
    """The regular expression of one declared name template.

    ``{name}`` is a placeholder of `PLACEHOLDERS` (``tatoeba_{lang3}``, ``svcca_l{k}``);
    ``{a|b}`` is one of the literal alternatives (``llr_{sup|zst}_{src|tgt}_enc{k}``);
    everything else is literal. Templates rather than raw regexes keep a declaration readable
    next to the f-string that writes the name.
    """
    parts: list[str] = []
    end = 0
    for match in _FIELD.finditer(template):
        parts.append(re.escape(template[end : match.start()]))
        inner = match.group(1)
        if "|" in inner:
            parts.append("(?:" + "|".join(re.escape(a) for a in inner.split("|")) + ")")
        elif inner in PLACEHOLDERS:
            parts.append(f"(?:{PLACEHOLDERS[inner]})")
        else:
            raise MetricNameError(
                f"template {template!r}: unknown placeholder {{{inner}}}; "
                f"known: {', '.join(PLACEHOLDERS)} (mlrep/report/metrics.py), or {{a|b}}"
            )
        end = match.end()
    rest = template[end:]
    if "{" in rest or "}" in rest:
        raise MetricNameError(f"template {template!r}: unbalanced brace")
    return "".join(parts) + re.escape(rest)


@dataclass(frozen=True)
class Declaration:
    """The metric names one chapter declares (``PATTERNS`` of ``source``)."""

    chapter: str
    source: str
    templates: tuple[str, ...]
    regex: re.Pattern[str]

    def declares(self, name: str) -> bool:
        """Whether a template produces `name`, or the metric whose floor `name` is."""
        return self.regex.fullmatch(name.removeprefix(FLOOR)) is not None

    def undeclared(self, names: Iterable[str]) -> list[str]:
        """The names no template produces, sorted, once each."""
        return sorted({name for name in names if not self.declares(name)})

    def check(self, names: Iterable[str], where: str) -> None:
        """Raise `MetricNameError` naming every undeclared name and the declaration file."""
        missing = self.undeclared(names)
        if missing:
            raise MetricNameError(
                f"{where}: metric name(s) {', '.join(missing)} not declared for chapter "
                f"{self.chapter}; declare them in PATTERNS of {self.source} (or fix the name)"
            )


@cache
def declared(chapter_id: str) -> Declaration:
    """The declaration of a chapter: ``PATTERNS`` of its home's ``metrics`` module."""
    chapter = chapters.get(chapter_id)
    source = chapter.metrics
    try:
        # spelled out (not f"{chapter.home}.metrics"): the code version of every verb that
        # writes metrics then holds the chapter homes' declarations, not every `metrics`
        # module of mlrep (mlrep/closure.py reads the constant parts of the name)
        module = importlib.import_module(f"mlrep.chapters.{chapter.id}.metrics")
    except ModuleNotFoundError as exc:
        if exc.name not in (chapter.home, f"{chapter.home}.metrics"):
            raise
        raise MetricNameError(
            f"chapter {chapter.id} declares no metric names: write PATTERNS in {source}"
        ) from None
    templates = tuple(getattr(module, "PATTERNS", ()))
    if not templates:
        raise MetricNameError(f"{source}: PATTERNS is missing or empty")
    try:
        regex = re.compile("|".join(f"(?:{compile_template(t)})" for t in templates))
    except MetricNameError as exc:
        raise MetricNameError(f"{source}: {exc}") from None
    return Declaration(chapter.id, source, templates, regex)


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
    groups: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    sha256: str = ""
    chrf_stats: dict[str, list[list[float]]] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    def floor(self) -> SeedResult:
        """The floors of this result's metrics, under the metrics' own names."""

        def floors(found: dict[str, Any]) -> dict[str, Any]:
            return {k.removeprefix(FLOOR): v for k, v in found.items() if k.startswith(FLOOR)}

        return replace(
            self,
            metrics=floors(self.metrics),
            bleu_stats=floors(self.bleu_stats),
            chrf_stats=floors(self.chrf_stats),
            sentence_scores=floors(self.sentence_scores),
            groups=floors(self.groups),
            pending=floors(self.pending),
            signatures=floors(self.signatures),
        )


def read(path: Path) -> SeedResult:
    """Parse and check one metrics.json."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MetricsFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    metrics, stats, scores, groups = _contents(data, path)
    chrf = data.get("chrf_stats", {})
    return SeedResult(
        path=path,
        chapter=data["chapter"],
        run=data["run"],
        seed=data["seed"],
        scale=data["scale"],
        metrics=metrics,
        bleu_stats=stats,
        sentence_scores=scores,
        groups=groups,
        sha256=sha256_file(path),
        chrf_stats=chrf,
        pending=data.get("pending", {}),
        signatures=data.get("signatures", {}),
        texts=data.get("texts", {}),
    )


@dataclass
class Scores:
    """Mean-type metrics of one run as the contract stores them: each value with its floor
    (``floor_<name>``) and, where known, its per-sentence scores (the floor's too), so an
    evaluation names a retrieval P@1, its chance level and each query's hit in one place."""

    metrics: dict[str, float] = field(default_factory=dict)
    sentence_scores: dict[str, list[float]] = field(default_factory=dict)
    groups: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def add(
        self, name: str, value: float, floor: float | list[float], hits: list[int] | None = None
    ) -> None:
        """`value` (percent) with its `floor`; `hits` (1 or 0 per test item, whose mean ×100
        is `value`) become its sentence scores, and the floor's are `floor` for every item, or
        each item's own where `floor` is a list (a chance that differs between items, such as
        in-batch retrieval's) and the floor their mean."""
        each = floor if isinstance(floor, list) else None
        if each is not None:
            floor = math.fsum(each) / len(each)
        self.metrics[name], self.metrics[FLOOR + name] = value, floor
        if hits is not None:
            self.sentence_scores[name] = [100.0 * h for h in hits]
            self.sentence_scores[FLOOR + name] = each or [floor] * len(hits)

    def mean(self, name: str, parts: list[str]) -> None:
        """`name` as the unweighted mean of metrics `parts` (each a group of its sentence
        scores, where all have them), and its floor as the mean of theirs where every part has
        one (a mining F1 has no chance level)."""
        for prefix in ("", FLOOR):
            if prefix and not all(prefix + part in self.metrics for part in parts):
                continue
            values = [self.metrics[prefix + part] for part in parts]
            self.metrics[prefix + name] = math.fsum(values) / len(values)
            scores = [self.sentence_scores.get(prefix + part) for part in parts]
            if all(s is not None for s in scores):
                self.sentence_scores[prefix + name] = [x for s in scores for x in s or []]
                self.groups[prefix + name] = [
                    (part, len(s or [])) for part, s in zip(parts, scores, strict=True)
                ]

    def update(self, other: Scores | Mapping[str, float]) -> None:
        """Add another evaluation's scores (or plain metrics without sentence data)."""
        if isinstance(other, Scores):
            self.metrics |= other.metrics
            self.sentence_scores |= other.sentence_scores
            self.groups |= other.groups
        else:
            self.metrics |= other


def write(
    path: Path,
    chapter: str,
    run: str,
    seed: int,
    scale: str,
    metrics: Mapping[str, float],
    *,
    bleu_stats: Mapping[str, list[list[float]]] | None = None,
    sentence_scores: Mapping[str, list[float]] | None = None,
    groups: Mapping[str, list[tuple[str, int]]] | None = None,
    chrf_stats: Mapping[str, list[list[float]]] | None = None,
    pending: Mapping[str, str] | None = None,
    signatures: Mapping[str, str] | None = None,
    texts: Mapping[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Write one run's metrics.json (atomically) and return what was written.

    The one writer of the contract: every name in `metrics`, `bleu_stats`, `chrf_stats`,
    `sentence_scores`, `groups`, `pending` and `texts` must be declared by `chapter`
    (`declared`), every name in `signatures` must be in `metrics`, and the document must pass
    the checks `read` applies, so a file the report would reject or never look up is not
    written. `extra` keys (per-direction details, a baseline's checkpoint) are kept as given.
    """
    document: dict[str, Any] = {
        "chapter": chapter,
        "run": run,
        "seed": seed,
        "scale": scale,
        "metrics": dict(metrics),
        **({"bleu_stats": dict(bleu_stats)} if bleu_stats else {}),
        **({"chrf_stats": dict(chrf_stats)} if chrf_stats else {}),
        **({"sentence_scores": dict(sentence_scores)} if sentence_scores else {}),
        **({"groups": {k: [list(g) for g in v] for k, v in groups.items()}} if groups else {}),
        **({"pending": dict(pending)} if pending else {}),
        **({"signatures": dict(signatures)} if signatures else {}),
        **({"texts": dict(texts)} if texts else {}),
        **extra,
    }
    names = [
        *metrics,
        *(bleu_stats or {}),
        *(chrf_stats or {}),
        *(sentence_scores or {}),
        *(groups or {}),
        *(pending or {}),
        *(texts or {}),
    ]
    declared(chapter).check(names, str(path))
    _contents(document, path)
    atomic_write_text(path, json.dumps(document, indent=1, sort_keys=True) + "\n")
    return document


def _contents(
    data: Any, path: Path
) -> tuple[
    dict[str, float],
    dict[str, list[list[float]]],
    dict[str, list[float]],
    dict[str, list[tuple[str, int]]],
]:
    """Check a metrics document against the contract: (metrics, bleu_stats, sentence_scores,
    groups); ``chrf_stats``, ``pending``, ``signatures`` and ``texts`` are checked alike and read by
    `read`."""
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
    chrf = data.get("chrf_stats", {})
    for kind, found, width, layout in (
        ("bleu_stats", stats, 10, "[hyp_len, ref_len, c1..c4, t1..t4]"),
        ("chrf_stats", chrf, 24, "[hyp, ref, match] per n-gram order"),
    ):
        for name, rows in found.items():
            if not isinstance(rows, list) or any(
                not isinstance(r, list) or len(r) != width for r in rows
            ):
                raise MetricsFileError(
                    f"{path}: {kind}.{name} must be a list of {width}-number rows {layout}"
                )
    scores = data.get("sentence_scores", {})
    for name, values in scores.items():
        if not isinstance(values, list) or any(
            isinstance(v, bool) or not isinstance(v, int | float) for v in values
        ):
            raise MetricsFileError(
                f"{path}: sentence_scores.{name} must be a list of numbers, one per sentence"
            )
    pending = data.get("pending", {})
    if not isinstance(pending, dict) or any(
        not isinstance(reason, str) or not reason.strip() for reason in pending.values()
    ):
        raise MetricsFileError(f"{path}: pending must map metric names to the reason they wait")
    both = sorted(set(pending) & set(metrics))
    if both:
        raise MetricsFileError(
            f"{path}: {', '.join(both)} both measured and pending; drop them from pending"
        )
    signatures = data.get("signatures", {})
    if not isinstance(signatures, dict) or any(
        not isinstance(s, str) or not s.strip() for s in signatures.values()
    ):
        raise MetricsFileError(f"{path}: signatures must map metric names to their signature")
    unmeasured = sorted(set(signatures) - set(metrics))
    if unmeasured:
        raise MetricsFileError(
            f"{path}: signatures.{', signatures.'.join(unmeasured)} for a metric not in "
            "metrics; write the signature under the name of the metric it scored"
        )
    texts = data.get("texts", {})
    if not isinstance(texts, dict) or any(not isinstance(t, str) for t in texts.values()):
        raise MetricsFileError(f"{path}: texts must map names to strings")
    numbers = sorted(set(texts) & set(metrics))
    if numbers:
        raise MetricsFileError(
            f"{path}: {', '.join(numbers)} both a metric and a text; write each name once"
        )
    return metrics, stats, scores, _groups(data.get("groups", {}), {**stats, **chrf}, scores, path)


def _groups(
    groups: Any, stats: dict[str, list], scores: dict[str, list], path: Path
) -> dict[str, list[tuple[str, int]]]:
    """Check ``groups``: per metric, [name, sentences] pairs that split its data exactly."""
    checked: dict[str, list[tuple[str, int]]] = {}
    for name, pairs in groups.items():
        where = f"{path}: groups.{name}"
        if not isinstance(pairs, list) or not pairs:
            raise MetricsFileError(f"{where} must be a non-empty list of [name, sentences]")
        if any(
            not isinstance(p, list)
            or len(p) != 2
            or not isinstance(p[0], str)
            or isinstance(p[1], bool)
            or not isinstance(p[1], int)
            or p[1] < 1
            for p in pairs
        ):
            raise MetricsFileError(f"{where}: each entry must be [name, positive sentences]")
        data = [found[name] for found in (stats, scores) if name in found]
        total = sum(p[1] for p in pairs)
        if not data or any(len(rows) != total for rows in data):
            raise MetricsFileError(
                f"{where}: its groups hold {total} sentences, but bleu_stats / chrf_stats / "
                f"sentence_scores.{name} hold {[len(rows) for rows in data]}"
            )
        checked[name] = [(p[0], p[1]) for p in pairs]
    return checked


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

    def floors(self) -> Results:
        """The same runs and seeds with each metric's floor in place of the metric."""
        runs = {key: [r.floor() for r in group] for key, group in self.runs.items()}
        return Results(scale=self.scale, runs=runs, other_scales=self.other_scales)


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
