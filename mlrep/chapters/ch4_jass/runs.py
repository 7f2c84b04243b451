"""Chapter 4's runs as data: the pre-trained models of Table 4.2, the fine-tuning grid of
Tables 4.3-4.6, 4.14 and B.2-B.4, and the table cells each fine-tune fills.

Run ids are safe in paths (lower-case letters, digits, ``-``, ``_``, ``.``):

- a **pre-training** is ``<pair>-<model>``: the pair model (``jaen``, ``jazh``, ``enko``: one
  joint BPE, the monolingual text of both languages and one model per language pair) and the
  model's name in `MODELS` (``jaen-jass``, ``jaen-brss-r``, ``enko-pmass-hfss``);
- a **fine-tune** is ``<corpus>.<src>-<tgt>.<size>.<start>``: the corpus (`CORPORA`), the
  direction, the size label and what it starts from, a pre-training id or a no-pre-training
  baseline (`BASELINES`: ``vanilla`` #0, ``optimized`` #0*): ``aspec_je.ja-en.3k.jaen-jass``.

Each side of a pair model gets the tasks of `mlrep.text.pretrain_tasks` that `Model.ja` /
`Model.en` name for its language; Chinese and Korean only ever get MASS (`ONLY_MASS`), so the
other side of a Japanese-only objective is MASS, as the thesis pairs them.

The fine-tunes are not listed by hand: each published table is a `Grid` (its rows name where a
fine-tune starts, its columns the corpus, direction and size), and a fine-tune is a cell of a
grid whose row's model exists for the column's pair (the others print "-"). A run that several
tables show (Table B.2's MASS row is Table 4.3's) is one run filling several `Cell`s.
`planned_pretrainings` / `planned_finetunes` narrow the inventory to a scale's `Plan`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mlrep.chapters.ch4_jass import settings
from mlrep.errors import MlrepError
from mlrep.text.pretrain_tasks import expand_tasks

PAIRS = {"jaen": ("ja", "en"), "jazh": ("ja", "zh"), "enko": ("en", "ko")}
ONLY_MASS = frozenset({"zh", "ko"})  # [T] Chinese and Korean are pre-trained on MASS alone
MASS = ("mass",)
# the no-pre-training rows, by name: Table 4.3's #0 (Transformer-big) and #0* (Table B.1's)
BASELINES = {"vanilla": "0", "optimized": "0*"}


class Ch4RunError(MlrepError):
    """A run id, model or plan entry that Chapter 4's inventory does not have."""


@dataclass(frozen=True)
class Model:
    """A pre-trained model of Table 4.2: its name (the id's last part), its ``#`` ("" for the
    unnumbered combinations of Tables 4.6 and B.2-B.4), its label, the task names of the
    Japanese and the English side, and the pair models that train it."""

    name: str
    number: str
    label: str
    ja: tuple[str, ...]
    en: tuple[str, ...]
    pairs: tuple[str, ...]

    def tasks(self, lang: str) -> tuple[str, ...]:
        """The pre-training tasks of one language of a pair model."""
        if lang in ONLY_MASS:
            return MASS
        return {"ja": self.ja, "en": self.en}[lang]


