"""The sentence-encoder benchmarks beyond Tatoeba, for any encoder, under the metric names the
chapters' tables read (Chapter 2's runs; UN and BUCC for ``mlrep embed evaluate``).

Each protocol reads one of two layouts, so one code path serves both scales:

- the embedded corpus (scale tiny; the folder has the corpus's ``manifest.json``): its
  held-out splits ``<split>.en-<xx>.{en,<xx>,segids}``, whose segment ids join the languages.
  Flores-style pairs are scored on the test segments two languages share; BUCC-style mining
  hides each language's gold pairs among sentences whose translation is absent
  (`mining.hide_gold`), picks the threshold on the ``tune`` split and scores ``test``;
  ParaCrawl-style queries in xx are searched among their English translations plus English
  test sentences of other segments; UN-style queries in xx among every English sentence of the
  split (the whole pool, no sample). These measure the same skills on other text: they are
  not Flores, BUCC or ParaCrawl numbers, and the tables' captions say so.
- the data layer's normalised benchmarks (scale full; ``metadata.json``): Flores
  ``<split>.multiway.<code>``, BUCC ``<split>.<xx>-en.{<xx>,en}`` + ``.ids`` + ``.gold``,
  UN ``<split>.<xx>-en.{<xx>,en}`` (row-aligned),
  ParaCrawl ``<split>.<pair>.<lang>``, labelled sets ``<set>.<lang>`` + ``.label``.

Metrics, in percent: ``flores_<a>-<b>`` (queries in a) and ``flores_<group>`` (the mean over
every ordered pair of the group, written only when all of them were scored), ``bucc_<xx>``
(F1), ``paracrawl_<xx>`` and ``un_<xx>`` (P@1) and ``<benchmark>[_<group>]_<l1>-<l2>``
(accuracy of a classifier trained on l1 and tested on l2: MLDoc, Amazon CLS, MARC). A
language a benchmark lacks is not scored and is listed under ``missing`` in the details, so its
cells read "not run" instead of an average over fewer languages. Each P@1 comes with its
chance floor ``floor_<name>`` (`mlrep.evaluate.retrieval.chance`, 1/candidates; a group's is
the mean of its pairs'); a mining F1 has no chance level and no floor.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Mapping
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from mlrep.data.tiny_corpus import ids_file
from mlrep.evaluate import classify, mining, protocols, retrieval
from mlrep.evaluate.protocols import BenchmarkError
from mlrep.evaluate.settings import ClassifySettings
from mlrep.evaluate.tfidf import Transductive
from mlrep.io import atomic_write_text, decode_line, read_lines
from mlrep.report.metrics import FLOOR, Scores

Encode = Callable[[list[str]], np.ndarray]
DETAILS_FILE = "benchmarks.json"  # beside metrics.json: what each protocol saw
CORPUS_MANIFEST = "manifest.json"  # written by `mlrep corpus tiny`
DATASET_METADATA = "metadata.json"  # written by `mlrep data normalize`
CLASSIFICATION = ("mldoc", "amazon_cls", "amazon_marc")
RETRIEVAL = ("flores", "bucc", "paracrawl", "un")  # an encoder fitted on the test set runs these
NAMES = (*RETRIEVAL, *CLASSIFICATION)


def is_corpus(folder: Path) -> bool:
    """True for the embedded corpus, False for a normalised registry dataset."""
    if (folder / CORPUS_MANIFEST).exists():
        return True
    if (folder / DATASET_METADATA).exists():
        return False
    raise BenchmarkError(
        f"{folder}: neither the embedded corpus ({CORPUS_MANIFEST}) nor a normalised dataset "
        f"({DATASET_METADATA}); build it first (snakemake {folder})"
    )


def _warn(missing: list[str], name: str, folder: Path) -> None:
    if missing:
        print(f"{name}: {folder} has no data for {', '.join(missing)}; not scored", file=sys.stderr)


def _ids(path: Path, rows: int) -> list[str]:
    ids = read_lines(path, BenchmarkError)
    if len(ids) != rows:
        raise BenchmarkError(f"{path}: {len(ids)} ids for {rows} sentences; rebuild the corpus")
    return ids


# --- Flores: many-to-many retrieval ---------------------------------------------------------


def flores(encode: Encode, folder: Path, spec: Mapping[str, Any], block_size: int) -> tuple:
    """P@1 of every ordered pair within each language group (cosine, as the thesis)."""
    corpus = is_corpus(folder)
    languages = list(dict.fromkeys(lang for group in spec["groups"].values() for lang in group))
    paths: dict[str, Path] = {}
    lines: dict[str, list[str]] = {}
    ids: dict[str, list[str]] = {}
    missing = []
    for lang in languages:
        if corpus:
            path = folder / f"{spec['split']}.en-{lang}.{lang}"
        else:
            path = folder / f"{spec['split']}.multiway.{spec['codes'].get(lang, lang)}"
        if not path.exists():
            missing.append(lang)
            continue
        paths[lang], lines[lang] = path, read_lines(path, BenchmarkError)
        # Flores is row-aligned: a line's number is its id
        if corpus:
            ids[lang] = _ids(ids_file(path), len(lines[lang]))
        else:
            ids[lang] = [str(row) for row in range(len(lines[lang]))]
    _warn(missing, "flores", folder)
    pairs = sorted(
        {
            pair
            for group in spec["groups"].values()
            for pair in combinations(sorted(lang for lang in group if lang in lines), 2)
        }
    )
    # a trained encoder embeds every language once; one fitted on the test set (TF-IDF) gets
    # a space per pair, fitted on its two languages (one space for every language would be as
    # wide as all their scripts' n-grams together)
    spaces = [[pair] for pair in pairs] if isinstance(encode, Transductive) else [pairs]
    metrics: dict[str, float] = {}
    details: dict[str, Any] = {"missing": missing, "shared": {}, "skipped": []}
    for chosen in filter(None, spaces):
        used = sorted({lang for pair in chosen for lang in pair})
        protocols.fit(encode, [lines[lang] for lang in used])
        vectors = {lang: protocols.embed(encode, lines[lang], str(paths[lang])) for lang in used}
        result = protocols.many_to_many(
            vectors,
            None,
            block_size=block_size,
            ids=ids,
            pairs=chosen,
            min_shared=spec["min_shared"],
        )
        metrics |= {f"flores_{pair}": value for pair, value in result["pairs"].items()}
        metrics |= {f"{FLOOR}flores_{pair}": value for pair, value in result["chance"].items()}
        details["shared"] |= result["shared"]
        details["skipped"] += result["skipped"]
    for name, group in spec["groups"].items():
        ordered = [f"flores_{a}-{b}" for a in group for b in group if a != b]
        if ordered and all(key in metrics for key in ordered):
            for prefix in ("", FLOOR):
                metrics[f"{prefix}flores_{name}"] = statistics.fmean(
                    metrics[prefix + key] for key in ordered
                )
    return metrics, details


# --- BUCC: bitext mining --------------------------------------------------------------------


def _bucc_split(
    encode: Encode, folder: Path, corpus: bool, split: str, lang: str, spec: Mapping[str, Any]
) -> tuple[mining.Split, dict[str, str], dict[str, str]] | None:
    """One mining split of `lang` (source) and English (target), with each side's id -> text."""
    if corpus:
        stem = f"{folder}/{split}.en-{lang}"
        if not Path(f"{stem}.{lang}").exists():
            return None
        xx = read_lines(Path(f"{stem}.{lang}"), BenchmarkError)
        en = read_lines(Path(f"{stem}.en"), BenchmarkError)
        ids = _ids(ids_file(Path(f"{stem}.en")), len(xx))
        src_rows, tgt_rows = mining.hide_gold(len(ids), spec["gold_fraction"], spec["seed"])
        src_text, tgt_text = [xx[r] for r in src_rows], [en[r] for r in tgt_rows]
        src_ids, tgt_ids = [ids[r] for r in src_rows], [ids[r] for r in tgt_rows]
        gold = {(ids[r], ids[r]) for r in np.intersect1d(src_rows, tgt_rows)}
    else:
        stem = f"{folder}/{split}.{lang}-en"
        if not Path(f"{stem}.{lang}").exists():
            return None
        src_text = read_lines(Path(f"{stem}.{lang}"), BenchmarkError)
        tgt_text = read_lines(Path(f"{stem}.en"), BenchmarkError)
        src_ids = mining.read_ids(Path(f"{stem}.{lang}.ids"), len(src_text))
        tgt_ids = mining.read_ids(Path(f"{stem}.en.ids"), len(tgt_text))
        gold = mining.read_gold(Path(f"{stem}.gold"), src_ids, tgt_ids)
    protocols.fit(encode, [src_text, tgt_text])
    split_data = mining.Split(
        protocols.embed(encode, src_text, f"{stem}.{lang}"),
        protocols.embed(encode, tgt_text, f"{stem}.en"),
        src_ids,
        tgt_ids,
        gold,
    )
    return (
        split_data,
        dict(zip(src_ids, src_text, strict=True)),
        dict(zip(tgt_ids, tgt_text, strict=True)),
    )


