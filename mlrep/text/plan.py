"""What `snakemake preprocess` builds, where its corpus files come from, and which subword
model each chapter's setting trains.

Kept out of the rule files so the rules stay declarations and the plan is unit-tested.

Corpus files: the section's ``dataset`` names the output folder (results/preprocess/<dataset>)
and, by default, the input folder results/data/<dataset> with files ``{split}.{pair}.{lang}``
(the tiny corpus). ``corpora`` overrides that per pair and split with ``<key>/<set>``: the file
``results/data/<key>/<set>.<lang>`` of a normalised registry dataset, named as its reader names
it (``dev.en-fr``, ``newstest2016.en-ro``, ``train.ro-en``). So the full scale reads each
pair's thesis corpora, and a pair that has no set for a split (Europarl: train only) skips it.

Subword settings (``preprocess.subwords``) are data: ``default`` holds every value, each named
setting (``settings.<name>``: a chapter's, or a dataset's the chapters share) overrides some of
them and lists its pairs, and ``per_pair`` overrides one pair's model (the thesis's 40k merges
for ja-en in Chapter 4). ``joint: pair`` trains one model per pair on both sides of its
training text; ``joint: all`` trains one model on every pair of the setting (a dataset-wide
joint vocabulary). Models live under ``subwords/<setting>/<model>`` and encoded text under
``sub/<setting>/``, so two chapters' models never collide.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.errors import MlrepError
from mlrep.paths import Paths

SUBWORD_KEYS = ("method", "model_type", "vocab_size", "character_coverage", "merges")
JOINT_MODEL = "all"  # the model name of a setting with `joint: all`
LANGUAGE = r"[a-z]{2,3}(?:_[A-Z][a-z]{3})?"


class PlanError(MlrepError):
    """The preprocess section asks for something its own pairs cannot give."""


def moses_language_pattern(section: Mapping[str, Any]) -> str:
    """Wildcard regex of the languages Moses tokenizes: every code but the segmented ones."""
    segmented = "|".join(section["segment"]["languages"])
    if not segmented:
        return LANGUAGE
    return rf"(?!(?:{segmented})(?![A-Za-z_])){LANGUAGE}"


def subword_setting(section: Mapping[str, Any], setting: str) -> dict[str, Any]:
    """The default values overridden by setting `setting` (its pairs and per_pair included)."""
    settings = section["subwords"]["settings"]
    if setting not in settings:
        known = ", ".join(sorted(settings)) or "none"
        raise PlanError(
            f"preprocess.subwords.settings has no {setting!r} (known: {known}); add it to "
            "params.yaml"
        )
    return {**section["subwords"]["default"], **settings[setting]}


def subword_models(section: Mapping[str, Any], setting: str) -> dict[str, list[str]]:
    """Model name → the pairs whose training text it learns from."""
    merged = subword_setting(section, setting)
    pairs = list(merged["pairs"])
    if merged["joint"] == "all":
        return {JOINT_MODEL: pairs}
    return {pair: [pair] for pair in pairs}


def subword_model_of(section: Mapping[str, Any], setting: str, pair: str) -> str:
    """The model of `setting` that encodes `pair`."""
    for model, pairs in subword_models(section, setting).items():
        if pair in pairs:
            return model
    raise PlanError(
        f"preprocess.subwords.settings.{setting} does not list {pair}; add it to its pairs"
    )


def subword_options(section: Mapping[str, Any], setting: str, model: str) -> dict[str, Any]:
    """The `mlrep text train-subwords` options of one model (per_pair applied)."""
    merged = subword_setting(section, setting)
    if model not in subword_models(section, setting):
        raise PlanError(f"preprocess.subwords.settings.{setting} has no model {model!r}")
    options = {key: merged[key] for key in SUBWORD_KEYS}
    options.update(merged.get("per_pair", {}).get(model, {}))
    return options


def splits_of(section: Mapping[str, Any], pair: str) -> list[str]:
    """The section's splits that `pair` has: all, or those its ``corpora`` entry names."""
    sets = section["corpora"].get(pair)
    return [split for split in section["splits"] if not sets or split in sets]


