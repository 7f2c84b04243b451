"""``mlrep ch2 …``: prepare data, train and evaluate the EMS sentence encoders (Chapter 2).

The chapter's verbs: they know its runs (`runs`), and drive the generic sentence-encoder
machinery of `mlrep.embed`. Flags are the keys of params.yaml ``ch2_ems`` (``--ffn-dim`` ↔
``ffn_dim``); a flag left out is taken from the run named by ``--run`` in the params file, so
``mlrep ch2 train --run no-xtr`` trains Table 2.14's – L_XTR row exactly as the workflow does.
"""

from __future__ import annotations

import argparse
import functools
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from mlrep.chapters.ch2_ems import runs
from mlrep.cliutil import add_options, fill, positive_int, resolved_params, settings_from
from mlrep.device import visible
from mlrep.embed import cli as embed_cli
from mlrep.embed import settings as embed_settings
from mlrep.embed.baselines import LOADERS
from mlrep.errors import MlrepError
from mlrep.provenance import record
from mlrep.report.metrics import FLOOR, Scores, write


class MissingInputError(MlrepError):
    """A step's input folder or file is absent; the message names the step that makes it."""


def _section(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    resolved = resolved_params(args.params)
    return args.scale or resolved["scale"], resolved[runs.SECTION]


def _scale(args: argparse.Namespace) -> str:
    """``--scale`` (rules pass it), else the params file's: provenance names the scale."""
    return args.scale or _section(args)[0]


def _require(path: Path, made_by: str) -> Path:
    if not path.exists():
        raise MissingInputError(f"{path} not found: run `{made_by}` first")
    return path


def _prepare(args: argparse.Namespace) -> int:
    return embed_cli.prepare(args, runs.SECTION, "ch2 prepare")


def _recorded(settings: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A settings dataclass as its params.yaml keys, for the frozen config."""
    return {k: v for k, v in asdict(settings).items() if k not in skip}


def _train(args: argparse.Namespace) -> int:
    from mlrep.embed import train
    from mlrep.embed.data import PairArrays

    run = functools.cache(lambda: runs.run_values(_section(args)[1], args.run))
    where = f"{args.params}: {runs.SECTION} run {args.run}"
    info = json.loads(_require(args.data / "languages.json", "mlrep ch2 prepare").read_text())
    config = fill(
        args,
        embed_settings.EmsConfig,
        run,
        where,
        vocab_size=info["vocab_size"],
        languages=len(info["languages"]),
        max_tokens=info["max_tokens"],
    )
    settings = fill(
        args, embed_settings.TrainSettings, run, where, seed=args.seed, threads=args.threads
    )
    values = {
        **_recorded(config, embed_settings.FROM_DATA),
        **_recorded(settings, embed_settings.VERB_SET),
    }
    train_data = PairArrays.load(_require(args.data / "train.npz", "mlrep ch2 prepare"))
    valid_path = args.data / "valid.npz"
    valid = PairArrays.load(valid_path) if valid_path.exists() else None
    summary = train.run(
        config, settings, train_data, valid, args.out, log=lambda m: print(m, flush=True)
    )
    record(
        args.out,
        "ch2 train",
        {"scale": _scale(args), runs.SECTION: {"run": args.run, "seed": args.seed, **values}},
    )
    print(json.dumps(summary))
    return 0


def _settings(args: argparse.Namespace) -> tuple[dict[str, Any], Path]:
    """``ch2_ems.benchmarks`` and ``evaluate`` as the rule resolved them (``--settings``),
    else from the params file, and where the benchmark folders are (``--data-root``, else
    the params file's results folder + ``data``)."""
    resolved = None
    if args.settings is not None:
        settings = json.loads(args.settings)
    else:
        resolved = resolved_params(args.params)
        settings = {
            "benchmarks": resolved[runs.SECTION]["benchmarks"],
            "evaluate": resolved["evaluate"],
        }
    data_root = args.data_root
    if data_root is None:
        resolved = resolved or resolved_params(args.params)
        data_root = Path(resolved["paths"]["results"]) / "data"
    return settings, data_root


def _score(
    args: argparse.Namespace,
    encode,
    evaluation: embed_settings.EvaluateSettings,
    metrics: Scores,
    only: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Tatoeba and every benchmark with a dataset (of `only`, if given), added to `metrics`
    with their floors; the protocol details (pairs shared, thresholds, mined pairs outside
    the gold: Table 2.8) go to ``benchmarks.json`` beside the metrics. Returns what was read,
    for the frozen config."""
    from mlrep.embed import benchmarks, evaluate

    if args.tatoeba is not None:
        folder = _require(args.tatoeba, "snakemake " + str(args.tatoeba))
        languages = evaluation.tatoeba_languages
        metrics.update(evaluate.tatoeba(encode, folder, evaluation.tatoeba_pairs, languages))
    if not args.benchmarks:
        return {"tatoeba": str(args.tatoeba)}
    settings, data_root = _settings(args)
    section = settings["benchmarks"]
    folders = {
        name: _require(data_root / key, f"snakemake {data_root / key}")
        for name, key in runs.benchmark_datasets(section).items()
        if only is None or name in only
    }
    details = args.out.parent / benchmarks.DETAILS_FILE
    metrics.update(benchmarks.score(encode, folders, section, settings["evaluate"], details))
    return {"tatoeba": str(args.tatoeba), "benchmarks": section, "evaluate": settings["evaluate"]}


def _write_metrics(
    args: argparse.Namespace, run: str, seed: int, scores: Scores, **extra: Any
) -> str:
    scale = _scale(args)
    write(
        args.out,
        runs.SECTION,
        run,
        seed,
        scale,
        scores.metrics,
        sentence_scores=scores.sentence_scores,
        groups=scores.groups,
        **extra,
    )
    per_item = ("tatoeba_", "heldout_", "flores_", "bucc_", "paracrawl_", "mldoc_", "amazon_")
    shown = {k: v for k, v in scores.metrics.items() if not k.startswith((*per_item, FLOOR))}
    print(json.dumps({k: round(v, 2) for k, v in shown.items()}))
    return scale


def _evaluation(args: argparse.Namespace) -> embed_settings.EvaluateSettings:
    return settings_from(args, embed_settings.EvaluateSettings, (f"{runs.SECTION}.evaluate",))[1]


def _evaluate(args: argparse.Namespace) -> int:
    import torch

    from mlrep.embed import evaluate, train
    from mlrep.embed.data import PairArrays, Tokenizer

    torch.set_num_threads(args.threads)
    evaluation = _evaluation(args)
    batch_size = evaluation.encode_batch_size
    model = train.load_model(_require(args.model, "mlrep ch2 train")).to(visible().device)
    info = json.loads(_require(args.data / "languages.json", "mlrep ch2 prepare").read_text())
    summary = json.loads((args.model.parent / train.SUMMARY_FILE).read_text())
    metrics = Scores({"final_loss": summary["final_loss"]})
    for key in ("valid_loss", "sec_per_1k_steps"):
        if summary.get(key) is not None:
            metrics.metrics[key] = summary[key]
    # Table 2.3: languages and parallel pairs trained on, encoder parameters (inference)
    metrics.update(
        {
            "parameters": summary["parameters"]["encoder"],
            "parameters_m": summary["parameters"]["encoder"] / 1e6,
            "languages": len(info["languages"]),
            "parallel_pairs": sum(info["pairs"]["train"].values()),
        }
    )
    test_path = args.data / "test.npz"
    if test_path.exists():
        test = PairArrays.load(test_path)
        metrics.update(evaluate.heldout(model, test, info["languages"], batch_size))
    tokenizer = Tokenizer(args.data / "spm.model", info["lowercase"], info["max_tokens"])
    scored = _score(args, evaluate.encoder(model, tokenizer, batch_size), evaluation, metrics)
    scale = _write_metrics(args, args.run, args.seed, metrics)
    # the run folder's frozen config: what trained it (written by train) plus how it was scored
    frozen = args.model.parent / "config.yaml"
    trained = yaml.safe_load(frozen.read_text()) if frozen.exists() else {}
    section = {**trained.get(runs.SECTION, {}), "evaluate": asdict(evaluation), **scored}
    record(args.out.parent, "ch2 evaluate", {"scale": scale, runs.SECTION: section})
    return 0


def _baseline(args: argparse.Namespace) -> int:
    """A pretrained baseline through the protocols the EMS runs go through."""
    import torch

    from mlrep.embed import baselines

    torch.set_num_threads(args.threads)
    evaluation = _evaluation(args)
    folder = _require(args.checkpoint, f"mlrep ch2 fetch --name {runs.baseline_name(args.run)}")
    stand_in = args.run.endswith(runs.STAND_IN_SUFFIX)
    fetched_path = folder / baselines.FETCHED
    fetched = json.loads(fetched_path.read_text()) if fetched_path.exists() else {}
    if not stand_in and not fetched:
        raise baselines.BaselineError(
            f"{folder}: no {baselines.FETCHED}, so not a checkpoint fetched from {args.hub}; "
            f"fetch it (mlrep ch2 fetch) or run it as {args.run}{runs.STAND_IN_SUFFIX}"
        )
    encoder = baselines.load(
        args.loader, folder, evaluation.encode_batch_size, visible().device, args.threads
    )
    metrics = Scores({"parameters": encoder.parameters, "parameters_m": encoder.parameters / 1e6})
    scored = _score(args, encoder.encode, evaluation, metrics)
    checkpoint = {
        "folder": str(folder),
        "hub": args.hub,
        "stand_in": stand_in,  # a local random model of the same class, not the published one
        "revision": fetched.get("revision") or args.revision,
        "library": encoder.library,
    }
    scale = _write_metrics(args, args.run, runs.BASELINE_SEED, metrics, checkpoint=checkpoint)
    evaluated = {"evaluate": asdict(evaluation), **scored}
    section = {"baseline": {"loader": args.loader, **checkpoint}, **evaluated}
    record(args.out.parent, "ch2 baseline", {"scale": scale, runs.SECTION: section})
    return 0


def _tfidf(args: argparse.Namespace) -> int:
    """The training-free baseline row: character n-gram TF-IDF retrieval, fitted on each test
    set, through the retrieval protocols the EMS runs go through (classification needs a
    fixed encoder, so it is not scored)."""
    from mlrep.embed.benchmarks import RETRIEVAL
    from mlrep.evaluate.tfidf import CharTfidf

    evaluation = _evaluation(args)
    spec = _settings(args)[0]["evaluate"]["tfidf"]
    encode = CharTfidf(spec["ngram_min"], spec["ngram_max"])
    metrics = Scores()
    scored = _score(args, encode, evaluation, metrics, RETRIEVAL)
    scale = _write_metrics(args, runs.TFIDF_RUN, runs.BASELINE_SEED, metrics, retriever=spec)
    section = {"tfidf": spec, "evaluate": asdict(evaluation), **scored}
    record(args.out.parent, "ch2 tfidf", {"scale": scale, runs.SECTION: section})
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from mlrep.embed import baselines

    spec = {"loader": args.loader, "hub": args.hub, "revision": args.revision or ""}
    baseline = baselines.Baseline.from_params(args.name, {**spec, "files": args.files or []})
    info = baselines.fetch(baseline, args.dest)
    print(json.dumps({"dest": str(args.dest), "revision": info["revision"]}))
    return 0


def _benchmark_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tatoeba", type=Path, help="normalised Tatoeba folder")
    parser.add_argument(
        "--settings",
        help="JSON {benchmarks, evaluate}: ch2_ems.benchmarks and evaluate as resolved by the "
        "workflow (default: the params file's)",
    )
    parser.add_argument(
        "--data-root", type=Path, help="folder of the benchmark datasets (default: results/data)"
    )
    parser.add_argument(
        "--benchmarks",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="score ch2_ems.benchmarks (--no-benchmarks: grid points, judged on valid loss)",
    )


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    chapter = top.add_parser("ch2", help="Chapter 2: EMS sentence encoders, runs and baselines")
    sub = chapter.add_subparsers(dest="ch2_command", required=True)

    prepare = sub.add_parser(
        "prepare", parents=[common], help="SentencePiece + token ids of English-centric pairs"
    )
    embed_cli.add_prepare_options(prepare)
    prepare.set_defaults(func=_prepare)

    train = sub.add_parser("train", parents=[common], help="train one run (resumes)")
    train.add_argument("--data", type=Path, required=True, help="the prepare step's folder")
    train.add_argument("--out", type=Path, required=True, help="run folder (model.pt, …)")
    train.add_argument("--run", required=True, help="a ch2_ems.runs name or grid/<key>-<value>")
    train.add_argument("--seed", type=int, required=True)
    train.add_argument("--threads", type=positive_int, default=1)
    add_options(train, embed_settings.EmsConfig, skip=embed_settings.FROM_DATA)
    add_options(train, embed_settings.TrainSettings, skip=embed_settings.VERB_SET)
    train.set_defaults(func=_train)

    evaluate = sub.add_parser("evaluate", parents=[common], help="metrics.json of one run")
    evaluate.add_argument("--model", type=Path, required=True, help="a run's model.pt")
    evaluate.add_argument("--data", type=Path, required=True, help="the prepare step's folder")
    _benchmark_options(evaluate)
    evaluate.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    evaluate.add_argument("--run", required=True)
    evaluate.add_argument("--seed", type=int, required=True)
    add_options(evaluate, embed_settings.EvaluateSettings)
    evaluate.add_argument("--threads", type=positive_int, default=1)
    evaluate.set_defaults(func=_evaluate)

    baseline = sub.add_parser(
        "baseline", parents=[common], help="metrics.json of a pretrained baseline (LaBSE, ...)"
    )
    baseline.add_argument(
        "--run", required=True, help="a ch2_ems.baselines name, or <name>-stand-in"
    )
    baseline.add_argument("--checkpoint", type=Path, required=True, help="fetched model folder")
    baseline.add_argument("--loader", choices=LOADERS, required=True)
    baseline.add_argument("--hub", required=True, help="where the real checkpoint comes from")
    baseline.add_argument("--revision", help="hub revision (recorded only)")
    _benchmark_options(baseline)
    baseline.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    add_options(baseline, embed_settings.EvaluateSettings)
    baseline.add_argument("--threads", type=positive_int, default=1)
    baseline.set_defaults(func=_baseline)

    tfidf = sub.add_parser(
        "tfidf", parents=[common], help="metrics.json of the char n-gram TF-IDF baseline"
    )
    _benchmark_options(tfidf)
    tfidf.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    add_options(tfidf, embed_settings.EvaluateSettings)
    tfidf.set_defaults(func=_tfidf)

    fetch = sub.add_parser("fetch", parents=[common], help="download a baseline from its hub")
    fetch.add_argument("--name", required=True, help="a ch2_ems.baselines name")
    fetch.add_argument("--dest", type=Path, required=True, help="checkpoint folder (atomic)")
    fetch.add_argument("--loader", choices=LOADERS, required=True)
    fetch.add_argument("--hub", required=True, help="hub repository id or URL (prefix)")
    fetch.add_argument("--revision", help="hub revision (Hugging Face)")
    fetch.add_argument("--files", nargs="*", help="files under a URL prefix (LASER)")
    fetch.set_defaults(func=_fetch)
