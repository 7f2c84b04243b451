"""Load, validate and resolve ``params.yaml``.

``params.yaml`` holds every knob. A mapping anywhere in it may carry a ``scales:`` block whose
entries (one per scale name) override that mapping's keys when that scale is selected; this
module is the one place where that resolution happens. Validation runs the JSON schema in
``workflow/schemas/params.schema.yaml`` against the resolved config of *every* scale, so a
typo in the ``full`` block is caught on a laptop running ``tiny``, before any job is planned.
A schema-valid config then has its cross-references checked (a run dataset is one of the
section's datasets, a dataset folder exists or can be built), which the schema cannot express.
Each problem is reported under the layer that introduced it: params.yaml, a ``--configfile``
or a ``--config`` value.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from mlrep.data import registry
from mlrep.errors import MlrepError, did_you_mean
from mlrep.paths import Paths

SCALES_KEY = "scales"
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~8x faster
DEFAULT_SCHEMA = Path(__file__).resolve().parent.parent / "workflow/schemas/params.schema.yaml"


class ConfigError(MlrepError, ValueError):
    """params.yaml, a --configfile or a --config value is invalid; the message names key and fix."""


@dataclass(frozen=True)
class Source:
    """One layer of the config as the user gave it: params.yaml, a --configfile, a --config."""

    label: str
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Problem:
    """One violation: `text` for the user; `ident` (key and offending value) recognises it in
    the config of each layer, to tell which layer introduced it."""

    ident: str
    text: str


def load_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping, with a clear error naming the file and line on bad syntax."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at the top level")
    return data


def scale_names(schema: Mapping[str, Any]) -> list[str]:
    """The scales the schema allows for the top-level ``scale`` key."""
    return list(schema["properties"]["scale"]["enum"])


def resolve(params: Mapping[str, Any], scale: str, scales: Iterable[str]) -> dict[str, Any]:
    """Return `params` with every ``scales:`` block applied for `scale` and then removed."""
    known = list(scales)

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, list):
            return [walk(item, f"{path}[{i}]") for i, item in enumerate(node)]
        if not isinstance(node, Mapping):
            return copy.deepcopy(node)
        overrides = node.get(SCALES_KEY) or {}
        if not isinstance(overrides, Mapping):
            raise ConfigError(f"{path}{SCALES_KEY}: expected a mapping from scale name to keys")
        for name, block in overrides.items():
            if name not in known:
                raise ConfigError(
                    f"{path}{SCALES_KEY}.{name}: unknown scale; allowed values: {', '.join(known)}"
                )
            if not isinstance(block, Mapping):
                raise ConfigError(f"{path}{SCALES_KEY}.{name}: expected a mapping of overrides")
        merged = {k: v for k, v in node.items() if k != SCALES_KEY}
        merged = _deep_merge(merged, overrides.get(scale) or {})
        return {k: walk(v, f"{path}{k}.") for k, v in merged.items()}

    return walk(params, "")


def _deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _format_path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    """One line naming the key, the offending value and what is allowed instead."""
    key = _format_path(error.absolute_path)
    value = error.instance
    kind = error.validator
    if kind == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value)
        return f"{key}: {value!r} is not allowed; allowed values: {allowed}"
    if kind == "type":
        return f"{key}: {value!r} has the wrong type; expected {error.validator_value}"
    if kind in {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}:
        bound = {
            "minimum": ">=",
            "exclusiveMinimum": ">",
            "maximum": "<=",
            "exclusiveMaximum": "<",
        }[kind]
        return f"{key}: {value!r} is out of range; must be {bound} {error.validator_value}"
    if kind == "additionalProperties":
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        extra = sorted(set(value) - set(error.schema.get("properties", {})))
        return f"{key}: unknown key(s) {', '.join(extra)}; allowed keys: {allowed}"
    return f"{key}: {error.message}"


def _schema_problem(error: jsonschema.ValidationError) -> Problem:
    key = _format_path(error.absolute_path)
    if error.validator == "additionalProperties":  # the unknown keys, not the whole mapping
        what: Any = sorted(set(error.instance) - set(error.schema.get("properties", {})))
    elif error.validator == "required":
        what = error.message
    else:
        what = error.instance
    ident = f"{key} {error.validator} {json.dumps(what, sort_keys=True, default=str)}"
    return Problem(ident, _describe(error))


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
    for name, spec in pre["datasets"].items():
        here = f"preprocess.datasets.{name}"
        for pair, sets in spec["corpora"].items():  # pair -> split -> "<key>/<set>"
            for split, source in sets.items():
                yield f"{here}.corpora.{pair}.{split}", source.split("/")[0]
        if set(spec["pairs"]) - set(spec["corpora"]):  # the other pairs come from its corpus
            yield f"{here}.corpus", spec["corpus"]


def _references(
    config: Mapping[str, Any], entries: Mapping[str, registry.Dataset]
) -> list[Problem]:
    """What the schema cannot see: names that must be keys elsewhere in the config or in the
    dataset registry. Unchecked, a rule file fails on them with a bare KeyError, or Snakemake
    with a missing input far from the key that named it."""
    ems, ch8, data = config["ch2_ems"], config["ch8_layernorm"], config["data"]
    datasets, baselines = list(ch8["datasets"]), list(ems["baselines"])
    pre = config["preprocess"]
    settings, preprocessed = list(pre["subwords"]["settings"]), list(pre["datasets"])
    problems = []
    for name, spec in ch8["datasets"].items():
        key = f"ch8_layernorm.datasets.{name}.subwords"
        problems += _unknown(key, spec["subwords"], settings, "preprocess.subwords.settings")
    for name, spec in pre["subwords"]["settings"].items():
        key = f"preprocess.subwords.settings.{name}.dataset"
        problems += _unknown(key, spec["dataset"], preprocessed, "preprocess.datasets")
    problems += _unknown(
        "align.dataset", config["align"]["dataset"], preprocessed, "preprocess.datasets"
    )
    for i, name in enumerate(ch8["run_datasets"]):
        key = f"ch8_layernorm.run_datasets[{i}]"
        problems += _unknown(key, name, datasets, "ch8_layernorm.datasets")
    for i, run in enumerate(ch8["extra_runs"]):  # <dataset>/<system>/seed<N>
        key = f"ch8_layernorm.extra_runs[{i}]"
        problems += _unknown(key, run.split("/")[0], datasets, "ch8_layernorm.datasets")
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


def _problems(
    params: Mapping[str, Any],
    schema: Mapping[str, Any],
    scale: str,
    entries: Mapping[str, registry.Dataset],
) -> list[Problem]:
    """Every schema violation of `params` at `scale`; with none, every broken reference
    (against the dataset registry's `entries`)."""
    names = scale_names(schema)
    try:
        resolved = resolve(params, scale, names)
    except ConfigError as exc:  # a malformed scales block
        return [Problem(str(exc), str(exc))]
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(resolved), key=lambda e: list(map(str, e.path)))
    return [_schema_problem(e) for e in errors] or _references(resolved, entries)