def bucc(
    encode: Encode,
    folder: Path,
    spec: Mapping[str, Any],
    search: Mapping[str, Any],
    block_size: int,
) -> tuple:
    """Mining F1 per language: threshold where F1 peaks on the ``tune`` split, applied to the
    ``test`` split (the same split: the oracle F1 the thesis reports); and the best-scoring
    mined pairs outside the gold (thesis Table 2.8 shows such pairs for en-zh)."""
    corpus = is_corpus(folder)
    metrics: dict[str, float] = {}
    details: dict[str, Any] = {"missing": []}
    for lang in spec["languages"]:
        tune = _bucc_split(encode, folder, corpus, spec["tune"], lang, spec)
        test = tune
        if spec["test"] != spec["tune"]:
            test = _bucc_split(encode, folder, corpus, spec["test"], lang, spec)
        if tune is None or test is None:
            details["missing"].append(lang)
            continue
        result = mining.evaluate(
            tune[0], None if test is tune else test[0], search["k"], search["margin"], block_size
        )
        scored = result["train"] if test is tune else result["test"]
        metrics[f"bucc_{lang}"] = scored["f1"]
        outside = [
            {"score": score, f"{lang}_id": s, "en_id": t, lang: test[1][s], "en": test[2][t]}
            for s, t, score, in_gold in result["pairs"]
            if not in_gold
        ][: spec["examples"]]
        details[lang] = {
            "threshold": result["threshold"],
            "tune": result["train"],
            "test": scored,
            "outside_gold": outside,
        }
    _warn(details["missing"], "bucc", folder)
    return metrics, details


