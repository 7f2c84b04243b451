"""Chapter 6's grid as data: every LoRA training, no-fine-tuning evaluation and extra decoding
of the thesis, its stages, and which of them a scale's settings ask for.

**Run names.** A run is ``<setting>/<name>``, the setting being the results level
(``bloomz-24``: 24 unseen languages ↔ English, OPUS-100 + Flores-200; ``bloomz-3``: the
zero-shot setting on OPUS-100) and the name, in lower case with ``-`` only, what the thesis's
row labels say, slugged as the report slugs them:

* ``<size>-<objectives>[-then-<objectives>]``: size ``7b1``, ``3b`` or ``1b1``; the
  objectives of a stage in the thesis's order, joined by ``-`` (``mt``, ``mono-full``,
  ``mono-half``, ``align``, ``hint``, ``revise``: "MT+Mono-half+Align" is
  ``mt-mono-half-align``); ``-then-`` separates the stages of a curriculum ("Align→MT" is
  ``align-then-mt``, "MT+Align→MT" ``mt-align-then-mt``), so that no two recipes share a
  name (the report's slug of "Align→MT", ``align-mt``, would read as multi-task);
* ``<size>-noft``: the base model decoded without fine-tuning;
* BLOOMZ+3: the fine-tuning languages after the size, ``7b1-de-nl-ru-mt-align``,
  ``7b1-ar-de-fr-nl-ru-zh-mt`` (its no-fine-tuning row is ``7b1-noft``);
* decodings of a trained run with something else changed: ``-p1`` … ``-p5`` (Table D.2's
  prompts, Table D.3), ``-pivot`` (zero-shot through English, Table D.4). They train
  nothing; `Run.model` names the run whose adapter they decode.

**Stages.** A run trains its `Stage` s in order, each on the mixture of its objectives'
instruction sets (`mlrep.llm.instruct.mix`) for its epochs. The thesis trains 5 epochs and does
not say how a two-stage curriculum splits them; `GridSettings.curriculum` chooses: ``each``
(the default: every stage 5 epochs, the spec's suggestion, so Align→MT's MT stage trains as
long as MTInstruct alone) or ``split`` (the 5 epochs shared out, earlier stages first: 3 + 2).

**Trims.** `runs` lists what `GridSettings` ask for: the recipes the thesis trains at every
size (Tables 6.2, 6.3, Fig 6.1) at each of `GridSettings.sizes` (or, with ``swept``, only those
recipes, the rest at 7b1), the 7b1-only recipes (Tables 6.4, 6.5), and the BLOOMZ+3, prompt
and pivot blocks each behind a switch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from mlrep.errors import MlrepError, did_you_mean

SIZES = ("7b1", "3b", "1b1")  # the thesis's BLOOMZ sizes, its tables' order
MAIN_SIZE = "7b1"  # the size of the 7b1-only tables and of BLOOMZ+3
EPOCHS = 5
B24, B3 = SETTINGS = ("bloomz-24", "bloomz-3")
OBJECTIVES = ("mt", "mono-full", "mono-half", "align", "hint", "revise")  # the names' order
THEN = "-then-"
NOFT = "noft"
PROMPTS = ("p1", "p2", "p3", "p4", "p5")  # Table D.2 besides the default (the trained runs)
PIVOT = "pivot"
PIVOT_LANGUAGE = "en"

# Table 6.1's 24 unseen languages (ISO 639-1), in its order
UNSEEN_24 = (
    *("af", "am", "be", "cy", "ga", "gd", "gl", "ha", "ka", "kk", "km", "ky"),
    *("li", "my", "nb", "nn", "oc", "si", "tg", "tk", "tt", "ug", "uz", "yi"),
)
# BLOOMZ+3: BLOOMZ's pre-training coverage names the groups, whatever a run fine-tunes on
SEEN, UNSEEN = ("ar", "fr", "zh"), ("de", "nl", "ru")
LANGUAGE_SETS = {"de-nl-ru": UNSEEN, "ar-de-fr-nl-ru-zh": ("ar", "de", "fr", "nl", "ru", "zh")}
# the names the prompts spell out (the thesis writes X and Y; Table 6.1's names)
NAMES: Mapping[str, str] = {
    "en": "English",
    "af": "Afrikaans",
    "am": "Amharic",
    "be": "Belarusian",
    "cy": "Welsh",
    "ga": "Irish",
    "gd": "Scottish Gaelic",
    "gl": "Galician",
    "ha": "Hausa",
    "ka": "Georgian",
    "kk": "Kazakh",
    "km": "Khmer",
    "ky": "Kyrgyz",
    "li": "Limburgish",
    "my": "Burmese",
    "nb": "Norwegian Bokmål",
    "nn": "Norwegian Nynorsk",
    "oc": "Occitan",
    "si": "Sinhala",
    "tg": "Tajik",
    "tk": "Turkmen",
    "tt": "Tatar",
    "ug": "Uyghur",
    "uz": "Northern Uzbek",
    "yi": "Eastern Yiddish",
    "ar": "Arabic",
    "de": "German",
    "fr": "French",
    "nl": "Dutch",
    "ru": "Russian",
    "zh": "Chinese",
}

# BLOOMZ+24 recipes, each a tuple of stages (a stage: its objectives)
Recipe = tuple[tuple[str, ...], ...]
# Table 6.2 (the curricula) and Table 6.3 (the generative variants): every size
SWEPT: Mapping[str, Recipe] = {
    "mt": (("mt",),),
    "align": (("align",),),
    "mt-align": (("mt", "align"),),
    "align-then-mt": (("align",), ("mt",)),
    "mt-align-then-mt": (("mt", "align"), ("mt",)),
    "mt-hint": (("mt", "hint"),),
    "mt-revise": (("mt", "revise"),),
}
# Tables 6.4 and 6.5: 7b1 only
MAIN_ONLY: Mapping[str, Recipe] = {
    "mt-align-revise": (("mt", "align", "revise"),),
    "mt-align-hint": (("mt", "align", "hint"),),
    "mt-hint-revise": (("mt", "hint", "revise"),),
    "mt-align-hint-revise": (("mt", "align", "hint", "revise"),),
    "mt-mono-full": (("mt", "mono-full"),),
    "mt-mono-half": (("mt", "mono-half"),),
    "mt-mono-full-align": (("mt", "mono-full", "align"),),
    "mt-mono-half-align": (("mt", "mono-half", "align"),),
    "mt-mono-full-align-hint-revise": (("mt", "mono-full", "align", "hint", "revise"),),
    "mt-mono-half-align-hint-revise": (("mt", "mono-half", "align", "hint", "revise"),),
}
# BLOOMZ+3 (Table 6.6, D.1): each language set with these
ZERO_SHOT: Mapping[str, Recipe] = {
    "mt": (("mt",),),
    "mt-align": (("mt", "align"),),
    "mt-align-hint-revise": (("mt", "align", "hint", "revise"),),
}
PROMPT_ABLATION = ("mt", "mt-align")  # Table D.3: the 7b1 runs decoded with P1-P5
PIVOTED = ("mt", "mt-align")  # Table D.4: the ar-de-fr-nl-ru-zh runs decoded via English
PIVOT_SET = "ar-de-fr-nl-ru-zh"


class GridError(MlrepError):
    """A setting of the grid or a run name that Chapter 6 does not have."""


@dataclass(frozen=True)
class Stage:
    """One training stage: the mixture of these objectives' instruction sets, `epochs` long."""

    objectives: tuple[str, ...]
    epochs: int


