"""Building blocks shared by the subcommands of every area (data, preprocess, align, …).

Flags mirror params.yaml: ``--valid-fraction`` sets the key ``valid_fraction`` of the section a
subcommand reads. A flag left out takes its value from ``--params`` (default ``params.yaml``,
resolved at its own scale); rules pass every value explicitly (`flags_from`), so
``snakemake --config`` overrides reach the command unchanged.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import shlex
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mlrep import config as cfg
from mlrep.errors import MlrepError


class UsageError(MlrepError):
    """A command-line mistake."""


Settings = TypeVar("Settings")
# field metadata that `add_options` hands to argparse as they are
ARGPARSE_METADATA = ("type", "nargs", "metavar", "choices")


def flags_from(section: Mapping[str, Any]) -> str:
    """Render a config section as flags (``max_chars: 400`` → ``--max-chars 400``).

    Lists become repeated values; an empty list is left out (no option takes zero values), so
    the verb reads the key's empty list from the params file. Rules use this so the rule text
    never repeats the section's keys and the flag names stay the config's names.
    """
    parts: list[str] = []
    for key, value in section.items():
        if value == []:
            continue
        parts.append("--" + key.replace("_", "-"))
        parts.extend(shlex.quote(str(v)) for v in (value if isinstance(value, list) else [value]))
    return " ".join(parts)


def common_options() -> argparse.ArgumentParser:
    """Parent parser with the options every config-reading subcommand takes."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--params",
        type=Path,
        default=Path("params.yaml"),
        help="params file for options not given (default: params.yaml)",
    )
    parent.add_argument("--scale", help="scale recorded in provenance (default: the params file's)")
    return parent


def resolved_params(params_file: Path) -> dict[str, Any]:
    """A params file validated and resolved at its own scale."""
    if not params_file.exists():
        raise UsageError(f"{params_file} not found: pass every option explicitly or --params FILE")
    return cfg.load(cfg.load_yaml(params_file), label=str(params_file))


def scale_of(args: argparse.Namespace) -> str:
    """``--scale`` (rules pass it), else the params file's: what provenance records."""
    return args.scale or resolved_params(args.params)["scale"]


def option_names(cls: type, skip: Sequence[str] = ()) -> tuple[str, ...]:
    """The params.yaml keys a settings dataclass reads: its fields, less those in `skip` (set by
    the verb itself, like a seed)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in skip)


def omissible_names(cls: type) -> tuple[str, ...]:
    """The fields a params section may leave out (``metadata["omissible"]``): left out, they
    keep their defaults, so a setting one chapter adds does not become a key of every other
    chapter that reads the same dataclass."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("omissible"))


def _option_type(annotation: Any) -> dict[str, Any]:
    """argparse keywords for a field annotation: `boolean` for bool (so ``--fp16 false`` works
    as `flags_from` renders it), ``nargs`` for lists, ``choices`` for a ``Literal``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        choices = typing.get_args(annotation)
        return {"choices": choices, "type": type(choices[0])}
    if origin in (list, tuple):
        (item, *_) = typing.get_args(annotation)
        return {"nargs": "+", **_option_type(item)}
    return {"type": boolean if annotation is bool else annotation}


def add_options(parser: argparse.ArgumentParser, cls: type, skip: Sequence[str] = ()) -> None:
    """One ``--kebab-name`` option per field of the settings dataclass `cls` (less `skip`).

    The field is the one spelling of a setting: its name is the params.yaml key and the
    option, its annotation the option's type (``metadata["type"]`` a stricter parser, like
    `positive_int`; ``nargs`` and ``metavar`` where a list's length is not "one or more") and
    its ``metadata["help"]`` the help; an option left out is read from the params file
    (`settings_from`), so none is required. Each option it adds names its dataclass
    (``action.settings``), so tests can tell it from an option spelled by hand.
    """
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        kind = _option_type(hints[field.name])
        kind.update({k: field.metadata[k] for k in ARGPARSE_METADATA if k in field.metadata})
        action = parser.add_argument(
            "--" + field.name.replace("_", "-"), help=field.metadata.get("help"), **kind
        )
        action.settings = cls  # type: ignore[attr-defined]


def settings_from(
    args: argparse.Namespace,
    cls: type[Settings],
    sections: Sequence[str],
    skip: Sequence[str] = (),
    **given: Any,
) -> tuple[str, Settings]:
    """(scale, settings): each field from its explicit option, else from the first params
    section (dotted path) that has the key; `given` fills the fields the verb sets itself and
    those in `skip` keep their defaults (as `add_options` leaves them out)."""
    params = functools.cache(lambda: resolved_params(args.params))

    def fallback() -> Mapping[str, Any]:
        return collections.ChainMap(*(_node(params(), dotted) for dotted in sections))

    where = f"{args.params}: {', '.join(sections)}"
    settings = fill(args, cls, fallback, where, skip, **given)
    return args.scale or params()["scale"], settings


def fill(
    args: argparse.Namespace,
    cls: type[Settings],
    fallback: Callable[[], Mapping[str, Any]],
    where: str,
    skip: Sequence[str] = (),
    **given: Any,
) -> Settings:
    """The settings `cls`: each field from its explicit option, else from the mapping
    `fallback` returns (called only when an option is left out: a verb given every option
    reads no params file), else, for an `omissible_names` field, its default; `given` and
    `skip` as for `settings_from`. For verbs whose
    fallback is computed (a run's values, a subword model's), not a params section."""
    keys = option_names(cls, skip=(*skip, *given))
    values = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    if len(values) < len(keys):
        defaults = fallback()
        absent = [k for k in keys if k not in values and k not in defaults]
        missing = [k for k in absent if k not in omissible_names(cls)]
        if missing:
            raise UsageError(f"{where}: no {', '.join(map(repr, missing))}")
        values |= {k: defaults[k] for k in keys if k not in values and k not in absent}
    return cls(**values, **given)


def _node(resolved: Mapping[str, Any], dotted: str) -> Any:
    node: Any = resolved
    for key in dotted.split("."):
        node = node[key]
    return node


def boolean(text: str) -> bool:
    """``true``/``false`` (any case), as `flags_from` renders YAML booleans: the one parser of
    boolean options, so every command accepts the same spellings."""
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def probability(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not in [0, 1]")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value
