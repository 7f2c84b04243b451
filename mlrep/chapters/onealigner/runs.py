"""OneAligner run names ↔ the settings of `mlrep embed align-finetune` and `align-evaluate`.

A run name is what the results folders (``results/onealigner/<run>/seed<N>/``), the report's
rows and the rules' wildcards use:

- ``unsup-<encoder>-<avg|bertscore>-<raw|norm>``: a pretrained encoder (``encoders``: mBERT,
  XLM-R-base, XLM-R-large) scored without training, mean-pooled cosine or BERT-score, without
  or with the in-batch normalisation (Table 1's twelve cells);
- ``all``: fine-tuned on every English-centred pair (``all_languages``) within ``budget``
  examples (Table 3 "OneAligner", Table 7 "All"); ``all-nobudget``: on all of them (Table 3
  "OneAligner (All)");
- ``en-<xx>``: one English-centred pair (Tables 4 and 9, Figure 1);
- ``ne-<xx>-<yy>``: one non-English pair (Table 5);
- ``top<k>``: the union of the first k pairs of ``ranking`` (English-centred pairs by their
  training data, richest first; Table 7). ``top1`` is the single pair ``en-<first>``, so it is
  never trained twice: `aliases` names it, and Tables 6 and 8's ``top1-eng`` and
  ``top1-not-eng`` (``en-<first>`` and ``ne-<first of ne_pairs>``).

`planned_runs` lists what a scale runs: ``en_languages``, ``ne_pairs`` and ``top_ks`` are the
lists the tiny scale trims (the report marks the rest "not run"). The fine-tuned runs start
from encoder ``finetune_encoder``; every training run's flags are `finetune_values`, every
evaluation's `evaluate_values` (an encoder's four unsupervised runs are scored in one process:
`unsup_template`, `grid_values`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mlrep.cliutil import flags_from
from mlrep.embed.settings import NORMS
from mlrep.errors import MlrepError

SECTION = "onealigner"
ENGLISH = "en"
UNSUP_PREFIX = "unsup-"
EN_PREFIX = "en-"
NE_PREFIX = "ne-"
TOP_PREFIX = "top"
ALL_RUN = "all"
NOBUDGET_RUN = "all-nobudget"
ENCODERS = ("mbert", "xlmr-base", "xlmr-large")  # Table 1's column groups
SIMILARITIES = ("avg", "bertscore")  # run-name token -> AlignEvaluateSettings.similarity
UNTRAINED_SEED = 0  # the seed folder of the unsupervised runs (nothing seeded trains them)

_LANG = r"[A-Za-z][A-Za-z_]*"
# also the rules' wildcard constraint for run names
PATTERN = (
    f"{re.escape(UNSUP_PREFIX)}(?:{'|'.join(map(re.escape, ENCODERS))})"
    f"-(?:{'|'.join(SIMILARITIES)})-(?:{'|'.join(NORMS)})"
    f"|{re.escape(ALL_RUN)}|{re.escape(NOBUDGET_RUN)}"
    f"|{re.escape(EN_PREFIX)}{_LANG}"
    f"|{re.escape(NE_PREFIX)}{_LANG}-{_LANG}"
    f"|{TOP_PREFIX}[1-9][0-9]*"
)
_NAME = re.compile(f"^(?:{PATTERN})$")


class RunNameError(MlrepError):
    """A run name outside OneAligner's vocabulary."""


class SectionError(MlrepError):
    """An ``onealigner`` params.yaml section whose settings cannot make a run."""


@dataclass(frozen=True)
class Run:
    """A parsed run: what it is (`kind`: unsup, all, en, ne or top) and what its name fixes."""

    name: str
    kind: str
    fixed: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, name: str) -> Run:
        if not _NAME.match(name):
            raise RunNameError(
                f"{name!r} is not a {SECTION} run; expected {UNSUP_PREFIX}<{'|'.join(ENCODERS)}>"
                f"-<{'|'.join(SIMILARITIES)}>-<{'|'.join(NORMS)}>, {ALL_RUN}, {NOBUDGET_RUN}, "
                f"{EN_PREFIX}<xx>, {NE_PREFIX}<xx>-<yy> or {TOP_PREFIX}<k>"
            )
        if name.startswith(UNSUP_PREFIX):
            encoder, similarity, norm = name[len(UNSUP_PREFIX) :].rsplit("-", 2)
            fixed = {"encoder": encoder, "similarity": similarity, "norm": norm == "norm"}
            return cls(name, "unsup", fixed)
        if name in (ALL_RUN, NOBUDGET_RUN):
            return cls(name, "all", {"budgeted": name == ALL_RUN})
        if name.startswith(EN_PREFIX):
            return cls(name, "en", {"pairs": (f"{ENGLISH}-{name[len(EN_PREFIX) :]}",)})
        if name.startswith(NE_PREFIX):
            return cls(name, "ne", {"pairs": (name[len(NE_PREFIX) :],)})
        return cls(name, "top", {"k": int(name[len(TOP_PREFIX) :])})


