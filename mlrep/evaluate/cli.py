"""``mlrep eval …``: the evaluation suite's subcommands (each module adds its own parser here)."""

from __future__ import annotations

import argparse

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