# the pair models that train a model
JE, JEC, JEK = ("jaen",), ("jaen", "jazh"), ("jaen", "enko")
MODELS: tuple[Model, ...] = (
    Model("mass", "1", "MASS", MASS, MASS, ("jaen", "jazh", "enko")),
    Model("bart", "1*", "BART (text infilling)", ("bart",), ("bart",), JEC),
    Model("bmass", "2", "BMASS", ("bmass",), MASS, JEC),
    Model("brss", "3", "BRSS", ("brss.f",), MASS, JEC),
    Model("brss-r", "3 (R)", "BRSS.R", ("brss.r",), MASS, JE),
    Model("jass", "4", "JASS", ("jass",), MASS, JEC),
    Model("mass-bmass", "5", "MASS+BMASS", ("mass", "bmass"), MASS, JE),
    Model("mass-brss", "6", "MASS+BRSS", ("mass", "brss.f"), MASS, JE),
    Model("mass-jass", "7", "MASS+BMASS+BRSS", ("mass", "jass"), MASS, JEC),
    # [D] a baseline named for one language applies to that language only
    Model("multimass-ja", "8", "MultiMASS (Ja)", ("multimass",), MASS, JEC),
    Model("deshuffle-ja", "9", "Deshuffling (Ja)", ("deshuffle",), MASS, JEC),
    Model("mass-deshuffle-ja", "10", "MASS+Deshuffling (Ja)", ("mass", "deshuffle"), MASS, JEC),
    # [D] PMASS is PMASS.P where a table does not say (Table 4.9's PMASS prints 4.3's #11)
    Model("pmass-p", "11", "PMASS.P", MASS, ("pmass.p",), JEK),
    Model("pmass-s", "11*", "PMASS.S", MASS, ("pmass.s",), JE),
    Model("hfss", "12", "HFSS", MASS, ("hfss",), JEK),
    Model("enss", "13", "ENSS", MASS, ("enss",), JEK),  # [T] ENSS = MASS + HFSS
    Model("multimass-en", "14", "MultiMASS (En)", MASS, ("multimass",), JE),
    Model("deshuffle-en", "15", "Deshuffling (En)", MASS, ("deshuffle",), JE),
    Model("mass-deshuffle-en", "16", "MASS+Deshuffling (En)", MASS, ("mass", "deshuffle"), JE),
    Model("jass-enss", "17", "JASS+ENSS", ("jass",), ("enss",), JE),
    Model(
        "mass-deshuffle", "18", "MASS+Deshuffling", ("mass", "deshuffle"), ("mass", "deshuffle"), JE
    ),
    Model("pmass-hfss", "", "PMASS+HFSS", MASS, ("pmass.p", "hfss"), ("enko",)),
    # [D] BART + X: BART text infilling added as one more task on each side of X's model
    Model("bart-enss", "", "BART+ENSS", ("bart", "mass"), ("bart", "enss"), JE),
    Model("bart-jass", "", "BART+JASS", ("bart", "jass"), ("bart", "mass"), ("jazh",)),
)
MODEL_BY_NAME = {m.name: m for m in MODELS}


@dataclass(frozen=True)
class PreTraining:
    """One pre-training run: a model trained by one pair model."""

    pair: str
    model: Model

    @property
    def id(self) -> str:
        return f"{self.pair}-{self.model.name}"

    @property
    def languages(self) -> tuple[str, str]:
        return PAIRS[self.pair]

    def tasks(self, lang: str) -> tuple[str, ...]:
        """The `mlrep text pretrain-pairs` task names of one side of this pair model."""
        if lang not in self.languages:
            raise Ch4RunError(f"{self.id} has no {lang!r} side; its languages: {self.languages}")
        return self.model.tasks(lang)


@dataclass(frozen=True)
class Corpus:
    """A fine-tuning corpus: its pair model and its size labels, smallest first (nested)."""

    name: str
    pair: str
    sizes: tuple[str, ...]

    @property
    def directions(self) -> tuple[str, str]:
        a, b = PAIRS[self.pair]
        return f"{a}-{b}", f"{b}-{a}"


CORPORA = {
    c.name: c
    for c in (
        Corpus("aspec_je", "jaen", ("3k", "10k", "20k", "50k", "200k", "1m")),
        Corpus("aspec_jc", "jazh", ("3k", "10k", "20k", "50k", "200k", "672k")),
        Corpus("wiki_jc", "jazh", ("3k", "10k", "20k", "50k", "258k")),
        Corpus("news_ek", "enko", ("20k", "94k")),
    )
}
LOW_SIZES = ("3k", "10k", "20k", "50k")


