"""``mlrep embed …``: prepare pairs, cache a teacher's vectors, distil students, reduce the
teacher's width.

Generic sentence-encoder distillation (LEALLA, Chapter 3), on a folder of the shared
preparation (`prepare`, which Chapter 2's ``mlrep ch2 prepare`` runs too: ``<split>.npz`` pairs
and their ``<split>.<side>.txt`` sentences). Flags are the params.yaml keys of the chapter
section named by ``--section``: ``prepare`` for prepare, ``teacher`` for teacher-cache,
``student`` + ``objective`` + ``train`` for distill, ``reduce`` (its ``dims`` and any training
key it overrides) + ``train`` + ``objective`` (AMS's margin and temperature) for reduce,
``evaluate`` (+ ``teacher``'s loader and checkpoint when it scores the teacher or a pretrained
encoder) for evaluate. Rules pass every value; a flag left out is read from ``--params``.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

from mlrep.cliutil import add_options, positive_int, settings_from
from mlrep.embed import align_cli
from mlrep.embed import settings as embed_settings
from mlrep.errors import MlrepError
from mlrep.evaluate.settings import MarginSettings, SearchSettings
from mlrep.io import atomic_directory, atomic_write_text
from mlrep.provenance import record

LADDER_FILE = "ladder.json"  # reduce: held-out P@1 of the teacher and of each width


class MissingInputError(MlrepError):
    """A step's input is absent; the message names the step that makes it."""


class TeacherWidthError(MlrepError):
    """A teacher whose vectors are not as wide as its settings say (``teacher.dim``)."""


def _require(path: Path, made_by: str) -> Path:
    if not path.exists():
        raise MissingInputError(f"{path} not found: run `{made_by}` first")
    return path


def _languages(data: Path) -> dict[str, Any]:
    return json.loads(_require(data / "languages.json", "mlrep embed prepare").read_text())


def _cached(args: argparse.Namespace, split: str):
    """The teacher's cached vectors of both sides of a prepared split, each checked against
    the sentences it encodes (their rows against the pairs: `TeacherPairs.check`)."""
    from mlrep.embed import data, teacher

    sides = []
    for side in data.SIDES:
        vectors = _require(args.teacher_cache / f"{split}.{side}.npy", "mlrep embed teacher-cache")
        sides.append(teacher.load_cached(vectors, data.text_path(args.data, split, side)))
    return teacher.TeacherPairs(*sides)


def _log(message: str) -> None:
    print(message, flush=True)


def add_prepare_options(parser: argparse.ArgumentParser) -> None:
    """The options of a prepare verb: this module's and Chapter 2's (``ch2 prepare``)."""
    parser.add_argument("--sources", type=Path, nargs="+", required=True, help="text folders")
    parser.add_argument("--out", type=Path, required=True, help="output folder (atomic)")
    parser.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    add_options(parser, embed_settings.PrepareSettings, skip=embed_settings.VERB_SET)


def prepare(args: argparse.Namespace, section: str, step: str) -> int:
    """SentencePiece and the English-centric pairs of ``--sources`` (`mlrep.embed.data.prepare`)
    into ``--out``, atomically, under ``<section>.prepare``: the one body of `step` (``embed
    prepare``, ``ch2 prepare``), so every chapter's prepared folder is made alike."""
    from mlrep.embed import data

    scale, settings = settings_from(
        args,
        embed_settings.PrepareSettings,
        (f"{section}.prepare",),
        threads=args.threads,
    )
    for source in args.sources:
        _require(source, "snakemake " + str(source))
    with atomic_directory(args.out) as staging:
        info = data.prepare(list(args.sources), staging, settings)
        recorded = _recorded(settings, embed_settings.VERB_SET)
        record(staging, step, {"scale": scale, section: {"prepare": recorded}})
    print(json.dumps({"out": str(args.out), "languages": len(info["languages"]) - 1}))
    return 0


def _prepare(args: argparse.Namespace) -> int:
    return prepare(args, args.section, "embed prepare")


