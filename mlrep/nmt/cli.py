"""``mlrep nmt …``: prepare, train, translate, score and analyse multilingual NMT experiments.

Generic NMT machinery, shared by the chapters that train fairseq models (7 and 8). Flags are
the params.yaml keys of the chapter section named by ``--section``: ``data`` +
``datasets.<name>`` for prepare (which reads the shared preprocessing's subword files),
``datasets.<name>`` + ``train`` for train, ``decode`` for translate, states and pair-translate,
``token_accuracy`` for token-accuracy (Chapter 4's pre-trained models), ``retrieval`` for
retrieval (Chapter 5's validation analyses). Rules
pass every value; a flag left out is read from ``--params``. What a run *is* (a Chapter 8
system name, say) is the chapter's vocabulary: its home resolves a run to the generic options
here (tag format, LayerNorm variant), and the rule passes them.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from mlrep.cliutil import (
    UsageError,
    add_options,
    boolean,
    common_options,
    positive_float,
    positive_int,
    scale_of,
    settings_from,
)
from mlrep.io import atomic_directory, atomic_write_text
from mlrep.provenance import record
from mlrep.report.metrics import METRICS_FILE, write

PAIR_RUNS = "pair-runs"
STEP_SEPARATOR = "::"  # between the steps of `pair-runs`


def _prepare(args: argparse.Namespace) -> int:
    from mlrep.nmt import data, prepare
    from mlrep.nmt.settings import DatasetSettings, DataSettings

    scale, data_settings = settings_from(args, DataSettings, (f"{args.section}.data",))
    _, dataset_settings = settings_from(
        args, DatasetSettings, (f"{args.section}.datasets.{args.dataset}",)
    )
    limits, dataset = asdict(data_settings), asdict(dataset_settings)
    detokenize = {
        "method": args.subword_method,
        "backend": args.backend,
        "segmented": args.segmented,
    }
    corpora = data.Corpora(data.sets_of(args.raw, args.encoded))
    with atomic_directory(args.out) as staging:
        stats = data.cut(corpora, dataset["languages"], dataset["splits"], staging, **limits)
        stats["dataset"] = args.dataset
        data.write_stats(staging / data.TEXT, stats)
        binarised = prepare.prepare(staging, stats["languages"], detokenize, args.dictionary)
        record(
            staging,
            "nmt prepare",
            {
                "scale": scale,
                args.section: {"data": limits, "dataset": dataset},
                "preprocess": {"detokenize": detokenize, "encoded": [str(p) for p in args.encoded]},
                "binarise": binarised,
            },
        )
        # the data tables' measured row (Tables 7.1, 8.1), under the report's metrics contract
        # (seed 0: no training)
        row = {name: stats[name] for name in data.TABLE_STATS}
        row["n_languages"] = len(stats["languages"])
        run = _run_of(args.out, args.section, f"data/{args.dataset}")
        write(staging / "seed0" / METRICS_FILE, args.section, run, 0, scale, row)
    print(json.dumps({k: v for k, v in stats.items() if k != "sources"} | binarised))
    return 0


def _run_of(folder: Path, chapter: str, outside: str) -> str:
    """The run name of a chapter's output `folder`: its path below ``results/<chapter>/`` (the
    metrics contract's run, so two datasets prepared for one system, such as Chapter 5's with
    its own and with mBART's dictionary, are two runs); `outside` for a folder elsewhere."""
    parts = folder.parts
    if chapter not in parts[:-1]:
        return outside
    start = len(parts) - parts[::-1].index(chapter)
    return "/".join(parts[start:])


def _link_key(text: str) -> tuple[str, Path]:
    """``<split>.en-xx=PATH``: the word links of one preprocessed split and pair."""
    key, sep, path = text.partition("=")
    split, _, pair = key.partition(".")
    if not (sep and path and split and pair.startswith("en-")):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give <split>.en-xx=<links file>, e.g. train.en-ja=results/align/…/links.txt"
        )
    return key, Path(path)


def _lang_file(text: str) -> tuple[str, Path]:
    """``xx=PATH``: one language's monolingual text."""
    lang, sep, path = text.partition("=")
    if not (sep and lang and path):
        raise argparse.ArgumentTypeError(f"{text!r}: give <lang>=<file>, e.g. de=mono.de")
    return lang, Path(path)


def _mono_mix(args: argparse.Namespace) -> int:
    """Temperature-sampled monolingual text, one ``mono.<lang>`` per language, and
    ``mix.json`` (counts before and after, ratios)."""
    from mlrep.io import read_lines
    from mlrep.nmt import monolingual_mix, sampling
    from mlrep.nmt.data import NmtDataError

    files = dict(args.input)
    if len(files) < len(args.input):
        raise UsageError("--input names a language twice")
    texts = {lang: read_lines(path, NmtDataError) for lang, path in files.items()}
    before = {lang: len(lines) for lang, lines in texts.items()}
    empty = sorted(lang for lang, n in before.items() if not n)
    if empty:
        raise UsageError(f"--input files of {empty} have no lines")
    after = monolingual_mix.mix_counts(before, args.temperature, args.total, args.fixed)
    mixed = monolingual_mix.mix(texts, after, args.seed)
    sampled = {lang: n for lang, n in before.items() if lang not in args.fixed}
    shares = sampling.probabilities(sampled, args.temperature) if sampled else {}
    stats = {
        "inputs": {lang: str(path) for lang, path in files.items()},
        "temperature": args.temperature,
        "total": sum(after.values()),
        "fixed": sorted(args.fixed),
        "seed": args.seed,
        "before": before,
        "after": after,
        "share": {lang: round(q, 6) for lang, q in shares.items()},
        "ratio": {lang: round(after[lang] / before[lang], 4) for lang in before},
    }
    with atomic_directory(args.out) as staging:
        for lang, lines in mixed.items():
            atomic_write_text(staging / f"mono.{lang}", "".join(f"{line}\n" for line in lines))
        atomic_write_text(staging / "mix.json", json.dumps(stats, indent=1) + "\n")
    print(json.dumps({"out": str(args.out), "after": after}))
    return 0