def unsup_run(encoder: str, similarity: str, norm: bool) -> str:
    return unsup_template(encoder).format(similarity=similarity, norm=NORMS[norm])


def unsup_template(encoder: str) -> str:
    """An encoder's four Table 1 runs as one name with ``{similarity}`` and ``{norm}``: the
    ``--run`` of `mlrep embed align-evaluate --grid`, which scores all four in one process."""
    return f"{UNSUP_PREFIX}{encoder}-{{similarity}}-{{norm}}"


def unsupervised() -> list[str]:
    """Table 1's twelve evaluations, in its column order."""
    return [
        unsup_run(encoder, similarity, norm)
        for encoder in ENCODERS
        for similarity in SIMILARITIES
        for norm in (False, True)
    ]


def aliases(section: Mapping[str, Any]) -> dict[str, str]:
    """Table names that are another run: ``top1`` and ``top1-eng`` are ``en-<first of
    ranking>``, ``top1-not-eng`` is ``ne-<first of ne_pairs>`` (the paper's Top1 models)."""
    eng = EN_PREFIX + _ranking(section)[0]
    return {
        f"{TOP_PREFIX}1": eng,
        "top1-eng": eng,
        "top1-not-eng": NE_PREFIX + section["ne_pairs"][0],
    }


def _ranking(section: Mapping[str, Any]) -> list[str]:
    ranking = list(section["ranking"])
    if not ranking:
        raise SectionError(f"{SECTION}.ranking is empty: the top-k runs need its first k pairs")
    return ranking


def fine_tuned(section: Mapping[str, Any]) -> list[str]:
    """The distinct fine-tunings of a scale: ``all``, ``all-nobudget``, the en-xx singles of
    ``en_languages`` and of the Top1 models, the ne pairs and the ``top<k>`` of ``top_ks``
    (k > 1: ``top1`` is ``en-<first>``), each once."""
    top1 = aliases(section)
    return list(
        dict.fromkeys(
            [
                ALL_RUN,
                NOBUDGET_RUN,
                top1["top1-eng"],
                top1["top1-not-eng"],
                *(EN_PREFIX + lang for lang in section["en_languages"]),
                *(NE_PREFIX + pair for pair in section["ne_pairs"]),
                *(f"{TOP_PREFIX}{k}" for k in section["top_ks"] if k != 1),
            ]
        )
    )


def planned_runs(section: Mapping[str, Any]) -> list[str]:
    """Every run a scale evaluates: the twelve unsupervised ones and the fine-tunings."""
    return [*unsupervised(), *fine_tuned(section)]


def full_protocol(section: Mapping[str, Any]) -> set[str]:
    """The runs also scored on New-Tatoeba and BUCC (Tables 6 and 8: the Top1 models); the
    others are read on Tatoeba-36 alone, as the paper reports them."""
    top1 = aliases(section)
    return {top1["top1-eng"], top1["top1-not-eng"]}


def pairs(section: Mapping[str, Any], run: str) -> list[str]:
    """The language pairs a fine-tuning run trains on."""
    parsed = Run.parse(run)
    if parsed.kind == "unsup":
        raise SectionError(f"{run} is not fine-tuned; it has no training pairs")
    if parsed.kind in ("en", "ne"):
        return list(parsed.fixed["pairs"])
    languages = section["all_languages"] if parsed.kind == "all" else _ranking(section)
    k = parsed.fixed.get("k", 0)
    if k > len(languages):
        raise SectionError(
            f"{run}: {SECTION}.ranking has {len(languages)} languages, fewer than {k}"
        )
    chosen = languages if parsed.kind == "all" else languages[: parsed.fixed["k"]]
    return [f"{ENGLISH}-{lang}" for lang in chosen]


def data_key(section: Mapping[str, Any], run: str) -> str:
    """The dataset a fine-tuning reads: ``ne_data`` for a non-English pair, else ``en_data``."""
    return section["ne_data" if Run.parse(run).kind == "ne" else "en_data"]


