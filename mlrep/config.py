"""Load, validate and resolve ``params.yaml``.

``params.yaml`` holds every knob. A mapping anywhere in it may carry a ``scales:`` block whose
entries (one per scale name) override that mapping's keys when that scale is selected; this
module is the one place where that resolution happens. Validation runs the JSON schema in
``workflow/schemas/params.schema.yaml`` against the resolved config of *every* scale, so a
typo in the ``full`` block is caught on a laptop running ``tiny``, before any job is planned.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from mlrep.errors import MlrepError

SCALES_KEY = "scales"
DEFAULT_SCHEMA = Path(__file__).resolve().parent.parent / "workflow/schemas/params.schema.yaml"


class ConfigError(MlrepError, ValueError):
    """params.yaml (or a --config override) is invalid; the message names key and fix."""


def load_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping, with a clear error naming the file and line on bad syntax."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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


def chapter_names(schema: Mapping[str, Any]) -> list[str]:
    """The chapters the schema allows in ``chapters`` (each has a params.yaml section)."""
    return list(schema["properties"]["chapters"]["items"]["enum"])


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


def validate(resolved: Mapping[str, Any], schema: Mapping[str, Any], label: str) -> None:
    """Raise ConfigError listing every schema violation of one resolved config."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(resolved), key=lambda e: list(map(str, e.path)))
    if errors:
        lines = "\n".join(f"  - {_describe(e)}" for e in errors)
        raise ConfigError(f"{label} is invalid:\n{lines}")


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
        for error in validator.iter_errors(resolve(coerced, name, names)):
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


def load(
    params: Mapping[str, Any], schema_path: Path = DEFAULT_SCHEMA, label: str = "params.yaml"
) -> dict[str, Any]:
    """Validate `params` for every scale and return it resolved for its selected scale.

    `params` is what Snakemake holds as ``config``: params.yaml with ``--config`` overrides.
    """
    schema = load_yaml(schema_path)
    names = scale_names(schema)
    scale = params.get("scale")
    if scale not in names:
        raise ConfigError(
            f"{label} is invalid:\n  - scale: {scale!r} is not allowed; "
            f"allowed values: {', '.join(names)}"
        )
    params = coerce_override_strings(params, schema, names)
    for name in names:
        validate(resolve(params, name, names), schema, f"{label} (scale {name})")
    return resolve(params, scale, names)


def section_hash(config: Mapping[str, Any]) -> str:
    """Short content hash of a (resolved) config mapping, for provenance and report blocks."""
    blob = json.dumps(config, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:12]
