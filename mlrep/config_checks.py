"""What the schema cannot see in a config: names that must be keys elsewhere in it or in the
dataset registry (a run dataset among the datasets, a baseline among the baselines, a corpus a
registry key with a reader or an existing folder).

Apart from `mlrep.config` on purpose: the Snakefile and `mlrep config check` run these checks
before anything is planned; the jobs' own config loads do not, so their code digests
(`mlrep.closure`) do not depend on the registry and a registry edit reruns no training.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from mlrep.config import DEFAULT_SCHEMA, Checks, Problem, Source, load
from mlrep.data import registry
from mlrep.errors import did_you_mean
from mlrep.paths import Paths

_LIST_REGISTRY = "`mlrep data list` shows the registry's keys"


def _unknown(key: str, value: str, allowed: Sequence[str], where: str) -> list[Problem]:
    """A problem if `value` is not one of `allowed` (the keys of `where`), else none."""
    if value in allowed:
        return []
    listed = f"allowed values: {', '.join(allowed)}" if len(allowed) <= 20 else _LIST_REGISTRY
    return [
        Problem(
            f"{key} {value}",
            f"{key}: {value!r} is not in {where}{did_you_mean(value, allowed)}; {listed}",
        )
    ]


def dataset_references(config: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(key, value) of every setting that names a dataset folder results/data/<value>: what
    the chapters' rule files read (their CHAPTER_DATA) and the preprocessing inputs."""
    ems, pre = config["ch2_ems"], config["preprocess"]
    for i, key in enumerate(ems["sources"]):
        yield f"ch2_ems.sources[{i}]", key
    yield "ch2_ems.tatoeba", ems["tatoeba"]
    for name, spec in ems["benchmarks"].items():
        if spec["dataset"]:  # "": not run
            yield f"ch2_ems.benchmarks.{name}.dataset", spec["dataset"]
    lealla = config["ch3_lealla"]
    for i, key in enumerate(lealla["sources"]):
        yield f"ch3_lealla.sources[{i}]", key
    for key in ("tatoeba", "un", "bucc"):
        yield f"ch3_lealla.{key}", lealla[key]
    aligner = config["onealigner"]
    for key in ("en_data", "ne_data", "tatoeba", "new_tatoeba", "bucc"):
        yield f"onealigner.{key}", aligner[key]
    yield "onealigner.monolingual.corpus", aligner["monolingual"]["corpus"]
    yield "ch5_wordcl.monolingual.corpus", config["ch5_wordcl"]["monolingual"]["corpus"]
    for name, spec in pre["datasets"].items():
        here = f"preprocess.datasets.{name}"
        for pair, sets in spec["corpora"].items():  # pair -> split -> "<key>/<set>"
            for split, source in sets.items():
                yield f"{here}.corpora.{pair}.{split}", source.split("/")[0]
        if set(spec["pairs"]) - set(spec["corpora"]):  # the other pairs come from its corpus
            yield f"{here}.corpus", spec["corpus"]


# the chapters whose NMT datasets are read through the preprocessing's subword settings
NMT_SECTIONS = ("ch7_interlingua", "ch8_layernorm")


def _references(
    config: Mapping[str, Any], entries: Mapping[str, registry.Dataset]
) -> list[Problem]:
    """What the schema cannot see: names that must be keys elsewhere in the config or in the
    dataset registry. Unchecked, a rule file fails on them with a bare KeyError, or Snakemake
    with a missing input far from the key that named it."""
    ems, data = config["ch2_ems"], config["data"]
    baselines = list(ems["baselines"])
    pre = config["preprocess"]
    settings, preprocessed = list(pre["subwords"]["settings"]), list(pre["datasets"])
    problems = []
    for section in NMT_SECTIONS:
        for name, spec in config[section]["datasets"].items():
            key = f"{section}.datasets.{name}.subwords"
            problems += _unknown(key, spec["subwords"], settings, "preprocess.subwords.settings")
    for name, spec in pre["subwords"]["settings"].items():
        key = f"preprocess.subwords.settings.{name}.dataset"
        problems += _unknown(key, spec["dataset"], preprocessed, "preprocess.datasets")
    problems += _unknown(
        "align.dataset", config["align"]["dataset"], preprocessed, "preprocess.datasets"
    )
    for pair, names in config["align"]["od_corpora"].items():
        for name in names:
            key = f"align.od_corpora.{pair}"
            problems += _unknown(key, name, preprocessed, "preprocess.datasets")
    for section in NMT_SECTIONS:
        nmt = config[section]
        datasets, where = list(nmt["datasets"]), f"{section}.datasets"
        for i, name in enumerate(nmt["run_datasets"]):
            problems += _unknown(f"{section}.run_datasets[{i}]", name, datasets, where)
        for i, run in enumerate(nmt.get("extra_runs", [])):  # <dataset>/<system>/seed<N>
            problems += _unknown(f"{section}.extra_runs[{i}]", run.split("/")[0], datasets, where)
    for i, name in enumerate(ems["baseline_runs"]):
        problems += _unknown(f"ch2_ems.baseline_runs[{i}]", name, baselines, "ch2_ems.baselines")
    for name in ems["stand_ins"]:
        problems += _unknown("ch2_ems.stand_ins", name, baselines, "ch2_ems.baselines")
    for key in data["datasets"]:
        problems += _unknown("data.datasets", key, list(entries), "the dataset registry")
    downloads = [k for k, d in entries.items() if d.access == "download"]
    for key in data["download"]["mirrors"]:
        where = "the registry's downloaded datasets"
        problems += _unknown("data.download.mirrors", key, downloads, where)
    release = config["ch5_wordcl"]["mbart"]["release"]
    if release:  # "": the stand-in
        where = "the registry's downloaded datasets"
        problems += _unknown("ch5_wordcl.mbart.release", release, downloads, where)
    paths = Paths.from_config(config)
    built = [paths.tiny_corpus.name, *(k for k, d in entries.items() if d.reader)]
    for key, value in dataset_references(config):
        if value in built or paths.dataset(value).is_dir():
            continue
        problems.append(
            Problem(
                f"{key} {value}",
                f"{key}: {value!r} is no dataset{did_you_mean(value, built)}: not the embedded "
                f"corpus ({paths.tiny_corpus.name}), not a registry key with a reader, and no "
                f"folder {paths.dataset(value)} exists; {_LIST_REGISTRY}",
            )
        )
    return problems


def cross_keys(params: Mapping[str, Any]) -> Checks:
    """The checks against the registry, the user's own entries (``data.registry``) included."""
    entries = registry.load(params.get("data", {}).get("registry") or None)
    return lambda config: _references(config, entries)


def load_checked(
    params: Mapping[str, Any],
    schema_path: Path = DEFAULT_SCHEMA,
    label: str = "params.yaml",
    sources: Sequence[Source] = (),
) -> dict[str, Any]:
    """`mlrep.config.load` with the cross-key checks: what runs before a workflow is planned."""
    return load(params, schema_path, label, sources, checks=cross_keys(params))