def data_pairs(section: Mapping[str, Any], run: str) -> list[str]:
    """The run's pairs as its dataset's files name them: a non-English pair's languages
    through ``ne_codes`` (the Tatoeba Challenge's ``fra-spa`` for ``fr-es`` at full); the run
    keeps its table name (``ne-fr-es``)."""
    if Run.parse(run).kind != "ne":
        return pairs(section, run)
    codes = section["ne_codes"]
    return [
        "-".join(codes.get(lang, lang) for lang in pair.split("-")) for pair in pairs(section, run)
    ]


def finetune_values(section: Mapping[str, Any], run: str) -> dict[str, Any]:
    """The `mlrep embed align-finetune` settings of a run: the section's ``finetune`` keys, the
    hidden layer of ``finetune_encoder``, the run's `data_pairs`, and ``budget`` (0, all examples,
    for ``all-nobudget``)."""
    parsed = Run.parse(run)
    budget = 0 if parsed.name == NOBUDGET_RUN else section["budget"]
    layer = section["encoders"][section["finetune_encoder"]]["layer"]
    return {
        **section["finetune"],
        "layer": layer,
        "pairs": data_pairs(section, run),
        "budget": budget,
    }


def evaluate_values(section: Mapping[str, Any], run: str) -> dict[str, Any]:
    """The `mlrep embed align-evaluate` settings of a run: the section's ``evaluate`` keys; for
    an unsupervised run its encoder's `grid_values`, its similarity and α = 0 for ``raw``; for
    a fine-tuned one the fine-tuned encoder's layer and BERT-score."""
    parsed = Run.parse(run)
    if parsed.kind == "unsup":
        values = grid_values(section, parsed.fixed["encoder"])
        values |= {"similarity": parsed.fixed["similarity"]}
        if not parsed.fixed["norm"]:
            values["alpha"] = 0.0
        return values
    layer = section["encoders"][section["finetune_encoder"]]["layer"]
    return dict(section["evaluate"]) | {"layer": layer, "similarity": "bertscore"}


def grid_values(section: Mapping[str, Any], encoder: str) -> dict[str, Any]:
    """The settings of `align-evaluate --grid` over an encoder's four unsupervised runs: the
    section's ``evaluate`` keys (``alpha``: the normalised runs') and the encoder's layer;
    the grid sets each run's similarity and α as `evaluate_values` does."""
    return dict(section["evaluate"]) | {"layer": section["encoders"][encoder]["layer"]}


def alternatives(names: list[str]) -> str:
    """A wildcard constraint matching exactly `names` (none: matching nothing)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def encoder(section: Mapping[str, Any], name: str, stand_in: str) -> str:
    """An encoder of Table 1: its hub id, or the stand-in folder MLM-pretrained here
    (`stand_in`, a pattern with ``{encoder}``)."""
    hub = section["encoders"][name]["encoder"]
    return hub or stand_in.format(encoder=name)


def encoder_input(section: Mapping[str, Any], name: str, stand_in: str) -> list[str]:
    """The stand-in folder a job waits for; nothing for a hub id."""
    return [] if section["encoders"][name]["encoder"] else [encoder(section, name, stand_in)]


def protocol_flags(section: Mapping[str, Any], run: str) -> str:
    """The BUCC mining options of the Top1 models (Tables 6 and 8), whose New-Tatoeba set and
    BUCC folders the rule gives; none for another run, which its tables score on Tatoeba-36
    alone."""
    return flags_from(section["benchmarks"]) if run in full_protocol(section) else ""


def cc100_languages(section: Mapping[str, Any]) -> list[str]:
    """The languages allowed on both sides of a New-Tatoeba pair: CC-100's (``cc100_gb``) or,
    where the scale measures its sizes instead (tiny), the stand-ins' pretraining languages."""
    return list(section["cc100_gb"]) or list(section["monolingual"]["languages"])


def new_tatoeba_values(section: Mapping[str, Any]) -> dict[str, Any]:
    """The `mlrep embed new-tatoeba` settings: ``new_tatoeba_set`` and the allowed languages."""
    return {**section["new_tatoeba_set"], "languages": cc100_languages(section)}


def size_flags(section: Mapping[str, Any], text: str) -> str:
    """Figure 2's sizes for `mlrep onealigner language-points`: the published ``cc100_gb``,
    or the pretraining text folder `text` measured where the scale has none."""
    sizes = section["cc100_gb"]
    if not sizes:
        return f"--text {text}"
    return flags_from({"cc100_gb": [f"{lang}={gb}" for lang, gb in sizes.items()]})