def _teacher_cache(args: argparse.Namespace) -> int:
    import torch

    from mlrep.device import visible
    from mlrep.embed import data, teacher

    torch.set_num_threads(args.threads)
    scale, settings = settings_from(
        args, embed_settings.TeacherSettings, (f"{args.section}.teacher",)
    )
    texts = {
        (split, side): data.text_path(args.data, split, side)
        for split in data.SPLITS
        for side in data.SIDES
        if data.text_path(args.data, split, side).exists()
    }
    if not texts:
        raise MissingInputError(f"{args.data}: no <split>.<side>.txt; run `mlrep embed prepare`")
    encoder = teacher.load(
        settings.loader,
        settings.teacher,
        settings.encode_batch_size,
        visible().device,
        args.threads,
    )
    first = next(iter(texts.values()))
    width = encoder.encode(first.read_text(encoding="utf-8").splitlines()[:1]).shape[1]
    if width != settings.dim:
        raise TeacherWidthError(
            f"teacher {settings.teacher!r} ({settings.loader}) gives {width}-dim vectors, but "
            f"{args.section}.teacher.dim is {settings.dim}: set it to {width}"
        )
    counts = {}
    for (split, side), text in texts.items():
        out = args.out / f"{split}.{side}.npy"
        counts[f"{split}.{side}"] = len(teacher.cache(encoder.encode, text, out, settings.teacher))
    record(
        args.out,
        "embed teacher-cache",
        {"scale": scale, args.section: {"teacher": asdict(settings)}},
    )
    print(json.dumps({"out": str(args.out), "rows": counts}))
    return 0


def _distill(args: argparse.Namespace) -> int:
    from mlrep.embed import distill
    from mlrep.embed.data import PairArrays

    info = _languages(args.data)
    vectors = _cached(args, "train")
    scale, student = settings_from(
        args,
        embed_settings.StudentConfig,
        (f"{args.section}.student",),
        vocab_size=info["vocab_size"],
        max_tokens=info["max_tokens"],
    )
    _, objective = settings_from(
        args, embed_settings.DistillConfig, (f"{args.section}.objective",), teacher_dim=vectors.dim
    )
    _, settings = settings_from(
        args,
        embed_settings.DistillTrainSettings,
        (f"{args.section}.train",),
        seed=args.seed,
        threads=args.threads,
    )
    pairs = PairArrays.load(_require(args.data / "train.npz", "mlrep embed prepare"))
    summary = distill.run(
        student, objective, settings, pairs, vectors, args.out, args.projection, log=_log
    )
    section = {
        "student": _recorded(student, embed_settings.STUDENT_FROM_DATA),
        "objective": _recorded(objective, embed_settings.DISTILL_FROM_DATA),
        "train": _recorded(settings, embed_settings.VERB_SET),
        "seed": args.seed,
        "projection": str(args.projection) if args.projection else None,
    }
    record(args.out, "embed distill", {"scale": scale, args.section: section})
    print(json.dumps(summary))
    return 0


