"""``mlrep embed align-finetune`` and ``align-evaluate``: OneAligner (Niu et al. 2022) on any
Hugging Face encoder, and ``new-tatoeba``, which cuts its New-Tatoeba evaluation set. Flags are
the params.yaml keys of the section ``--section`` names (`AlignFinetuneSettings`,
`AlignEvaluateSettings`, `AlignBuccSettings`, `NewTatoebaSettings`); a flag left out is read from
``<section>.<key>`` of ``--params``."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from mlrep.cliutil import UsageError, add_options, positive_int, settings_from
from mlrep.embed import settings as embed_settings
from mlrep.embed.settings import NORMS
from mlrep.provenance import record

if TYPE_CHECKING:
    from mlrep.embed.hf_encoder import Encoder
    from mlrep.report.metrics import Scores

CHAPTER = "onealigner"
GRID_KEYS = ("similarity", "norm")  # the placeholders of --grid's --run and --out


def _log(message: str) -> None:
    print(message, flush=True)


def _finetune(args: argparse.Namespace) -> int:
    from mlrep.embed import align_data, align_train, hf_encoder

    scale, settings = settings_from(
        args,
        embed_settings.AlignFinetuneSettings,
        (args.section,),
        seed=args.seed,
        threads=args.threads,
    )
    pool = align_data.concatenate(
        [align_data.pair_sentences(args.data, args.split, pair) for pair in settings.pairs]
    )
    count = hf_encoder.tokenizer_only(args.encoder).content_tokens
    kept, sampled = align_data.sample_then_filter(
        pool, settings.budget, settings.min_tokens, count, settings.seed
    )
    clean = align_data.remove_overlap(kept, align_data.evaluation_sentences(args.exclude))
    counts = {
        "pool": len(pool),
        "sampled": sampled,
        "kept_after_filter": len(kept),
        "removed_as_overlap": len(kept) - len(clean),
        "trained_on": len(clean),
    }
    summary = align_train.run(settings, args.encoder, clean, args.out, counts, log=_log)
    recorded = {
        **asdict(settings),
        "encoder": str(args.encoder),
        "data": str(args.data),
        "split": args.split,
        "exclude": [str(folder) for folder in args.exclude],
    }
    record(args.out, "embed align-finetune", {"scale": scale, args.section: recorded})
    print(json.dumps(summary))
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    import torch

    from mlrep.device import visible
    from mlrep.embed import align_eval, benchmarks, hf_encoder
    from mlrep.io import atomic_write_text
    from mlrep.report.metrics import Scores

    torch.set_num_threads(args.threads)
    scale, settings = settings_from(args, embed_settings.AlignEvaluateSettings, (args.section,))
    if args.grid:
        _check_grid(args)
    encoder = hf_encoder.load(args.encoder, visible().device)
    if args.grid:
        return _evaluate_grid(args, scale, settings, encoder)
    found = Scores(align_eval.training_pairs(args.encoder))
    recorded = {**asdict(settings), "encoder": str(args.encoder)}
    if args.tatoeba is not None:
        found.update(align_eval.tatoeba(encoder, args.tatoeba, settings))
        recorded["tatoeba"] = str(args.tatoeba)
    if args.new_tatoeba is not None:
        found.update(align_eval.pair_sets(encoder, args.new_tatoeba, settings))
        recorded["new_tatoeba"] = str(args.new_tatoeba)
    if args.bucc is not None:
        _, spec = settings_from(args, embed_settings.AlignBuccSettings, (args.section,))
        metrics, details = align_eval.bucc(encoder, args.bucc, spec, settings)
        found.update(metrics)
        atomic_write_text(
            args.out.parent / benchmarks.DETAILS_FILE, json.dumps(details, indent=1) + "\n"
        )
        recorded |= {"bucc": str(args.bucc), **asdict(spec)}
    _write(args.out, args.run, args.seed, scale, found)
    record(args.out.parent, "embed align-evaluate", {"scale": scale, args.section: recorded})
    return 0


def _write(out: Path, run: str, seed: int, scale: str, found: Scores) -> None:
    """One run's metrics.json: the values, and each query's hit where the metric has them."""
    from mlrep.report.metrics import write

    write(
        out,
        CHAPTER,
        run,
        seed,
        scale,
        found.metrics,
        sentence_scores=found.sentence_scores,
        groups=found.groups,
    )
    print(json.dumps({k: round(v, 2) for k, v in found.metrics.items()}))


def _check_grid(args: argparse.Namespace) -> None:
    """--grid scores Tatoeba alone, into one run and file per scorer: --run and --out must
    name each by its {similarity} and {norm}, or the four would overwrite one another."""
    if args.tatoeba is None or args.new_tatoeba is not None or args.bucc is not None:
        raise UsageError(
            "--grid scores --tatoeba alone: give --tatoeba, not --new-tatoeba or --bucc"
        )
    for name, template in (("--run", args.run), ("--out", str(args.out))):
        if not all(f"{{{key}}}" in template for key in GRID_KEYS):
            raise UsageError(
                f"--grid: {name} {template!r} must hold {{similarity}} and {{norm}} "
                f"(e.g. unsup-mbert-{{similarity}}-{{norm}}), one run per scorer"
            )


def _evaluate_grid(
    args: argparse.Namespace,
    scale: str,
    settings: embed_settings.AlignEvaluateSettings,
    encoder: Encoder,
) -> int:
    """Every similarity without (α = 0) and with (α = --alpha) the normalisation, from one
    encoding of each Tatoeba language (`align_eval.tatoeba_variants`): Table 1's four
    scorers of an encoder in one process, each written as its own run."""
    from mlrep.embed import align_eval

    grid = embed_settings.scorer_grid(settings)
    found = align_eval.tatoeba_variants(encoder, args.tatoeba, list(grid.values()))
    for ((similarity, norm), variant), scores in zip(grid.items(), found, strict=True):
        names = {"similarity": similarity, "norm": norm}
        out = Path(str(args.out).format_map(names))
        _write(out, args.run.format_map(names), args.seed, scale, scores)
        recorded = {**asdict(variant), "encoder": str(args.encoder), "tatoeba": str(args.tatoeba)}
        record(out.parent, "embed align-evaluate", {"scale": scale, args.section: recorded})
    return 0


def _new_tatoeba(args: argparse.Namespace) -> int:
    from mlrep.embed import new_tatoeba

    scale, settings = settings_from(args, embed_settings.NewTatoebaSettings, (args.section,))
    index = new_tatoeba.build(args.corpus, args.out, settings)
    recorded = {**asdict(settings), "corpus": str(args.corpus)}
    record(args.out, "embed new-tatoeba", {"scale": scale, args.section: recorded})
    summary = {k: index[k] for k in ("english_pairs", "other_pairs")}
    print(json.dumps({**summary, "left_out": len(index["left_out"])}))
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the three verbs to ``mlrep embed``'s subcommands."""
    base = argparse.ArgumentParser(add_help=False, parents=[common])
    base.add_argument("--section", required=True, help="the params.yaml section of the run")
    base.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    base.add_argument(
        "--encoder", required=True, help="save_pretrained folder or cached hub id (+ tokenizer)"
    )

    fin = sub.add_parser(
        "align-finetune", parents=[base], help="fine-tune an encoder with OneAligner (resumes)"
    )
    fin.add_argument("--data", type=Path, required=True, help="corpus folder (<split>.<a>-<b>.*)")
    fin.add_argument("--split", default="train", help="the corpus split trained on")
    fin.add_argument(
        "--exclude", type=Path, nargs="*", default=[], help="evaluation folders kept out"
    )
    fin.add_argument("--out", type=Path, required=True, help="the fine-tuned encoder's folder")
    fin.add_argument("--seed", type=int, required=True)
    add_options(fin, embed_settings.AlignFinetuneSettings, skip=embed_settings.ALIGN_VERB_SET)
    fin.set_defaults(func=_finetune)

    ev = sub.add_parser(
        "align-evaluate", parents=[base], help="metrics.json: Tatoeba, New-Tatoeba, BUCC"
    )
    ev.add_argument("--tatoeba", type=Path, help="normalised Tatoeba folder (test.<xx>-eng.*)")
    ev.add_argument("--new-tatoeba", type=Path, help="folder `new-tatoeba` built (every pair)")
    ev.add_argument("--bucc", type=Path, help="embedded corpus mined BUCC-style")
    ev.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    ev.add_argument("--run", required=True, help="the run's name in the paper's tables")
    ev.add_argument("--seed", type=int, required=True)
    ev.add_argument(
        "--grid",
        action="store_true",
        help="score --tatoeba with every similarity, without (alpha 0) and with (--alpha) "
        "normalisation, from one encoding; --run and --out are templates with {similarity} "
        f"and {{norm}} ({' | '.join(NORMS)})",
    )
    add_options(ev, embed_settings.AlignEvaluateSettings)
    add_options(ev, embed_settings.AlignBuccSettings)
    ev.set_defaults(func=_evaluate)

    new = sub.add_parser(
        "new-tatoeba", parents=[common], help="cut the New-Tatoeba set: merged splits, sampled"
    )
    new.add_argument("--section", required=True, help="the params.yaml section of its settings")
    new.add_argument("--corpus", type=Path, required=True, help="corpus folder (<split>.<a>-<b>.*)")
    new.add_argument("--out", type=Path, required=True, help="the evaluation set's folder")
    add_options(new, embed_settings.NewTatoebaSettings)
    new.set_defaults(func=_new_tatoeba)