@dataclass(frozen=True)
class FineTune:
    """One fine-tuning run: a corpus, a direction (``ja-en``), a size label and its start (a
    pre-training id or a `BASELINES` name)."""

    corpus: str
    direction: str
    size: str
    start: str

    @property
    def id(self) -> str:
        return f"{self.corpus}.{self.direction}.{self.size}.{self.start}"

    @property
    def src(self) -> str:
        return self.direction.split("-")[0]

    @property
    def tgt(self) -> str:
        return self.direction.split("-")[1]

    @property
    def pretrained(self) -> str:
        """The pre-training id it starts from; "" for a no-pre-training baseline."""
        return "" if self.start in BASELINES else self.start


@dataclass(frozen=True)
class Column:
    """A published column: its header label, the fine-tune setting and what it measures."""

    label: str
    corpus: str
    direction: str
    size: str
    metric: str = "bleu"  # bleu | laser | adequacy | fluency | accuracy | case


@dataclass(frozen=True)
class Cell:
    """One published cell a run fills: the reference table (its CSV name), the label column
    that names its row (``#``, or ``Model`` where the table numbers rows otherwise), that
    row's printed label, and the column's header label."""

    table: str
    by: str
    row: str
    column: str
    metric: str


@dataclass(frozen=True)
class Grid:
    """A published table of fine-tuned systems: rows (printed label, start: a model name or a
    baseline) by columns. ``group`` names the fine-tuning group it plans; "" for an analysis
    table whose cells are other tables' runs measured again (LASER, human scores)."""

    table: str
    group: str
    by: str
    rows: tuple[tuple[str, str], ...]
    columns: tuple[Column, ...]


def _label(direction: str) -> str:
    return "-".join(lang.title() for lang in direction.split("-"))


def _size(size: str) -> str:
    """A size label as the thesis prints it (``1m`` -> ``1M``)."""
    return size.replace("m", "M")


def _columns(
    corpus: str, sizes: tuple[str, ...], template: str = "{dir} {size}", metric: str = "bleu"
) -> tuple[Column, ...]:
    """Every direction of a corpus by every size, labelled as the thesis prints them."""
    return tuple(
        Column(template.format(dir=_label(d), size=_size(size)), corpus, d, size, metric)
        for d in CORPORA[corpus].directions
        for size in sizes
    )


def _numbered(pair: str) -> tuple[tuple[str, str], ...]:
    """Table 4.2's numbered models of a pair, below the two no-pre-training rows."""
    models = [(m.number, m.name) for m in MODELS if m.number and pair in m.pairs]
    return (("0", "vanilla"), ("0*", "optimized"), *models)


def _high() -> tuple[Column, ...]:
    """Table 4.14's columns (its extracted header reconstructed, as the reference CSV is)."""
    out = []
    for direction in CORPORA["aspec_je"].directions:
        out += [
            Column(f"{_label(direction)} ASP {_size(s)}", "aspec_je", direction, s)
            for s in ("200k", "1m")
        ]
    for direction in CORPORA["aspec_jc"].directions:
        name = _label(direction)
        out += [
            Column(f"{name} ASP 200k", "aspec_jc", direction, "200k"),
            Column(f"{name} ASP 672k (reconstructed)", "aspec_jc", direction, "672k"),
            Column(f"{name} Wiki 258k (reconstructed)", "wiki_jc", direction, "258k"),
        ]
    return tuple(out)


def _bart(table: str, corpus: str, proposed: str) -> Grid:
    """Tables B.2-B.4: MASS, the proposed objective, BART and BART + it; only the last row is
    new, the others are Tables 4.3-4.5's runs."""
    rows = (
        ("MASS", "mass"),
        (proposed.upper(), proposed),
        ("BART (text infilling)", "bart"),
        (f"BART + {proposed.upper()}", f"bart-{proposed}"),
    )
    return Grid(table, "bart", "Model", rows, _columns(corpus, LOW_SIZES))


