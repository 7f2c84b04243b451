"""The ``mlrep`` command: the one entry point that Snakemake rules (and users) call.

Each generic area contributes its subcommands through a ``register(subparsers, common)``
function listed in `AREAS`; each built chapter of the registry (`mlrep.chapters`) whose home
has a ``cli`` module adds its own verbs under its rule prefix (``mlrep ch2 train``). Shared
option handling lives in `mlrep.cliutil`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

import yaml

from mlrep import __version__, chapters, cluster, config_checks
from mlrep import config as cfg
from mlrep.align import cli as align_cli
from mlrep.cliutil import common_options
from mlrep.data import cli as data_cli
from mlrep.data import registry_cli
from mlrep.embed import cli as embed_cli
from mlrep.errors import MlrepError
from mlrep.evaluate import cli as evaluate_cli
from mlrep.llm import cli as llm_cli
from mlrep.nmt import cli as nmt_cli
from mlrep.report import cli as report_cli
from mlrep.text import cli as text_cli

Register = Callable[[argparse._SubParsersAction, argparse.ArgumentParser], None]


def _config_check(args: argparse.Namespace) -> int:
    params = cfg.load_yaml(args.params)
    sources = [cfg.Source(str(args.params), params)]
    if args.scale:  # blamed on the flag, not the file, when it names no scale
        sources.append(cfg.Source(f"--scale {args.scale}", {"scale": args.scale}))
    merged = {**params, "scale": args.scale} if args.scale else params
    resolved = config_checks.load_checked(merged, label=str(args.params), sources=sources)
    if args.show:
        print(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True), end="")
    else:
        print(f"{args.params}: valid for every scale; selected scale {resolved['scale']}")
    return 0


def _register_config(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    config = top.add_parser("config", help="params.yaml")
    sub = config.add_subparsers(dest="config_command", required=True)
    check = sub.add_parser("check", parents=[common], help="validate params.yaml for every scale")
    check.add_argument("--show", action="store_true", help="print the resolved config")
    check.set_defaults(func=_config_check)


AREAS: tuple[Register, ...] = (
    _register_config,
    data_cli.register,
    registry_cli.register,
    cluster.register,
    align_cli.register,
    text_cli.register,
    report_cli.register,
    evaluate_cli.register,
    nmt_cli.register,
    embed_cli.register,
    llm_cli.register,
)


def _chapter_verbs() -> list[Register]:
    """``mlrep <prefix> …`` of every built chapter whose home has verbs (``cli.register``)."""
    found = []
    for chapter in chapters.built():
        try:
            module = importlib.import_module(f"{chapter.home}.cli")
        except ModuleNotFoundError as exc:
            if exc.name != f"{chapter.home}.cli":
                raise
            continue
        found.append(module.register)
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlrep", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"mlrep {__version__}")
    top = parser.add_subparsers(dest="command", required=True)
    common = common_options()
    for register in (*AREAS, *_chapter_verbs()):
        register(top, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except MlrepError as exc:
        print(f"mlrep: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
