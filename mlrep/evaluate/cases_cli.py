"""``mlrep eval case``: one test sentence and each system's translation of it, as the texts of
a case table (`mlrep.evaluate.cases`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import UsageError, add_options, fill, scale_of
from mlrep.evaluate import cases
from mlrep.evaluate.human_cli import systems_option


def _case(args: argparse.Namespace) -> int:
    settings = fill(args, cases.CaseSettings, dict, "mlrep eval case")
    published = None
    if settings.line == 0:
        if not (args.published and args.row):
            raise UsageError("--line 0 finds the published reference: give --published and --row")
        published = cases.published_text(args.published, args.row, args.column)
    texts = cases.write_case(
        args.out,
        args.section,
        args.run,
        args.seed,
        scale_of(args),
        settings.line,
        args.source,
        args.reference,
        systems_option(args.systems),
        published,
    )
    print(json.dumps({"out": str(args.out), "texts": len(texts)}))
    return 0


def register_cases(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the subcommand to ``mlrep eval``."""
    case = sub.add_parser(
        "case",
        parents=[common],
        help="one test sentence, its reference and each system's output (metrics.json texts)",
    )
    case.add_argument("--source", type=Path, required=True, help="test source sentences")
    case.add_argument("--reference", type=Path, required=True, help="test references")
    case.add_argument(
        "--systems",
        nargs="+",
        default=[],
        metavar="NAME=FILE",
        help="each system's output of the test source, line by line (text case_<NAME>)",
    )
    case.add_argument("--published", type=Path, help="the published table (CSV), for --line 0")
    case.add_argument("--row", help="the label of its reference row, for --line 0")
    case.add_argument("--column", default="Text", help="the column holding the texts")
    case.add_argument("--section", required=True, help="the chapter (params.yaml section)")
    case.add_argument("--run", required=True, help="the case's run (its metrics.json's)")
    case.add_argument("--seed", type=int, required=True, help="the seed of the systems' outputs")
    case.add_argument("--out", type=Path, required=True, help="the metrics.json to write")
    add_options(case, cases.CaseSettings)
    case.set_defaults(func=_case)