def _self_parallel(args: argparse.Namespace) -> int:
    """A language's pairs (C(x), x) tagged as the data-bin's direction xx→xx."""
    from mlrep.io import read_lines
    from mlrep.nmt import monolingual_mix
    from mlrep.nmt.data import NmtDataError

    sources, targets = monolingual_mix.self_parallel(
        read_lines(args.source, NmtDataError), read_lines(args.target, NmtDataError),
        args.lang, args.tag_format, args.tag_style, args.drop_unchanged,
    )  # fmt: skip
    for path, lines in ((args.out_source, sources), (args.out_target, targets)):
        atomic_write_text(path, "".join(f"{line}\n" for line in lines))
    print(json.dumps({"source": str(args.out_source), "target": str(args.out_target),
                      "lines": len(sources)}))  # fmt: skip
    return 0


def _links(args: argparse.Namespace) -> int:
    """A prepared dataset's text binarised again with its training (and validation) lines'
    subword links, for the word-level contrastive loss (`mlrep.nmt.alignments`)."""
    from mlrep.nmt import alignments, data, prepare

    languages = data.read_stats(args.data / data.TEXT)["languages"]
    links = dict(args.links)
    with atomic_directory(args.out) as staging:
        folder = staging / alignments.ALIGN
        units = alignments.attach(args.data, languages, args.encoded, args.tokens, links, folder)
        tags = prepare.tag_style(args.data)
        for tag_format in args.tag_formats:
            prepare.binarise(args.data, languages, tag_format, staging / tag_format, folder, tags)
        atomic_write_text(
            staging / "stats.json", json.dumps({"units_per_sentence": units}, indent=1) + "\n"
        )
        record(
            staging,
            "nmt links",
            {
                "scale": scale_of(args),
                "data": str(args.data),
                "links": {k: str(v) for k, v in links.items()},
                "tag_formats": args.tag_formats,
            },
        )
    print(json.dumps(units))
    return 0


def _mbart_init(args: argparse.Namespace) -> int:
    """A released mBART checkpoint as the init of a fine-tuning run (`mlrep.nmt.mbart_init`)."""
    from mlrep.nmt.mbart_init import convert

    print(convert(args.checkpoint, args.dict, args.spm, args.out, args.arch))
    return 0


def _mbart_pretrain(args: argparse.Namespace) -> int:
    """A tiny mBART stand-in in the release layout (`mlrep.nmt.mbart_pretrain`)."""
    from mlrep.nmt.mbart_pretrain import pretrain
    from mlrep.nmt.settings import MbartPretrainSettings

    scale, settings = settings_from(
        args, MbartPretrainSettings, (f"{args.section}.mbart_pretrain",)
    )
    with atomic_directory(args.out) as staging:
        summary = pretrain(args.text, args.languages, args.spm, staging, settings, args.threads)
        record(
            staging,
            "nmt mbart-pretrain",
            {"scale": scale, args.section: {"mbart_pretrain": asdict(settings)}},
        )
    print(json.dumps({k: summary[k] for k in ("updates", "first_valid_loss", "last_valid_loss")}))
    return 0


def _train_settings(args: argparse.Namespace, sections: tuple[str, ...]):
    from mlrep.nmt.settings import TrainSettings

    return settings_from(args, TrainSettings, sections, seed=args.seed, threads=args.threads)


def _add_on_stale(parser: argparse.ArgumentParser) -> None:
    from mlrep.nmt.settings import ON_STALE

    parser.add_argument(
        "--on-stale",
        choices=ON_STALE,
        default=ON_STALE[0],
        help="checkpoints in --out trained on other settings or data: refuse them, or delete "
        "them and train anew (the workflow's rules, which rerun a run whose inputs changed)",
    )


def _run_training(args: argparse.Namespace, data_bin: Path, variant, settings, scale: str) -> int:
    """Train `settings` on `data_bin` into ``--out`` (from ``--init`` where the verb has it),
    record and print the run."""
    from mlrep.nmt.train import train

    init = getattr(args, "init", None)
    summary = train(data_bin, args.out, args.name, variant, settings, init, args.on_stale)
    record(args.out, "nmt train", {"scale": scale, args.section: {"train": summary["settings"]}})
    print(json.dumps({k: summary[k] for k in ("system", "updates", "best_valid_loss")}))
    return 0


def _train(args: argparse.Namespace) -> int:
    from mlrep.nmt.train import depth
    from mlrep.nmt.variant import Variant

    scale, settings = _train_settings(
        args, (f"{args.section}.datasets.{args.dataset}", f"{args.section}.train")
    )
    if settings.interlingua != "none" and args.tag_format != "s-enc-t-dec":
        # T-ENC's encoder input starts with the target's tag, which would pass for the source's
        raise UsageError(
            f"--interlingua {settings.interlingua} reads the source language from its tag: "
            "train it with --tag-format s-enc-t-dec"
        )
    variant = Variant.of(
        depth(settings),
        args.layernorm,
        args.layernorm_simple,
        args.encoder_final_norm,
        args.middle_residual,
    )
    return _run_training(args, args.data / args.tag_format / "bin", variant, settings, scale)


def _pair_train(args: argparse.Namespace) -> int:
    from mlrep.nmt import pair
    from mlrep.nmt.train import depth
    from mlrep.nmt.variant import Variant

    scale, settings = _train_settings(args, (f"{args.section}.{args.stage}",))
    variant = Variant.of(depth(settings), "post", False, True, True)
    return _run_training(args, args.data / pair.BIN, variant, settings, scale)