# --- ParaCrawl: queries among a large candidate pool ----------------------------------------


def _count(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def _select(path: Path, rows: np.ndarray) -> list[str]:
    """Lines `rows` (0-based) of `path`, in the order of `rows`, reading the file once:
    a ParaCrawl side has tens of millions of lines and only a few thousand are needed."""
    wanted = {int(row): i for i, row in enumerate(rows)}
    out = [""] * len(rows)
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle):
            if number in wanted:
                out[wanted[number]] = decode_line(raw, path, number + 1, BenchmarkError)
                out[wanted[number]] = out[wanted[number]].rstrip("\r\n")
    return out


def _english_pool(folder: Path, split: str) -> tuple[list[str], list[str]]:
    """(ids, sentences) of every English segment of the corpus's `split`, once each."""
    pool: dict[str, str] = {}
    for path in sorted(folder.glob(f"{split}.en-*.en")):
        lines = read_lines(path, BenchmarkError)
        for sentence_id, text in zip(_ids(ids_file(path), len(lines)), lines, strict=True):
            pool.setdefault(sentence_id, text)
    return list(pool), list(pool.values())


def _pair_files(folder: Path, split: str, lang: str) -> tuple[Path, Path] | None:
    for pair in (f"en-{lang}", f"{lang}-en"):
        xx, en = folder / f"{split}.{pair}.{lang}", folder / f"{split}.{pair}.en"
        if xx.exists() and en.exists():
            return xx, en
    return None


def paracrawl(
    encode: Encode,
    folder: Path,
    spec: Mapping[str, Any],
    sizes: Mapping[str, Any],
    block_size: int,
) -> tuple:
    """P@1 of ``queries`` xx sentences among ``candidates`` English ones (their translations
    plus distractors: other rows of the bitext, or other segments of the corpus), margin-scored."""
    corpus = is_corpus(folder)
    pool_ids, pool_text = _english_pool(folder, spec["split"]) if corpus else ([], [])
    queries, distractors = sizes["queries"], sizes["candidates"] - sizes["queries"]
    metrics: dict[str, float] = {}
    details: dict[str, Any] = {"missing": [], "too_small": {}}
    for lang in spec["languages"]:
        files = _pair_files(folder, spec["split"], lang)
        if files is None:
            details["missing"].append(lang)
            continue
        rows = _count(files[0])
        rng = np.random.default_rng(sizes["seed"])
        if rows < queries:
            details["too_small"][lang] = f"{rows} pairs < {queries} queries"
            continue
        chosen = rng.choice(rows, queries, replace=False)
        xx, gold = _select(files[0], chosen), _select(files[1], chosen)
        if corpus:
            taken = set(_select(ids_file(files[0]), chosen))
            available = len(pool_ids)
        else:
            taken = {str(row) for row in chosen}
            available = rows
        # distractors: any other English sentence, never a copy of a gold translation
        draw = rng.choice(available, min(available, distractors + queries), replace=False)
        if corpus:
            candidates = [(pool_ids[i], pool_text[i]) for i in draw]
        else:
            candidates = list(zip(map(str, draw), _select(files[1], draw), strict=True))
        golds = set(gold)
        others = [t for i, t in candidates if i not in taken and t not in golds][:distractors]
        if len(others) < distractors:
            details["too_small"][lang] = f"{len(others)} distractors < {distractors}"
            continue
        protocols.fit(encode, [xx, gold, others])
        result = protocols.ranked(
            protocols.embed(encode, xx, str(files[0])),
            protocols.embed(encode, gold, str(files[1])),
            protocols.embed(encode, others, f"English distractors of {lang}"),
            rng,
            sizes["margin"],
            sizes["k"],
            block_size,
        )
        metrics[f"paracrawl_{lang}"] = result["p_at_1"]
        metrics[f"{FLOOR}paracrawl_{lang}"] = result["chance"]
        details[lang] = result
    _warn(details["missing"], "paracrawl", folder)
    return metrics, details


