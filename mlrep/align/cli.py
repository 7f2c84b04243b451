"""``mlrep align …``: fast_align's command line, symmetrization, scoring, corpus helpers, and
Chapter 5's alignments: word2word lexicons (``lexicon``), their links (``extract``) and a
run's 1-to-1 links (``one-to-one``).

``mlrep align -i FILE -d -o -v [-r]`` reads ``src ||| tgt`` lines and prints Pharaoh links like
fast_align, with fast_align's defaults (not params.yaml's), so scripts written for fast_align
keep their meaning; rules pass every option explicitly with the long spellings
(``--favor-diagonal true``), which are the params.yaml ``align.aligner`` keys.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from mlrep.align import backends, bitext, cipher, lexicon, od, runs, symmetrize, units
from mlrep.align.pharaoh import format_links, read_alignments, read_gold, read_lines
from mlrep.align.score import score
from mlrep.align.subword import (
    SubwordMismatch,
    subwords_to_words,
    word_of_pieces,
    words_to_subwords,
)
from mlrep.cliutil import UsageError, positive_int
from mlrep.io import atomic_write_text, count_lines
from mlrep.provenance import record


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered not in {"true", "false", "1", "0", "yes", "no"}:
        raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (true or false)")
    return lowered in {"true", "1", "yes"}


def _probability(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not in [0, 1)")
    return value


def _emit(lines: list[str], out: Path | None) -> None:
    text = "".join(line + "\n" for line in lines)
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)


def _align(args: argparse.Namespace) -> int:
    if args.subcommand is not None:
        return args.subcommand(args)
    if args.input is None:
        raise UsageError("mlrep align needs -i FILE ('source ||| target' lines)")
    if args.backend == "fast_align" and args.max_length > backends.THOT_MAX_LENGTH:
        raise UsageError(
            f"--max-length {args.max_length}: the fast_align backend (sil-thot) handles at most "
            f"{backends.THOT_MAX_LENGTH} words per side; longer pairs must be skipped"
        )
    options = backends.Options(
        favor_diagonal=args.favor_diagonal,
        optimize_tension=args.optimize_tension,
        variational_bayes=args.variational_bayes,
        reverse=args.reverse,
        iterations=args.iterations,
        p0=args.p0,
        eflomal_model=args.eflomal_model,
        eflomal_samplers=args.eflomal_samplers,
    )
    text = bitext.read_bitext(args.input, args.max_length)
    links = backends.align(text, args.backend, options)
    _emit([format_links(line) for line in links], args.out)
    stats = {
        "input": str(args.input),
        "backend": args.backend,
        "package": f"{backends.PACKAGES[args.backend]} "
        f"{metadata.version(backends.PACKAGES[args.backend])}",
        "options": asdict(options),
        "max_length": args.max_length,
        "pairs": len(text),
        "aligned": len(text.kept()),
        "skipped": dict(text.skipped),
    }
    if args.stats:
        atomic_write_text(args.stats, json.dumps(stats, indent=2) + "\n")
    print(
        f"mlrep align: {len(text.kept())} of {len(text)} pairs aligned ({args.backend}, "
        f"{'reverse' if args.reverse else 'forward'}); skipped: {dict(text.skipped) or 0}",
        file=sys.stderr,
    )
    return 0


def _symmetrize(args: argparse.Namespace) -> int:
    forward, reverse = read_alignments(args.forward), read_alignments(args.reverse_links)
    if len(forward) != len(reverse):
        raise UsageError(
            f"{args.forward} has {len(forward)} lines but {args.reverse_links} has "
            f"{len(reverse)}: both directions must come from the same input"
        )
    lines = [
        format_links(symmetrize.symmetrize(args.method, f, r))
        for f, r in zip(forward, reverse, strict=True)
    ]
    _emit(lines, args.out)
    return 0


def _score(args: argparse.Namespace) -> int:
    scores = score(read_gold(args.gold), read_alignments(args.test))
    if args.json:
        print(json.dumps(scores.as_dict()))
    else:
        print(
            f"AER {scores.aer:.4f}  precision {scores.precision:.4f}  recall "
            f"{scores.recall:.4f}  ({scores.sentences} sentence pairs, {scores.test_links} "
            f"links, {scores.sure_links} sure, {scores.possible_links} possible)"
        )
    return 0


def _bitext(args: argparse.Namespace) -> int:
    """Join two line-aligned tokenized files, then any OD ones, into fast_align input split
    into shards."""
    od.write_bitext(
        (args.source, args.target), od.token_pairs(args.od_tokens, "--od-tokens"), args.out
    )
    return 0


def _gather(args: argparse.Namespace) -> int:
    config = None
    if _recording(args, method=args.method, stats=args.stats, tokens=args.tokens, scale=args.scale):
        config = runs.run_config(
            args.scale, args.method, args.stats, [*args.tokens, *args.od_tokens], len(args.inputs)
        )
    if args.od_tokens and not args.tokens:
        raise UsageError("--od-tokens needs --tokens (the in-domain lines whose links are kept)")
    od_lines = od.od_line_count(od.token_pairs(args.od_tokens, "--od-tokens"))
    lines = od.lines_of(args.inputs)
    if args.tokens:
        where = f"{', '.join(map(str, args.inputs))} (tokens {args.tokens[0]})"
        lines = od.cut(lines, count_lines(args.tokens[0], runs.RunError), od_lines, where)
    lines = list(lines)
    _emit(lines, args.out)
    if config is not None:
        runs.write_stats(args.out.parent, args.stats, lines, od_lines)
        record(args.out.parent, "align gather", config)
    return 0


def _cipher(args: argparse.Namespace) -> int:
    settings = cipher.CipherSettings(
        sentences=args.sentences, vocabulary=args.vocabulary, seed=args.seed
    )
    pairs = cipher.generate(settings)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        args.out / "bitext.txt",
        "".join(f"{' '.join(p.source)}{bitext.SEPARATOR}{' '.join(p.target)}\n" for p in pairs),
    )
    atomic_write_text(args.out / "gold.txt", "".join(format_links(p.links) + "\n" for p in pairs))
    print(f"{args.out}: {len(pairs)} sentence pairs, bitext.txt and gold.txt")
    return 0


def _subwords(args: argparse.Namespace) -> int:
    words, pieces = read_lines(args.words), read_lines(args.pieces)
    links = read_alignments(args.alignments)
    if not len(words) == len(pieces) == len(links):
        raise UsageError(
            f"{args.words}, {args.pieces} and {args.alignments} must have the same number of "
            f"lines ({len(words)}, {len(pieces)}, {len(links)})"
        )
    mapper = subwords_to_words if args.to_words else words_to_subwords
    lines = []
    for number, (w, p, a) in enumerate(zip(words, pieces, links, strict=True), start=1):
        w_src, w_tgt = bitext.split_pair(w, f"{args.words}:{number}")
        p_src, p_tgt = bitext.split_pair(p, f"{args.pieces}:{number}")
        try:
            owners = (word_of_pieces(w_src, p_src), word_of_pieces(w_tgt, p_tgt))
        except SubwordMismatch as exc:
            raise SubwordMismatch(f"{args.pieces}:{number}: {exc}") from None
        lines.append(format_links(mapper(a, *owners)))
    _emit(lines, args.out)
    return 0


def _recording(args: argparse.Namespace, **needed: object) -> bool:
    """Whether --record is given; it is refused without the `needed` options (the values its
    record is made of, by option name)."""
    if not args.record:
        return False
    missing = [f"--{name.replace('_', '-')}" for name, value in needed.items() if not value]
    if missing:
        raise UsageError(f"--record needs {', '.join(missing)}")
    return True


def _emit_links(lines: list[str], out: Path | None, config: dict | None, verb: str) -> None:
    """Print or write a run's link lines; with a `config` (--record), also its link
    statistics and provenance beside `out`."""
    _emit(lines, out)
    if config is not None:
        runs.write_link_stats(out.parent, lines)
        record(out.parent, verb, config)


def _lexicon(args: argparse.Namespace) -> int:
    settings = lexicon.LexiconSettings(
        translations=args.translations, width=args.width, collocates=args.collocates
    )
    tokens = [args.source, args.target]
    config = None
    if _recording(args, scale=args.scale, out=args.out):
        config = {
            "scale": args.scale,
            "lexicon": asdict(settings),
            "tokens": runs.token_tools(tokens),
        }
    pairs = bitext.read_token_pairs(args.source, args.target)
    table = lexicon.build(pairs, settings)
    lexicon.save(table, args.out)
    entries = sum(len(targets) for targets in table.values())
    if config is not None:
        counts = {"pairs": len(pairs), "source_words": len(table), "entries": entries}
        atomic_write_text(args.out.parent / "stats.json", json.dumps(counts, indent=2) + "\n")
        record(args.out.parent, "align lexicon", config)
    print(f"mlrep align lexicon: {entries} entries for {len(table)} source words", file=sys.stderr)
    return 0


def _extract(args: argparse.Namespace) -> int:
    tokens = [args.source, args.target]
    config = None
    if _recording(args, scale=args.scale, out=args.out):
        config = {
            "scale": args.scale,
            "lexicon": runs.recorded_config(args.lexicon.parent),
            "tokens": runs.token_tools(tokens),
        }
    table = lexicon.load(args.lexicon)
    lines = [
        format_links(lexicon.extract(table, source, target))
        for source, target in bitext.read_token_pairs(args.source, args.target)
    ]
    _emit_links(lines, args.out, config, "align extract")
    return 0


def _one_to_one(args: argparse.Namespace) -> int:
    config = None
    if _recording(args, scale=args.scale, out=args.out):
        config = {
            "scale": args.scale,
            "filter": "one-to-one",
            "run": runs.recorded_config(args.links.parent),
        }
    lines = [format_links(units.one_to_one(line)) for line in read_alignments(args.links)]
    _emit_links(lines, args.out, config, "align one-to-one")
    return 0


def _add_record_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        action="store_true",
        help="also write stats.json, config.yaml, provenance.json beside --out",
    )
    parser.add_argument("--scale", help="scale (recorded)")


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    del common  # the aligner keeps fast_align's defaults; the helpers take explicit paths
    align = top.add_parser(
        "align",
        help="word alignment (fast_align's command line; subcommands below)",
        description="Without a subcommand: align -i FILE like fast_align, Pharaoh on stdout.",
    )
    align.add_argument("-i", "--input", type=Path, help="'source ||| target' lines")
    align.add_argument("-d", dest="favor_diagonal", action="store_true", help="favor diagonal")
    align.add_argument("--favor-diagonal", dest="favor_diagonal", type=_boolean)
    align.add_argument("-o", dest="optimize_tension", action="store_true", help="optimize tension")
    align.add_argument("--optimize-tension", dest="optimize_tension", type=_boolean)
    align.add_argument(
        "-v", dest="variational_bayes", action="store_true", help="variational Bayes"
    )
    align.add_argument("--variational-bayes", dest="variational_bayes", type=_boolean)
    align.add_argument("-r", "--reverse", action="store_true", help="reverse direction")
    align.add_argument("-I", "--iterations", type=positive_int, default=5)
    align.add_argument("-q", "--p0", type=_probability, default=0.08, help="NULL probability")
    align.add_argument("--backend", choices=backends.BACKENDS, default="fast_align")
    align.add_argument("--max-length", type=positive_int, default=backends.THOT_MAX_LENGTH)
    align.add_argument("--eflomal-model", type=int, choices=(1, 2, 3), default=3)
    align.add_argument("--eflomal-samplers", type=positive_int, default=3)
    align.add_argument("--out", type=Path, help="write here (atomically) instead of stdout")
    align.add_argument("--stats", type=Path, help="JSON: pairs aligned and skipped, options")
    align.set_defaults(func=_align, subcommand=None)
    sub = align.add_subparsers(dest="align_command")

    sym = sub.add_parser("symmetrize", help="combine forward and reverse links (atools)")
    sym.add_argument("--method", choices=symmetrize.METHODS, required=True)
    sym.add_argument("forward", type=Path)
    sym.add_argument("reverse_links", metavar="reverse", type=Path)
    sym.add_argument("--out", type=Path)
    sym.set_defaults(subcommand=_symmetrize)

    sc = sub.add_parser("score", help="AER, precision, recall against sure/possible gold")
    sc.add_argument("--gold", type=Path, required=True, help="i-j sure, i?j possible")
    sc.add_argument("--test", type=Path, required=True)
    sc.add_argument("--json", action="store_true")
    sc.set_defaults(subcommand=_score)

    bt = sub.add_parser("bitext", help="join two tokenized line-aligned files (fast_align input)")
    bt.add_argument("--source", type=Path, required=True, help="tokens, space-separated")
    bt.add_argument("--target", type=Path, required=True, help="tokens, space-separated")
    bt.add_argument(
        "--od-tokens",
        type=Path,
        nargs="*",
        default=[],
        help="out-of-domain source and target token files, pair by pair, appended in order",
    )
    bt.add_argument("--out", type=Path, nargs="+", required=True, help="one file per shard")
    bt.set_defaults(subcommand=_bitext)

    ga = sub.add_parser("gather", help="concatenate shard outputs in order")
    ga.add_argument("inputs", type=Path, nargs="+")
    ga.add_argument("--out", type=Path, required=True)
    ga.add_argument(
        "--record",
        action="store_true",
        help="also write stats.json, config.yaml, provenance.json beside --out",
    )
    ga.add_argument("--method", choices=symmetrize.METHODS, help="symmetrization (recorded)")
    ga.add_argument("--stats", type=Path, nargs="+", help="the directions' --stats files")
    ga.add_argument(
        "--tokens",
        type=Path,
        nargs=2,
        help="the in-domain source and target token files: the links kept are theirs",
    )
    ga.add_argument(
        "--od-tokens",
        type=Path,
        nargs="*",
        default=[],
        help="the out-of-domain token files aligned after them (as given to `bitext`)",
    )
    ga.add_argument("--scale", help="scale (recorded)")
    ga.set_defaults(subcommand=_gather)

    ci = sub.add_parser("cipher", help="synthetic parallel corpus with gold alignments")
    ci.add_argument("--out", type=Path, required=True)
    ci.add_argument("--sentences", type=positive_int, default=2000)
    ci.add_argument("--vocabulary", type=positive_int, default=2000)
    ci.add_argument("--seed", type=int, default=1)
    ci.set_defaults(subcommand=_cipher)

    sw = sub.add_parser("subwords", help="map links between words and subwords")
    sw.add_argument("--words", type=Path, required=True, help="'src ||| tgt' word lines")
    sw.add_argument("--pieces", type=Path, required=True, help="'src ||| tgt' subword lines")
    sw.add_argument("--alignments", type=Path, required=True)
    sw.add_argument("--to-words", action="store_true", help="subword links to word links")
    sw.add_argument("--out", type=Path)
    sw.set_defaults(subcommand=_subwords)

    defaults = lexicon.LexiconSettings()
    lx = sub.add_parser("lexicon", help="word2word lexicon (CPE) of a tokenized bitext")
    lx.add_argument("--source", type=Path, required=True, help="tokens, space-separated")
    lx.add_argument("--target", type=Path, required=True, help="tokens, space-separated")
    lx.add_argument(
        "--out", type=Path, required=True, help="the lexicon (source TAB target TAB score)"
    )
    lx.add_argument("--translations", type=positive_int, default=defaults.translations)
    lx.add_argument(
        "--width", type=positive_int, default=defaults.width, help="candidates re-ranked"
    )
    lx.add_argument(
        "--collocates",
        type=positive_int,
        default=defaults.collocates,
        help="most frequent source words that count as collocates",
    )
    _add_record_options(lx)
    lx.set_defaults(subcommand=_lexicon)

    ex = sub.add_parser("extract", help="a lexicon's links in a bitext (w2w, phrases merged)")
    ex.add_argument("--lexicon", type=Path, required=True)
    ex.add_argument("--source", type=Path, required=True, help="tokens, space-separated")
    ex.add_argument("--target", type=Path, required=True, help="tokens, space-separated")
    ex.add_argument("--out", type=Path)
    _add_record_options(ex)
    ex.set_defaults(subcommand=_extract)

    oo = sub.add_parser("one-to-one", help="keep the links whose two words have no other link")
    oo.add_argument("links", type=Path, help="a run's links.txt")
    oo.add_argument("--out", type=Path)
    _add_record_options(oo)
    oo.set_defaults(subcommand=_one_to_one)
