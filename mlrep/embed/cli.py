"""``mlrep embed …``: prepare data, train and evaluate the EMS sentence encoders (Chapter 2).

Flags are the keys of params.yaml ``ch2_ems`` (``--ffn-dim`` ↔ ``ffn_dim``); a flag left out is
taken from the run named by ``--run`` in the params file, so ``mlrep embed train --run
no-xtr`` trains Table 2.14's – L_XTR row exactly as the workflow does.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from mlrep.cliutil import positive_int, resolved_params
from mlrep.embed import runs
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, atomic_write_text
from mlrep.provenance import record
from mlrep.text.cli import boolean

_TYPES: dict[str, Any] = {
    "layers": positive_int,
    "heads": positive_int,
    "dim": positive_int,
    "ffn_dim": positive_int,
    "la_dim": positive_int,
    "cntrs_dim": positive_int,
    "dropout": float,
    "attention_dropout": float,
    "generative": str,
    "contrastive": boolean,
    "projection": boolean,
    "language_embedding": boolean,
    "share_embeddings": boolean,
    "margin": float,
    "temperature": float,
    "steps": positive_int,
    "batch_size": positive_int,
    "lr": float,
    "warmup": int,
    "weight_decay": float,
    "checkpoint_every": positive_int,
    "max_pairs": int,
    "heldout_pairs": int,
    "vocab_size": positive_int,
    "lowercase": boolean,
    "max_tokens": positive_int,
    "encode_batch_size": positive_int,
    "tatoeba_pairs": int,
}


class MissingInputError(MlrepError):
    """A step's input folder or file is absent; the message names the step that makes it."""


