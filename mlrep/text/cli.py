"""``mlrep text …``: line-aligned preprocessing steps, each shardable for scatter/gather.

Every step reads one input file, optionally only shard ``--shard i`` of ``--shards n``
(contiguous blocks), writes one output line per input line, and writes ``OUTPUT.meta.json``
with the counts of processed, empty and overlong lines and the tool that ran
(`mlrep.text.lines`). ``mlrep text gather`` joins shards back in order.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, get_args

from mlrep.cliutil import (
    UsageError,
    add_options,
    fill,
    positive_int,
    probability,
    resolved_params,
    scale_of,
    settings_from,
)
from mlrep.io import atomic_directory, atomic_write_text
from mlrep.provenance import record
from mlrep.text import (
    augment,
    english,
    enju,
    external,
    knp,
    lines,
    moses,
    normalise,
    plan,
    pretrain_pairs,
    pretrain_tasks,
    segment,
    subwords,
)
from mlrep.text.head_final import HeadFinalSettings, arguments_from_json, head_finalize
from mlrep.text.tree import from_json, head_final_order

UNDO = ("normalize", "escape")  # TokenizeSettings fields detokenization has no use for
UNCAPPED = ("max_lines",)  # Limits fields of the steps after the corpus is read


def _shard_lines(args: argparse.Namespace, max_lines: int) -> tuple[list[str], int]:
    """The lines of this shard of the first `max_lines` input lines, and the input's length."""
    if (args.shard is None) != (args.shards is None):
        raise UsageError("--shard and --shards go together")
    return lines.read_block(args.input, max_lines, args.shard, args.shards)


def _run(
    args: argparse.Namespace,
    transform: Callable[[list[str]], list[str]],
    extra: dict[str, Any],
    passthrough: Callable[[str], str] = str,
    failed: Callable[[str], bool] | None = None,
    capped: bool = False,
) -> tuple[lines.Counts, list[str]]:
    """Apply `transform` to the (shard of the) input within ``preprocess.max_chars``; returns
    the counts and the lines it was given. Steps that read the corpus are `capped` to its
    first ``preprocess.max_lines`` lines; later steps keep every line they are given."""
    skip = () if capped else UNCAPPED
    scale, limits = settings_from(args, lines.Limits, ("preprocess",), skip=skip)
    max_lines = limits.max_lines
    source, total = _shard_lines(args, max_lines)
    if max_lines and total > max_lines:
        print(
            f"{args.input}: kept the first {max_lines} of {total} lines "
            "(preprocess.max_lines; --max-lines 0 keeps all)",
            file=sys.stderr,
        )
    out, counts = lines.process(source, transform, limits.max_chars, passthrough, failed)
    counts.extra = {
        "scale": scale,
        "input": str(args.input),
        "input_lines": total,
        "max_lines": max_lines,
        **extra,
    }
    _write(args.output, out, counts)
    return counts, source


def _write(path: Path, out: list[str], counts: lines.Counts) -> None:
    lines.write_output(path, out, counts)
    summary = {k: v for k, v in asdict(counts).items() if k != "extra"}
    print(json.dumps({"output": str(path), **summary}))


def _tokenize(args: argparse.Namespace) -> int:
    _, settings = settings_from(args, moses.TokenizeSettings, ("preprocess.tokenize",))
    opts = asdict(settings)
    steps = args.steps

    def transform(batch: list[str]) -> list[str]:
        return moses.tokenize(
            batch, args.lang, opts["backend"], opts["normalize"], opts["escape"], steps
        )

    tool = moses.backend_version(opts["backend"])
    extra = {"tool": tool, "lang": args.lang, **opts, "steps": steps}
    _run(args, transform, extra, capped=True)
    return 0


def _detokenize(args: argparse.Namespace) -> int:
    _, settings = settings_from(args, moses.TokenizeSettings, ("preprocess.tokenize",), skip=UNDO)

    def transform(batch: list[str]) -> list[str]:
        return moses.detokenize(batch, args.lang, settings.backend)

    extra = {"tool": moses.backend_version(settings.backend), "lang": args.lang}
    _run(args, transform, extra)
    return 0


