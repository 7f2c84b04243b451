"""``mlrep llm …``: stand-in bases, LoRA training, greedy decoding, layer-wise cosine.

Each verb's settings are its dataclass's options (`mlrep.llm.settings`); one left out is read
from the params section ``--section`` names, and without ``--section`` it keeps its default
(the LoRA and decoding settings have the spec's; the stand-in's shape has none).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from mlrep.cliutil import add_options, fill, positive_int, scale_of, settings_from
from mlrep.io import atomic_write_text, read_lines
from mlrep.llm.settings import (
    ON_STALE,
    CosineSettings,
    GenerateSettings,
    LoraSettings,
    StandInSettings,
)
from mlrep.provenance import record

Settings = TypeVar("Settings")


def _log(message: str) -> None:
    print(message, flush=True)


def _settings(args: argparse.Namespace, cls: type[Settings]) -> tuple[str, Settings]:
    """(scale, settings): options over ``--section``, else over the dataclass's defaults."""
    if args.section:
        return settings_from(args, cls, (args.section,))
    empty: Mapping[str, Any] = {}
    return scale_of(args), fill(args, cls, lambda: empty, "options (no --section given)")


def _config(args: argparse.Namespace, scale: str, settings: Any, **inputs: Any) -> dict:
    """What provenance records: the settings and the inputs (paths as text), under the
    section's name."""
    recorded = {**asdict(settings), **{k: _text(v) for k, v in inputs.items()}}
    return {"scale": scale, args.section or "llm": recorded}


def _text(value: Any) -> Any:
    """Paths as strings, in lists too; other values as they are (YAML-safe)."""
    if isinstance(value, list | tuple):
        return [_text(v) for v in value]
    return str(value) if isinstance(value, Path) else value


def _stand_in(args: argparse.Namespace) -> int:
    """A tiny BLOOM-class causal LM pretrained on leak-free text (`mlrep.llm.stand_in`)."""
    from mlrep.llm import stand_in

    scale, settings = _settings(args, StandInSettings)
    config = _config(args, scale, settings, seed=args.seed, text=args.text)
    summary = stand_in.pretrain(
        args.text,
        settings,
        args.out,
        args.seed,
        args.threads,
        lambda staging: record(staging, "llm stand-in", config),
        _log,
    )
    print(json.dumps({k: summary[k] for k in ("final_loss", "steps", "parameters")}))
    return 0


def _lora_train(args: argparse.Namespace) -> int:
    """Train (or resume) one LoRA adapter (`mlrep.llm.lora`)."""
    from mlrep.llm import lora

    scale, settings = _settings(args, LoraSettings)
    summary = lora.run(
        args.base,
        args.train,
        settings,
        args.out,
        args.seed,
        args.threads,
        args.init_adapter,
        _log,
        args.on_stale,
    )
    config = _config(
        args, scale, settings, base=args.base, train=args.train,
        init_adapter=args.init_adapter, seed=args.seed,
    )  # fmt: skip
    record(args.out, "llm lora-train", config)
    print(json.dumps({k: summary[k] for k in ("final_loss", "updates", "parameters")}))
    return 0


def _generate(args: argparse.Namespace) -> int:
    """Greedy hypotheses, one line per prompt (`mlrep.llm.generate`)."""
    from mlrep.llm import generate

    _, settings = _settings(args, GenerateSettings)
    lines = generate.run(args.base, args.adapter, args.prompts, settings, args.out)
    print(json.dumps({"lines": lines, "out": str(args.out)}))
    return 0


