"""What `snakemake preprocess` builds, where its corpus files come from, and which subword
model each chapter's setting trains.

Kept out of the rule files so the rules stay declarations and the plan is unit-tested.

Datasets (``preprocess.datasets``): each names an output folder results/preprocess/<name>, the
pairs it preprocesses, and where their files come from: by default the folder
results/data/<corpus> with files ``{split}.{pair}.{lang}`` (the tiny corpus); ``corpora``
overrides that per pair and split with ``<key>/<set>``, the file
``results/data/<key>/<set>.<lang>`` of a normalised registry dataset, named as its reader names
it (``dev.en-fr``, ``newstest2016.en-ro``, ``train.ro-en``). So one pair can come from
different corpora in different datasets (Chapter 8's Europarl en-de and Chapter 6's OPUS-100
en-de), and a pair that has no set for a split (Europarl: train only) skips it. ``steps`` adds
named steps per language before Moses tokenization (Romanian for Chapter 5 only).

Subword settings (``preprocess.subwords``) are data: ``default`` holds every value, each named
setting (``settings.<name>``: a chapter's, or a dataset's the chapters share) names its
``dataset``, overrides some values and may list some of its pairs (default: all), and
``per_pair`` overrides one pair's model (the thesis's 40k merges for ja-en in Chapter 4).
``joint: pair`` trains one model per pair on both sides of its training text; ``joint: all``
trains one model on every pair of the setting that has training text (a dataset-wide joint
vocabulary; test-only pairs, like OPUS-100's zero-shot sets, are encoded with it). Models live
under ``subwords/<setting>/<model>`` and encoded text under ``sub/<setting>/``, so two
chapters' models never collide.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.cliutil import option_names
from mlrep.errors import MlrepError
from mlrep.paths import Paths
from mlrep.text.subwords import SubwordSettings

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


def dataset(section: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The settings of preprocessed dataset `name`."""
    datasets = section["datasets"]
    if name not in datasets:
        raise PlanError(
            f"preprocess.datasets has no {name!r} (known: {', '.join(sorted(datasets))}); add "
            "it to params.yaml"
        )
    return datasets[name]


def subword_setting(section: Mapping[str, Any], setting: str) -> dict[str, Any]:
    """The default values overridden by setting `setting` (per_pair included); its pairs are
    those it lists, or every pair of its dataset."""
    settings = section["subwords"]["settings"]
    if setting not in settings:
        known = ", ".join(sorted(settings)) or "none"
        raise PlanError(
            f"preprocess.subwords.settings has no {setting!r} (known: {known}); add it to "
            "params.yaml"
        )
    merged = {**section["subwords"]["default"], **settings[setting]}
    merged.setdefault("pairs", dataset(section, merged["dataset"])["pairs"])
    return merged


def subword_models(section: Mapping[str, Any], setting: str) -> dict[str, list[str]]:
    """Model name → the pairs whose training text it learns from."""
    merged = subword_setting(section, setting)
    trained = [p for p in merged["pairs"] if "train" in splits_of(section, merged["dataset"], p)]
    if merged["joint"] == "all":
        return {JOINT_MODEL: trained}
    return {pair: [pair] for pair in trained}


def subword_model_of(section: Mapping[str, Any], setting: str, pair: str) -> str:
    """The model of `setting` that encodes `pair` (a joint model: every pair of the setting)."""
    merged = subword_setting(section, setting)
    if pair in merged["pairs"]:
        if merged["joint"] == "all":
            return JOINT_MODEL
        if pair in subword_models(section, setting):
            return pair
    raise PlanError(
        f"preprocess.subwords.settings.{setting} does not list {pair}, or has no training text "
        "for it; add it to its pairs"
    )


def subword_options(section: Mapping[str, Any], setting: str, model: str) -> dict[str, Any]:
    """The `mlrep text train-subwords` options of one model (per_pair applied)."""
    if model not in subword_models(section, setting):
        raise PlanError(f"preprocess.subwords.settings.{setting} has no model {model!r}")
    return pair_options(section, setting, model)


def pair_options(section: Mapping[str, Any], setting: str, pair: str) -> dict[str, Any]:
    """The `mlrep text train-subwords` options of a setting for a model of `pair` (per_pair
    applied where it names the pair), also where the model learns from other text than the
    setting's dataset (Chapter 4's joint BPE on each pair's pre-training text)."""
    merged = subword_setting(section, setting)
    options = {key: merged[key] for key in option_names(SubwordSettings)}
    options.update(merged.get("per_pair", {}).get(pair, {}))
    return options