def _knp_segmenter(args: argparse.Namespace) -> Callable[[list[str]], list[segment.Segmented]]:
    """The user's KNP analyses of the input's lines, in place of GiNZA."""
    return external.analyser(list(knp.read_knp(args.knp)), args.input, args.knp, lambda s: s.words)


def _segment(args: argparse.Namespace) -> int:
    if (args.bunsetsu or args.knp) and args.lang != "ja":
        raise UsageError("--bunsetsu and --knp are for Japanese (--lang ja) only")
    spans: dict[str, str] = {}
    if args.knp:
        analyse = _knp_segmenter(args)
        tool = f"KNP (read from its output {args.knp})"
    else:
        _, settings = settings_from(args, segment.SegmentSettings, ("preprocess.segment",))
        analyse = partial(segment.segment, lang=args.lang, knp_rules=settings.knp_rules)
        tool = segment.tool_version(args.lang, settings.knp_rules)

    def transform(batch: list[str]) -> list[str]:
        done = analyse(batch)
        for line, sentence in zip(batch, done, strict=True):
            spans[line] = segment.format_spans(sentence.bunsetsu)
        return [" ".join(s.words) for s in done]

    extra = {"tool": tool, "lang": args.lang}
    counts, source = _run(args, transform, extra, capped=True)
    if args.bunsetsu:
        _write(args.bunsetsu, [spans.get(line, "") for line in source], counts)
    return 0


def _read_knp(args: argparse.Namespace) -> int:
    sentences = list(knp.read_knp(args.input))
    counts = lines.Counts(lines=len(sentences), processed=len(sentences))
    counts.empty = sum(1 for s in sentences if not s.words)
    counts.extra = {"tool": "KNP (read from its output)", "input": str(args.input)}
    _write(args.output, [" ".join(s.words) for s in sentences], counts)
    _write(args.bunsetsu, [segment.format_spans(s.bunsetsu) for s in sentences], counts)
    return 0


def _enju_parser(args: argparse.Namespace) -> Callable[[list[str]], list[str]]:
    """The user's Enju trees of the input's lines, in place of the spaCy substitute."""
    trees = external.analyser(
        list(enju.read_enju(args.enju)), args.input, args.enju, lambda p: p.words
    )
    return lambda batch: [english.parse_line(*parsed) for parsed in trees(batch)]


def _parse(args: argparse.Namespace) -> int:
    if args.enju:
        transform = _enju_parser(args)
        tool = f"Enju (read from its XML output {args.enju})"
    else:
        transform = partial(english.parse, pretokenized=args.pretokenized)
        tool = english.tool_version()

    def passthrough(line: str) -> str:
        return english.parse_line(line.split(), None)

    def failed(line: str) -> bool:
        return json.loads(line)["tree"] is None

    extra = {"tool": tool, "pretokenized": args.pretokenized}
    _run(args, transform, extra, passthrough, failed, capped=True)
    return 0


def _read_enju(args: argparse.Namespace) -> int:
    parsed = list(enju.read_enju(args.input))
    counts = lines.Counts(lines=len(parsed), processed=len(parsed))
    counts.failed = sum(1 for _, tree in parsed if tree is None)
    counts.extra = {"tool": "Enju (read from its XML output)", "input": str(args.input)}
    _write(args.output, [english.parse_line(*sentence) for sentence in parsed], counts)
    return 0


def _tool_of(path: Path) -> str | None:
    """The tool that made `path`, from its metadata (None for a file made elsewhere)."""
    if not lines.meta_path(path).exists():
        return None
    return lines.read_counts(path).extra.get("tool")