def _cosine(args: argparse.Namespace) -> int:
    """Per-layer mean cosine of parallel sentences, as JSON (`mlrep.llm.cosine`)."""
    from mlrep.llm import cosine
    from mlrep.llm.generate import system

    _, settings = _settings(args, CosineSettings)
    base = system(args.base, args.adapter, settings.precision)
    if len(args.src) != len(args.tgt):
        raise cosine.CosineError(
            f"{len(args.src)} --src files for {len(args.tgt)} --tgt files: give each source "
            "file's translations, in the same order"
        )
    src = [line for path in args.src for line in read_lines(path, cosine.CosineError)]
    tgt = [line for path in args.tgt for line in read_lines(path, cosine.CosineError)]
    values = cosine.layer_cosines(base, src, tgt, settings.batch_size, settings.max_tokens)
    result = {"layers": list(range(1, len(values) + 1)), "cosine": values, "pairs": len(src)}
    atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    llm = top.add_parser("llm", help="causal LMs: stand-in bases, LoRA tuning, decoding, cosine")
    sub = llm.add_subparsers(dest="llm_command", required=True)
    base = argparse.ArgumentParser(add_help=False, parents=[common])
    base.add_argument("--section", help="params.yaml section of settings not given as options")

    stand_in = sub.add_parser(
        "stand-in",
        parents=[base],
        help="a tiny BLOOM-class causal LM with its own BPE, pretrained; a hub-style folder",
    )
    stand_in.add_argument(
        "--text", type=Path, nargs="+", required=True,
        help="text files, or folders of *.txt (`mlrep data monolingual`'s)",
    )  # fmt: skip
    stand_in.add_argument("--out", type=Path, required=True, help="the model folder to write")
    stand_in.add_argument("--seed", type=int, required=True)
    stand_in.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    add_options(stand_in, StandInSettings)
    stand_in.set_defaults(func=_stand_in)

    train = sub.add_parser(
        "lora-train", parents=[base], help="train (or resume) a LoRA adapter on JSONL examples"
    )
    train.add_argument("--base", required=True, help="hub id or stand-in folder of the base")
    train.add_argument(
        "--train", type=Path, nargs="+", required=True,
        help='JSONL files of {"input": ..., "output": ...} records',
    )  # fmt: skip
    train.add_argument(
        "--init-adapter", type=Path,
        help="start from this adapter (a curriculum's previous stage) instead of a fresh one",
    )  # fmt: skip
    train.add_argument(
        "--out", type=Path, required=True, help="run folder: adapter/, train.json, checkpoints/"
    )
    train.add_argument("--seed", type=int, required=True)
    train.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    train.add_argument(
        "--on-stale",
        choices=ON_STALE,
        default="refuse",
        help="checkpoints of a run with other settings or data: refuse them, or train anew "
        "(restart: the workflow's reruns)",
    )
    add_options(train, LoraSettings)
    train.set_defaults(func=_lora_train)

    generate = sub.add_parser(
        "generate", parents=[base], help="greedy hypotheses, cut at the first newline"
    )
    generate.add_argument("--base", required=True, help="hub id or stand-in folder of the base")
    generate.add_argument("--adapter", type=Path, help="LoRA adapter folder (none: the base)")
    generate.add_argument(
        "--prompts", type=Path, required=True,
        help="a .jsonl of records with an input, or a text file of one prompt a line",
    )  # fmt: skip
    generate.add_argument("--out", type=Path, required=True, help="hypotheses, one a line")
    add_options(generate, GenerateSettings)
    generate.set_defaults(func=_generate)

    cosine = sub.add_parser(
        "cosine", parents=[base], help="per-layer mean cosine of parallel sentences' states"
    )
    cosine.add_argument("--base", required=True, help="hub id or stand-in folder of the base")
    cosine.add_argument("--adapter", type=Path, help="LoRA adapter folder (none: the base)")
    cosine.add_argument(
        "--src", type=Path, nargs="+", required=True, help="one sentence a line (files joined)"
    )
    cosine.add_argument(
        "--tgt", type=Path, nargs="+", required=True, help="their translations, file by file"
    )
    cosine.add_argument("--out", type=Path, required=True, help="JSON: layers 1..L and cosines")
    add_options(cosine, CosineSettings)
    cosine.set_defaults(func=_cosine)