_SCALAR_TYPES = {"integer": int, "number": (int, float), "boolean": bool}


def _typed(text: str, expected: Any) -> Any:
    """`text` read as YAML if that gives the scalar type the schema expects, else None."""
    wanted = [expected] if isinstance(expected, str) else list(expected)
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    for name in wanted:
        kind = _SCALAR_TYPES.get(name)
        if kind is None or (isinstance(value, bool) and name != "boolean"):
            continue
        if isinstance(value, kind):
            return value
    return None


def _set_if_equal(node: Any, path: list[Any], old: str, new: Any) -> bool:
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        if node[path[-1]] != old:
            return False
    except (KeyError, IndexError, TypeError):
        return False
    node[path[-1]] = new
    return True


def coerce_override_strings(
    params: Mapping[str, Any], schema: Mapping[str, Any], names: list[str]
) -> dict[str, Any]:
    """Give ``--config`` values the scalar types the schema asks for.

    Snakemake reads a nested ``--config key={...}`` value with YAML's BaseLoader, so every
    scalar in it arrives as a string (``seeds: [1, 10]`` becomes ``['1', '10']``). A string the
    schema wants as integer, number or boolean, and that YAML reads as one, is converted where
    it sits in `params` (the section itself or one of its ``scales:`` blocks); anything else is
    left for validation to report.
    """
    coerced = copy.deepcopy(dict(params))
    validator = jsonschema.Draft202012Validator(schema)
    for name in names:
        try:
            resolved = resolve(coerced, name, names)
        except ConfigError:  # left for validation to report
            continue
        for error in validator.iter_errors(resolved):
            if error.validator != "type" or not isinstance(error.instance, str):
                continue
            value = _typed(error.instance, error.validator_value)
            if value is None:
                continue
            path = list(error.absolute_path)
            candidates = [path] + [
                [*path[:i], SCALES_KEY, name, *path[i:]] for i in range(len(path) - 1, -1, -1)
            ]
            for candidate in candidates:
                if _set_if_equal(coerced, candidate, error.instance, value):
                    break
    return coerced