@dataclass(frozen=True)
class Run:
    """One entry of the grid: a LoRA training (`stages`), the base model decoded as it is
    (no stages, no `model`), or a decoding of another run's model (`model`) with Table D.2's
    prompt `prompt` or through English (`pivot`)."""

    setting: str
    name: str
    size: str
    languages: tuple[str, ...]  # the fine-tuning languages, each paired with English
    stages: tuple[Stage, ...] = ()
    model: str = ""  # the run (same setting) whose trained model this one decodes
    prompt: str = "default"
    pivot: bool = False

    @property
    def path(self) -> str:
        """The results folder under ``results/ch6_aligninstruct/`` (without the seed)."""
        return f"{self.setting}/{self.name}"

    @property
    def trains(self) -> bool:
        return bool(self.stages)

    @property
    def tests(self) -> tuple[str, ...]:
        """The test sets it is scored on: OPUS-100 and Flores-200 for a BLOOMZ+24 run, OPUS
        only for a prompt ablation (Table D.3 has no Flores columns) and for BLOOMZ+3."""
        return ("opus", "flores") if self.setting == B24 and self.prompt == "default" else ("opus",)

    def directions(self, languages: Sequence[str]) -> list[tuple[str, str]]:
        """(source, target) decoded: English ↔ each of `languages` (BLOOMZ+24's at this
        scale); BLOOMZ+3: the 12 supervised and 30 zero-shot directions of its six, a pivot
        run the zero-shot ones only."""
        if self.setting == B24:
            return [
                d for lang in languages for d in ((PIVOT_LANGUAGE, lang), (lang, PIVOT_LANGUAGE))
            ]
        six = LANGUAGE_SETS[PIVOT_SET]
        zero_shot = [(a, b) for a in six for b in six if a != b]
        if self.pivot:
            return zero_shot
        supervised = [(PIVOT_LANGUAGE, x) for x in six] + [(x, PIVOT_LANGUAGE) for x in six]
        return supervised + zero_shot


