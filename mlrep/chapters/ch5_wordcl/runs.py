"""Chapter 5's 28 trainings as data: three systems × two starting points × the methods each
table prints, and what every method changes in training.

A run is named ``<system>/<method>``: the system is the thesis's language group
(`SYSTEMS`: ``222_en-ja``, ``626_en-it-ja-nl-tr-vi`` = 626.I, ``626_en-tr-ro-et-my-kk`` =
626.II) and the method is the starting point (``mlsc``: a multilingual Transformer from
scratch; ``mbart-ft``: mBART fine-tuned) with at most one addition (``-align``, ``-w2w``,
``-fa``, ``-sent``): ``626_en-tr-ro-et-my-kk/mbart-ft-w2w``. The method names are the report's
row keys of Tables 5.2, 5.3 and C.1-C.9 (`method_of_row`), so each printed row is one run.

`Method.settings` holds what an addition changes relative to its base, in `TrainSettings`
field names; the choices the thesis leaves open are marked [design]:

- ``align``: Garg et al. (2019)'s supervised attention with their λ = 0.05, on the 1-to-1
  fast_align links [design: the thesis does not say which links +align reads];
- ``w2w`` / ``fa``: the word-level contrastive loss (w = 0.1, T = 0.2, d' = 128) on
  word2word or 1-to-1 fast_align links, dropout 0.2 (the thesis lowers it with the loss);
- ``sent``: mRASP2's sentence-level loss with its τ = 0.1 and λ = 1 [design: not stated for
  this chapter], dropout 0.2; the 626 systems only (Tables C.2, C.3, C.5, C.6).

What the params section asks for (`trained`) and what each run's training is given
(`train_values`) are the rules' view of the inventory. Every run but +align trains with the
contrastive criterion, with both weights 0 for a baseline: that is label-smoothed
cross-entropy (benchmarks/contrastive_throughput.py: 0.999 of its speed) and it logs the
in-batch retrieval P@1 of each validation that Figure 5.1 plots. mBART FT trains on its
system's data binarised with mBART's dictionary (`Method.dictionary`), from mbart-init's
checkpoint at mBART's size, PreNorm (`MBART_FT`). Language tags are
``s-enc-t-dec`` (`TAG_FORMAT`) [design: not stated]: the encoder reads the tag of the language
it is given, so a target sentence encoded for the contrastive loss carries its own, and it is
mBART-50's fine-tuning format (the source's language token in the encoder, the target's first
in the decoder).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlrep.errors import MlrepError
from mlrep.nmt.settings import train_dataset_values

# system -> its English-centric pairs, in the order of its tables' columns
SYSTEMS: Mapping[str, tuple[str, ...]] = {
    "222_en-ja": ("en-ja",),
    "626_en-it-ja-nl-tr-vi": ("en-ja", "en-vi", "en-it", "en-nl", "en-tr"),
    "626_en-tr-ro-et-my-kk": ("en-tr", "en-ro", "en-et", "en-kk", "en-my"),
}
# the short names the thesis's Table 5.2 prints for the two 626 systems
SHORT_NAMES = {"626.I": "626_en-it-ja-nl-tr-vi", "626.II": "626_en-tr-ro-et-my-kk"}
BASES = ("mlsc", "mbart-ft")
# the dictionary a run's data is binarised with: the system's own (MLSC), or mBART's, which
# its model's embedding rows are (mBART FT); one data folder per system and dictionary
OWN, MBART = DICTIONARIES = ("own", "mbart")
# what mBART FT changes in the system's training besides the init: mBART is PreNorm
MBART_FT = {"layernorm": "pre"}
TAG_FORMAT = "s-enc-t-dec"
CONTRASTIVE_DROPOUT = 0.2  # [T] dropout with a contrastive loss (0.3 without)
WORD_LOSS = {
    "contrastive": True,
    "word_weight": 0.1,
    "word_temperature": 0.2,
    "word_projection": 128,
    "dropout": CONTRASTIVE_DROPOUT,
}
# addition -> (the settings it changes, the links its training reads, systems without it)
ADDITIONS: Mapping[str, tuple[Mapping[str, Any], str, frozenset[str]]] = {
    "": ({}, "", frozenset()),
    "align": ({"alignment_weight": 0.05}, "fa", frozenset()),
    "w2w": (WORD_LOSS, "w2w", frozenset()),
    "fa": (WORD_LOSS, "fa", frozenset()),
    "sent": (
        {
            "contrastive": True,
            "sentence_weight": 1.0,
            "sentence_temperature": 0.1,
            "dropout": CONTRASTIVE_DROPOUT,
        },
        "",
        frozenset({"222_en-ja"}),
    ),
}


class Ch5RunError(MlrepError):
    """A run, method or table row that Chapter 5's inventory does not have."""


