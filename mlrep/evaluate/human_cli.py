"""``mlrep eval human-export | human-aggregate``: blind sheets for judges, and their scores as
each system's metrics (`mlrep.evaluate.human`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import UsageError, add_options, scale_of, settings_from
from mlrep.evaluate import human


def systems_option(pairs: list[str]) -> dict[str, Path]:
    """``NAME=FILE`` options as a mapping; a name given twice is a mistake, not an override."""
    out: dict[str, Path] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--systems {pair!r}: write NAME=FILE (mass=hyp/mass.zh)")
        if name in out:
            raise UsageError(f"--systems: {name!r} is given twice; name each system once")
        out[name] = Path(path)
    return out


def _export(args: argparse.Namespace) -> int:
    _, settings = settings_from(args, human.HumanSettings, ("evaluate.human",))
    outputs = systems_option(args.systems)
    key = human.export(args.source, outputs, args.direction, settings, args.sheet, args.key)
    summary = {"sheet": str(args.sheet), "key": str(args.key), "items": len(key.labels)}
    print(json.dumps(summary | {"systems": len(key.systems)}))
    return 0


def _aggregate(args: argparse.Namespace) -> int:
    judged = human.aggregate(args.sheets, args.key)
    judged.write_runs(args.out, args.section, args.run_group, args.seed, scale_of(args))
    print(json.dumps({"judges": judged.judges, "pending": judged.pending} | judged.metrics))
    return 0


def register_human(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the two subcommands to ``mlrep eval``."""
    exp = sub.add_parser(
        "human-export",
        parents=[common],
        help="blind sheet (source + shuffled anonymous outputs) and its key, kept apart",
    )
    exp.add_argument("--source", type=Path, required=True, help="test source sentences")
    exp.add_argument(
        "--systems",
        nargs="+",
        required=True,
        metavar="NAME=FILE",
        help="each system's detokenized output of the test source, line by line",
    )
    exp.add_argument("--direction", required=True, help="<src>-<tgt> (ja-zh): the metrics' suffix")
    exp.add_argument("--sheet", type=Path, required=True, help="the judges' CSV")
    exp.add_argument(
        "--key", type=Path, required=True, help="label -> system JSON: keep it from the judges"
    )
    add_options(exp, human.HumanSettings)
    exp.set_defaults(func=_export)

    agg = sub.add_parser(
        "human-aggregate",
        parents=[common],
        help="mean 1-5 adequacy and fluency per system from returned sheets (metrics.json)",
    )
    agg.add_argument(
        "--sheets", type=Path, nargs="+", required=True, help="returned sheets, one per judge"
    )
    agg.add_argument("--key", type=Path, required=True, help="the key exported with the sheet")
    agg.add_argument("--section", required=True, help="the chapter (params.yaml section)")
    agg.add_argument(
        "--run-group", required=True, help="runs are <run-group>/<system> (the --out folder's)"
    )
    agg.add_argument("--seed", type=int, required=True, help="the seed of the judged runs")
    agg.add_argument(
        "--out", type=Path, required=True, help="folder of <system>/seed<seed>/metrics.json"
    )
    agg.set_defaults(func=_aggregate)