@dataclass(frozen=True)
class GridSettings:
    """What a scale trains of the grid (params.yaml's ``ch6_aligninstruct`` once it is built)."""

    sizes: tuple[str, ...] = field(
        default=SIZES,
        metadata={"help": "BLOOMZ sizes of the recipes the thesis runs at every size"},
    )
    swept: tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "recipes (and noft) run at every size of `sizes`, the others at 7b1 only "
            "(None: all of Tables 6.2/6.3)"
        },
    )
    epochs: int = field(default=EPOCHS, metadata={"help": "epochs of a stage (curriculum: each)"})
    curriculum: Literal["each", "split"] = field(
        default="each",
        metadata={"help": "each: every stage trains `epochs`; split: the stages share them"},
    )
    only: tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "the recipes (and noft) run at all, in either block; the others' cells read "
            "not run (None: every recipe; a test's trim)"
        },
    )
    bloomz3: bool = field(default=True, metadata={"help": "the BLOOMZ+3 zero-shot runs"})
    prompts: bool = field(default=True, metadata={"help": "Table D.3's prompt decodings"})
    pivot: bool = field(default=True, metadata={"help": "Table D.4's pivot decodings"})


def stage_epochs(stages: int, epochs: int, curriculum: str) -> list[int]:
    """Each stage's epochs: all `epochs` each, or `epochs` shared out, earlier stages first
    (5 over 2 stages: 3 + 2)."""
    if curriculum == "each":
        return [epochs] * stages
    if curriculum != "split":
        raise GridError(f"curriculum {curriculum!r}: each or split")
    if epochs < stages:
        raise GridError(f"{epochs} epochs cannot be split over {stages} stages; train more")
    base, extra = divmod(epochs, stages)
    return [base + (k < extra) for k in range(stages)]


def _stages(recipe: Recipe, settings: GridSettings) -> tuple[Stage, ...]:
    epochs = stage_epochs(len(recipe), settings.epochs, settings.curriculum)
    return tuple(Stage(objectives, n) for objectives, n in zip(recipe, epochs, strict=True))


def recipe_name(recipe: Recipe) -> str:
    """The name part of a recipe: objectives joined by ``-``, stages by ``-then-``."""
    return THEN.join("-".join(stage) for stage in recipe)


def _check(settings: GridSettings) -> None:
    for size in settings.sizes:
        if size not in SIZES:
            raise GridError(f"no BLOOMZ size {size!r}{did_you_mean(size, SIZES)}; sizes: {SIZES}")
    recipes = (*SWEPT, *MAIN_ONLY, *ZERO_SHOT, NOFT)
    for name in settings.only or ():
        if name not in recipes:
            raise GridError(
                f"recipe {name!r} is in no block{did_you_mean(name, recipes)}; "
                f"choose from {', '.join(dict.fromkeys(recipes))}"
            )
    known = (*SWEPT, NOFT)
    for name in settings.swept or ():
        if name not in known:
            raise GridError(
                f"swept recipe {name!r} is not run at every size{did_you_mean(name, known)}; "
                f"choose from {', '.join(known)}"
            )