def _blame(
    problems: list[Problem],
    scale: str,
    params: Mapping[str, Any],
    sources: Sequence[Source],
    schema: Mapping[str, Any],
    entries: Mapping[str, registry.Dataset],
) -> dict[str, list[Problem]] | None:
    """`problems` grouped under the layer each one comes from, in the layers' order.

    The layers are merged one by one and each prefix is checked: a problem is the doing of the
    layer from which on it is found in every prefix (the last to set the bad value). None
    without layers, or with layers that do not merge to `params` (nothing to blame them on).
    """
    names = scale_names(schema)
    merged: dict[str, Any] = {}
    found = []
    for source in sources:
        merged = _deep_merge(merged, source.values)
        checked = coerce_override_strings(merged, schema, names)
        found.append({p.ident for p in _problems(checked, schema, scale, entries)})
    if not sources or merged != params:
        return None
    blamed: dict[int, list[Problem]] = {}
    for problem in problems:
        layer = len(sources) - 1
        while layer > 0 and problem.ident in found[layer - 1]:
            layer -= 1
        blamed.setdefault(layer, []).append(problem)
    return {sources[layer].label: blamed[layer] for layer in sorted(blamed)}


def load(
    params: Mapping[str, Any],
    schema_path: Path = DEFAULT_SCHEMA,
    label: str = "params.yaml",
    sources: Sequence[Source] = (),
) -> dict[str, Any]:
    """Validate `params` for every scale and return it resolved for its selected scale.

    `params` is what Snakemake holds as ``config``: params.yaml with ``--configfile`` and
    ``--config`` overrides. Given the `sources` it was merged from (`snakemake_sources`), a
    problem is reported under the one that introduced it, so an override's typo never blames
    params.yaml; otherwise everything is reported under `label`.
    """
    schema = load_yaml(schema_path)
    names = scale_names(schema)
    checked = coerce_override_strings(params, schema, names)
    # the user's own entries (data.registry) count as registry keys in the cross-key checks
    entries = registry.load(checked.get("data", {}).get("registry") or None)
    for name in names:
        problems = _problems(checked, schema, name, entries)
        if problems:
            blamed = _blame(problems, name, params, sources, schema, entries) or {label: problems}
            raise ConfigError(
                "\n".join(
                    f"{where} (scale {name}) is invalid:\n"
                    + "\n".join(f"  - {p.text}" for p in listed)
                    for where, listed in blamed.items()
                )
            )
    return resolve(checked, checked["scale"], names)


def _shown(path: Path) -> str:
    """`path` relative to the working directory where it lies below it, else absolute."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def snakemake_sources(settings: Any, configfile: str) -> list[Source]:
    """The layers Snakemake merged into ``config``, in its order, named as the user gave them.

    `settings` is Snakemake 9's ``workflow.config_settings``: the Snakefile's `configfile`
    comes first (unless ``--replace-workflow-config``), then each ``--configfile``
    (``configfiles``), then each ``--config KEY=VALUE`` (``config``). `load` only uses them
    to name the layer of a problem, and only when they merge to the config it checks.
    """
    from snakemake.common.configfile import load_configfile

    sources = []
    if not settings.replace_workflow_config and os.path.exists(configfile):
        sources.append(Source(configfile, load_configfile(configfile)))
    for path in settings.configfiles:
        sources.append(Source(f"--configfile {_shown(Path(path))}", load_configfile(path)))
    for key, value in settings.config.items():
        shown = "..." if isinstance(value, Mapping | list) else value
        sources.append(Source(f"--config {key}={shown}", {key: value}))
    return sources


def section_hash(config: Mapping[str, Any]) -> str:
    """Short content hash of a (resolved) config mapping, for provenance and report blocks."""
    blob = json.dumps(config, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:12]