def _head_final(args: argparse.Namespace) -> int:
    _, settings = settings_from(args, HeadFinalSettings, ("preprocess.head_final",))
    opts = asdict(settings)
    out: list[str] = []
    counts = lines.Counts()
    moved = total = 0
    for number, text in enumerate(lines.read_lines(args.input), start=1):
        counts.lines += 1
        if not text:
            counts.empty += 1
            out.append("")
            continue
        try:
            record_ = json.loads(text)
            words, tree = record_["words"], record_["tree"]
            arguments = arguments_from_json(record_.get("args"))
        except (json.JSONDecodeError, KeyError, TypeError, lines.TextInputError):
            raise lines.TextInputError(
                f"{args.input}:{number}: not a parse line; make it with `mlrep text parse`"
            ) from None
        counts.processed += 1
        node = None if tree is None else from_json(tree)
        if node is None:
            counts.failed += 1
        else:
            order = head_final_order(node)
            moved += sum(1 for position, index in enumerate(order) if position != index)
            total += len(order)
        out.append(" ".join(head_finalize(words, node, arguments, **opts)))
    one_to_one = not (opts["drop_articles"] or opts["pseudo_particles"])
    counts.extra = {
        "input": str(args.input),
        "parser": _tool_of(args.input),  # Enju or the spaCy substitute
        "reordering": "head finalization" + (", words 1:1" if one_to_one else ""),
        **opts,
        "moved_word_ratio": round(moved / total, 4) if total else None,  # thesis: 0.9197
    }
    _write(args.output, out, counts)
    return 0


def _pretrain_pairs(args: argparse.Namespace) -> int:
    if args.section:
        scale, settings = settings_from(args, pretrain_tasks.TaskSettings, (args.section,))
    else:  # every field is omissible: the published settings
        settings = fill(args, pretrain_tasks.TaskSettings, dict, "the published settings")
        scale = args.scale
    pretrain_pairs.check_inputs(args.tasks, args.bunsetsu is not None, args.trees is not None)
    sentences = pretrain_pairs.read_sentences(args.input, args.bunsetsu, args.trees)
    words = [w for s in sentences if s is not None for w in s.words]
    pieces = pretrain_pairs.subword_pieces(args.model, words)
    pairs, counts = pretrain_pairs.make_pairs(
        sentences, args.tasks, args.lang, args.seed, settings, pieces
    )
    counts.extra |= {
        "scale": scale,
        "input": str(args.input),
        "bunsetsu": args.bunsetsu and str(args.bunsetsu),
        "trees": args.trees and str(args.trees),
        "parser": args.trees and _tool_of(args.trees),
        "subwords": args.model and str(args.model),
    }
    _write(args.source, [source for source, _ in pairs], counts)
    _write(args.target, [target for _, target in pairs], counts)
    return 0


def _dictionaries(args: argparse.Namespace) -> dict[str, augment.Dictionary]:
    """The ``--dictionary`` files in their ``--format``, each named by its file's stem
    (``en-de``); the synonym options only apply to the one synonym file."""
    if args.format == "muse":
        if args.lang or args.targets or args.max_depth is not None:
            raise UsageError("--lang, --targets and --max-depth are for --format synonym only")
        names = [path.stem for path in args.dictionary]
        if len(set(names)) < len(names):
            raise UsageError(f"--dictionary files need distinct names, got {names}")
        return {path.stem: augment.read_muse(path) for path in args.dictionary}
    if not args.lang:
        raise UsageError("--format synonym needs --lang, the language of the input's words")
    if len(args.dictionary) > 1:
        raise UsageError("--format synonym reads one file (it holds every language)")
    (path,) = args.dictionary
    return {path.stem: augment.read_synonyms(path, args.lang, args.targets, args.max_depth or 1)}


def _augment(args: argparse.Namespace) -> int:
    dictionaries = _dictionaries(args)
    source = lines.read_lines(args.input)
    target = args.target or args.input  # monolingual input: the self-parallel pair (C(x), x)
    if args.target and len(lines.read_lines(args.target)) != len(source):
        raise UsageError(f"{args.input} and {args.target} must have the same number of lines")
    out, stats = augment.augment(source, dictionaries, args.p, args.seed, args.per)
    counts = lines.Counts(lines=len(source))
    counts.empty = sum(1 for line in out if not line)
    counts.processed = counts.lines - counts.empty
    counts.extra = {
        "tool": "mlrep aligned augmentation (mRASP2 AA)",
        "input": str(args.input),
        "pair": {"source": str(args.output), "target": str(target)},
        "dictionary": [str(path) for path in args.dictionary],
        "format": args.format,
        "dictionary_words": {name: len(words) for name, words in dictionaries.items()},
        "per": args.per,
        "p": args.p,
        "seed": args.seed,
        **asdict(stats),
        "replaced_share": stats.replaced_share,  # paper Table 10: "% of replaced tokens"
    }
    _write(args.output, out, counts)
    return 0