def runs(settings: GridSettings = GridSettings()) -> list[Run]:
    """Every run `settings` ask for: trainings, no-fine-tuning decodings and extra decodings,
    in the thesis's table order."""
    _check(settings)
    swept = set(settings.swept) if settings.swept is not None else {*SWEPT, NOFT}
    out: list[Run] = []

    def sizes_of(name: str) -> tuple[str, ...]:
        return settings.sizes if name in swept else (MAIN_SIZE,)

    for size in sizes_of(NOFT):
        out.append(Run(B24, f"{size}-{NOFT}", size, UNSEEN_24))
    for name, recipe in SWEPT.items():
        for size in sizes_of(name):
            out.append(Run(B24, f"{size}-{name}", size, UNSEEN_24, _stages(recipe, settings)))
    for name, recipe in MAIN_ONLY.items():
        out.append(Run(B24, f"{MAIN_SIZE}-{name}", MAIN_SIZE, UNSEEN_24, _stages(recipe, settings)))
    if settings.prompts:
        for name in PROMPT_ABLATION:
            trained = f"{MAIN_SIZE}-{name}"
            for prompt in PROMPTS:
                out.append(
                    Run(
                        B24,
                        f"{trained}-{prompt}",
                        MAIN_SIZE,
                        UNSEEN_24,
                        model=trained,
                        prompt=prompt,
                    )
                )
    if settings.bloomz3:
        out.append(Run(B3, f"{MAIN_SIZE}-{NOFT}", MAIN_SIZE, ()))
        for languages, codes in LANGUAGE_SETS.items():
            for name, recipe in ZERO_SHOT.items():
                run = f"{MAIN_SIZE}-{languages}-{name}"
                out.append(Run(B3, run, MAIN_SIZE, codes, _stages(recipe, settings)))
        if settings.pivot:
            for name in PIVOTED:
                trained = f"{MAIN_SIZE}-{PIVOT_SET}-{name}"
                codes = LANGUAGE_SETS[PIVOT_SET]
                out.append(
                    Run(B3, f"{trained}-{PIVOT}", MAIN_SIZE, codes, model=trained, pivot=True)
                )
    if settings.only is None:
        return out
    return [run for run in out if _recipe(run) in settings.only]


def _recipe(run: Run) -> str:
    """The recipe (or noft) a run trains or decodes: its name less size, language set and
    decoding suffix."""
    name = run.model or run.name
    name = name.removeprefix(f"{run.size}-")
    for languages in LANGUAGE_SETS:
        name = name.removeprefix(f"{languages}-")
    return name


@dataclass(frozen=True)
class Analysis:
    """A layer-wise cosine analysis (Figures 6.3, D.1): the parallel validation sentences of
    `languages` through the no-FT, MTInstruct and MT+Align models (`compared`, that order);
    its Δ1 and Δ2 per layer (`delta{1,2}_l<k>`) are a run's metrics of their own."""

    setting: str
    name: str
    compared: tuple[str, str, str]
    languages: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"{self.setting}/{self.name}"


def analyses(settings: GridSettings = GridSettings()) -> list[Analysis]:
    """Figure 6.3's analysis of the 7b1 BLOOMZ+24 models and Figure D.1's of each BLOOMZ+3
    language set (ar-de-fr-nl-ru-zh's also over its seen languages alone)."""
    size = MAIN_SIZE
    out = [
        Analysis(
            B24, f"{size}-cosine", (f"{size}-{NOFT}", f"{size}-mt", f"{size}-mt-align"), UNSEEN_24
        )
    ]
    if settings.bloomz3:
        for languages, codes in LANGUAGE_SETS.items():
            models = (f"{size}-{NOFT}", f"{size}-{languages}-mt", f"{size}-{languages}-mt-align")
            out.append(Analysis(B3, f"{size}-{languages}-cosine", models, codes))
        models = out[-1].compared
        out.append(Analysis(B3, f"{size}-{PIVOT_SET}-cosine-ar-fr-zh", models, SEEN))
    return out


def trained(settings: GridSettings = GridSettings()) -> list[Run]:
    """The LoRA trainings among `runs`."""
    return [run for run in runs(settings) if run.trains]


def get(path: str, settings: GridSettings = GridSettings()) -> Run:
    """The run at ``<setting>/<name>`` (a rule's wildcards), a clear error for another name."""
    found = {run.path: run for run in runs(settings)}
    if path not in found:
        raise GridError(f"no Chapter 6 run {path!r} at these settings{did_you_mean(path, found)}")
    return found[path]


def analysis(path: str, settings: GridSettings = GridSettings()) -> Analysis:
    """The cosine analysis at ``<setting>/<name>``, a clear error for another name."""
    found = {a.path: a for a in analyses(settings)}
    if path not in found:
        raise GridError(
            f"no Chapter 6 cosine analysis {path!r} at these settings{did_you_mean(path, found)}"
        )
    return found[path]
