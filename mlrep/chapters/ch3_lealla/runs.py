"""Chapter 3 run names ↔ the generic settings of `mlrep.embed` they stand for.

A run name is what the results folders (``results/ch3_lealla/<run>/``), the report's rows and
the rules' wildcards use:

- ``teacher``: the released teacher (LaBSE), evaluated only;
- ``m-use``: a pretrained encoder of Table 3.3 scored as a baseline (`BASELINES`);
- ``reduce-<dim>``: the frozen teacher plus one dense layer to ``dim`` (Fig 3.1, Table A.2);
  the ladder of widths is `reduce_dims`, derived from the teacher's width;
- ``arch-<#>``: a student shape of Tables 3.1/A.3 (``#`` is their column), trained from
  scratch with AMS alone;
- ``lealla-<size>``: LEALLA-small/base/large, α·AMS + β·FD + γ·LD (Table 3.3);
- ``lealla-<size>-<loss>``: the same student trained on other terms (Tables 3.4, A.1, A.4).

Settings are keyed by the field names of `mlrep.embed.settings` (`StudentConfig`,
`DistillConfig`, `ReduceSettings`), so a run's flags are the generic verbs' options. A weight
is given only for a term the loss has (a term left out has weight 0), which makes
``lealla-<size>-ams`` the very run ``arch-<#>`` of its shape: `Run.trained_as` names it, so
the workflow trains it once for its three tables.

`run_values` turns a run into the flags of its verb from the chapter's params.yaml section: the
shape shrunk by ``shrink`` (the tiny scale divides the thesis's layers, widths and heads), the
learning rate and steps of its width (``schedule``, Sec. 3.2.3), the section's other student,
objective and training keys. `planned_runs` lists what a scale runs (``architectures``,
``sizes``, ``ablations``: the tiny scale trims them, the report marks the rest "not run").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mlrep.cliutil import flags_from
from mlrep.embed.settings import DISTILL_ONLY, LOSSES
from mlrep.errors import MlrepError

SECTION = "ch3_lealla"
TEACHER_RUN = "teacher"
# pretrained encoders Table 3.3 measures beside the teacher (params.yaml ``baselines``)
BASELINES = ("m-use",)
REDUCE_PREFIX = "reduce-"
ARCH_PREFIX = "arch-"
LEALLA_PREFIX = "lealla-"
FULL_LOSS = "ams+fd+ld"  # the loss of lealla-<size>: no suffix
LOSS_SUFFIX_SYN = "ams-syn"  # the loss whose fixed projection is a reduction layer


@dataclass(frozen=True)
class Shape:
    """A student encoder's shape (`StudentConfig` fields); its embedding width is ``dim``."""

    layers: int
    dim: int
    ffn_dim: int
    heads: int


# Tables 3.1/A.3 by their "#" column: fewer layers (1-2), smaller hidden size (3-4),
# thin-deep (5-9) and MobileBERT-like thin-deep, ffn_dim == dim (10-12). #0 is the teacher.
ARCHITECTURES: dict[int, Shape] = {
    1: Shape(layers=6, dim=768, ffn_dim=3072, heads=12),
    2: Shape(layers=3, dim=768, ffn_dim=3072, heads=12),
    3: Shape(layers=12, dim=384, ffn_dim=1536, heads=12),
    4: Shape(layers=12, dim=192, ffn_dim=768, heads=12),
    5: Shape(layers=24, dim=384, ffn_dim=1536, heads=12),
    6: Shape(layers=24, dim=256, ffn_dim=1024, heads=8),
    7: Shape(layers=24, dim=192, ffn_dim=768, heads=12),
    8: Shape(layers=24, dim=128, ffn_dim=512, heads=8),
    9: Shape(layers=24, dim=64, ffn_dim=256, heads=8),
    10: Shape(layers=24, dim=256, ffn_dim=256, heads=4),
    11: Shape(layers=24, dim=192, ffn_dim=192, heads=4),
    12: Shape(layers=24, dim=128, ffn_dim=128, heads=4),
}


