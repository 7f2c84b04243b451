"""``mlrep data …``: list the registry, fetch a dataset, normalise it or cut its stand-in,
extract an archive, write leak-free monolingual text."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mlrep import chapters
from mlrep.cliutil import (
    UsageError,
    add_options,
    fill,
    option_names,
    resolved_params,
    scale_of,
    settings_from,
)
from mlrep.data import archive, download, monolingual, readers, registry, stand_in
from mlrep.data.validate import Filters
from mlrep.errors import did_you_mean

_POLICY_KEYS = option_names(download.Policy, skip=download.CALLER_SET)


def fetch_values(config: dict[str, Any], key: str) -> dict[str, Any]:
    """Every `fetch` flag of `key` from a resolved config, for rules (`flags_from`).

    All values are explicit so --config overrides reach the command; an empty mirror means
    the registry's own URL.
    """
    download_section = config["data"]["download"]
    section = config["data"]["datasets"].get(key) or {}
    values = {k: download_section[k] for k in _POLICY_KEYS}
    values["languages"] = section.get("languages", "all")
    values["mirror"] = download_section["mirrors"].get(key, "")
    values["lock"] = download_section.get("lock", "")
    values["registry"] = config["data"].get("registry", "")
    return values


def normalize_values(config: dict[str, Any], key: str) -> dict[str, Any]:
    """Every `normalize` flag of `key` from a resolved config (filters default to Filters())."""
    section = config["data"]["datasets"].get(key) or {}
    values = {k: section.get(k, v) for k, v in asdict(Filters()).items()}
    values["languages"] = section.get("languages", "all")
    values["registry"] = config["data"].get("registry", "")
    return values


def stand_in_values(config: dict[str, Any], key: str) -> dict[str, Any]:
    """Every `stand-in` flag of `key` from a resolved config: the benchmark's languages and
    filters (as `normalize` gets them) and the stand-in's settings; the corpus is the rule's
    input."""
    section = config["data"]["stand_ins"][key]
    values = normalize_values(config, key)
    values.update({k: section[k] for k in ("split", "pairs", "seed")})
    values["codes"] = [f"{code}={corpus}" for code, corpus in section["codes"].items()]
    return values


def _dataset_section(args: argparse.Namespace, key: str) -> dict[str, Any]:
    """The dataset's block of ``data.datasets`` in the params file ({} without one)."""
    if not args.params.exists():
        return {}
    return dict(resolved_params(args.params)["data"]["datasets"].get(key) or {})


def _languages(args: argparse.Namespace, section: dict[str, Any]) -> list[str] | None:
    """The flag's languages, else the params file's; None (every language) for 'all'."""
    value = args.languages or section.get("languages")
    if isinstance(value, str):
        value = [value]
    return None if not value or value == ["all"] else list(value)


def _registry(args: argparse.Namespace) -> dict[str, registry.Dataset]:
    """The package's registry plus the entries of --registry, else of the params file's
    ``data.registry``."""
    extra = args.registry
    if extra is None and args.params.exists():
        extra = resolved_params(args.params)["data"]["registry"]
    return registry.load(extra)


def _dataset(args: argparse.Namespace) -> registry.Dataset:
    return registry.get(args.key, _registry(args))


def _lock(args: argparse.Namespace) -> registry.Lock:
    """The lock file named by --lock ('' or absent: the package's registry-lock.yaml)."""
    return registry.Lock(Path(args.lock) if args.lock else registry.DEFAULT_LOCK)


def _chapter_datasets(args: argparse.Namespace) -> list[registry.Dataset]:
    """The registry's datasets (`_registry`), or those tagged with ``--chapter`` (which must be
    a chapter id)."""
    chapter = args.chapter
    datasets = list(_registry(args).values())
    if chapter is None:
        return datasets
    known = chapters.ids()
    if chapter not in known:
        raise UsageError(
            f"--chapter {chapter!r} is not a chapter{did_you_mean(chapter, known)}; "
            f"chapters: {', '.join(known)}"
        )
    return [d for d in datasets if chapter in d.chapters]