# --- UN: xx -> en over the whole English pool ----------------------------------------------


def _un_sides(folder: Path, corpus: bool, split: str, lang: str):
    """(xx queries, their gold rows in the pool, English pool, label) of `lang`, or None."""
    if corpus:
        path = folder / f"{split}.en-{lang}.{lang}"
        if not path.exists():
            return None
        queries = read_lines(path, BenchmarkError)
        pool_ids, pool = _english_pool(folder, split)
        row = {sentence_id: i for i, sentence_id in enumerate(pool_ids)}
        gold = np.array([row[i] for i in _ids(ids_file(path), len(queries))], dtype=np.int64)
        return queries, gold, pool, str(path)
    path, english = folder / f"{split}.{lang}-en.{lang}", folder / f"{split}.{lang}-en.en"
    if not path.exists():
        return None
    queries, pool = read_lines(path, BenchmarkError), read_lines(english, BenchmarkError)
    if len(queries) != len(pool):
        raise BenchmarkError(f"{path}: {len(queries)} lines, {english}: {len(pool)}; renormalise")
    return queries, np.arange(len(queries)), pool, str(path)


def un(encode: Encode, folder: Path, spec: Mapping[str, Any], block_size: int) -> tuple:
    """P@1 (cosine, as the thesis) of every xx sentence of ``split`` among every English one:
    the whole candidate pool, searched exactly block by block (`mlrep.evaluate.search`), so
    memory stays bounded however large the pool. Each query's hit is kept (the paired
    bootstrap of the claims resamples them)."""
    corpus = is_corpus(folder)
    metrics = Scores()
    details: dict[str, Any] = {"missing": []}
    # the embedded corpus's pool is the split's English, the same for every language: encoded
    # once (a normalised UN folder has one English side per language, each its own pool)
    shared: np.ndarray | None = None
    for lang in spec["languages"]:
        sides = _un_sides(folder, corpus, spec["split"], lang)
        if sides is None:
            details["missing"].append(lang)
            continue
        queries, gold, pool, label = sides
        protocols.fit(encode, [queries, pool])
        if shared is None or not corpus:
            shared = protocols.embed(encode, pool, f"English pool of {lang}")
        predicted, _ = retrieval.predict(
            protocols.embed(encode, queries, label), shared, block_size=block_size
        )
        hits = (predicted == gold).astype(int).tolist()  # per query: the paired bootstrap's
        metrics.add(
            f"un_{lang}", retrieval.p_at_1(predicted, gold), retrieval.chance(len(pool)), hits
        )
        details[lang] = {"queries": len(queries), "candidates": len(pool)}
    _warn(details["missing"], "un", folder)
    return metrics, details


# --- MLDoc, Amazon CLS, MARC: zero-shot classification ---------------------------------------


def _labelled(data: tuple[np.ndarray, list[str]], classes: list[str], label: str):
    """Embedded documents with class indices; a label unseen in training is an error."""
    unknown = sorted(set(data[1]) - set(classes))
    if unknown:
        raise classify.LabelError(f"{label}: labels {unknown} are not among the training labels")
    index = {name: i for i, name in enumerate(classes)}
    return classify.Labelled(data[0], np.array([index[y] for y in data[1]], dtype=np.int64))