@dataclass(frozen=True)
class Size:
    """A LEALLA model: its architecture row and the weights of Eq. 3.5 (`DistillConfig`)."""

    architecture: int
    beta: float
    alpha: float = 1.0
    gamma: float = 1e-2
    ld_temperature: float = 100.0


SIZES: dict[str, Size] = {
    "small": Size(architecture=8, beta=1e3),
    "base": Size(architecture=7, beta=1e3),
    "large": Size(architecture=6, beta=1e4),
}

# the run-name suffix of each ablated loss ("ams+fd" -> "ams-fd"); the full loss has none
LOSS_SUFFIXES: dict[str, str] = {
    loss.replace("+", "-"): loss for loss in LOSSES if loss != FULL_LOSS
}
# the distillation terms each weight belongs to (β also weighs DF and SYN, as DistillConfig)
_WEIGHTS = {"alpha": ("ams",), "beta": ("fd", "df", "syn"), "gamma": ("ld",)}

# the widths below a teacher's that dimension reduction tries, widest first (Table A.2)
REDUCE_LADDER = (512, 384, 256, 192, 128, 64, 32, 16)
REDUCE_STEPS = 7  # "seven lower dimensions"


def _alternatives(names: list[str]) -> str:
    return "|".join(re.escape(n) for n in names)


# also the rules' wildcard constraint for run names
PATTERN = (
    f"{re.escape(TEACHER_RUN)}"
    f"|{_alternatives(list(BASELINES))}"
    f"|{re.escape(REDUCE_PREFIX)}[1-9][0-9]*"
    f"|{re.escape(ARCH_PREFIX)}(?:{_alternatives([str(n) for n in ARCHITECTURES])})"
    f"|{re.escape(LEALLA_PREFIX)}(?:{_alternatives(list(SIZES))})"
    f"(?:-(?:{_alternatives(list(LOSS_SUFFIXES))}))?"
)
_NAME = re.compile(f"^(?:{PATTERN})$")


class RunNameError(MlrepError):
    """A run name outside the Chapter 3 vocabulary."""


def reduce_dims(teacher_dim: int, steps: int = REDUCE_STEPS) -> list[int]:
    """The `steps` widest ladder widths below the teacher's: 768 → 512 … 32 (the thesis's
    LaBSE), 512 → 384 … 16 (a 512-wide tiny teacher)."""
    return [d for d in REDUCE_LADDER if d < teacher_dim][:steps]


def lealla_run(size: str, loss: str = FULL_LOSS) -> str:
    """The run name of LEALLA-`size` trained on `loss` (a `DistillConfig.loss`)."""
    return LEALLA_PREFIX + size + ("" if loss == FULL_LOSS else "-" + loss.replace("+", "-"))


@dataclass(frozen=True)
class Run:
    """A parsed run: what it is (`kind`) and the generic settings it stands for."""

    name: str
    kind: str  # teacher | baseline | reduce | arch | lealla
    settings: dict[str, Any] = field(default_factory=dict)
    trained_as: str = ""  # the run whose training this one is (itself unless shared)

    @classmethod
    def parse(cls, name: str) -> Run:
        if not _NAME.match(name):
            raise RunNameError(
                f"{name!r} is not a {SECTION} run; expected {TEACHER_RUN}, {', '.join(BASELINES)}, "
                f"{REDUCE_PREFIX}<dim>, {ARCH_PREFIX}<1-{max(ARCHITECTURES)}> (Tables 3.1/A.3) "
                f"or {LEALLA_PREFIX}<{'|'.join(SIZES)}>[-<{'|'.join(LOSS_SUFFIXES)}>]"
            )
        if name == TEACHER_RUN:
            return cls(name, "teacher", {}, name)
        if name in BASELINES:
            return cls(name, "baseline", {}, name)
        if name.startswith(REDUCE_PREFIX):
            return cls(name, "reduce", {"dims": (int(name[len(REDUCE_PREFIX) :]),)}, name)
        if name.startswith(ARCH_PREFIX):
            number = int(name[len(ARCH_PREFIX) :])
            return cls(name, "arch", _student(ARCHITECTURES[number], "ams", None), name)
        size_name, _, suffix = name[len(LEALLA_PREFIX) :].partition("-")
        size = SIZES[size_name]
        loss = LOSS_SUFFIXES[suffix] if suffix else FULL_LOSS
        shared = ARCH_PREFIX + str(size.architecture) if loss == "ams" else name
        return cls(name, "lealla", _student(ARCHITECTURES[size.architecture], loss, size), shared)