def _analysis(table: str, rows: tuple[tuple[str, str], ...], corpus: str) -> Grid:
    """Tables 4.8/4.9: the 10k fine-tunes' BLEU beside their human adequacy and fluency."""
    metrics = {"bleu": "BLEU", "adequacy": "Adequacy", "fluency": "Fluency"}
    columns = tuple(
        c
        for metric, name in metrics.items()
        for c in _columns(corpus, ("10k",), name + " {dir}", metric)
    )
    return Grid(table, "", "#", rows, columns)


def _case(table: str, corpus: str, direction: str, rows: tuple[tuple[str, str], ...]) -> Grid:
    """Tables 4.10/4.11: one 10k test sentence's translation by each system (rows by their
    ``System`` label; the ``Text`` column is the case's text, `mlrep.chapters.ch4_jass.cases`)."""
    return Grid(table, "", "System", rows, (Column("Text", corpus, direction, "10k", "case"),))


_CASE_JA = (
    ("w/o pre-training", "vanilla"),
    ("MASS", "mass"),
    ("BMASS", "bmass"),
    ("BRSS", "brss"),
    ("JASS", "jass"),
)
_EVALUATED = (("0", "vanilla"), ("1", "mass"), ("2", "bmass"), ("3", "brss"), ("4", "jass"))
GRIDS: tuple[Grid, ...] = (
    Grid("thesis-table-4.3", "aspec_je", "#", _numbered("jaen"), _columns("aspec_je", LOW_SIZES)),
    Grid("thesis-table-4.4", "aspec_jc", "#", _numbered("jazh"), _columns("aspec_jc", LOW_SIZES)),
    Grid("thesis-table-4.5", "wiki_jc", "#", _numbered("jazh"), _columns("wiki_jc", LOW_SIZES)),
    Grid(
        "thesis-table-4.6",
        "news_ek",
        "Model",  # its "#" renumbers the models (#2 PMASS) and leaves the last row blank
        (
            ("w/o pre-training", "vanilla"),
            ("optimized Transformer", "optimized"),
            ("MASS", "mass"),
            ("PMASS", "pmass-p"),
            ("HFSS", "hfss"),
            ("ENSS (1 + 3)", "enss"),
            ("2 + 3", "pmass-hfss"),
        ),
        _columns("news_ek", ("20k", "94k")),
    ),
    Grid(
        "thesis-table-4.14",
        "high",
        "#",
        (*_EVALUATED, ("11", "pmass-p"), ("11*", "pmass-s"), ("12", "hfss"), ("13", "enss")),
        _high(),
    ),
    _bart("thesis-table-B.2", "aspec_je", "enss"),
    _bart("thesis-table-B.3", "aspec_jc", "jass"),
    _bart("thesis-table-B.4", "wiki_jc", "jass"),
    Grid(
        "thesis-table-4.7",
        "",
        "#",  # its "*" Reference row scores the references: no run
        (*_EVALUATED, ("11", "pmass-p"), ("12", "hfss"), ("13", "enss")),
        (
            *_columns("aspec_je", ("10k",), "ASPEC {dir}", "laser"),
            *_columns("aspec_jc", ("10k",), "ASPEC {dir}", "laser"),
            *_columns("wiki_jc", ("10k",), "Wikipedia {dir}", "laser"),
            *_columns("news_ek", ("94k",), "News {dir}", "laser"),
        ),
    ),
    _analysis("thesis-table-4.8", _EVALUATED, "wiki_jc"),
    _analysis(
        "thesis-table-4.9",
        (("0", "vanilla"), ("1", "mass"), ("2", "pmass-p"), ("3", "hfss"), ("4", "enss")),
        "aspec_je",
    ),
    _case(
        "thesis-table-4.10",
        "aspec_je",
        "ja-en",
        (
            *_CASE_JA,
            ("MultiMASS (Ja)", "multimass-ja"),
            ("Deshuffling (Ja)", "deshuffle-ja"),
            ("Multi-task baseline (Ja)", "mass-deshuffle-ja"),
            ("PMASS", "pmass-p"),
            ("HFSS", "hfss"),
            ("ENSS", "enss"),
            ("MultiMASS (En)", "multimass-en"),
            ("Deshuffling (En)", "deshuffle-en"),
            ("Multi-task baseline (En)", "mass-deshuffle-en"),
        ),
    ),
    _case(
        "thesis-table-4.11",
        "wiki_jc",
        "zh-ja",
        (
            *_CASE_JA,
            ("MultiMASS", "multimass-ja"),
            ("Deshuffling", "deshuffle-ja"),
            ("Multi-task baseline", "mass-deshuffle-ja"),
        ),
    ),
)