def splits_of(section: Mapping[str, Any], name: str, pair: str) -> list[str]:
    """The section's splits that `pair` has in dataset `name`: all, or those its
    ``corpora`` entry names."""
    sets = dataset(section, name)["corpora"].get(pair)
    return [split for split in section["splits"] if not sets or split in sets]


def source(
    section: Mapping[str, Any], paths: Paths, name: str, split: str, pair: str, lang: str
) -> tuple[Path, Path]:
    """(the corpus folder a job depends on, the file it reads) for one side of one split."""
    settings = dataset(section, name)
    sets = settings["corpora"].get(pair)
    if not sets:
        folder = paths.dataset(settings["corpus"])
        return folder, folder / f"{split}.{pair}.{lang}"
    if split not in sets:
        raise PlanError(
            f"preprocess.datasets.{name}.corpora.{pair} has no {split} set (it has "
            f"{', '.join(sets)}); add one or leave the split out"
        )
    key, set_name = sets[split].split("/", 1)
    folder = paths.dataset(key)
    return folder, folder / f"{set_name}.{lang}"


def steps(section: Mapping[str, Any], name: str, lang: str) -> list[str]:
    """The named steps dataset `name` runs on `lang` before Moses tokenization."""
    return list(dataset(section, name)["steps"].get(lang, []))


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
    """Every setting's pairs are pairs of its dataset; per_pair names a model it has."""
    for setting in section["subwords"]["settings"]:
        merged = subword_setting(section, setting)
        missing = [
            p for p in merged["pairs"] if p not in dataset(section, merged["dataset"])["pairs"]
        ]
        if missing:
            raise PlanError(
                f"preprocess.subwords.settings.{setting}: {', '.join(missing)} not in "
                f"preprocess.datasets.{merged['dataset']}.pairs; add them there or drop them here"
            )
        models = subword_models(section, setting)
        stray = [p for p in merged.get("per_pair", {}) if p not in models]
        if stray:
            raise PlanError(
                f"preprocess.subwords.settings.{setting}.per_pair: {', '.join(stray)} is no "
                f"model of this setting (joint: {merged['joint']}; models: {', '.join(models)})"
            )


def targets(section: Mapping[str, Any], paths: Paths, name: str) -> list[str]:
    """Of dataset `name`: tokens of every pair, bunsetsu spans of Japanese (when GiNZA
    segments it), head-finalized English of the parsed pairs, and the encoded text of each
    subword setting on it."""
    check(section)
    out = []
    for pair in dataset(section, name)["pairs"]:
        for split in splits_of(section, name, pair):
            for lang in pair.split("-"):
                file = f"{split}.{pair}.{lang}"
                out.append(paths.preprocessed(name, "tok") / file)
                if lang == "ja" and "ja" in section["segment"]["languages"]:
                    out.append(paths.preprocessed(name, "bunsetsu") / file)
            if pair in section["parse"]["pairs"]:
                out.append(paths.preprocessed(name, "hf") / f"{split}.{pair}.en")
    for setting, named in section["subwords"]["settings"].items():
        if named["dataset"] == name:
            out.extend(encoded for _, encoded in encoded_files(section, paths, setting))
    return [str(path) for path in out]


def encoded_files(
    section: Mapping[str, Any], paths: Paths, setting: str
) -> list[tuple[Path, Path]]:
    """Every file a subword setting encodes, as (the corpus file, its encoded file), pair by
    pair, split by split. The two are line-aligned: the encoded file holds one line per line
    of the first ``max_lines`` corpus lines, so a reader pairs raw references with their
    subwords (`mlrep.nmt.data.sets_of`)."""
    merged = subword_setting(section, setting)
    name = merged["dataset"]
    return [
        (
            source(section, paths, name, split, pair, lang)[1],
            paths.subword_encoded(name, setting, f"{split}.{pair}.{lang}"),
        )
        for pair in merged["pairs"]
        for split in splits_of(section, name, pair)
        for lang in pair.split("-")
    ]


def corpus_folders(section: Mapping[str, Any], paths: Paths, setting: str) -> list[str]:
    """The corpus folders (results/data/<key>) a subword setting's files are read from: what a
    job reading its encoded files and their raw lines depends on besides them."""
    return list(dict.fromkeys(str(raw.parent) for raw, _ in encoded_files(section, paths, setting)))