def _pair_sets(args: argparse.Namespace) -> dict[str, list[tuple[Path, Path]]]:
    """The (source, target) files of ``--train-source``/``--train-target`` and of valid."""
    given = {
        "train": (args.train_source, args.train_target),
        "valid": (args.valid_source, args.valid_target),
    }
    for split, (sources, targets) in given.items():
        if len(sources) != len(targets):
            raise UsageError(
                f"--{split}-source has {len(sources)} files, --{split}-target {len(targets)}: "
                "give one target file for each source file, in the same order"
            )
    return {split: list(zip(*files, strict=True)) for split, files in given.items()}


def _pair_pretrain(args: argparse.Namespace) -> int:
    from mlrep.nmt import pair

    sets = _pair_sets(args)
    with atomic_directory(args.out) as staging:
        summary = pair.pretrain(staging, args.languages, sets, args.finetune_text)
        record(staging, "nmt pair-pretrain", {"scale": scale_of(args), "pair": summary})
    print(json.dumps({"lines": summary["lines"], "tokens": summary["dictionary"]["tokens"]}))
    return 0


def _pair_finetune(args: argparse.Namespace) -> int:
    from mlrep.nmt import pair
    from mlrep.nmt.data import Direction

    sets = _pair_sets(args)
    with atomic_directory(args.out) as staging:
        summary = pair.finetune(
            staging, args.dict, Direction.parse(args.direction), sets, args.train_lines
        )
        record(staging, "nmt pair-finetune", {"scale": scale_of(args), "pair": summary})
    print(json.dumps({"direction": summary["direction"], "lines": summary["lines"]}))
    return 0


def _translator(args: argparse.Namespace):
    from mlrep.nmt.decode import Translator
    from mlrep.nmt.prepare import tag_style
    from mlrep.nmt.settings import BeamSettings
    from mlrep.nmt.train import BEST

    scale, beam = settings_from(args, BeamSettings, (f"{args.section}.decode",))
    data_bin = args.data / args.tag_format / "bin"
    translator = Translator(args.model / BEST, data_bin, args.tag_format, tag_style(args.data))
    return scale, asdict(beam), translator, beam


def _translate(args: argparse.Namespace) -> int:
    import torch

    from mlrep.nmt.translate import translate

    torch.set_num_threads(args.threads)
    scale, decode, translator, beam = _translator(args)
    with atomic_directory(args.out) as staging:
        summary = translate(
            translator,
            args.data,
            staging,
            beam,
            pivot=args.pivot,
            gold_length=args.gold_length,
            supervised=args.supervised,
        )
        record(staging, "nmt translate", {"scale": scale, args.section: {"decode": decode}})
    print(json.dumps({"lines": sum(summary["lines"].values()), "pivot": args.pivot}))
    return 0


def _states(args: argparse.Namespace) -> int:
    import torch

    from mlrep.nmt.settings import StatesSettings
    from mlrep.nmt.states import write_all

    torch.set_num_threads(args.threads)
    scale, decode, translator, beam = _translator(args)
    _, settings = settings_from(args, StatesSettings, (f"{args.section}.states",))
    states = asdict(settings)
    with atomic_directory(args.out) as staging:
        sizes = write_all(translator, args.data, args.hyp, staging, settings.sentences, beam)
        record(
            staging,
            "nmt states",
            {"scale": scale, args.section: {"decode": decode, "states": states}},
        )
    print(json.dumps(sizes))
    return 0


def _retrieval(args: argparse.Namespace) -> int:
    """Chapter 5's validation sentence and word retrieval P@1 (`mlrep.nmt.retrieval`)."""
    import torch

    from mlrep.nmt.decode import load_model
    from mlrep.nmt.retrieval import analyse
    from mlrep.nmt.settings import RetrievalSettings
    from mlrep.nmt.train import BEST

    torch.set_num_threads(args.threads)
    scale, settings = settings_from(args, RetrievalSettings, (f"{args.section}.retrieval",))
    model, task, _ = load_model(args.model / BEST, args.data / args.tag_format / "bin")
    result = analyse(
        model.encoder,
        task.source_dictionary,
        args.prepared,
        args.data,
        args.tag_format,
        settings.batch_tokens,
    )
    config = asdict(settings) | {"tag_format": args.tag_format}
    atomic_write_text(args.out, json.dumps(result | {"settings": config}, indent=1) + "\n")
    record(args.out.parent, "nmt retrieval", {"scale": scale, args.section: {"retrieval": config}})
    print(json.dumps({k: round(v, 2) for k, v in result["metrics"].items()}))
    return 0


Held = dict[tuple[str, str, str], tuple[Path, Path]]  # (set, language, task) -> pair files


def _accuracy_pairs(args: argparse.Namespace) -> Held:
    """``--pairs``: (set, language, task) -> (source, target) files, each key once."""
    files: Held = {}
    for held_set, lang, name, source, target in args.pairs:
        if (held_set, lang, name) in files:
            raise UsageError(
                f"--pairs {held_set} {lang} {name} is given twice: one pair of files per task"
            )
        files[held_set, lang, name] = (Path(source), Path(target))
    return files


@dataclass(frozen=True)
class _Scored:
    """One ``--model``: what it is, where it is, where its metrics go, what it is scored on
    (language -> task -> the ``--pairs`` key)."""

    run: str
    seed: int
    model: Path
    data: Path
    out: Path
    sides: dict[str, dict[str, tuple[str, str, str]]]


def _accuracy_models(args: argparse.Namespace, files: Held) -> list[_Scored]:
    """``--model``: each model and the ``--pairs`` it is scored on, by SET:LANG:TASK."""
    models = []
    for run, seed, model, data, out, keys in args.model:
        where = f"--model {run} seed {seed}"
        if not seed.isdigit():
            raise UsageError(f"{where}: the seed is not a whole number")
        sides: dict[str, dict[str, tuple[str, str, str]]] = {}
        for key in keys.split(","):
            parts = tuple(key.split(":"))
            if len(parts) != 3 or parts not in files:
                raise UsageError(
                    f"{where}: {key!r} names no --pairs SET LANG TASK SOURCE TARGET; list the "
                    "pairs it is scored on as SET:LANG:TASK, comma-separated"
                )
            if parts[2] in sides.get(parts[1], {}):
                raise UsageError(f"{where}: {parts[1]} {parts[2]} is named twice")
            sides.setdefault(parts[1], {})[parts[2]] = parts
        models.append(_Scored(run, int(seed), Path(model), Path(data), Path(out), sides))
    return models


