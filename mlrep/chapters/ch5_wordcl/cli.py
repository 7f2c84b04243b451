"""``mlrep ch5 …``: Chapter 5's own verbs (its NMT steps are ``mlrep nmt``'s)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import scale_of
from mlrep.report.metrics import UNTRAINED_SEED, write

SECTION = "ch5_wordcl"


def _corpora(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch5_wordcl import corpora

    row = corpora.corpus_row(args.w2w, args.fa_run, args.fa)
    run = corpora.run_name(args.pair)
    write(args.out, SECTION, run, UNTRAINED_SEED, scale_of(args), row)
    print(json.dumps({"run": run, **row}))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    chapter = top.add_parser("ch5", help="Chapter 5: word-level contrastive learning")
    sub = chapter.add_subparsers(dest="ch5_command", required=True)
    corpora = sub.add_parser(
        "corpora",
        parents=[common],
        help="Table 5.1's row of a pair: training and OD sizes, links of each kind (metrics.json)",
    )
    corpora.add_argument("--pair", required=True, help="the language pair, en-xx")
    corpora.add_argument(
        "--w2w", type=Path, required=True, help="stats.json of the training split's w2w links"
    )
    corpora.add_argument(
        "--fa-run", type=Path, required=True, help="stats.json of the +od fast_align run"
    )
    corpora.add_argument(
        "--fa", type=Path, required=True, help="stats.json of that run's 1-to-1 links"
    )
    corpora.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    corpora.set_defaults(func=_corpora)
