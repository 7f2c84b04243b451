"""``mlrep ch6 …``: Chapter 6's own verbs. `mlrep.cli` registers the verbs of built chapters
only, so these are reachable once the chapter is marked built in the registry; until then
`register` is exercised by the tests alone.

``instructions`` builds one language pair's instruction sets (`mlrep.llm.instruct.build`)
with the languages named as Chapter 6 names them (`runs.NAMES`); ``mix`` concatenates and
shuffles given sets (`mlrep.llm.instruct.mix`), ``stage`` those of one run's training stage
(`training`). ``tests`` cuts a setting's test set (`testsets`); ``prompts``,
``pivot-prompts`` and ``split`` make a run's prompts files for `mlrep llm generate` and cut
its hypotheses back per direction (`decode`); ``score`` and ``metrics`` score them and write
the run's metrics.json (`scoring`). ``cosine`` writes a cosine analysis's metrics.json, Δ1 and
Δ2 per layer, from its three models' `mlrep llm cosine` files (`cosine`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mlrep.chapters.ch6_aligninstruct import runs
from mlrep.chapters.ch6_aligninstruct.runs import NAMES, SETTINGS
from mlrep.chapters.ch6_aligninstruct.scores import METRICS, TESTS
from mlrep.cliutil import UsageError, add_options, fill, positive_int, scale_of
from mlrep.errors import did_you_mean
from mlrep.io import atomic_write_text
from mlrep.llm.instruct import TYPES, InstructionDataError, InstructSettings, Language
from mlrep.llm.settings import GenerateSettings


def _language(code: str) -> Language:
    if code not in NAMES:
        raise InstructionDataError(
            f"no Chapter 6 language {code!r}{did_you_mean(code, NAMES)}; "
            f"languages: {', '.join(NAMES)}"
        )
    return Language(code, NAMES[code])


def _instructions(args: argparse.Namespace) -> int:
    from mlrep.llm.instruct import build

    # the chapter's params section holds no instruction settings yet: options, else defaults
    settings = fill(args, InstructSettings, dict, "ch6 instructions")
    counts = build(
        args.out,
        args.types,
        _language(args.source),
        _language(args.target),
        args.source_tokens,
        args.target_tokens,
        args.links,
        args.seed,
        args.source_text,
        args.target_text,
        settings,
        args.mono,
        args.max_pairs,
    )
    print(json.dumps(dict(sorted(counts.items()))))
    return 0


def _mix(args: argparse.Namespace) -> int:
    from mlrep.llm.instruct import mix

    print(json.dumps({"records": mix(args.inputs, args.out, args.seed)}))
    return 0


def _test_folder(text: str) -> tuple[str, Path]:
    """``--tests`` items: ``<test>=<folder>``."""
    test, sep, folder = text.partition("=")
    if not sep or test not in TESTS or not folder:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give <test>=<folder> with a test set of {', '.join(TESTS)}"
        )
    return test, Path(folder)


def _tests(args: argparse.Namespace) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for test, folder in args.tests:
        if test in found:
            raise UsageError(f"--tests names {test} twice: one folder per test set")
        found[test] = folder
    return found


def _stage(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.training import write_stage

    run = runs.get(args.run)
    count = write_stage(run, args.stage, args.languages, args.instructions, args.seed, args.out)
    print(json.dumps({"run": run.path, "stage": args.stage, "records": count}))
    return 0


def _testset(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.testsets import write

    index = write(args.raw, args.split, args.setting, args.languages, args.max_test, args.out)
    print(json.dumps({d: v["lines"] for d, v in index["directions"].items()}))
    return 0


def _prompts(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.decode import prompts

    index = prompts(runs.get(args.run), _tests(args), args.languages, args.out, args.index)
    print(json.dumps({"run": index["run"], "prompts": index["total"]}))
    return 0


def _pivot_prompts(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.decode import pivot_prompts

    run = runs.get(args.run)
    index = pivot_prompts(run, _tests(args), args.first_index, args.first, args.out, args.index)
    print(json.dumps({"run": index["run"], "prompts": index["total"]}))
    return 0


def _decode(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.decode import decode

    settings = fill(args, GenerateSettings, dict, "ch6 decode")
    run = runs.get(args.run)
    written = decode(run, _tests(args), args.languages, args.base, args.adapter, settings, args.out)
    print(json.dumps({"run": run.path, "lines": sum(written.values())}))
    return 0


def _split(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.decode import split

    print(json.dumps(split(args.index, args.hyp, args.out)))
    return 0


def _score(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.scoring import score
    from mlrep.evaluate.mt import Protocol

    scorer = None
    if "comet" in args.metrics:
        if not args.comet_checkpoint:
            raise UsageError("--metrics comet needs --comet-checkpoint (hub id or folder)")
        protocol = Protocol(
            "comet", comet_checkpoint=args.comet_checkpoint, comet_revision=args.comet_revision
        )
        scorer = protocol.comet()
    result = score(
        runs.get(args.run),
        _tests(args),
        args.hyp,
        args.languages,
        args.metrics,
        scorer,
        args.batch_size,
    )
    atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    print(
        json.dumps(
            {
                f"{test}_{metric}": len(entries)
                for test, by_metric in result["scores"].items()
                for metric, entries in by_metric.items()
            }
        )
    )
    return 0


def _metrics(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.scoring import CHAPTER, merged, metrics, read_scores
    from mlrep.provenance import record
    from mlrep.report.metrics import write

    run = runs.get(args.run)
    parts = metrics(merged(read_scores(args.scores), run), run.setting)
    doc = write(args.out, CHAPTER, run.path, args.seed, scale_of(args), **parts)
    record(args.out.parent, "ch6 metrics", {"scale": doc["scale"], "run": run.path})
    groups = ("en-xx", "xx-en", "overall", "comet_avg")
    print(json.dumps({k: round(v, 2) for k, v in doc["metrics"].items() if k.endswith(groups)}))
    return 0


def _cosine(args: argparse.Namespace) -> int:
    from mlrep.chapters.ch6_aligninstruct.cosine import deltas, read
    from mlrep.chapters.ch6_aligninstruct.scoring import CHAPTER
    from mlrep.provenance import record
    from mlrep.report.metrics import write

    analysis = runs.analysis(args.analysis)
    files = (args.noft, args.mt, args.mt_align)  # the order of `analysis.compared`
    noft, mt, mt_align = (read(path) for path in files)
    numbers = deltas(noft, mt, mt_align)
    compared = {model: str(path) for model, path in zip(analysis.compared, files, strict=True)}
    doc = write(
        args.out,
        CHAPTER,
        analysis.path,
        args.seed,
        scale_of(args),
        numbers,
        compared=compared,
        pairs=noft.pairs,
    )
    record(args.out.parent, "ch6 cosine", {"scale": doc["scale"], "analysis": analysis.path})
    print(json.dumps({"analysis": analysis.path, "layers": len(noft.layers), "pairs": noft.pairs}))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    chapter = top.add_parser("ch6", help="Chapter 6: AlignInstruct")
    sub = chapter.add_subparsers(dest="ch6_command", required=True)
    build = sub.add_parser(
        "instructions",
        parents=[common],
        help="one language pair's instruction sets (JSONL) from fast_align's tokens and links",
    )
    build.add_argument("--types", nargs="+", choices=TYPES, required=True, help="the sets")
    build.add_argument("--source", required=True, help="source language code (links' left side)")
    build.add_argument("--target", required=True, help="target language code")
    build.add_argument("--source-tokens", type=Path, required=True, help="tokens fast_align saw")
    build.add_argument("--target-tokens", type=Path, required=True, help="tokens fast_align saw")
    build.add_argument("--links", type=Path, required=True, help="fast_align's Pharaoh links")
    build.add_argument("--source-text", type=Path, help="raw source text the prompts show")
    build.add_argument("--target-text", type=Path, help="raw target text the prompts show")
    build.add_argument(
        "--mono", choices=("source", "target"), default="target", help="side the Mono sets use"
    )
    build.add_argument("--seed", type=int, required=True, help="seeds every random choice")
    build.add_argument(
        "--max-pairs",
        type=positive_int,
        help="build from the first N sentence pairs of the aligned corpus (default: all)",
    )
    build.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    add_options(build, InstructSettings)
    build.set_defaults(func=_instructions)
    mixed = sub.add_parser(
        "mix", parents=[common], help="a training stage's sets concatenated and shuffled (JSONL)"
    )
    mixed.add_argument("--inputs", type=Path, nargs="+", required=True, help="JSONL sets")
    mixed.add_argument("--seed", type=int, required=True, help="the shuffle's seed")
    mixed.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    mixed.set_defaults(func=_mix)

    stage = sub.add_parser(
        "stage", parents=[common], help="one training stage's mixture of a run (JSONL)"
    )
    stage.add_argument("--run", required=True, help="<setting>/<name> of a training run")
    stage.add_argument("--stage", type=positive_int, default=1, help="the stage, from 1")
    stage.add_argument(
        "--languages", nargs="+", default=[], help="BLOOMZ+24's languages at this scale"
    )
    stage.add_argument(
        "--instructions",
        type=Path,
        required=True,
        help="folder of the pairs' sets, en-<xx>.<objective>.jsonl",
    )
    stage.add_argument("--seed", type=int, required=True, help="the run's seed")
    stage.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    stage.set_defaults(func=_stage)

    tests = sub.add_parser(
        "tests", parents=[common], help="a setting's test set: <src>-<tgt>.src/.ref per direction"
    )
    tests.add_argument("--setting", choices=SETTINGS, required=True)
    tests.add_argument(
        "--split", required=True, help="the corpus split read (test; Flores devtest; tiny valid)"
    )
    tests.add_argument(
        "--raw",
        type=Path,
        nargs="+",
        required=True,
        help="corpus files <split>.<pair>.<lang> or Flores <split>.multiway.<code>",
    )
    tests.add_argument(
        "--languages", nargs="+", default=[], help="BLOOMZ+24's languages at this scale"
    )
    tests.add_argument("--max-test", type=positive_int, required=True, help="lines per direction")
    tests.add_argument("--out", type=Path, required=True, help="test set folder to write")
    tests.set_defaults(func=_testset)

    def run_options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--run", required=True, help="<setting>/<name>")
        parser.add_argument(
            "--tests",
            type=_test_folder,
            nargs="+",
            required=True,
            help="<test>=<folder> of `mlrep ch6 tests`, each test set the run is scored on",
        )

    prompt = sub.add_parser(
        "prompts", parents=[common], help="a run's prompts file (JSONL) and its index (JSON)"
    )
    run_options(prompt)
    prompt.add_argument(
        "--languages", nargs="+", default=[], help="BLOOMZ+24's languages at this scale"
    )
    prompt.add_argument("--out", type=Path, required=True, help="prompts JSONL to write")
    prompt.add_argument("--index", type=Path, required=True, help="index JSON to write")
    prompt.set_defaults(func=_prompts)

    pivot = sub.add_parser(
        "pivot-prompts", parents=[common], help="a pivot run's English→target prompts (pass 2)"
    )
    run_options(pivot)
    pivot.add_argument("--first-index", type=Path, required=True, help="pass 1's index")
    pivot.add_argument("--first", type=Path, required=True, help="pass 1's hypotheses")
    pivot.add_argument("--out", type=Path, required=True, help="prompts JSONL to write")
    pivot.add_argument("--index", type=Path, required=True, help="index JSON to write")
    pivot.set_defaults(func=_pivot_prompts)

    decoded = sub.add_parser(
        "decode",
        parents=[common],
        help="a run's prompts, greedy hypotheses (both passes of a pivot run) and their split",
    )
    run_options(decoded)
    decoded.add_argument(
        "--languages", nargs="+", default=[], help="BLOOMZ+24's languages at this scale"
    )
    decoded.add_argument("--base", required=True, help="hub id or folder of the base model")
    decoded.add_argument("--adapter", type=Path, help="LoRA adapter folder (none: the base)")
    decoded.add_argument("--out", type=Path, required=True, help="folder: <test>/<src>-<tgt>.txt")
    add_options(decoded, GenerateSettings)
    decoded.set_defaults(func=_decode)

    cut = sub.add_parser(
        "split", parents=[common], help="hypotheses of a prompts file, per test and direction"
    )
    cut.add_argument("--index", type=Path, required=True, help="the prompts' index")
    cut.add_argument("--hyp", type=Path, required=True, help="`mlrep llm generate`'s output")
    cut.add_argument("--out", type=Path, required=True, help="folder: <test>/<src>-<tgt>.txt")
    cut.set_defaults(func=_split)

    scored = sub.add_parser(
        "score", parents=[common], help="BLEU, chrF++, COMET per test set and direction"
    )
    run_options(scored)
    scored.add_argument("--hyp", type=Path, required=True, help="`mlrep ch6 split`'s folder")
    scored.add_argument(
        "--languages", nargs="+", default=[], help="BLOOMZ+24's languages at this scale"
    )
    scored.add_argument(
        "--metrics", nargs="+", choices=METRICS, default=list(METRICS), help="what to score"
    )
    scored.add_argument("--comet-checkpoint", default="", help="COMET hub id or folder")
    scored.add_argument("--comet-revision", default="", help="hub revision to pin")
    scored.add_argument("--batch-size", type=positive_int, default=16, help="COMET batch")
    scored.add_argument("--out", type=Path, required=True, help="scores JSON to write")
    scored.set_defaults(func=_score)

    written = sub.add_parser(
        "metrics", parents=[common], help="a run's metrics.json from its score files"
    )
    written.add_argument("--run", required=True, help="<setting>/<name>")
    written.add_argument("--seed", type=int, required=True)
    written.add_argument("--scores", type=Path, nargs="+", required=True, help="score files")
    written.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    written.set_defaults(func=_metrics)

    cosine = sub.add_parser(
        "cosine",
        parents=[common],
        help="a cosine analysis's metrics.json: Δ1, Δ2 per layer from its models' cosine files",
    )
    cosine.add_argument("--analysis", required=True, help="<setting>/<name> of the analysis")
    for option, model in (("--noft", "no FT"), ("--mt", "MTInstruct"), ("--mt-align", "MT+Align")):
        cosine.add_argument(
            option, type=Path, required=True, help=f"`mlrep llm cosine`'s JSON of the {model} model"
        )
    cosine.add_argument("--seed", type=int, required=True)
    cosine.add_argument("--out", type=Path, required=True, help="metrics.json to write")
    cosine.set_defaults(func=_cosine)