def _recorded(settings: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A settings dataclass as its params.yaml keys, for the frozen config."""
    return {k: v for k, v in asdict(settings).items() if k not in skip}


def _reduce(args: argparse.Namespace) -> int:
    from mlrep.embed import reduce

    section = args.section
    vectors, heldout = _cached(args, "train"), _cached(args, args.heldout)
    scale, ladder = settings_from(args, embed_settings.ReduceSettings, (f"{section}.reduce",))
    _, settings = settings_from(
        args,
        embed_settings.TrainSettings,
        (f"{section}.reduce", f"{section}.train"),
        seed=args.seed,
        threads=args.threads,
    )
    _, ams = settings_from(
        args,
        embed_settings.DistillConfig,
        (f"{section}.reduce", f"{section}.objective"),
        skip=embed_settings.NOT_AMS,
        teacher_dim=vectors.dim,
    )
    scores = reduce.run_ladder(
        vectors, heldout, ladder, settings, ams.margin, ams.temperature, args.out, log=_log
    )
    rows = {str(vectors.dim): reduce.heldout(heldout, None).metrics}
    rows |= {str(dim): found.metrics for dim, found in scores.items()}
    ladder_file = {"teacher_dim": vectors.dim, "heldout": args.heldout, "dims": rows}
    atomic_write_text(args.out / LADDER_FILE, json.dumps(ladder_file, indent=1) + "\n")
    recorded = {
        "reduce": {**asdict(ladder), "margin": ams.margin, "temperature": ams.temperature},
        "train": _recorded(settings, embed_settings.VERB_SET),
        "seed": args.seed,
    }
    record(args.out, "embed reduce", {"scale": scale, section: recorded})
    print(json.dumps({dim: round(row["heldout_avg"], 2) for dim, row in rows.items()}))
    return 0


class Scoring(NamedTuple):
    """One metrics.json an evaluation writes: where (``out``), the run it scores, the encoder
    of its text (built on demand), its metrics so far and the settings to record."""

    out: Path
    run: str
    encoder: Callable[[], Any]
    metrics: Any  # mlrep.report.metrics.Scores
    recorded: dict[str, Any]


class ScoringCountError(MlrepError):
    """``--out`` and ``--run`` do not name one file and one run per encoder scored."""


def _scored_runs(args: argparse.Namespace) -> list[tuple[Path, str]]:
    """(out, run) of each encoder scored: one per ``--reduction``, else one."""
    wanted = len(args.reduction or [None])
    if len(args.out) != wanted or len(args.run) != wanted:
        raise ScoringCountError(
            f"--out names {len(args.out)} files and --run {len(args.run)} runs for {wanted} "
            "encoders scored: give one of each per --reduction, in the same order (one without)"
        )
    return list(zip(args.out, args.run, strict=True))


def _student(args: argparse.Namespace, evaluation, info: dict[str, Any]):
    """([its `Scoring`], nothing to forget) of a distilled student: held-out retrieval of the
    prepared test split; its shape (`SHAPE`, from its config) and the languages it was
    trained on (of the prepared data, English included); from its train.json, P, P_E, the
    final loss and throughput."""
    from mlrep.device import visible
    from mlrep.embed import distill, evaluate
    from mlrep.embed.data import PairArrays, Tokenizer
    from mlrep.report.metrics import Scores

    batch_size = evaluation.encode_batch_size
    model = distill.load_model(_require(args.model, "mlrep embed distill"))
    model.to(visible().device)
    summary = json.loads((args.model.parent / distill.SUMMARY_FILE).read_text())
    keep = ("final_loss", "sec_per_1k_steps", "sentences_per_second")
    metrics = Scores({k: summary[k] for k in keep if summary.get(k) is not None})
    metrics.update({k: summary[k] for k in ("parameters", "encoder_parameters")})  # P, P_E
    config = model.student.config
    metrics.update({k: getattr(config, k) for k in SHAPE})
    metrics.update({"languages": len(info["languages"])})
    test = PairArrays.load(_require(args.data / "test.npz", "mlrep embed prepare"))
    metrics.update(evaluate.heldout(model, test, info["languages"], batch_size))
    tokenizer = Tokenizer(args.data / "spm.model", info["lowercase"], info["max_tokens"])
    ((out, run),) = _scored_runs(args)
    scoring = Scoring(out, run, lambda: evaluate.encoder(model, tokenizer, batch_size), metrics, {})
    return [scoring], lambda: None


SHAPE = ("layers", "dim", "ffn_dim", "heads")  # a student's shape: StudentConfig's field names


def _encoded(encode, folder: Path, split: str):
    """A pretrained encoder's vectors of both sides of a prepared split, as a cache holds them."""
    import numpy as np

    from mlrep.embed import data, teacher
    from mlrep.io import read_lines

    sides = (
        read_lines(data.text_path(folder, split, side), MissingInputError) for side in data.SIDES
    )
    return teacher.TeacherPairs(*(np.asarray(encode(lines), dtype=np.float32) for lines in sides))


def _teacher(args: argparse.Namespace, evaluation, info: dict[str, Any]):
    """(a `Scoring` per encoder, what clears the memo) of the frozen teacher, through each
    ``--reduction`` layer or at full width, or of a pretrained encoder without a cache (the
    ``--loader``/``--teacher`` given, m-USE say): held-out retrieval of the test split's
    vectors (cached, else encoded now) and their width, ``dim``. The layers of a ladder share
    one teacher (`evaluate.Memo`): it encodes each benchmark once, whatever the number of
    widths, where one process per width re-encoded everything for each."""
    from mlrep.device import visible
    from mlrep.embed import evaluate, reduce, teacher
    from mlrep.embed.data import PairArrays
    from mlrep.embed.train import SUMMARY_FILE

    if args.teacher_cache is None and args.reduction:
        raise MissingInputError(
            "--reduction scores the teacher's cached vectors: add --teacher-cache"
        )
    _, settings = settings_from(
        args,
        embed_settings.TeacherSettings,
        (f"{args.section}.teacher",),
        skip=("dim",),  # the width scored is the vectors'
        encode_batch_size=evaluation.encode_batch_size,
    )

    @functools.cache
    def full():
        batch, device = settings.encode_batch_size, visible().device
        return teacher.load(settings.loader, settings.teacher, batch, device, args.threads).encode

    memo = evaluate.Memo(lambda sentences: full()(sentences))
    test = PairArrays.load(_require(args.data / "test.npz", "mlrep embed prepare"))
    if args.teacher_cache is not None:
        vectors = _cached(args, "test")
    else:
        vectors = _encoded(full(), args.data, "test")
    scorings = []
    for reduction, (out, run) in zip(args.reduction or [None], _scored_runs(args), strict=True):
        encoder, reduced = full, vectors
        if reduction is not None:
            made = _require(reduction, "mlrep embed reduce")
            dim = json.loads((made.parent / SUMMARY_FILE).read_text())["dim"]
            weight, bias = reduce.load_projection(made, vectors.dim, dim)
            reduced = reduce.project_pairs(vectors, weight, bias)
            encoder = functools.partial(reduce.encoder, memo, weight, bias)
        reduced.check(len(test), "evaluate")
        metrics = evaluate.heldout_by_language(
            lambda rows, pairs=reduced: (pairs.src[rows], pairs.tgt[rows]),
            test.tgt_lang,
            info["languages"],
        )
        metrics.update({"dim": reduced.dim})
        recorded = {
            "teacher": _recorded(settings, ("dim",)),
            "teacher_cache": str(args.teacher_cache),
            "reduction": str(reduction),
        }
        scorings.append(Scoring(out, run, encoder, metrics, recorded))
    return scorings, memo.clear


def _benchmark_settings(args: argparse.Namespace, folders: dict[str, Path]):
    """(specs, scoring) of the UN and BUCC stand-ins of `folders` for the generic benchmark
    step (Chapter 2's), and the settings read, for the frozen config."""
    _, chosen = settings_from(
        args, embed_settings.BenchmarkSettings, (f"{args.section}.benchmarks",)
    )
    _, search = settings_from(args, SearchSettings, ("evaluate.search",))
    _, margin = settings_from(args, MarginSettings, ("evaluate.bucc",))
    for folder in folders.values():
        _require(folder, f"snakemake {folder}")
    scoring = {"search": asdict(search), "bucc": asdict(margin)}
    return chosen.specs(), scoring, {"benchmarks": asdict(chosen), "search": scoring}


AVERAGED = ("tatoeba", "un", "bucc")  # each writes <name>_avg: the mean of its <name>_<lang>


def _evaluate(args: argparse.Namespace) -> int:
    """metrics.json of a distilled student (``--model``), of the teacher, at full width or
    through each ``--reduction`` layer, or of a pretrained encoder: held-out retrieval of the
    prepared test split, Tatoeba (``--tatoeba``) and the UN and BUCC stand-ins (``--un``,
    ``--bucc``), each benchmark's mean (`AVERAGED`) and the encoder's shape. Benchmarks are
    the outer loop, so the encoders of one process share the teacher's vectors of one
    benchmark at a time (`forget` drops them before the next)."""
    import torch

    from mlrep.embed import benchmarks, evaluate

    torch.set_num_threads(args.threads)
    scale, evaluation = settings_from(
        args, embed_settings.EvaluateSettings, (f"{args.section}.evaluate",)
    )
    info = _languages(args.data)
    scored = _student if args.model is not None else _teacher
    scorings, forget = scored(args, evaluation, info)
    # each encoder built once, for Tatoeba and the benchmarks
    scorings = [s._replace(encoder=functools.cache(s.encoder)) for s in scorings]
    if args.tatoeba is not None:
        folder = _require(args.tatoeba, "snakemake " + str(args.tatoeba))
        languages = evaluation.tatoeba_languages
        for s in scorings:
            found = evaluate.tatoeba(s.encoder(), folder, evaluation.tatoeba_pairs, languages)
            s.metrics.update(found)
        forget()
    named = {"un": args.un, "bucc": args.bucc}  # the benchmark stand-ins' folders
    folders = {name: folder for name, folder in named.items() if folder is not None}
    if folders:
        specs, scoring, read = _benchmark_settings(args, folders)
        details: dict[Path, dict[str, Any]] = {s.out: {} for s in scorings}
        for name, folder in folders.items():
            for s in scorings:
                found, info_ = benchmarks.run(s.encoder(), {name: folder}, specs, scoring)
                s.metrics.update(found)
                details[s.out] |= info_
            forget()
        for s in scorings:
            benchmarks.write_details(details[s.out], s.out.parent / benchmarks.DETAILS_FILE)
            s.recorded.update(read)
    for s in scorings:
        _write(args, scale, evaluation, named, s)
    print(
        json.dumps({s.run: round(s.metrics.metrics.get("heldout_avg", 0.0), 2) for s in scorings})
    )
    return 0


def _write(
    args: argparse.Namespace, scale: str, evaluation, named: dict[str, Any], scoring: Scoring
) -> None:
    """A scoring's benchmark means (`AVERAGED`), metrics.json and frozen config."""
    from mlrep.report.metrics import write

    metrics = scoring.metrics
    for benchmark in AVERAGED:
        parts = [k for k in metrics.metrics if k.startswith(f"{benchmark}_")]
        if parts:
            metrics.mean(f"{benchmark}_avg", parts)
    write(
        scoring.out,
        args.section,
        scoring.run,
        args.seed,
        scale,
        metrics.metrics,
        sentence_scores=metrics.sentence_scores,
        groups=metrics.groups,
    )
    evaluated = {"evaluate": asdict(evaluation), "tatoeba": str(args.tatoeba), **scoring.recorded}
    evaluated |= {name: str(folder) for name, folder in named.items()}
    record(scoring.out.parent, "embed evaluate", {"scale": scale, args.section: evaluated})


def _mlm_pretrain(args: argparse.Namespace) -> int:
    """A tiny stand-in encoder (mBERT's or XLM-R's class), MLM-pretrained on leak-free text and
    saved as a Hugging Face checkpoint (`mlrep.embed.mlm`)."""
    from mlrep.embed import mlm

    scale, settings = settings_from(args, embed_settings.MlmSettings, (args.section,))
    recorded = {**asdict(settings), "seed": args.seed, "text": str(args.text)}
    config = {"scale": scale, args.section: recorded}

    def provenance(staging: Path) -> None:
        record(staging, "embed mlm-pretrain", config)

    summary = mlm.run(args.text, settings, args.out, args.seed, args.threads, provenance, _log)
    print(json.dumps({k: summary[k] for k in ("final_loss", "steps", "parameters")}))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    embed = top.add_parser("embed", help="sentence-encoder distillation: teacher, students")
    sub = embed.add_subparsers(dest="embed_command", required=True)
    base = argparse.ArgumentParser(add_help=False, parents=[common])
    base.add_argument("--section", required=True, help="the chapter's params.yaml section")
    base.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    base.add_argument("--data", type=Path, required=True, help="the prepare step's folder")
    prep = sub.add_parser(
        "prepare", parents=[common], help="SentencePiece + token ids of English-centric pairs"
    )
    prep.add_argument("--section", required=True, help="the chapter's params.yaml section")
    add_prepare_options(prep)
    prep.set_defaults(func=_prepare)

    cached = argparse.ArgumentParser(add_help=False)
    cached.add_argument(
        "--teacher-cache", type=Path, required=True, help="`mlrep embed teacher-cache`'s folder"
    )

    cache = sub.add_parser(
        "teacher-cache", parents=[base], help="the teacher's vectors of every prepared sentence"
    )
    cache.add_argument("--out", type=Path, required=True, help="<split>.<side>.npy (+ .json)")
    add_options(cache, embed_settings.TeacherSettings)
    cache.set_defaults(func=_teacher_cache)

    dst = sub.add_parser(
        "distill", parents=[base, cached], help="distil a student from the cache (resumes)"
    )
    dst.add_argument("--out", type=Path, required=True, help="run folder (model.pt, …)")
    dst.add_argument("--seed", type=int, required=True)
    dst.add_argument(
        "--projection", type=Path, help="a reduction's model.pt: the fixed layer of loss ams+syn"
    )
    add_options(dst, embed_settings.StudentConfig, skip=embed_settings.STUDENT_FROM_DATA)
    add_options(dst, embed_settings.DistillConfig, skip=embed_settings.DISTILL_FROM_DATA)
    add_options(dst, embed_settings.DistillTrainSettings, skip=embed_settings.VERB_SET)
    dst.set_defaults(func=_distill)

    red = sub.add_parser(
        "reduce", parents=[base, cached], help="the dimension-reduction ladder (resumes)"
    )
    red.add_argument("--out", type=Path, required=True, help="<dim>/model.pt, ladder.json")
    red.add_argument("--seed", type=int, required=True)
    red.add_argument(
        "--heldout", choices=("valid", "test"), default="test", help="split scored per width"
    )
    add_options(red, embed_settings.ReduceSettings)
    add_options(red, embed_settings.TrainSettings, skip=embed_settings.VERB_SET)
    add_options(
        red,
        embed_settings.DistillConfig,
        skip=(*embed_settings.DISTILL_FROM_DATA, *embed_settings.NOT_AMS),
    )
    red.set_defaults(func=_reduce)

    ev = sub.add_parser(
        "evaluate",
        parents=[base],
        help="metrics.json of a student, of the teacher (reduced) or of a pretrained encoder",
    )
    scored = ev.add_mutually_exclusive_group()
    scored.add_argument("--model", type=Path, help="a distill run's model.pt (else: the teacher)")
    scored.add_argument(
        "--reduction",
        type=Path,
        nargs="+",
        help="the teacher through each of these reduce widths' model.pt (one process, one "
        "teacher encoding of each benchmark; --out and --run pair with them in order)",
    )
    ev.add_argument(
        "--teacher-cache",
        type=Path,
        help="the teacher's cache (without it and --model: the --loader/--teacher encoder)",
    )
    ev.add_argument("--tatoeba", type=Path, help="normalised Tatoeba folder")
    ev.add_argument("--un", type=Path, help="UN: the embedded corpus or a normalised UN folder")
    ev.add_argument("--bucc", type=Path, help="BUCC: the embedded corpus or normalised BUCC")
    ev.add_argument(
        "--out", type=Path, nargs="+", required=True, help="metrics.json to write (per encoder)"
    )
    ev.add_argument(
        "--run", nargs="+", required=True, help="the run's name in the chapter's tables (each)"
    )
    ev.add_argument("--seed", type=int, required=True)
    add_options(ev, embed_settings.EvaluateSettings)
    add_options(ev, embed_settings.BenchmarkSettings)
    add_options(ev, MarginSettings)
    add_options(ev, SearchSettings)
    add_options(ev, embed_settings.TeacherSettings, skip=embed_settings.NOT_EVALUATED)
    ev.set_defaults(func=_evaluate)

    mlm = sub.add_parser(
        "mlm-pretrain",
        parents=[common],
        help="a tiny stand-in encoder (mBERT/XLM-R class), MLM-pretrained; a hub-style folder",
    )
    mlm.add_argument("--section", required=True, help="the params.yaml section of the settings")
    mlm.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    mlm.add_argument("--text", type=Path, required=True, help="`mlrep data monolingual`'s folder")
    mlm.add_argument("--out", type=Path, required=True, help="the checkpoint folder to write")
    mlm.add_argument("--seed", type=int, required=True)
    add_options(mlm, embed_settings.MlmSettings)
    mlm.set_defaults(func=_mlm_pretrain)
    align_cli.register(sub, common)  # OneAligner's align-finetune, align-evaluate
