"""``mlrep eval adequacy``: reference-free adequacy of many systems in one process, the encoder
loaded once (`mlrep.evaluate.adequacy`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import add_options, scale_of, settings_from
from mlrep.evaluate import adequacy


def _adequacy(args: argparse.Namespace) -> int:
    from mlrep.embed import teacher
    from mlrep.provenance import record
    from mlrep.text.detokenize import detokenize

    systems = [adequacy.parse_system(values) for values in args.system]
    for system in systems:  # every file checked before the encoder is loaded
        adequacy.aligned(system)
    _, settings = settings_from(args, adequacy.EncoderSettings, (f"{args.section}.adequacy",))
    encoder = teacher.load(
        settings.loader, settings.encoder, settings.batch_size, args.device, args.threads
    )

    def prepare(lines: list[str], lang: str) -> list[str]:
        return detokenize(lines, lang, "subword_nmt", args.backend, args.segmented)

    scored = adequacy.score(systems, adequacy.Embeddings(encoder.encode, prepare))
    name = f"{settings.loader}:{settings.encoder} ({encoder.library})"
    scale = scale_of(args)
    adequacy.write_runs(scored, args.out, args.section, args.run_group, scale, name)
    record(args.out, "eval adequacy", {"scale": scale, "encoder": name})
    print(json.dumps({s.system.run: round(s.value, 2) for s in scored}, ensure_ascii=False))
    return 0


def register_adequacy(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``adequacy`` to ``mlrep eval``."""
    parser = sub.add_parser(
        "adequacy",
        parents=[common],
        help="cosine of source and output sentence embeddings ×100 per system (metrics.json)",
    )
    parser.add_argument(
        "--system",
        nargs=5,
        action="append",
        required=True,
        metavar=("RUN", "SEED", "SRC-TGT", "SOURCE", "OUTPUT"),
        help="a system: its run and seed, direction, source words and output words (repeat)",
    )
    parser.add_argument("--section", required=True, help="the chapter (params.yaml section)")
    parser.add_argument(
        "--run-group", required=True, help="runs are <run-group>/<RUN> (the --out folder's)"
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="folder of <RUN>/seed<SEED>/metrics.json"
    )
    parser.add_argument(
        "--backend",
        choices=("mosestokenizer", "sacremoses"),
        required=True,
        help="the Moses tokenizer the words were made with (detokenized with it)",
    )
    parser.add_argument(
        "--segmented", nargs="*", default=[], help="languages word-segmented instead of Moses"
    )
    parser.add_argument("--device", default="cpu", help="the torch encoders' device")
    parser.add_argument("--threads", type=int, default=1, help="the numpy encoder's threads")
    add_options(parser, adequacy.EncoderSettings)
    parser.set_defaults(func=_adequacy)