def _induce_dictionary(args: argparse.Namespace) -> int:
    pairs, links = augment.read_aligned(args.source, args.target, args.alignment)
    dictionary = augment.induce(pairs, links, args.min_count, args.top, args.min_prob)
    augment.write_muse(dictionary, args.output)
    entries = sum(len(translations) for translations in dictionary.values())
    print(json.dumps({"output": str(args.output), "words": len(dictionary), "entries": entries}))
    return 0


def _synonym_graph(args: argparse.Namespace) -> int:
    """Bilingual MUSE files named ``<src>-<tgt>.*`` into one multilingual synonym file."""
    dictionaries: dict[tuple[str, str], augment.Dictionary] = {}
    for path in args.dictionary:
        src, _, tgt = path.name.split(".")[0].partition("-")
        if not (src and tgt) or "-" in tgt:
            raise UsageError(f"--dictionary files must be named <src>-<tgt>.<ext>, not {path}")
        if (src, tgt) in dictionaries:
            raise UsageError(f"--dictionary gives the pair {src}-{tgt} twice")
        dictionaries[src, tgt] = augment.read_muse(path)
    graph = augment.synonym_graph(dictionaries, args.max_depth)
    atomic_write_text(args.output, "".join(line + "\n" for line in graph))
    print(json.dumps({"output": str(args.output), "words": len(graph)}))
    return 0


def _gather(args: argparse.Namespace) -> int:
    total = lines.gather(args.parts, args.output)
    print(json.dumps({"output": str(args.output), "lines": total.lines}))
    return 0


def _subword_settings(args: argparse.Namespace) -> tuple[str, subwords.SubwordSettings]:
    """(scale, settings): explicit options over the params file's `--setting`/`--model`
    values."""

    def fallback() -> dict[str, Any]:
        if args.setting is None or args.model is None:
            raise UsageError(
                "give every subword option (--method --model-type --vocab-size "
                "--character-coverage --merges), or --setting and --model to read the rest "
                "from the params file"
            )
        return plan.subword_options(
            resolved_params(args.params)["preprocess"], args.setting, args.model
        )

    where = f"{args.params}: preprocess.subwords.settings.{args.setting}"
    return scale_of(args), fill(args, subwords.SubwordSettings, fallback, where)


def _train_subwords(args: argparse.Namespace) -> int:
    scale, settings = _subword_settings(args)
    with atomic_directory(args.out) as staging:
        if settings.method == "sentencepiece":
            subwords.train_sentencepiece(
                args.input,
                staging / "spm",
                settings.model_type,
                int(settings.vocab_size),
                float(settings.character_coverage),
                args.threads,
                max_lines=args.max_lines,
            )
        else:
            subwords.learn_bpe(
                args.input, staging / "bpe.codes", int(settings.merges), max_lines=args.max_lines
            )
        named = {
            "setting": args.setting,
            "model": args.model,
            **asdict(settings),
            "max_lines": args.max_lines,
        }
        record(staging, "text train-subwords", {"scale": scale, "preprocess": {"subwords": named}})
    return 0


def _encode_subwords(args: argparse.Namespace) -> int:
    spm_model, codes = args.model / "spm.model", args.model / "bpe.codes"
    if not (spm_model.exists() or codes.exists()):
        raise UsageError(f"{args.model}: no subword model; run `mlrep text train-subwords`")

    def transform(batch: list[str]) -> list[str]:
        if spm_model.exists():
            return subwords.encode_sentencepiece(spm_model, batch)
        return subwords.apply_bpe(codes, batch)

    tool = "sentencepiece" if spm_model.exists() else "subword-nmt"
    _run(args, transform, {"tool": tool, "model": str(args.model)})
    return 0