def _token_accuracy(args: argparse.Namespace) -> int:
    import torch

    from mlrep.nmt.pair import BIN
    from mlrep.nmt.settings import TokenAccuracySettings
    from mlrep.nmt.token_accuracy import evaluate, metrics, moved_words, read_sides
    from mlrep.nmt.train import BEST

    torch.set_num_threads(args.threads)
    scale, settings = settings_from(
        args, TokenAccuracySettings, (f"{args.section}.token_accuracy",)
    )
    files = _accuracy_pairs(args)
    models = _accuracy_models(args, files)
    # every file read before the first model is loaded
    held: dict[str, dict[str, tuple[Path, Path]]] = {}
    for (held_set, lang, name), paths in files.items():
        held.setdefault(f"{held_set}/{lang}", {})[name] = paths
    pairs = read_sides(held)
    moved = [moved_words(m.data) for m in models]
    documents = []
    for m, reordering in zip(models, moved, strict=True):
        sides = {
            lang: {name: pairs[f"{key[0]}/{lang}"][name] for name, key in tasks.items()}
            for lang, tasks in m.sides.items()
        }
        result = evaluate(m.model / BEST, m.data / BIN, sides, settings.batch_size)
        values = {k: v for lang, r in result.items() for k, v in metrics(r, lang).items()}
        details = {"token_accuracy": result, "batch_size": settings.batch_size}
        documents.append((m, values | reordering, details))
    for m, values, details in documents:  # written once every model is scored
        write(m.out, args.section, m.run, m.seed, scale, values, **details)
        record(m.out.parent, "nmt token-accuracy", {"scale": scale, "run": m.run})
        print(
            json.dumps({"run": m.run, "seed": m.seed} | {k: round(v, 2) for k, v in values.items()})
        )
    return 0


def _pair_translate(args: argparse.Namespace) -> int:
    import torch

    from mlrep.nmt.data import Direction
    from mlrep.nmt.decode import PairTranslator
    from mlrep.nmt.settings import BeamSettings
    from mlrep.nmt.train import BEST
    from mlrep.nmt.translate import translate_pair

    torch.set_num_threads(args.threads)
    _, beam = settings_from(args, BeamSettings, (f"{args.section}.decode",))
    translator = PairTranslator(args.model / BEST, args.data_bin)
    hypotheses = translate_pair(translator, args.source, Direction.parse(args.direction), beam)
    atomic_write_text(args.out, "".join(line + "\n" for line in hypotheses))
    print(json.dumps({"direction": args.direction, "lines": len(hypotheses), **asdict(beam)}))
    return 0


def _pair_score(args: argparse.Namespace) -> int:
    from mlrep.evaluate.mt import wat_segmenter
    from mlrep.io import read_lines
    from mlrep.nmt.data import Direction, NmtDataError
    from mlrep.nmt.score import pair_bleu

    d = Direction.parse(args.direction)
    hypotheses, references, sources = (
        read_lines(path, NmtDataError) for path in (args.hyp, args.reference, args.source)
    )
    result = pair_bleu(hypotheses, references, sources, d, wat_segmenter(d.tgt, args.backend))
    doc = write(
        args.out,
        args.section,
        args.run,
        args.seed,
        scale_of(args),
        result["metrics"],
        bleu_stats=result["bleu_stats"],
        signatures=result["signatures"],
        directions=result["directions"],
    )
    record(args.out.parent, "nmt pair-score", {"scale": doc["scale"], "run": args.run})
    print(json.dumps({k: round(v, 2) for k, v in doc["metrics"].items()}))
    return 0


def _decoded(args: argparse.Namespace) -> list:
    """The directions translate wrote (every test direction, or the pivot's zero-shot ones)."""
    from mlrep.nmt.data import Direction, directions, read_stats

    languages = read_stats(args.data / "text")["languages"]
    wanted = [Direction.parse(p.stem) for p in sorted(args.hyp.glob("*.hyp"))]
    order = {d: i for i, d in enumerate(directions(languages))}
    return sorted(wanted, key=order.__getitem__)


def _score(args: argparse.Namespace) -> int:
    from mlrep.evaluate import mt
    from mlrep.nmt.score import score

    protocol = mt.Protocol(args.protocol)
    if protocol.name in ("chrf++", "comet"):
        raise UsageError(f"--protocol {protocol.name} is no BLEU protocol; see `--help`")
    result = score(args.hyp, args.data / "text", _decoded(args), protocol)
    atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: round(v, 2) for k, v in result["metrics"].items() if "_bleu" in k}))
    return 0


def _bleurt(args: argparse.Namespace) -> int:
    import torch

    from mlrep.evaluate.bleurt import load
    from mlrep.nmt.score import bleurt
    from mlrep.nmt.settings import BleurtSettings

    torch.set_num_threads(args.threads)
    _, settings = settings_from(args, BleurtSettings, (f"{args.section}.bleurt",))
    if not settings.checkpoint:
        raise UsageError(f"{args.section}.bleurt.checkpoint is empty: BLEURT is not run here")
    scorer = load(settings.checkpoint)
    result = bleurt(args.hyp, args.data / "text", _decoded(args), scorer, settings.batch_size)
    result["settings"] = asdict(settings) | {"device": scorer.device}
    atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: round(v, 2) for k, v in result["metrics"].items() if "_bleurt" in k}))
    return 0