@dataclass(frozen=True)
class Method:
    """A starting point and at most one addition (``addition`` "" for the baseline)."""

    base: str
    addition: str

    @property
    def name(self) -> str:
        return f"{self.base}-{self.addition}" if self.addition else self.base

    @classmethod
    def parse(cls, name: str) -> Method:
        for base in BASES:
            addition = name.removeprefix(base).removeprefix("-")
            if name.startswith(base) and addition in ADDITIONS and cls(base, addition).name == name:
                return cls(base, addition)
        raise Ch5RunError(
            f"{name!r} is no Chapter 5 method; expected <{'|'.join(BASES)}>"
            f"[-{'|-'.join(a for a in ADDITIONS if a)}]"
        )

    @property
    def settings(self) -> Mapping[str, Any]:
        """What the addition changes in `mlrep.nmt.settings.TrainSettings`."""
        return ADDITIONS[self.addition][0]

    @property
    def links(self) -> str:
        """The word links its training reads (``w2w``, ``fa``), "" for none."""
        return ADDITIONS[self.addition][1]

    @property
    def pretrained(self) -> bool:
        """Whether training starts from mBART (the stand-in at tiny) instead of scratch."""
        return self.base == "mbart-ft"

    @property
    def dictionary(self) -> str:
        """The dictionary its data is binarised with (`DICTIONARIES`)."""
        return MBART if self.pretrained else OWN


@dataclass(frozen=True)
class Run:
    system: str
    method: Method

    @property
    def name(self) -> str:
        return f"{self.system}/{self.method.name}"

    @property
    def pairs(self) -> tuple[str, ...]:
        return SYSTEMS[self.system]


def runs() -> list[Run]:
    """Every training of the chapter, system by system (the thesis's 28)."""
    return [
        Run(system, Method(base, addition))
        for system in SYSTEMS
        for base in BASES
        for addition, (_, _, without) in ADDITIONS.items()
        if system not in without
    ]


def method_of_row(row_key: str) -> Method:
    """The method a published table's row prints (its report row key, e.g. ``mlsc``,
    ``mlsc-w2w``, ``mbart-ft-align``: the tables' aliases drop the "(ours)" of a label)."""
    return Method.parse(row_key)


def system_of_column(column: str) -> str:
    """The system a Table 5.2 column names (``222_en-ja``, ``626.I``, ``626.II``)."""
    system = SHORT_NAMES.get(column, column)
    if system not in SYSTEMS:
        raise Ch5RunError(f"{column!r} names no Chapter 5 system; expected one of {list(SYSTEMS)}")
    return system


def run(system: str, row_key: str) -> Run:
    """The run behind one printed row of one system's table."""
    if system not in SYSTEMS:
        raise Ch5RunError(f"{system!r} is no Chapter 5 system; expected one of {list(SYSTEMS)}")
    found = Run(system, method_of_row(row_key))
    if found not in runs():
        raise Ch5RunError(f"{found.name}: the thesis trains no {found.method.name} on {system}")
    return found


def trained(section: Mapping[str, Any]) -> list[Run]:
    """The runs a ``ch5_wordcl`` params section asks for: each of its ``methods`` on each of its
    ``run_systems`` that the thesis trains it on (+sent: not on 222_en-ja), then each of its
    ``extra_runs`` (``<system>/<method>``: a run outside that grid, so a trimmed scale can
    train the two runs a claim compares on a system it does not otherwise run)."""
    inventory = runs()
    wanted = [Method.parse(name) for name in section["methods"]]
    grid = [
        Run(system, method)
        for system in section["run_systems"]
        for method in wanted
        if Run(system, method) in inventory
    ]
    extra = []
    for name in section.get("extra_runs", []):
        system, _, method = name.partition("/")
        extra.append(run(system, method))
    return list(dict.fromkeys(grid + extra))


def systems(section: Mapping[str, Any]) -> list[str]:
    """The systems that train at least one run (`trained`), in the order they first do."""
    return list(dict.fromkeys(r.system for r in trained(section)))


def train_values(section: Mapping[str, Any], run: Run, init: str = "") -> dict[str, Any]:
    """What `mlrep nmt train` is given for `run`, by option name: the system's model and
    training values, the tag format, the criterion that logs retrieval (not for +align, which
    has its own), for mBART FT the init checkpoint `init` (`mlrep nmt mbart-init`'s) and
    mBART's architecture (``mbart_pretrain.arch``: the size of the stand-in or the release,
    which its embedding and layers must match), then what the method changes."""
    logged = {} if "alignment_weight" in run.method.settings else {"contrastive": True}
    own = train_dataset_values(section["datasets"][run.system])
    if run.method.pretrained != bool(init):
        need = (
            "needs the init checkpoint of `mlrep nmt mbart-init`"
            if run.method.pretrained
            else f"trains from scratch, not from {init}"
        )
        raise Ch5RunError(f"{run.name} {need}")
    start = {"arch": section["mbart_pretrain"]["arch"], **MBART_FT, "init": init} if init else {}
    return {**own, **start, "tag_format": TAG_FORMAT, **logged, **run.method.settings}