def source(
    section: Mapping[str, Any], paths: Paths, dataset: str, split: str, pair: str, lang: str
) -> tuple[Path, Path]:
    """(the corpus folder a job depends on, the file it reads) for one side of one split."""
    sets = section["corpora"].get(pair) if dataset == section["dataset"] else None
    if not sets:
        folder = paths.dataset(dataset)
        return folder, folder / f"{split}.{pair}.{lang}"
    if split not in sets:
        raise PlanError(
            f"preprocess.corpora.{pair} has no {split} set (it has {', '.join(sets)}); add one "
            "or leave the split out"
        )
    key, name = sets[split].split("/", 1)
    folder = paths.dataset(key)
    return folder, folder / f"{name}.{lang}"


def external_tool(section: Mapping[str, Any], lang: str) -> str | None:
    """``knp`` / ``enju`` when the user's own output replaces GiNZA (ja) / spaCy (en)."""
    if lang == "ja" and section["segment"]["source"] == "knp":
        return "knp"
    if lang == "en" and section["parse"]["source"] == "enju":
        return "enju"
    return None


def inputs(
    section: Mapping[str, Any],
    paths: Paths,
    dataset: str,
    split: str,
    pair: str,
    lang: str,
    analysed: bool = False,
) -> dict[str, str]:
    """A corpus-reading job's inputs: the corpus folder of its file (`source`) and, for the
    segmenting/parsing jobs (`analysed`), the user's KNP/Enju output when `external_tool`
    names one; the job passes that file on as ``--knp`` / ``--enju``."""
    found = {"corpus": str(source(section, paths, dataset, split, pair, lang)[0])}
    tool = external_tool(section, lang) if analysed else None
    if tool:
        found[tool] = str(paths.external_analysis(dataset, tool, f"{split}.{pair}.{lang}"))
    return found


def check(section: Mapping[str, Any]) -> None:
    """Every setting's pairs are preprocessed pairs; per_pair names a model it has."""
    for setting in section["subwords"]["settings"]:
        merged = subword_setting(section, setting)
        missing = [p for p in merged["pairs"] if p not in section["pairs"]]
        if missing:
            raise PlanError(
                f"preprocess.subwords.settings.{setting}: {', '.join(missing)} not in "
                "preprocess.pairs; add them there or drop them here"
            )
        models = subword_models(section, setting)
        stray = [p for p in merged.get("per_pair", {}) if p not in models]
        if stray:
            raise PlanError(
                f"preprocess.subwords.settings.{setting}.per_pair: {', '.join(stray)} is no "
                f"model of this setting (joint: {merged['joint']}; models: {', '.join(models)})"
            )


def targets(section: Mapping[str, Any], paths: Paths) -> list[str]:
    """Tokens of every pair, bunsetsu spans of Japanese (when GiNZA segments it),
    head-finalized English of the parsed pairs, and each subword setting's encoded text."""
    check(section)
    dataset = section["dataset"]
    out = []
    for pair in section["pairs"]:
        for split in splits_of(section, pair):
            for lang in pair.split("-"):
                name = f"{split}.{pair}.{lang}"
                out.append(paths.preprocessed(dataset, "tok") / name)
                if lang == "ja" and "ja" in section["segment"]["languages"]:
                    out.append(paths.preprocessed(dataset, "bunsetsu") / name)
            if pair in section["parse"]["pairs"]:
                out.append(paths.preprocessed(dataset, "hf") / f"{split}.{pair}.en")
    for setting in section["subwords"]["settings"]:
        for pair in subword_setting(section, setting)["pairs"]:
            for split in splits_of(section, pair):
                for lang in pair.split("-"):
                    out.append(paths.subword_encoded(dataset, setting, f"{split}.{pair}.{lang}"))
    return [str(path) for path in out]