@dataclass(frozen=True)
class AccuracyTable:
    """Tables 4.12/4.13: ja-en pre-trained models' teacher-forced token accuracy on one
    language's pre-training pairs, over all their tasks (``Overall``) and per task (a column
    per task; "-" where the model does not train it)."""

    table: str
    lang: str
    rows: tuple[tuple[str, str], ...]
    tasks: dict[str, str]  # column label -> task; "" for Overall


ACCURACY = (
    AccuracyTable(
        "thesis-table-4.12",
        "ja",
        tuple((m.number, m.name) for m in MODELS if m.number in tuple("1234567")),
        {"Overall": "", "MASS": "mass", "BMASS": "bmass", "BRSS": "brss.f"},
    ),
    AccuracyTable(
        "thesis-table-4.13",
        "en",
        (("1", "mass"), ("2", "pmass-p"), ("3", "hfss"), ("4", "enss")),
        {"Overall": "", "MASS": "mass", "PMASS": "pmass.p", "HFSS": "hfss"},
    ),
)


def model(name: str) -> Model:
    if name not in MODEL_BY_NAME:
        raise Ch4RunError(f"no Chapter 4 model {name!r}; choose from {', '.join(MODEL_BY_NAME)}")
    return MODEL_BY_NAME[name]


def start_of(name: str, pair: str) -> str | None:
    """The start of a row's fine-tunes on a pair: a baseline, the pair's pre-training of the
    model, or None where the pair does not train it (the table prints "-")."""
    if name in BASELINES:
        return name
    found = model(name)
    return PreTraining(pair, found).id if pair in found.pairs else None


@functools.cache
def pretrainings() -> dict[str, PreTraining]:
    """Every pre-training of the chapter (full scale), by id, in Table 4.2's order per pair."""
    runs = (PreTraining(pair, m) for pair in PAIRS for m in MODELS if pair in m.pairs)
    return {r.id: r for r in runs}


@functools.cache
def _cells() -> dict[str, tuple[FineTune, tuple[Cell, ...]]]:
    found: dict[str, tuple[FineTune, list[Cell]]] = {}
    for grid in GRIDS:
        for row, name in grid.rows:
            for column in grid.columns:
                start = start_of(name, CORPORA[column.corpus].pair)
                if start is None:
                    continue
                run = FineTune(column.corpus, column.direction, column.size, start)
                if run.id not in found:
                    if not grid.group:
                        raise Ch4RunError(f"{grid.table} reads {run.id}, which no table plans")
                    found[run.id] = (run, [])
                cell = Cell(grid.table, grid.by, row, column.label, column.metric)
                found[run.id][1].append(cell)
    return {key: (run, tuple(cells)) for key, (run, cells) in found.items()}


def finetunes() -> dict[str, FineTune]:
    """Every fine-tune of the chapter (full scale), by id, in table order."""
    return {key: run for key, (run, _) in _cells().items()}


