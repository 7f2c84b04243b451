"""``mlrep onealigner …``: the steps that know OneAligner's figures (`languages`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.chapters.onealigner import languages
from mlrep.cliutil import UsageError


def _size(text: str) -> tuple[str, float]:
    """``deu=66.6``: a language code and its size in GB."""
    lang, _, size = text.partition("=")
    try:
        return lang, float(size)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not <language>=<GB>") from None


def _language_points(args: argparse.Namespace) -> int:
    if (args.text is None) == (not args.cc100_gb):
        raise UsageError("give either --text (sizes measured) or --cc100-gb (published sizes)")
    sizes = languages.text_sizes(args.text) if args.text else dict(args.cc100_gb)
    written = languages.write_points(args.metrics, sizes, args.out)
    print(json.dumps({seed: len(found) for seed, found in written.items()}))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    chapter = top.add_parser("onealigner", help="OneAligner paper: its figures' points")
    sub = chapter.add_subparsers(dest="onealigner_command", required=True)
    points = sub.add_parser(
        "language-points",
        parents=[common],
        help="Figure 2: CC-100 size and Top1 (Eng) New-Tatoeba accuracy per language",
    )
    points.add_argument(
        "--metrics", type=Path, nargs="+", required=True, help="Top1 (Eng)'s metrics.json, per seed"
    )
    points.add_argument("--text", type=Path, help="monolingual text folder, sizes measured")
    points.add_argument(
        "--cc100-gb", nargs="*", type=_size, default=[], help="published sizes: <lang>=<GB> ..."
    )
    points.add_argument("--out", type=Path, required=True, help="folder of the runs top1-eng/<X>")
    points.set_defaults(func=_language_points)
