"""``mlrep eval off-target | probe | svcca``: the translation-model analyses of Chapter 8.

Defaults are the thesis's settings; rules pass every value from params.yaml explicitly. Each
command prints its JSON summary, and ``--out`` (where taken) is written atomically.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import fraction, positive_float, positive_int
from mlrep.evaluate import offtarget
from mlrep.evaluate.offtarget import OffTargetError
from mlrep.evaluate.probe import ProbeSettings, probe
from mlrep.evaluate.states import open_states
from mlrep.evaluate.svcca import DEFAULT_VARIANCE, GROUPS, encoder_svcca
from mlrep.io import atomic_write_text, read_lines


def _write(out: Path, result: dict) -> None:
    atomic_write_text(out, json.dumps(result, indent=1, ensure_ascii=False) + "\n")


def _off_target(args: argparse.Namespace) -> int:
    lines = read_lines(args.hyp, OffTargetError)
    result = offtarget.score(lines, args.lang, args.model, args.model_path).as_dict()
    if args.out:
        _write(args.out, result)
    print(json.dumps(result))
    return 0


def _probe(args: argparse.Namespace) -> int:
    settings = ProbeSettings(args.epochs, args.lr, args.batch_sentences, args.seed)
    train, test = open_states(args.train), open_states(args.test)
    try:
        result = probe(train, test, settings)
    finally:
        train.close()
        test.close()
    result["settings"] = vars(settings) | {"train": str(args.train), "test": str(args.test)}
    _write(args.out, result)
    print(json.dumps({"src": result["src"], "tgt": result["tgt"]}))
    return 0


def _svcca(args: argparse.Namespace) -> int:
    a, b = open_states(args.a), open_states(args.b)
    try:
        result = encoder_svcca(a, b, args.variance, args.groups)
    finally:
        a.close()
        b.close()
    result |= {"a": str(args.a), "b": str(args.b)}
    _write(args.out, result)
    print(json.dumps({"svcca": result["svcca"]}))
    return 0


def register_analyses(sub: argparse._SubParsersAction) -> None:
    """Add the three subcommands to the ``eval`` group."""
    off = sub.add_parser(
        "off-target", help="percentage of hypotheses not in the target language (fastText LID)"
    )
    off.add_argument("--hyp", type=Path, required=True, help="detokenized hypotheses, one a line")
    off.add_argument("--lang", required=True, help="target language code of the corpus (zh, de…)")
    off.add_argument("--model", choices=offtarget.MODELS, default="lite")
    off.add_argument("--model-path", type=Path, help="lid.176.bin (required with --model full)")
    off.add_argument("--out", type=Path, help="also write the JSON here")
    off.set_defaults(func=_off_target)

    prb = sub.add_parser("probe", help="layer-wise language recognition (token accuracy, %%)")
    prb.add_argument("--train", type=Path, required=True, help="states npz to train on (valid)")
    prb.add_argument("--test", type=Path, required=True, help="states npz to test on")
    prb.add_argument("--epochs", type=positive_int, default=3)
    prb.add_argument("--lr", type=positive_float, default=1e-3)
    prb.add_argument("--batch-sentences", type=positive_int, default=64)
    prb.add_argument("--seed", type=int, default=1)
    prb.add_argument("--out", type=Path, required=True)
    prb.set_defaults(func=_probe)

    cca = sub.add_parser("svcca", help="encoder layer-wise SVCCA between two states files")
    cca.add_argument("--a", type=Path, required=True, help="states npz (e.g. en→xx inputs)")
    cca.add_argument("--b", type=Path, required=True, help="states npz, same sentences (xx→en)")
    cca.add_argument("--variance", type=fraction, default=DEFAULT_VARIANCE)
    cca.add_argument(
        "--groups",
        choices=GROUPS,
        default="direction",
        help="one SVCCA per direction, averaged (the thesis), or all sentences pooled",
    )
    cca.add_argument("--out", type=Path, required=True)
    cca.set_defaults(func=_svcca)
