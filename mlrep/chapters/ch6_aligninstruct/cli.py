"""``mlrep ch6 …``: Chapter 6's own verbs. `mlrep.cli` registers the verbs of built chapters
only, so these are reachable once the chapter is marked built in the registry; until then
`register` is exercised by the tests alone.

``instructions`` builds one language pair's instruction sets (`mlrep.llm.instruct.build`)
with the languages named as Chapter 6 names them (`runs.NAMES`); ``mix`` concatenates and
shuffles the sets of one training stage (`mlrep.llm.instruct.mix`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.chapters.ch6_aligninstruct.runs import NAMES
from mlrep.cliutil import add_options, fill, positive_int
from mlrep.errors import did_you_mean
from mlrep.llm.instruct import TYPES, InstructionDataError, InstructSettings, Language


def _language(code: str) -> Language:
    if code not in NAMES:
        raise InstructionDataError(
            f"no Chapter 6 language {code!r}{did_you_mean(code, NAMES)}; "
            f"languages: {', '.join(NAMES)}"
        )
    return Language(code, NAMES[code])


def _instructions(args: argparse.Namespace) -> int:
    from mlrep.llm.instruct import build

    # the chapter's params section holds no instruction settings yet: options, else defaults
    settings = fill(args, InstructSettings, dict, "ch6 instructions")
    counts = build(
        args.out,
        args.types,
        _language(args.source),
        _language(args.target),
        args.source_tokens,
        args.target_tokens,
        args.links,
        args.seed,
        args.source_text,
        args.target_text,
        settings,
        args.mono,
        args.max_pairs,
    )
    print(json.dumps(dict(sorted(counts.items()))))
    return 0


def _mix(args: argparse.Namespace) -> int:
    from mlrep.llm.instruct import mix

    print(json.dumps({"records": mix(args.inputs, args.out, args.seed)}))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    chapter = top.add_parser("ch6", help="Chapter 6: AlignInstruct")
    sub = chapter.add_subparsers(dest="ch6_command", required=True)
    build = sub.add_parser(
        "instructions",
        parents=[common],
        help="one language pair's instruction sets (JSONL) from fast_align's tokens and links",
    )
    build.add_argument("--types", nargs="+", choices=TYPES, required=True, help="the sets")
    build.add_argument("--source", required=True, help="source language code (links' left side)")
    build.add_argument("--target", required=True, help="target language code")
    build.add_argument("--source-tokens", type=Path, required=True, help="tokens fast_align saw")
    build.add_argument("--target-tokens", type=Path, required=True, help="tokens fast_align saw")
    build.add_argument("--links", type=Path, required=True, help="fast_align's Pharaoh links")
    build.add_argument("--source-text", type=Path, help="raw source text the prompts show")
    build.add_argument("--target-text", type=Path, help="raw target text the prompts show")
    build.add_argument(
        "--mono", choices=("source", "target"), default="target", help="side the Mono sets use"
    )
    build.add_argument("--seed", type=int, required=True, help="seeds every random choice")
    build.add_argument(
        "--max-pairs",
        type=positive_int,
        help="build from the first N sentence pairs of the aligned corpus (default: all)",
    )
    build.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    add_options(build, InstructSettings)
    build.set_defaults(func=_instructions)
    mixed = sub.add_parser(
        "mix", parents=[common], help="a training stage's sets concatenated and shuffled (JSONL)"
    )
    mixed.add_argument("--inputs", type=Path, nargs="+", required=True, help="JSONL sets")
    mixed.add_argument("--seed", type=int, required=True, help="the shuffle's seed")
    mixed.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    mixed.set_defaults(func=_mix)