def classification(
    encode: Encode,
    folder: Path,
    name: str,
    spec: Mapping[str, Any],
    settings: ClassifySettings,
) -> tuple:
    """Train on l1's ``train`` set, select on l1's ``dev`` set, test on l2's ``test`` set, for
    l1-l2 = en-xx and xx-en, per group (Amazon CLS: books, dvd, music); mean of the runs."""
    cache: dict[tuple[str, int], tuple[np.ndarray, list[str]]] = {}

    def documents(role: str, group: str, lang: str) -> tuple[np.ndarray, list[str]] | None:
        path = folder / f"{spec['sets'][role].format(group=group)}.{lang}"
        limit = spec["limits"][role]
        if (str(path), limit) not in cache:
            if not path.exists():
                return None
            texts = read_lines(path, BenchmarkError)
            labels = classify.read_labels(Path(f"{path}.label"), len(texts))
            if 0 < limit < len(texts):
                keep = np.sort(np.random.default_rng(settings.seed).permutation(len(texts))[:limit])
                texts, labels = [texts[i] for i in keep], [labels[i] for i in keep]
            cache[(str(path), limit)] = (protocols.embed(encode, texts, str(path)), labels)
        return cache[(str(path), limit)]

    metrics: dict[str, float] = {}
    details: dict[str, Any] = {"missing": []}
    for group in spec["groups"] or [""]:
        for lang in spec["languages"]:
            for l1, l2 in (("en", lang), (lang, "en")):
                key = f"{name}_{group + '_' if group else ''}{l1}-{l2}"
                train = documents("train", group, l1)
                dev = documents("dev", group, l1)
                test = documents("test", group, l2)
                if train is None or dev is None or test is None:
                    details["missing"].append(key)
                    continue
                classes = sorted(set(train[1]))
                result = classify.zero_shot(
                    _labelled(train, classes, f"{key} train"),
                    _labelled(dev, classes, f"{key} dev"),
                    {l2: _labelled(test, classes, f"{key} test")},
                    len(classes),
                    settings,
                )
                metrics[key] = result["accuracy"][l2]
                details[key] = {"dev": result["dev"], "classes": classes}
    _warn(details["missing"], name, folder)
    return metrics, details


def run(
    encode: Encode,
    folders: Mapping[str, Path],
    benchmarks: Mapping[str, Any],
    evaluate: Mapping[str, Any],
) -> tuple[Scores, dict[str, Any]]:
    """Every benchmark that has a folder: (metrics, details per benchmark). `encode` is any
    encoder's: a model with ``embed(tokens)`` (EMS, a LEALLA student) through
    `mlrep.embed.evaluate.encoder`, a teacher's, or a teacher through a reduction layer
    (`mlrep.embed.reduce.encoder`); `benchmarks` maps each name to its spec (a chapter's
    params.yaml ``benchmarks`` entry), `evaluate` holds the search and margin settings."""
    block_size = evaluate["search"]["block_size"]
    metrics = Scores()
    details: dict[str, Any] = {}
    for name, folder in folders.items():
        spec = benchmarks[name]
        if name == "flores":
            found, info = flores(encode, folder, spec, block_size)
        elif name == "bucc":
            found, info = bucc(encode, folder, spec, evaluate["bucc"], block_size)
        elif name == "paracrawl":
            found, info = paracrawl(encode, folder, spec, evaluate["paracrawl"], block_size)
        elif name == "un":
            found, info = un(encode, folder, spec, block_size)
        elif name in CLASSIFICATION:
            settings = ClassifySettings(**evaluate["classify"])
            found, info = classification(encode, folder, name, spec, settings)
        else:
            raise BenchmarkError(f"unknown benchmark {name!r}; known: {', '.join(NAMES)}")
        layout = "embedded corpus" if is_corpus(folder) else "normalised dataset"
        metrics.update(found)
        details[name] = {"folder": str(folder), "layout": layout, **info}
    return metrics, details


def score(
    encode: Encode,
    folders: Mapping[str, Path],
    benchmarks: Mapping[str, Any],
    evaluate: Mapping[str, Any],
    details_file: Path,
) -> Scores:
    """`run`'s metrics, its details (pairs shared, thresholds, mined pairs outside the gold)
    written to `details_file`: the one scoring step every chapter's evaluate verb calls."""
    metrics, details = run(encode, folders, benchmarks, evaluate)
    write_details(details, details_file)
    return metrics


def write_details(details: Mapping[str, Any], details_file: Path) -> None:
    """`run`'s details as ``benchmarks.json`` (atomically, keys sorted)."""
    text = json.dumps(details, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    atomic_write_text(details_file, text)