def _metrics(args: argparse.Namespace) -> int:
    from mlrep.io import read_lines
    from mlrep.nmt import metrics, valid_log
    from mlrep.nmt.data import PIVOT, Direction, NmtDataError, read_pair
    from mlrep.nmt.prepare import read_subwords
    from mlrep.report.metrics import FLOOR

    scores = json.loads(args.scores.read_text(encoding="utf-8"))
    zero_shot = [
        Direction.parse(name) for name, v in scores["directions"].items() if v["zero_shot"]
    ]
    extra: dict[str, float] = {}
    sentence_scores: dict[str, list[float]] = {}
    groups = dict(scores.get("groups", {}))
    if zero_shot:
        model_path = Path(args.off_target_model_path) if args.off_target_model_path else None
        # the rate of the hypotheses, and of the copied sources (its floor)
        sides = {
            "": {d: read_lines(args.hyp / f"{d.name}.hyp", NmtDataError) for d in zero_shot},
            FLOOR: {d: read_pair(args.data / "text", "test", d)[0] for d in zero_shot},
        }
        for prefix, lines in sides.items():
            name = prefix + "zst_off_target"
            extra[name], rates, sentence_scores[name], groups[name] = metrics.off_target(
                lines, args.off_target_model, model_path
            )
            extra.update({f"{prefix}off_target_{d}": rate for d, rate in rates.items()})
    probes = {
        name: path for name, path in (("sup", args.probe_sup), ("zst", args.probe_zst)) if path
    }
    extra.update(metrics.layer_metrics(probes, args.svcca))
    if args.valid_log:
        rows = valid_log.read(args.valid_log)
        losses = valid_log.epoch_nmt_losses(rows)
        extra.update({f"valid_nmt_loss_{epoch}": loss for epoch, loss in losses.items()})
        extra.update(valid_log.curves(rows))
    for analysis in (args.bleurt, args.retrieval):
        if analysis:
            found = json.loads(analysis.read_text(encoding="utf-8"))
            extra.update(found["metrics"])
            # retrieval: per-retrieval scores and chance floors, for the claims' bootstrap
            sentence_scores.update(found.get("sentence_scores", {}))
            groups.update(found.get("groups", {}))
    bleu_stats = dict(scores["bleu_stats"])
    if args.gold_scores:
        gold, gold_stats, gold_groups = metrics.gold_metrics(
            json.loads(args.gold_scores.read_text(encoding="utf-8"))
        )
        extra.update(gold)
        bleu_stats.update(gold_stats)
        groups.update(gold_groups)
    if any(args.hyp.glob("*.len")):  # an interlingua model's decode
        to_english = [d for d in map(Direction.parse, scores["directions"]) if d.tgt == PIVOT]
        references = {d: read_subwords(args.data, "test", d)[1] for d in to_english}
        extra.update(metrics.length_metrics(args.hyp, references))
    scale = scale_of(args)
    doc = write(
        args.out,
        args.section,
        args.run,
        args.seed,
        scale,
        {**scores["metrics"], **extra},
        bleu_stats=bleu_stats,
        sentence_scores=sentence_scores,
        groups=groups,
        signatures=scores["signatures"],
        directions=scores["directions"],
    )
    record(
        args.out.parent, "nmt metrics", {"scale": doc["scale"], "run": args.run, "seed": args.seed}
    )
    print(
        json.dumps(
            {
                k: round(v, 2)
                for k, v in doc["metrics"].items()
                if k.startswith(("zst", "sup", "gold_to", "len_acc"))
            }
        )
    )
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from mlrep.nmt.data import FAIRSEQ, TAG_STYLES, TAGS
    from mlrep.nmt.settings import (
        TRAIN_VERB_SET,
        BeamSettings,
        BleurtSettings,
        DatasetSettings,
        DataSettings,
        MbartPretrainSettings,
        RetrievalSettings,
        StatesSettings,
        TokenAccuracySettings,
        TrainSettings,
    )
    from mlrep.nmt.variant import PLACEMENTS

    nmt = top.add_parser("nmt", help="multilingual NMT on fairseq")
    sub = nmt.add_subparsers(dest="nmt_command", required=True)
    base = _base(common)

    prep = sub.add_parser(
        "prepare", parents=[base], help="cut a dataset from preprocessed sets, binarise"
    )
    prep.add_argument(
        "--encoded",
        type=Path,
        nargs="+",
        required=True,
        help="subword files <split>.<pair>.<lang> of the preprocessing (`snakemake preprocess`)",
    )
    prep.add_argument(
        "--raw", type=Path, nargs="+", required=True, help="the corpus file of each, in order"
    )
    prep.add_argument(
        "--subword-method",
        choices=("subword_nmt", "sentencepiece"),
        required=True,
        help="how the subwords were made (decoding merges them back)",
    )
    prep.add_argument(
        "--backend",
        choices=("mosestokenizer", "sacremoses"),
        required=True,
        help="the Moses tokenizer's (decoding detokenizes with it)",
    )
    prep.add_argument(
        "--segmented", nargs="*", default=[], help="languages word-segmented instead of Moses"
    )
    prep.add_argument("--dataset", required=True, help="dataset name (params datasets.<name>)")
    prep.add_argument(
        "--dictionary",
        type=Path,
        help="binarise with this dictionary (the dict.txt `mlrep nmt mbart-init` wrote) and "
        "mBART's language tokens [xx_YY] as tags; left out: the dataset's own, tags __xx__",
    )
    prep.add_argument("--out", type=Path, required=True)
    add_options(prep, DataSettings)
    add_options(prep, DatasetSettings)
    prep.set_defaults(func=_prepare)

    mix = sub.add_parser("mono-mix", help="temperature-sampled mix of monolingual text (MC24)")
    mix.add_argument(
        "--input",
        type=_lang_file,
        nargs="+",
        required=True,
        help="<lang>=<file>: each language's word-tokenized monolingual text",
    )
    mix.add_argument(
        "--temperature", type=positive_float, default=5.0, help="T of q_i ∝ (n_i/N)^(1/T) (5)"
    )
    mix.add_argument(
        "--total", type=positive_int, help="lines in the mix (default: all input lines)"
    )
    mix.add_argument(
        "--fixed", nargs="*", default=[], help="languages kept whole, ratio 1 (mRASP2: nl pl pt)"
    )
    mix.add_argument("--seed", type=int, required=True, help="seed of the subsets")
    mix.add_argument("--out", type=Path, required=True, help="folder: mono.<lang>, mix.json")
    mix.set_defaults(func=_mono_mix)

    spar = sub.add_parser("self-parallel", help="tag (C(x), x) pairs as direction xx→xx")
    spar.add_argument("--lang", required=True, help="the language of the original text")
    spar.add_argument("--source", type=Path, required=True, help="C(x): augmented subwords")
    spar.add_argument("--target", type=Path, required=True, help="x: the original subwords")
    spar.add_argument("--tag-format", choices=TAGS, required=True)
    spar.add_argument("--tag-style", choices=TAG_STYLES, default=FAIRSEQ)
    spar.add_argument(
        "--drop-unchanged",
        type=boolean,
        default=True,
        help="leave out pairs whose C(x) is x, as mRASP's RAS script does (true)",
    )
    spar.add_argument("--out-source", type=Path, required=True)
    spar.add_argument("--out-target", type=Path, required=True)
    spar.set_defaults(func=_self_parallel)

    lnk = sub.add_parser(
        "links",
        parents=[common],
        help="binarise a prepared dataset with its word links as subword links",
    )
    lnk.add_argument("--data", type=Path, required=True, help="prepared dataset folder")
    lnk.add_argument(
        "--encoded", type=Path, nargs="+", required=True, help="the subword files it was cut from"
    )
    lnk.add_argument(
        "--tokens", type=Path, nargs="+", required=True, help="their token files (`tok`)"
    )
    lnk.add_argument(
        "--links",
        type=_link_key,
        nargs="+",
        required=True,
        help="<split>.en-xx=<links file>: the word links of each aligned split and pair",
    )
    lnk.add_argument("--tag-formats", nargs="+", choices=TAGS, default=list(TAGS))
    lnk.add_argument("--out", type=Path, required=True)
    lnk.set_defaults(func=_links)

    mb = sub.add_parser(
        "mbart-init",
        parents=[common],
        help="check a released mBART checkpoint against its dict.txt and SentencePiece model, "
        "and write it as the init of a fine-tuning run",
    )
    mb.add_argument("--checkpoint", type=Path, required=True, help="the release's model.pt")
    mb.add_argument("--dict", type=Path, required=True, help="the release's dict.txt")
    mb.add_argument("--spm", type=Path, required=True, help="the release's sentence.bpe.model")
    mb.add_argument(
        "--arch",
        default="mlrep_transformer_mbart_large",
        help="the mlrep_transformer_mbart_* architecture of the checkpoint's size",
    )
    mb.add_argument(
        "--out", type=Path, required=True, help="folder of checkpoint.pt, dict.txt, train.json"
    )
    mb.set_defaults(func=_mbart_init)

    mbp = sub.add_parser(
        "mbart-pretrain",
        parents=[base],
        help="denoising-pre-train a tiny mBART stand-in on monolingual text, in the layout of "
        "an mBART release (mbart-init's input)",
    )
    mbp.add_argument(
        "--text", type=Path, required=True, help="folder of <lang>.txt (`mlrep data monolingual`)"
    )
    mbp.add_argument("--languages", nargs="+", required=True, help="the languages to pre-train on")
    mbp.add_argument("--spm", type=Path, required=True, help="SentencePiece model to cut with")
    mbp.add_argument(
        "--out", type=Path, required=True, help="folder of model.pt, dict.txt, sentence.bpe.model"
    )
    add_options(mbp, MbartPretrainSettings)
    mbp.set_defaults(func=_mbart_pretrain)

    trn = sub.add_parser(
        "train", parents=[base], help="train one system (resumes; exit 75 on preemption)"
    )
    trn.add_argument("--data", type=Path, required=True, help="prepared dataset folder")
    trn.add_argument("--dataset", required=True)
    trn.add_argument("--name", required=True, help="the run's name, recorded in train.json")
    trn.add_argument("--tag-format", choices=TAGS, required=True, help="language tag placement")
    trn.add_argument("--layernorm", choices=PLACEMENTS, default="post")
    trn.add_argument("--layernorm-simple", type=boolean, default=False, help="LN without affine")
    trn.add_argument("--encoder-final-norm", type=boolean, default=True, help="PreNorm's last LN")
    trn.add_argument(
        "--middle-residual", type=boolean, default=True, help="false: drop the middle layer's"
    )
    trn.add_argument(
        "--init",
        type=Path,
        help="checkpoint to fine-tune (mbart-init's checkpoint.pt, the data prepared with its "
        "--dictionary); a rerun resumes its own run",
    )
    trn.add_argument("--seed", type=int, required=True)
    trn.add_argument("--out", type=Path, required=True, help="checkpoint folder")
    _add_on_stale(trn)
    add_options(trn, TrainSettings, skip=TRAIN_VERB_SET)
    trn.set_defaults(func=_train)

    _register_pair(sub, common, base)

    decode = argparse.ArgumentParser(add_help=False)
    decode.add_argument("--data", type=Path, required=True, help="prepared dataset folder")
    decode.add_argument("--model", type=Path, required=True, help="checkpoint folder")
    decode.add_argument("--tag-format", choices=TAGS, required=True, help="as trained")
    decode.add_argument("--out", type=Path, required=True)
    add_options(decode, BeamSettings)

    tr = sub.add_parser("translate", parents=[base, decode], help="decode every test direction")
    tr.add_argument("--pivot", action="store_true", help="zero-shot directions through English")
    tr.add_argument(
        "--gold-length",
        type=boolean,
        default=False,
        help="X→en directions only, at the English reference's interlingua length (var models)",
    )
    tr.add_argument(
        "--supervised",
        action="store_true",
        help="the English-centric directions only (a chapter that evaluates no zero-shot)",
    )
    tr.set_defaults(func=_translate)

    st = sub.add_parser("states", parents=[base, decode], help="per-layer states for the probes")
    st.add_argument("--hyp", type=Path, required=True, help="translate's output folder")
    add_options(st, StatesSettings)
    st.set_defaults(func=_states)

    rt = sub.add_parser(
        "retrieval",
        parents=[base],
        help="validation sentence and word retrieval P@1 per pair (Chapter 5, Tables C.4-C.9)",
    )
    rt.add_argument(
        "--data", type=Path, required=True, help="`mlrep nmt links` folder (valid links, data-bin)"
    )
    rt.add_argument(
        "--prepared", type=Path, required=True, help="the prepared dataset it was binarised from"
    )
    rt.add_argument("--model", type=Path, required=True, help="checkpoint folder")
    rt.add_argument("--tag-format", choices=TAGS, required=True, help="as trained")
    rt.add_argument("--out", type=Path, required=True, help="retrieval.json")
    add_options(rt, RetrievalSettings)
    rt.set_defaults(func=_retrieval)

    ta = sub.add_parser(
        "token-accuracy",
        parents=[base],
        help="teacher-forced token accuracy on pre-training pairs (Tables 4.12, 4.13)",
    )
    ta.add_argument(
        "--pairs",
        nargs=5,
        action="append",
        required=True,
        metavar=("SET", "LANG", "TASK", "SOURCE", "TARGET"),
        help="one task's `mlrep text pretrain-pairs` files of held-out LANG text (repeat); SET "
        "names the text and its subwords (one per pair model)",
    )
    ta.add_argument(
        "--model",
        nargs=6,
        action="append",
        required=True,
        metavar=("RUN", "SEED", "MODEL", "DATA", "OUT", "PAIRS"),
        help="a model to score (repeat): its run name and seed, checkpoint folder, "
        "`pair-pretrain` folder, metrics.json, and the comma-separated SET:LANG:TASK --pairs "
        "it is scored on",
    )
    add_options(ta, TokenAccuracySettings)
    ta.set_defaults(func=_token_accuracy)

    sc = sub.add_parser("score", parents=[base], help="BLEU per direction")
    sc.add_argument("--data", type=Path, required=True)
    sc.add_argument("--hyp", type=Path, required=True)
    sc.add_argument("--out", type=Path, required=True)
    sc.add_argument(
        "--protocol",
        default="sacrebleu",
        help="a BLEU protocol of mlrep.evaluate.mt: sacrebleu[-13a|-zh|-ja-mecab], wat, mrasp2 "
        "(the chapter's scoring.name)",
    )
    sc.set_defaults(func=_score)

    bl = sub.add_parser("bleurt", parents=[base], help="BLEURT per direction (Table E.9)")
    bl.add_argument("--data", type=Path, required=True)
    bl.add_argument("--hyp", type=Path, required=True)
    bl.add_argument("--out", type=Path, required=True)
    add_options(bl, BleurtSettings)
    bl.set_defaults(func=_bleurt)

    mt = sub.add_parser("metrics", parents=[base], help="write a run's metrics.json")
    mt.add_argument("--scores", type=Path, required=True)
    mt.add_argument("--data", type=Path, required=True, help="prepared dataset (floors)")
    mt.add_argument("--hyp", type=Path, required=True)
    mt.add_argument("--run", required=True, help="<dataset>/<system>")
    mt.add_argument("--seed", type=int, required=True)
    mt.add_argument("--probe-sup", type=Path)
    mt.add_argument("--probe-zst", type=Path)
    mt.add_argument("--svcca", type=Path)
    mt.add_argument("--bleurt", type=Path, help="`mlrep nmt bleurt`'s output (full scale)")
    mt.add_argument("--retrieval", type=Path, help="`mlrep nmt retrieval`'s output (Chapter 5)")
    mt.add_argument(
        "--valid-log", type=Path, help="the run's valid.jsonl: the NMT loss at each epoch's end"
    )
    mt.add_argument(
        "--gold-scores", type=Path, help="`mlrep nmt score` of a --gold-length decode (Ch. 7)"
    )
    mt.add_argument("--off-target-model", choices=("lite", "full"), default="lite")
    mt.add_argument("--off-target-model-path", default="", help="lid.176.bin (model full)")
    mt.add_argument("--out", type=Path, required=True)
    mt.set_defaults(func=_metrics)