def _section(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    resolved = resolved_params(args.params)
    return args.scale or resolved["scale"], resolved[runs.SECTION]


def _scale(args: argparse.Namespace) -> str:
    """``--scale`` (rules pass it), else the params file's: provenance names the scale."""
    return args.scale or _section(args)[0]


def _values(args: argparse.Namespace, keys: tuple[str, ...], defaults) -> dict[str, Any]:
    """Explicit flags, else the params file's values (`defaults` is called only if needed)."""
    explicit = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    if len(explicit) == len(keys):
        return explicit
    return {k: explicit.get(k, v) for k, v in defaults().items() if k in keys}


def _require(path: Path, made_by: str) -> Path:
    if not path.exists():
        raise MissingInputError(f"{path} not found: run `{made_by}` first")
    return path


def _prepare(args: argparse.Namespace) -> int:
    from mlrep.embed import data

    values = _values(args, runs.PREPARE_KEYS, lambda: _section(args)[1]["prepare"])
    settings = data.PrepareSettings(**values, threads=args.threads)
    for source in args.sources:
        _require(source, "snakemake " + str(source))
    with atomic_directory(args.out) as staging:
        info = data.prepare(list(args.sources), staging, settings)
        record(staging, "embed prepare", {"scale": _scale(args), runs.SECTION: {"prepare": values}})
    print(json.dumps({"out": str(args.out), "languages": len(info["languages"]) - 1}))
    return 0


def _model_config(data_dir: Path, values: dict[str, Any]):
    from mlrep.embed.model import EmsConfig

    info = json.loads(_require(data_dir / "languages.json", "mlrep embed prepare").read_text())
    return EmsConfig(
        vocab_size=info["vocab_size"],
        languages=len(info["languages"]),
        max_tokens=info["max_tokens"],
        **{k: values[k] for k in (*runs.MODEL_KEYS, *runs.OBJECTIVE_KEYS)},
    )


def _train(args: argparse.Namespace) -> int:
    from mlrep.embed import train
    from mlrep.embed.data import PairArrays

    values = _values(args, runs.RUN_KEYS, lambda: runs.run_values(_section(args)[1], args.run))
    config = _model_config(args.data, values)
    settings = train.TrainSettings(
        **{k: values[k] for k in runs.TRAIN_KEYS}, seed=args.seed, threads=args.threads
    )
    train_data = PairArrays.load(_require(args.data / "train.npz", "mlrep embed prepare"))
    valid_path = args.data / "valid.npz"
    valid = PairArrays.load(valid_path) if valid_path.exists() else None
    summary = train.run(
        config, settings, train_data, valid, args.out, log=lambda m: print(m, flush=True)
    )
    record(
        args.out,
        "embed train",
        {"scale": _scale(args), runs.SECTION: {"run": args.run, "seed": args.seed, **values}},
    )
    print(json.dumps(summary))
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    import torch

    from mlrep.embed import evaluate, train
    from mlrep.embed.data import PairArrays, Tokenizer

    torch.set_num_threads(args.threads)
    values = _values(args, runs.EVALUATE_KEYS, lambda: _section(args)[1]["evaluate"])
    batch_size = values["encode_batch_size"]
    model = train.load_model(_require(args.model, "mlrep embed train")).to(train.device())
    info = json.loads(_require(args.data / "languages.json", "mlrep embed prepare").read_text())
    summary = json.loads((args.model.parent / train.SUMMARY_FILE).read_text())
    metrics: dict[str, float] = {"final_loss": summary["final_loss"]}
    for key in ("valid_loss", "sec_per_1k_steps"):
        if summary.get(key) is not None:
            metrics[key] = summary[key]
    metrics["parameters_m"] = summary["parameters"]["encoder"] / 1e6
    test_path = args.data / "test.npz"
    if test_path.exists():
        test = PairArrays.load(test_path)
        metrics.update(evaluate.heldout(model, test, info["languages"], batch_size))
    if args.tatoeba is not None:
        tokenizer = Tokenizer(args.data / "spm.model", info["lowercase"], info["max_tokens"])
        encode = evaluate.encoder(model, tokenizer, batch_size)
        folder = _require(args.tatoeba, "snakemake " + str(args.tatoeba))
        metrics.update(evaluate.tatoeba(encode, folder, values["tatoeba_pairs"]))
    scale = _scale(args)
    result = {
        "chapter": runs.SECTION,
        "run": args.run,
        "seed": args.seed,
        "scale": scale,
        "metrics": metrics,
    }
    atomic_write_text(args.out, json.dumps(result, indent=1, sort_keys=True) + "\n")
    # the run folder's frozen config: what trained it (written by train) plus how it was scored
    frozen = args.model.parent / "config.yaml"
    trained = yaml.safe_load(frozen.read_text()) if frozen.exists() else {}
    section = {**trained.get(runs.SECTION, {}), "evaluate": values, "tatoeba": str(args.tatoeba)}
    record(args.out.parent, "embed evaluate", {"scale": scale, runs.SECTION: section})
    print(
        json.dumps(
            {
                k: round(v, 2)
                for k, v in metrics.items()
                if not k.startswith(("tatoeba_", "heldout_"))
            }
        )
    )
    return 0


def _add_keys(parser: argparse.ArgumentParser, keys: tuple[str, ...]) -> None:
    for key in keys:
        parser.add_argument("--" + key.replace("_", "-"), type=_TYPES[key])


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    embed = top.add_parser("embed", help="sentence encoders: EMS and its variants (Chapter 2)")
    sub = embed.add_subparsers(dest="embed_command", required=True)

    prepare = sub.add_parser(
        "prepare", parents=[common], help="SentencePiece + token ids of English-centric pairs"
    )
    prepare.add_argument("--sources", type=Path, nargs="+", required=True, help="text folders")
    prepare.add_argument("--out", type=Path, required=True, help="output folder (atomic)")
    prepare.add_argument("--threads", type=positive_int, default=1)
    _add_keys(prepare, runs.PREPARE_KEYS)
    prepare.set_defaults(func=_prepare)

    train = sub.add_parser("train", parents=[common], help="train one run (resumes)")
    train.add_argument("--data", type=Path, required=True, help="the prepare step's folder")
    train.add_argument("--out", type=Path, required=True, help="run folder (model.pt, …)")
    train.add_argument("--run", required=True, help="a ch2_ems.runs name or grid/<key>-<value>")
    train.add_argument("--seed", type=int, required=True)
    train.add_argument("--threads", type=positive_int, default=1)
    _add_keys(train, runs.RUN_KEYS)
    train.set_defaults(func=_train)

    evaluate = sub.add_parser("evaluate", parents=[common], help="metrics.json of one run")
    evaluate.add_argument("--model", type=Path, required=True, help="a run's model.pt")
    evaluate.add_argument("--data", type=Path, required=True, help="the prepare step's folder")
    evaluate.add_argument("--tatoeba", type=Path, help="normalised Tatoeba folder")
    evaluate.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    evaluate.add_argument("--run", required=True)
    evaluate.add_argument("--seed", type=int, required=True)
    _add_keys(evaluate, runs.EVALUATE_KEYS)
    evaluate.add_argument("--threads", type=positive_int, default=1)
    evaluate.set_defaults(func=_evaluate)