def _list(args: argparse.Namespace) -> int:
    lock = _lock(args)
    rows = [
        {
            "key": dataset.key,
            "access": dataset.access,
            "checksum": registry.checksum_status(dataset, lock),
            "licence": dataset.licence,
            "chapters": list(dataset.chapters),
            "languages": len(dataset.languages),
            "name": dataset.name,
        }
        for dataset in _chapter_datasets(args)
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no registry dataset is tagged with chapter {args.chapter}", file=sys.stderr)
        return 0
    key_width = max(len(r["key"]) for r in rows)
    sum_width = max(len(r["checksum"]) for r in rows)
    for r in rows:
        key, access, checksum = r["key"], r["access"], r["checksum"]
        print(f"{key:<{key_width}}  {access:<11}  {checksum:<{sum_width}}  {r['licence']}")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    _, policy = settings_from(
        args,
        download.Policy,
        ("data.download",),
        skip=("chunk_bytes",),
        progress=not args.no_progress,
    )
    mirror = args.mirror
    if mirror is None and args.params.exists():
        mirror = resolved_params(args.params)["data"]["download"]["mirrors"].get(args.key)
    mirror = mirror or None  # rules pass '' for "the registry's own URL"
    files = download.fetch(
        dataset,
        args.dest,
        languages=_languages(args, {} if args.languages else _dataset_section(args, args.key)),
        mirror=mirror,
        lock=_lock(args),
        policy=policy,
    )
    print(json.dumps({"key": args.key, "dest": str(args.dest), "files": len(files)}))
    return 0


def _selection(args: argparse.Namespace) -> tuple[Filters, list[str] | None, dict[str, Any]]:
    """The filters and languages of `args.key` (flags over the params file) and the config
    to record: what `normalize` and `stand-in` both apply."""
    section = functools.cache(lambda: _dataset_section(args, args.key))
    where = f"{args.params}: data.datasets.{args.key}"
    filters = fill(args, Filters, lambda: asdict(Filters()) | section(), where)
    languages = _languages(args, {} if args.languages else section())
    scale = scale_of(args)
    recorded = {**asdict(filters), "languages": languages or "all"}
    return filters, languages, {"scale": scale, "data": {"datasets": {args.key: recorded}}}


def _normalize(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    filters, languages, config = _selection(args)
    metadata = readers.normalize(dataset, args.raw, args.out, languages, filters, config)
    summary = {name: _kept(info) for name, info in metadata["pairs"].items()}
    print(json.dumps({"key": args.key, "out": str(args.out), "pairs": summary}))
    return 0


def _stand_in_settings(args: argparse.Namespace) -> stand_in.Settings:
    """The stand-in's settings: flags over the params file's ``data.stand_ins.<key>``."""
    given = {
        "split": args.split,
        "pairs": args.pairs,
        "seed": args.seed,
        "codes": dict(args.codes) if args.codes else None,
    }
    section: dict[str, Any] = {}
    if None in given.values():
        section = resolved_params(args.params)["data"]["stand_ins"].get(args.key)
        if section is None:
            raise UsageError(
                f"{args.params}: data.stand_ins has no {args.key} block; add one (corpus, "
                "split, pairs, seed, codes) or pass --split, --pairs, --seed and --codes"
            )
    return stand_in.Settings(**{k: section[k] if v is None else v for k, v in given.items()})


def _stand_in(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    filters, languages, config = _selection(args)
    settings = _stand_in_settings(args)
    config["data"]["stand_ins"] = {args.key: {"corpus": args.corpus.name, **asdict(settings)}}
    metadata = stand_in.cut(dataset, args.corpus, args.out, languages, settings, filters, config)
    summary = {name: _kept(info) for name, info in metadata["pairs"].items()}
    left_out = sorted(metadata[stand_in.STAND_IN]["missing"])
    print(json.dumps({"key": args.key, "pairs": summary, "left_out": left_out}))
    return 0


def _monolingual(args: argparse.Namespace) -> int:
    sections = (args.section,) if args.section else ()
    scale, settings = settings_from(args, monolingual.MonolingualSettings, sections)
    exclude = [line for path in args.exclude_ids or () for line in path.read_text().split()]
    config = {"scale": scale, "monolingual": asdict(settings)}
    metadata = monolingual.write(args.corpus, args.languages, args.out, settings, exclude, config)
    print(json.dumps({"out": str(args.out), "languages": metadata["languages"]}))
    return 0


def _aligned(text: str) -> tuple[tuple[str, str], Path]:
    """``ja.bunsetsu=<folder>``: files aligned with a language's words, and their folder."""
    key, _, folder = text.partition("=")
    lang, _, name = key.partition(".")
    if not lang or not name or not folder:
        raise argparse.ArgumentTypeError(f"{text!r} is not <lang>.<name>=<folder>")
    return (lang, name), Path(folder)


def _finetune_pool(args: argparse.Namespace) -> int:
    from mlrep.data import pools  # here: the other data verbs' code versions stay apart

    sections = (args.section,) if args.section else ()
    scale, settings = settings_from(args, pools.PoolSettings, sections)
    aligned = dict(args.aligned or ())
    counts = pools.build(args.words, args.ids, args.pair, args.out, settings, aligned, scale)
    print(json.dumps({"out": str(args.out), **counts}))
    return 0


def _code(text: str) -> tuple[str, str]:
    """``jpn=ja``: a benchmark language code and the corpus's code for it."""
    benchmark, _, corpus = text.partition("=")
    if not benchmark or not corpus:
        raise argparse.ArgumentTypeError(f"{text!r} is not <benchmark code>=<corpus code>")
    return benchmark, corpus


def _kept(info: dict[str, Any]) -> int | dict[str, int]:
    """Lines kept in a set, per side where the sides are not aligned (comparable, labelled)."""
    if "sides" in info:
        return {side: counts["lines"] for side, counts in info["sides"].items()}
    return info["lines"]


def _extract(args: argparse.Namespace) -> int:
    print(archive.extract(args.archive, args.out))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from mlrep.data import pools  # as in _finetune_pool: its own verb's code alone

    data = top.add_parser("data", help="dataset registry: list, fetch, normalise")
    sub = data.add_subparsers(dest="data_command", required=True)
    entries = argparse.ArgumentParser(add_help=False)
    entries.add_argument(
        "--registry",
        help="YAML file of more registry entries ('': the package's only; default: the "
        "params file's data.registry)",
    )
    lock = argparse.ArgumentParser(add_help=False, parents=[entries])
    lock.add_argument(
        "--lock",
        default="",
        help="trust-on-first-use lock file ('' or absent: the package's registry-lock.yaml)",
    )

    listing = sub.add_parser(
        "list", parents=[common, lock], help="every dataset, licence, checksum status"
    )
    listing.add_argument("--chapter", help="only datasets of this params.yaml chapter section")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(func=_list)

    fetch = sub.add_parser(
        "fetch", parents=[common, lock], help="download (or verify manual data) and check sums"
    )
    fetch.add_argument("key", help="registry key (see `mlrep data list`)")
    fetch.add_argument("--dest", type=Path, required=True, help="download folder")
    fetch.add_argument(
        "--mirror",
        help="http(s):// URL prefix or local folder (path, file://) replacing the registry's "
        "base_url ('': none)",
    )
    fetch.add_argument("--languages", nargs="+", help="only these languages' files, or 'all'")
    add_options(fetch, download.Policy, skip=download.CALLER_SET)
    fetch.add_argument("--no-progress", action="store_true", help="no progress bar")
    fetch.set_defaults(func=_fetch)

    # what `normalize` and `stand-in` share: the dataset, its languages, its content filters
    selection = argparse.ArgumentParser(add_help=False, parents=[entries])
    selection.add_argument("key", help="registry key")
    selection.add_argument("--out", type=Path, required=True, help="output folder (atomic)")
    selection.add_argument("--languages", nargs="+", help="languages to write, or 'all'")
    add_options(selection, Filters)

    normalize = sub.add_parser(
        "normalize", parents=[common, selection], help="validate and normalise fetched files"
    )
    normalize.add_argument("--raw", type=Path, required=True, help="the folder `fetch` filled")
    normalize.set_defaults(func=_normalize)

    standin = sub.add_parser(
        "stand-in",
        parents=[common, selection],
        help="cut a benchmark's stand-in from a local corpus's held-out split (offline)",
    )
    standin.add_argument(
        "--corpus", type=Path, required=True, help="corpus folder: <split>.en-<code>.{en,<code>}"
    )
    standin.add_argument("--split", help="the corpus split to cut from (e.g. test)")
    standin.add_argument("--pairs", type=int, help="pairs per language, drawn at random (0: all)")
    standin.add_argument("--seed", type=int, help="seed of the draw")
    standin.add_argument(
        "--codes", nargs="+", type=_code, help="<benchmark code>=<corpus code> (jpn=ja ...)"
    )
    standin.set_defaults(func=_stand_in)

    mono = sub.add_parser(
        "monolingual",
        parents=[common],
        help="training text of some languages with every held-out segment id of every "
        "language removed (pre-training, LM, denoising)",
    )
    mono.add_argument(
        "--corpus",
        type=Path,
        required=True,
        help="multi-way corpus with segment ids (the tiny corpus)",
    )
    mono.add_argument("--languages", nargs="+", required=True, help="language codes (en de ...)")
    mono.add_argument("--out", type=Path, required=True, help="output folder (atomic)")
    mono.add_argument(
        "--exclude-ids", type=Path, nargs="+", help="files of more segment ids to leave out"
    )
    mono.add_argument("--section", help="params section (dotted) for options not given")
    add_options(mono, monolingual.MonolingualSettings)
    mono.set_defaults(func=_monolingual)

    pool = sub.add_parser(
        "finetune-pool",
        parents=[common],
        help="a pair's fine-tuning pool (nested sizes are its prefixes) and held-out sets, "
        "from preprocessed words",
    )
    pool.add_argument("--pair", required=True, help="the pair, a-b (joined on ids if needed)")
    pool.add_argument(
        "--words", type=Path, required=True, help="words folder: <split>.<a>-<b>.<lang> files"
    )
    pool.add_argument(
        "--ids",
        type=Path,
        help="corpus folder with the words' .segids files (none: a registry download's words, "
        "the pair's own files, each line numbered)",
    )
    pool.add_argument(
        "--aligned",
        type=_aligned,
        nargs="+",
        metavar="LANG.NAME=FOLDER",
        help="files aligned with a language's words, carried along (ja.bunsetsu=<folder>)",
    )
    pool.add_argument("--out", type=Path, required=True, help="output folder (atomic)")
    pool.add_argument("--section", help="params section (dotted) for options not given")
    add_options(pool, pools.PoolSettings)
    pool.set_defaults(func=_finetune_pool)

    extract = sub.add_parser("extract", help="safely extract a tar/zip/gz/xz/bz2 archive")
    extract.add_argument("archive", type=Path)
    extract.add_argument("--out", type=Path, required=True, help="target folder (atomic)")
    extract.set_defaults(func=_extract)