def _student(shape: Shape, loss: str, size: Size | None) -> dict[str, Any]:
    """Shape, loss and every weight of Eq. 3.5: the size's for the terms `loss` has, 0 for
    the others (a partial ablation keeps the full model's weights and drops a term by setting
    its weight to 0). AMS alone (no `size`: the architecture search) has weight 1, as every
    LEALLA's α is."""
    terms = set(loss.split("+"))
    spec = size or Size(architecture=0, beta=0.0, gamma=0.0)
    weights = {w: getattr(spec, w) if set(of) & terms else 0.0 for w, of in _WEIGHTS.items()}
    return {
        "layers": shape.layers,
        "dim": shape.dim,
        "ffn_dim": shape.ffn_dim,
        "heads": shape.heads,
        "loss": loss,
        **weights,
        "ld_temperature": spec.ld_temperature,
    }


def run_names(teacher_dim: int) -> list[str]:
    """Every Chapter 3 run, for a teacher of width `teacher_dim` (its reduction ladder)."""
    return [
        TEACHER_RUN,
        *BASELINES,
        *(f"{REDUCE_PREFIX}{d}" for d in reduce_dims(teacher_dim)),
        *(f"{ARCH_PREFIX}{n}" for n in ARCHITECTURES),
        *(
            lealla_run(size, loss)
            for size in SIZES
            for loss in [FULL_LOSS, *LOSS_SUFFIXES.values()]
        ),
    ]


class SectionError(MlrepError):
    """A Chapter 3 params.yaml section whose settings cannot make a run."""