def _base(common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of every verb that reads a chapter's settings and computes."""
    base = argparse.ArgumentParser(add_help=False, parents=[common])
    base.add_argument("--section", required=True, help="the chapter's params.yaml section")
    base.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    return base


def _pair_steps() -> argparse.ArgumentParser:
    """The parser of one `pair-runs` step: the pair verbs themselves, so a step's options are
    theirs and are spelled nowhere else."""
    steps = argparse.ArgumentParser(prog="mlrep nmt pair-runs STEP")
    common = common_options()
    _register_pair(steps.add_subparsers(dest="step", required=True), common, _base(common))
    return steps


def _pair_runs(args: argparse.Namespace) -> int:
    """Run the steps in order in this process; stop at the first that fails."""
    steps, step = [], []
    for token in args.steps:
        if token == STEP_SEPARATOR:
            steps.append(step)
            step = []
        else:
            step.append(token)
    steps.append(step)
    if any(not step or step[0] == PAIR_RUNS for step in steps):
        raise UsageError(
            f"pair-runs: give pair verbs separated by {STEP_SEPARATOR!r}, e.g. "
            f"pair-train ... {STEP_SEPARATOR} pair-translate ... (none empty, none pair-runs)"
        )
    parser = _pair_steps()
    parsed = [parser.parse_args(step) for step in steps]  # every step checked before any runs
    # the job's options apply to every step that has them, so the steps do not repeat them
    shared = {"threads": args.threads, "scale": args.scale, "params": args.params}
    for number, step in enumerate(parsed, start=1):
        for name, value in shared.items():
            if hasattr(step, name):
                setattr(step, name, value)
        print(json.dumps({"step": number, "of": len(parsed), "verb": step.step}), flush=True)
        code = step.func(step)
        if code:
            return code
    return 0


def _register_pair(
    sub: argparse._SubParsersAction,
    common: argparse.ArgumentParser,
    base: argparse.ArgumentParser,
) -> None:
    """The pair-model verbs (Chapter 4's pre-train → fine-tune, `mlrep.nmt.pair`; decoding
    and scoring, `translate_pair` and `score.pair_bleu`)."""
    from mlrep.nmt.settings import TRAIN_VERB_SET, BeamSettings, TrainSettings

    def sets(parser: argparse.ArgumentParser, what: str) -> None:
        for split in ("train", "valid"):
            for side in ("source", "target"):
                parser.add_argument(
                    f"--{split}-{side}",
                    type=Path,
                    nargs="+",
                    required=True,
                    help=f"{what} {side} files of {split}, one per --{split}-"
                    f"{'target' if side == 'source' else 'source'} file, in its order",
                )

    pre = sub.add_parser(
        "pair-pretrain",
        parents=[common],
        help="a pair model's dictionary and pre-training data-bin",
    )
    pre.add_argument("--languages", nargs=2, required=True, help="the pair's two languages")
    sets(pre, "`mlrep text pretrain-pairs`")
    pre.add_argument(
        "--finetune-text",
        type=Path,
        nargs="*",
        default=[],
        help="subword files of the pair's fine-tuning bitexts (counted into the dictionary)",
    )
    pre.add_argument("--out", type=Path, required=True)
    pre.set_defaults(func=_pair_pretrain)

    fine = sub.add_parser(
        "pair-finetune",
        parents=[common],
        help="one direction's fine-tuning data-bin with the pair's dictionary",
    )
    fine.add_argument(
        "--dict",
        type=Path,
        help="dict.txt of `mlrep nmt pair-pretrain`; left out: the training sample's own "
        "(a model trained from scratch on its own BPE)",
    )
    fine.add_argument("--direction", required=True, help="<src>-<tgt>, e.g. ja-en")
    sets(fine, "subword")
    fine.add_argument(
        "--train-lines",
        type=int,
        default=0,
        help="train on the first N training pairs only (a nested sample; 0: all)",
    )
    fine.add_argument("--out", type=Path, required=True)
    fine.set_defaults(func=_pair_finetune)

    trn = sub.add_parser(
        "pair-train",
        parents=[base],
        help="pre-train or fine-tune a pair model (resumes; exit 75 on preemption)",
    )
    trn.add_argument("--data", type=Path, required=True, help="a pair-pretrain/-finetune folder")
    trn.add_argument(
        "--stage",
        required=True,
        help="params subsection <section>.<stage> with the settings not given (pretrain, …)",
    )
    trn.add_argument("--name", required=True, help="the run's name, recorded in train.json")
    trn.add_argument(
        "--init",
        type=Path,
        help="pre-trained checkpoint to fine-tune (its weights; a rerun resumes its own run)",
    )
    trn.add_argument("--seed", type=int, required=True)
    trn.add_argument("--out", type=Path, required=True, help="checkpoint folder")
    _add_on_stale(trn)
    add_options(trn, TrainSettings, skip=TRAIN_VERB_SET)
    trn.set_defaults(func=_pair_train)

    tr = sub.add_parser(
        "pair-translate",
        parents=[base],
        help="decode a test set with a fine-tuned pair model (words: BPE merged)",
    )
    tr.add_argument("--model", type=Path, required=True, help="the fine-tune's checkpoint folder")
    tr.add_argument("--data-bin", type=Path, required=True, help="its pair-finetune data-bin")
    tr.add_argument("--direction", required=True, help="<src>-<tgt>, as fine-tuned")
    tr.add_argument("--source", type=Path, required=True, help="test source subwords, untagged")
    tr.add_argument("--out", type=Path, required=True, help="hypotheses, one per line")
    add_options(tr, BeamSettings)
    tr.set_defaults(func=_pair_translate)

    sc = sub.add_parser(
        "pair-score",
        parents=[base],
        help="WAT-style BLEU of a pair model's test words into the run's metrics.json",
    )
    sc.add_argument("--hyp", type=Path, required=True, help="pair-translate's hypotheses")
    sc.add_argument("--reference", type=Path, required=True, help="test target words")
    sc.add_argument("--source", type=Path, required=True, help="test source words (the copy floor)")
    sc.add_argument("--direction", required=True, help="<src>-<tgt>")
    sc.add_argument(
        "--backend",
        choices=("mosestokenizer", "sacremoses"),
        required=True,
        help="the Moses tokenizer of the words (preprocess.tokenize.backend; signature)",
    )
    sc.add_argument("--run", required=True, help="the fine-tune's run id")
    sc.add_argument("--seed", type=int, required=True)
    sc.add_argument("--out", type=Path, required=True, help="the run's metrics.json")
    sc.set_defaults(func=_pair_score)

    runs = sub.add_parser(
        PAIR_RUNS,
        parents=[common],
        help="several pair verbs in one process, in order (fairseq starts once; tiny runs "
        "take seconds, so start-up would dominate one process per fine-tune)",
    )
    runs.add_argument("--threads", type=positive_int, default=1, help="CPU threads of each step")
    # --params and --scale (common) apply to every step too: the steps leave them out
    runs.add_argument(
        "steps",
        nargs=argparse.REMAINDER,
        help=f"pair verbs with their options, separated by {STEP_SEPARATOR!r}",
    )
    runs.set_defaults(func=_pair_runs)
