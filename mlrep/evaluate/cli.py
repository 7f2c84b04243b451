"""``mlrep eval …``: the evaluation suite's subcommands (each module adds its own parser here)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.evaluate.adequacy_cli import register_adequacy
from mlrep.evaluate.analysis_cli import register_analyses
from mlrep.evaluate.cases_cli import register_cases
from mlrep.evaluate.human_cli import register_human
from mlrep.evaluate.suite_cli import register_suite


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    evaluate = top.add_parser(
        "eval", help="evaluation: retrieval, mining, off-target, probes, human scores, adequacy"
    )
    sub = evaluate.add_subparsers(dest="eval_command", required=True)
    register_analyses(sub)
    register_suite(sub, common)
    register_human(sub, common)
    register_adequacy(sub, common)
    register_cases(sub, common)
    stand_in = sub.add_parser(
        "comet-stand-in",
        parents=[common],
        help="a tiny random COMET checkpoint in COMET's layout (small scales; scores mean nothing)",
    )
    stand_in.add_argument("--out", type=Path, required=True, help="checkpoint folder to write")
    stand_in.add_argument("--seed", type=int, default=0, help="seeds the random weights")
    stand_in.add_argument(
        "--text",
        type=Path,
        nargs="*",
        default=[],
        help="text files whose lines train its tokenizer (default: a few built-in sentences)",
    )
    stand_in.set_defaults(func=_comet_stand_in)


def _comet_stand_in(args: argparse.Namespace) -> int:
    from mlrep.evaluate import comet_stand_in
    from mlrep.evaluate.comet import CometError
    from mlrep.io import read_lines

    lines = [line for path in args.text for line in read_lines(path, CometError) if line.strip()]
    comet_stand_in.write(args.out, args.seed, lines=lines or comet_stand_in.TEXT)
    print(json.dumps({"checkpoint": str(args.out), "seed": args.seed}))
    return 0
