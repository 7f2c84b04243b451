"""``mlrep eval retrieval|paracrawl|bucc|classify``: the sentence-embedding suite's commands.

Each command reads ``.npy`` embedding files (and id/label/gold text files), prints one JSON
object, and with ``--out`` also writes it atomically. Options left out come from the
``evaluate`` section of the params file, as everywhere in mlrep.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.cliutil import add_options, settings_from
from mlrep.evaluate import embeddings
from mlrep.evaluate.settings import ClassifySettings, MarginSettings, PoolSettings, SearchSettings
from mlrep.io import atomic_write_text, read_lines

# the computing modules (torch) are imported by the verb that runs them, so that building the
# parser (every Snakefile parse) stays light


def _block_size(args: argparse.Namespace) -> int:
    return settings_from(args, SearchSettings, ("evaluate.search",))[1].block_size


def _emit(result: dict, out: Path | None) -> int:
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if out is not None:
        atomic_write_text(out, text)
    print(text, end="")
    return 0


def _retrieval(args: argparse.Namespace) -> int:
    from mlrep.evaluate import retrieval

    _, scoring = settings_from(args, MarginSettings, ("evaluate.retrieval",))
    src, tgt = embeddings.load(args.src_emb), embeddings.load(args.tgt_emb)
    embeddings.check_aligned(src, tgt, str(args.src_emb), str(args.tgt_emb))
    text = read_lines(args.tgt_text, embeddings.EmbeddingError) if args.tgt_text else None
    result = retrieval.evaluate(src, tgt, scoring.margin, scoring.k, _block_size(args), text)
    return _emit(result, args.out)


def _paracrawl(args: argparse.Namespace) -> int:
    from mlrep.evaluate import protocols

    _, pool = settings_from(args, PoolSettings, ("evaluate.paracrawl",))
    _, scoring = settings_from(args, MarginSettings, ("evaluate.paracrawl",))
    src, tgt = embeddings.load(args.src_emb), embeddings.load(args.tgt_emb)
    embeddings.check_aligned(src, tgt, str(args.src_emb), str(args.tgt_emb))
    result = protocols.pool(
        src,
        tgt,
        pool.queries,
        pool.candidates,
        pool.seed,
        scoring.margin,
        scoring.k,
        _block_size(args),
    )
    return _emit(result, args.out)


def _bucc(args: argparse.Namespace) -> int:
    from mlrep.evaluate import mining

    _, scoring = settings_from(args, MarginSettings, ("evaluate.bucc",))
    test_files = (
        args.test_src_emb,
        args.test_tgt_emb,
        args.test_src_ids,
        args.test_tgt_ids,
        args.test_gold,
    )
    if any(test_files) and not all(test_files):
        raise embeddings.EmbeddingError(
            "a test split needs all of --test-src-emb --test-tgt-emb --test-src-ids "
            "--test-tgt-ids --test-gold"
        )
    train = mining.load_split(args.src_emb, args.tgt_emb, args.src_ids, args.tgt_ids, args.gold)
    test = mining.load_split(*test_files) if all(test_files) else None
    result = mining.evaluate(train, test, scoring.k, scoring.margin, _block_size(args))
    pairs = result.pop("pairs")
    if args.pairs_out is not None:
        rows = "".join(f"{s}\t{t}\t{score:.6f}\t{int(gold)}\n" for s, t, score, gold in pairs)
        atomic_write_text(args.pairs_out, rows)
    return _emit(result, args.out)


def _classify(args: argparse.Namespace) -> int:
    from mlrep.evaluate import classify

    _, settings = settings_from(args, ClassifySettings, ("evaluate.classify",))
    if len(args.test_emb) != len(args.test_labels):
        raise embeddings.EmbeddingError(
            f"{len(args.test_emb)} --test-emb files but {len(args.test_labels)} --test-labels "
            "files; give one label file per test embedding file, in the same order"
        )
    train, classes = classify.load_labelled(args.train_emb, args.train_labels, None)
    dev, _ = classify.load_labelled(args.dev_emb, args.dev_labels, classes)
    tests = {
        str(emb): classify.load_labelled(emb, labels, classes)[0]
        for emb, labels in zip(args.test_emb, args.test_labels, strict=True)
    }
    result = classify.zero_shot(train, dev, tests, len(classes), settings)
    result["classes"] = classes
    return _emit(result, args.out)


def _shared(parser: argparse.ArgumentParser) -> None:
    add_options(parser, MarginSettings)
    add_options(parser, SearchSettings)
    parser.add_argument("--out", type=Path, help="also write the JSON result here")


def register_suite(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the suite's subcommands to ``mlrep eval``."""
    ret = sub.add_parser(
        "retrieval",
        parents=[common],
        help="P@1 both directions and xSIM error of aligned embedding files",
    )
    ret.add_argument(
        "--src-emb", type=Path, required=True, help="source .npy; row i translates target row i"
    )
    ret.add_argument("--tgt-emb", type=Path, required=True, help="target .npy")
    ret.add_argument(
        "--tgt-text", type=Path, help="target sentences: xSIM counts identical duplicates right"
    )
    _shared(ret)
    ret.set_defaults(func=_retrieval)

    para = sub.add_parser(
        "paracrawl",
        parents=[common],
        help="P@1 of sampled queries among a larger candidate pool (ParaCrawl protocol)",
    )
    para.add_argument("--src-emb", type=Path, required=True, help="query side, aligned rows")
    para.add_argument("--tgt-emb", type=Path, required=True, help="candidate side")
    add_options(para, PoolSettings)
    _shared(para)
    para.set_defaults(func=_paracrawl)

    bucc = sub.add_parser(
        "bucc",
        parents=[common],
        help="BUCC mining F1: threshold from the training split's gold, applied to test",
    )
    for prefix, need in (("", True), ("test-", False)):
        split = "test" if prefix else "training"
        bucc.add_argument(f"--{prefix}src-emb", type=Path, required=need, help=f"{split} .npy")
        bucc.add_argument(f"--{prefix}tgt-emb", type=Path, required=need)
        bucc.add_argument(
            f"--{prefix}src-ids", type=Path, required=need, help="id<TAB>sentence or id lines"
        )
        bucc.add_argument(f"--{prefix}tgt-ids", type=Path, required=need)
        bucc.add_argument(
            f"--{prefix}gold", type=Path, required=need, help="src_id<TAB>tgt_id lines"
        )
    bucc.add_argument(
        "--pairs-out",
        type=Path,
        help="write the kept pairs (test split if given): src_id, tgt_id, score, in gold (1/0)",
    )
    _shared(bucc)
    bucc.set_defaults(func=_bucc)

    cls = sub.add_parser(
        "classify",
        parents=[common],
        help="zero-shot classification on frozen embeddings (MLDoc, Amazon CLS)",
    )
    cls.add_argument("--train-emb", type=Path, required=True)
    cls.add_argument("--train-labels", type=Path, required=True, help="one label per line")
    cls.add_argument("--dev-emb", type=Path, required=True)
    cls.add_argument("--dev-labels", type=Path, required=True)
    cls.add_argument("--test-emb", type=Path, nargs="+", required=True)
    cls.add_argument("--test-labels", type=Path, nargs="+", required=True)
    add_options(cls, ClassifySettings)
    cls.add_argument("--out", type=Path, help="also write the JSON result here")
    cls.set_defaults(func=_classify)