def _record(args: argparse.Namespace) -> int:
    """Provenance of a preprocessing folder: what ran for each output, read from its metadata
    (the facts of the run, not the params file, which may have changed since)."""
    outputs = {}
    for path in args.outputs:
        counts = lines.read_counts(path)
        outputs[str(path)] = {**counts.extra, "lines": counts.lines}
    record(args.out, "text record", {"scale": args.scale, "preprocess": {"outputs": outputs}})
    print(json.dumps({"out": str(args.out), "outputs": len(outputs)}))
    return 0


def _io(parser: argparse.ArgumentParser, sharded: bool = True) -> None:
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    if sharded:
        parser.add_argument("--shard", type=int, help="0-based shard to process")
        parser.add_argument("--shards", type=positive_int, help="number of shards")


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    text = top.add_parser("text", help="tokenization, segmentation, parsing, subwords")
    sub = text.add_subparsers(dest="text_command", required=True)

    tok = sub.add_parser("tokenize", parents=[common], help="Moses normalise + tokenize")
    _io(tok)
    tok.add_argument("--lang", required=True)
    add_options(tok, moses.TokenizeSettings)
    tok.add_argument(
        "--steps",
        nargs="*",
        default=[],
        choices=sorted(normalise.STEPS),
        help="language steps after normalisation (a dataset's preprocess.datasets.NAME.steps.LANG)",
    )
    add_options(tok, lines.Limits)
    tok.set_defaults(func=_tokenize)

    detok = sub.add_parser("detokenize", parents=[common], help="Moses detokenize")
    _io(detok)
    detok.add_argument("--lang", required=True)
    add_options(detok, moses.TokenizeSettings, skip=UNDO)
    add_options(detok, lines.Limits, skip=UNCAPPED)
    detok.set_defaults(func=_detokenize)

    seg = sub.add_parser("segment", parents=[common], help="ja/zh/ko/my/km word segmentation")
    _io(seg)
    seg.add_argument("--lang", required=True, choices=sorted(segment.SEGMENTERS))
    seg.add_argument("--bunsetsu", type=Path, help="also write Japanese bunsetsu spans here")
    seg.add_argument("--knp", type=Path, help="take words and bunsetsu from this KNP output")
    add_options(seg, segment.SegmentSettings)
    add_options(seg, lines.Limits)
    seg.set_defaults(func=_segment)

    rknp = sub.add_parser("read-knp", help="words + bunsetsu spans from KNP output")
    _io(rknp, sharded=False)
    rknp.add_argument("--bunsetsu", type=Path, required=True)
    rknp.set_defaults(func=_read_knp)

    parse = sub.add_parser("parse", parents=[common], help="English trees (spaCy substitute)")
    _io(parse)
    parse.add_argument("--pretokenized", action="store_true", help="input words are spaced")
    parse.add_argument("--enju", type=Path, help="take trees from this Enju XML output")
    add_options(parse, lines.Limits)
    parse.set_defaults(func=_parse)

    renju = sub.add_parser("read-enju", help="English trees from Enju XML output")
    _io(renju, sharded=False)
    renju.set_defaults(func=_read_enju)

    hf = sub.add_parser("head-final", parents=[common], help="head-finalized English")
    _io(hf, sharded=False)
    add_options(hf, HeadFinalSettings)
    hf.set_defaults(func=_head_final)

    pre = sub.add_parser(
        "pretrain-pairs", parents=[common], help="pre-training pairs (MASS, JASS, ENSS, …)"
    )
    pre.add_argument("--input", type=Path, required=True, help="words file, one sentence a line")
    pre.add_argument("--lang", required=True, help="the words' language (its tag: [Ja], [En])")
    pre.add_argument(
        "--tasks",
        nargs="+",
        required=True,
        choices=[*pretrain_tasks.TASKS, *pretrain_tasks.COMPOSITES],
        help="tasks whose pairs are made (shuffled together when several)",
    )
    pre.add_argument("--seed", type=int, required=True, help="seed of the masks and shuffles")
    pre.add_argument("--bunsetsu", type=Path, help="bunsetsu spans of the words (BMASS, BRSS)")
    pre.add_argument("--trees", type=Path, help="parse lines of the words (PMASS, HFSS)")
    pre.add_argument("--model", type=Path, help="subword model folder (none: whole words)")
    pre.add_argument("--source", type=Path, required=True, help="source lines written here")
    pre.add_argument("--target", type=Path, required=True, help="target lines written here")
    pre.add_argument("--section", help="params section (dotted) for options not given")
    add_options(pre, pretrain_tasks.TaskSettings)
    pre.set_defaults(func=_pretrain_pairs)

    aug = sub.add_parser("augment", help="mRASP2 aligned augmentation: dictionary substitution")
    _io(aug, sharded=False)
    aug.add_argument(
        "--dictionary", type=Path, nargs="+", required=True, help="dictionary files (muse: several)"
    )
    aug.add_argument("--format", required=True, choices=("muse", "synonym"))
    aug.add_argument(
        "--per",
        choices=get_args(augment.Per),
        default="word",
        help="several dictionaries: one drawn per line (sentence) or all pooled (word)",
    )
    aug.add_argument("--p", type=probability, default=0.9, help="replace probability (0.9)")
    aug.add_argument("--seed", type=int, required=True, help="seed of the substitutions")
    aug.add_argument("--target", type=Path, help="target side of a parallel input (none: mono)")
    aug.add_argument("--lang", help="synonym: the language code of the input's words")
    aug.add_argument("--targets", nargs="+", help="synonym: replacement languages (all)")
    aug.add_argument("--max-depth", type=positive_int, help="synonym: graph distance (1)")
    aug.set_defaults(func=_augment)

    ind = sub.add_parser("induce-dictionary", help="MUSE-format dictionary from 1-to-1 links")
    ind.add_argument("--source", type=Path, required=True, help="source token file")
    ind.add_argument("--target", type=Path, required=True, help="target token file")
    ind.add_argument("--alignment", type=Path, required=True, help="Pharaoh links i-j")
    ind.add_argument("--min-count", type=positive_int, default=2, help="least link count")
    ind.add_argument("--top", type=positive_int, default=5, help="translations per word")
    ind.add_argument("--min-prob", type=probability, default=0.1, help="least p(t|s) (0.1)")
    ind.add_argument("--output", type=Path, required=True, help="dictionary written here")
    ind.set_defaults(func=_induce_dictionary)

    syn = sub.add_parser(
        "synonym-graph", help="multilingual synonym dictionary from bilingual ones (mRASP)"
    )
    syn.add_argument(
        "--dictionary", type=Path, nargs="+", required=True, help="MUSE files <src>-<tgt>.txt"
    )
    syn.add_argument("--max-depth", type=positive_int, default=1, help="longest path (1-9)")
    syn.add_argument("--output", type=Path, required=True, help="synonym dictionary file")
    syn.set_defaults(func=_synonym_graph)

    gather = sub.add_parser("gather", help="join shard outputs in order")
    gather.add_argument("--output", type=Path, required=True)
    gather.add_argument("parts", type=Path, nargs="+")
    gather.set_defaults(func=_gather)

    rec = sub.add_parser("record", help="config.yaml + provenance.json of outputs' metadata")
    rec.add_argument("--out", type=Path, required=True, help="folder to record in")
    rec.add_argument("--scale", required=True)
    rec.add_argument("outputs", type=Path, nargs="+", help="files with a .meta.json beside them")
    rec.set_defaults(func=_record)

    train = sub.add_parser("train-subwords", parents=[common], help="joint subword model")
    train.add_argument("--input", type=Path, nargs="+", required=True)
    train.add_argument("--out", type=Path, required=True, help="model folder")
    add_options(train, subwords.SubwordSettings)
    train.add_argument("--threads", type=positive_int, default=1)
    train.add_argument(
        "--max-lines",
        type=int,
        default=0,
        help="learn on the first N lines of each input (a sample that prefixes it; 0: all)",
    )
    train.add_argument("--setting", help="preprocess.subwords.settings name (recorded)")
    train.add_argument("--model", help="the setting's model: a pair, or all (recorded)")
    train.set_defaults(func=_train_subwords)

    enc = sub.add_parser("encode-subwords", parents=[common], help="apply a subword model")
    _io(enc)
    enc.add_argument("--model", type=Path, required=True, help="folder from train-subwords")
    add_options(enc, lines.Limits, skip=UNCAPPED)
    enc.set_defaults(func=_encode_subwords)
