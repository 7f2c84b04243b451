"""``mlrep report …``: build the report, check the reference numbers, show the ledger."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from mlrep.cliutil import add_options, resolved_params, settings_from
from mlrep.paths import Paths
from mlrep.report import build as report_build
from mlrep.report import claims, dvc_plots, fill, reference, summary, tables
from mlrep.report.metrics import Results


def _paths(args: argparse.Namespace) -> Paths:
    return Paths.from_config(resolved_params(args.params))


def _report(args: argparse.Namespace) -> tuple[str, dict]:
    """(scale, the ``report`` section) as the options and the params file give it."""
    scale, settings = settings_from(args, fill.ReportSettings, ("report",))
    return scale, asdict(settings)


def _build(args: argparse.Namespace) -> int:
    scale, section = _report(args)
    explicit = args.results and args.reference and args.out
    paths = None if explicit else _paths(args)
    summary = report_build.build(
        results_dir=args.results or paths.results,
        reference_dir=args.reference or paths.reference,
        out_dir=args.out or paths.reports,
        scale=scale,
        config=section,
    )
    print(json.dumps(summary, indent=1))
    return 0


def _check(args: argparse.Namespace) -> int:
    """Load every definition against the published tables and list the inconsistent cells."""
    reference_dir = args.reference or _paths(args).reference
    published = reference.load_all(reference_dir)
    definitions = tables.load(published)
    nothing_measured = Results(scale="published")
    filled = {t: fill.fill(d, published[t], nothing_measured) for t, d in definitions.items()}
    for tid, table in filled.items():
        for flag in table.flags:
            print(f"{tid}: {flag}")
    verdicts = claims.ledger(claims.load(), filled)
    wrong = [v.claim["id"] for v in verdicts if v.published_holds is False]
    print(
        f"{len(published)} published tables, {len(definitions)} defined, "
        f"{sum(len(t.flags) for t in filled.values())} inconsistent printed aggregates; "
        f"{len(verdicts)} claims, {len(wrong)} contradicted by the published numbers"
        + (f": {', '.join(wrong)}" if wrong else "")
    )
    return 1 if wrong or len(definitions) != len(published) else 0


def _summary(args: argparse.Namespace) -> int:
    scale, section = _report(args)
    paths = None if args.results and args.reference else _paths(args)
    written = summary.write(
        results_dir=args.results or paths.results,
        reference_dir=args.reference or paths.reference,
        chapter=args.chapter,
        scale=scale,
        bootstrap=fill.bootstrap_of(section),
        out=args.out,
    )
    print(f"{args.out}: {summary.count(written)} values of {args.chapter} at scale {scale}")
    return 0


def _dvc_template(args: argparse.Namespace) -> int:
    print(dvc_plots.install(args.project))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    report = top.add_parser("report", help="thesis tables, figures, claims ledger, HTML report")
    sub = report.add_subparsers(dest="report_command", required=True)

    locations = argparse.ArgumentParser(add_help=False)
    locations.add_argument("--results", type=Path, help="results folder (default: paths.results)")
    locations.add_argument(
        "--reference", type=Path, help="published numbers (default: <paths.reports>/reference)"
    )

    bootstrap = argparse.ArgumentParser(add_help=False)
    add_options(bootstrap, fill.ReportSettings)

    build = sub.add_parser(
        "build",
        parents=[common, locations, bootstrap],
        help="write reports/: tables, figures, index.html",
    )
    build.add_argument("--out", type=Path, help="reports folder (default: paths.reports)")
    build.set_defaults(func=_build)

    check = sub.add_parser(
        "check",
        parents=[common, locations],
        help="check table and claim definitions against the published numbers",
    )
    check.set_defaults(func=_check)

    chapter_summary = sub.add_parser(
        "summary",
        parents=[common, locations, bootstrap],
        help="one chapter's headline numbers, its tables' averages and its claims' sides and "
        "verdicts, as JSON (DVC metrics, dvc exp show)",
    )
    chapter_summary.add_argument("--chapter", required=True, help="e.g. ch8_layernorm")
    chapter_summary.add_argument("--out", type=Path, required=True, help="JSON file to write")
    chapter_summary.set_defaults(func=_summary)

    template = sub.add_parser(
        "dvc-template",
        help="make this checkout's `dvc plots show` pages offline: write the HTML template "
        "into .dvc/ and name it in .dvc/config.local",
    )
    template.add_argument(
        "--project", type=Path, default=Path("."), help="the DVC project root (default: .)"
    )
    template.set_defaults(func=_dvc_template)