def cells(run_id: str) -> tuple[Cell, ...]:
    """The published cells a fine-tune fills (several where tables repeat a system)."""
    return _cells()[finetune(run_id).id][1]


def finetune(run_id: str) -> FineTune:
    if run_id not in _cells():
        raise Ch4RunError(
            f"no Chapter 4 fine-tune {run_id!r} (<corpus>.<src>-<tgt>.<size>.<start>)"
        )
    return _cells()[run_id][0]


def pretraining(run_id: str) -> PreTraining:
    if run_id not in pretrainings():
        raise Ch4RunError(
            f"no Chapter 4 pre-training {run_id!r}; choose from {', '.join(pretrainings())}"
        )
    return pretrainings()[run_id]


def pretraining_cells(run_id: str) -> tuple[Cell, ...]:
    """The published cells of a pre-training (Tables 4.12/4.13: ja-en models only)."""
    run = pretraining(run_id)
    out = []
    for table in ACCURACY:
        for row, name in table.rows:
            if (run.pair, run.model.name) != ("jaen", name):
                continue
            tasks = expand_tasks(run.tasks(table.lang))
            out += [
                Cell(table.table, "#", row, column, "accuracy")
                for column, task in table.tasks.items()
                if not task or task in tasks
            ]
    return tuple(out)


def side_tasks(run_id: str, lang: str) -> list[str]:
    """The ``--tasks`` of ``mlrep text pretrain-pairs`` for one language of a pre-training."""
    return list(pretraining(run_id).tasks(lang))


def _allowed(key: str, values: Iterable[str], options: Iterable[str]) -> None:
    """Every value of a plan entry is one of `options`, or the error names the key and them."""
    options = list(options)
    for value in values:
        if value not in options:
            raise Ch4RunError(
                f"params.yaml {settings.SECTION}.{key}: no {value!r} here; choose from "
                f"{', '.join(options)}"
            )


def _checked(plan: settings.Plan) -> settings.Plan:
    """A plan naming only pairs, models, baselines, directions, corpora and sizes that exist."""
    _allowed("pretrained", plan.pretrained, PAIRS)
    for pair, names in plan.pretrained.items():
        _allowed(f"pretrained.{pair}", names, (m.name for m in MODELS if pair in m.pairs))
    _allowed("baselines", plan.baselines, BASELINES)
    _allowed("directions", plan.directions, (d for c in CORPORA.values() for d in c.directions))
    _allowed("sizes", plan.sizes, CORPORA)
    for corpus, sizes in plan.sizes.items():
        _allowed(f"sizes.{corpus}", sizes, CORPORA[corpus].sizes)
    return plan


def planned_pretrainings(section: Mapping[str, Any]) -> list[str]:
    """The pre-training ids a resolved ``ch4_jass`` section runs, in inventory order."""
    plan = _checked(settings.plan(section))
    return [
        key
        for key, run in pretrainings().items()
        if run.model.name in plan.pretrained.get(run.pair, [])
    ]


def planned_finetunes(section: Mapping[str, Any]) -> list[str]:
    """The fine-tune ids a resolved ``ch4_jass`` section runs, in inventory order."""
    plan = _checked(settings.plan(section))
    started = {*plan.baselines, *planned_pretrainings(section)}
    return [
        key
        for key, run in finetunes().items()
        if run.start in started
        and run.direction in plan.directions
        and run.size in plan.sizes.get(run.corpus, {})
    ]


def finetunes_of(section: Mapping[str, Any], pretraining_id: str) -> list[str]:
    """The planned fine-tunes that start from one pre-training."""
    pretraining(pretraining_id)
    return [key for key in planned_finetunes(section) if finetune(key).start == pretraining_id]


def sample_size(section: Mapping[str, Any], run_id: str) -> int:
    """Training pairs a fine-tune samples (0: its whole corpus), from the plan's ``sizes``."""
    run = finetune(run_id)
    return settings.plan(section).sizes[run.corpus][run.size]