@dataclass(frozen=True)
class Shrink:
    """params.yaml ``shrink``: the divisors of the thesis's shapes at a scale (1 at full). The
    tiny scale keeps every shape's ratios (thin-deep stays thin and deep) at a CPU's size."""

    layers: int
    width: int
    heads: int

    def apply(self, shape: Shape) -> Shape:
        shrunk = Shape(
            layers=max(1, math.ceil(shape.layers / self.layers)),
            dim=shape.dim // self.width,
            ffn_dim=shape.ffn_dim // self.width,
            heads=max(1, shape.heads // self.heads),
        )
        if not shrunk.dim or shrunk.dim % shrunk.heads:
            raise SectionError(
                f"{SECTION}.shrink {self}: {shape} becomes {shrunk}, whose width is not a "
                "positive multiple of its heads; choose divisors that keep it one"
            )
        return shrunk


@dataclass(frozen=True)
class Schedule:
    """params.yaml ``schedule``: learning rate and steps by the thesis's width d_h (Sec.
    3.2.3: 1e-3 above 384 and 5e-4 below 256; 200k steps over 256, 100k below 192; the
    boundaries the text leaves open are read as d_h >= ``wide_lr_from`` and
    d_h >= ``wide_steps_from``)."""

    wide_lr: float
    narrow_lr: float
    wide_lr_from: int
    wide_steps: int
    narrow_steps: int
    wide_steps_from: int

    def of(self, dim: int) -> dict[str, Any]:
        return {
            "lr": self.wide_lr if dim >= self.wide_lr_from else self.narrow_lr,
            "steps": self.wide_steps if dim >= self.wide_steps_from else self.narrow_steps,
        }


def planned_runs(section: Mapping[str, Any]) -> list[str]:
    """The runs a scale evaluates: the teacher and ``baselines``, the reduction ladder of the
    teacher's ``dim``, the ``architectures``, LEALLA at each of ``sizes`` with the full loss
    and at each of ``ablations.sizes`` with each of ``ablations.losses``."""
    ablations = section["ablations"]
    return [
        TEACHER_RUN,
        *section["baselines"],
        *(f"{REDUCE_PREFIX}{d}" for d in reduce_dims(section["teacher"]["dim"])),
        *(f"{ARCH_PREFIX}{n}" for n in section["architectures"]),
        *(lealla_run(size) for size in section["sizes"]),
        *(lealla_run(size, loss) for size in ablations["sizes"] for loss in ablations["losses"]),
    ]


def trained(section: Mapping[str, Any]) -> list[str]:
    """The distinct student trainings behind `planned_runs` (arch-<#> and lealla-*)."""
    return list(
        dict.fromkeys(
            parsed.trained_as
            for parsed in map(Run.parse, planned_runs(section))
            if parsed.kind in ("arch", "lealla")
        )
    )


def reduction_dims(section: Mapping[str, Any]) -> list[int]:
    """The widths the reduction job trains: the ladder, and the (shrunk) widths of the
    ams+syn runs, whose fixed projection is the reduction to the student's width."""
    ladder = reduce_dims(section["teacher"]["dim"])
    syn = [run_values(section, r)["dim"] for r in trained(section) if r.endswith("-ams-syn")]
    return sorted({*ladder, *syn}, reverse=True)


def run_values(section: Mapping[str, Any], run: str) -> dict[str, Any]:
    """The `mlrep embed distill` settings of a student run: its shape shrunk, the schedule of
    its thesis width, its loss weights, and the section's ``student``, ``objective`` and
    ``train`` keys."""
    parsed = Run.parse(run)
    if parsed.kind not in ("arch", "lealla"):
        raise SectionError(f"{run} trains no student ({parsed.kind}); no distill settings")
    settings = dict(parsed.settings)
    thesis = Shape(*(settings.pop(k) for k in ("layers", "dim", "ffn_dim", "heads")))
    shape = Shrink(**section["shrink"]).apply(thesis)
    return {
        **section["student"],
        **section["objective"],
        **section["train"],
        **Schedule(**section["schedule"]).of(thesis.dim),
        **vars(shape),
        **settings,
    }


def reduce_train(section: Mapping[str, Any]) -> dict[str, Any]:
    """The section's ``train`` keys `mlrep embed reduce` reads: the student's gradient-caching
    ``chunk_size`` left out (one dense layer on cached vectors fits any batch)."""
    return {k: v for k, v in section["train"].items() if k not in DISTILL_ONLY}


def pretrained_flags(section: Mapping[str, Any], run: str) -> str:
    """`mlrep embed evaluate`'s encoder options of the teacher (its cache, whose test vectors
    give the held-out rows, is the rule's input) or of a baseline (``baselines``: it encodes
    them itself)."""
    if run == TEACHER_RUN:
        return teacher_flags(section)
    if run not in section["baselines"]:
        raise SectionError(f"{run}: not the teacher nor one of {SECTION}.baselines")
    return flags_from(section["baselines"][run])


def teacher_flags(section: Mapping[str, Any]) -> str:
    """The teacher's loader and checkpoint as `mlrep embed evaluate` options."""
    return flags_from({key: section["teacher"][key] for key in ("loader", "teacher")})


def fetched(section: Mapping[str, Any], run: str, resources: str) -> list[str]:
    """The checkpoint folder of the teacher or a baseline when the workflow fetches it (full:
    LaBSE and mUSE under `resources`, Chapter 2's fetch step), so its job waits for it; a
    packaged or cached hub model has none."""
    spec = section["teacher"] if run == TEACHER_RUN else section["baselines"][run]
    return [spec["teacher"]] if spec["teacher"].startswith(resources) else []


def projection(section: Mapping[str, Any], run: str, ladder: str) -> list[str]:
    """The fixed layer of an ams+syn student, the ladder's reduction to its width (none for
    another run): ``<ladder>/<dim>/model.pt``."""
    if not run.endswith("-" + LOSS_SUFFIX_SYN):
        return []
    return [f"{ladder}/{run_values(section, run)['dim']}/model.pt"]
