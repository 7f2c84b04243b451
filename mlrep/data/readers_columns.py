"""Readers of column formats: BUCC (id and sentence), ASPEC (`` ||| `` fields), MUSE (word pairs).

Each line is split into a fixed number of columns; a line with another count stops with file,
line and the count expected, since a shifted column silently pairs the wrong texts.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from itertools import zip_longest
from pathlib import Path, PurePosixPath

from mlrep.data.source import ReaderError, Source, TextSet, lines, require, scratch_file

# bucc2018/de-en/de-en.training.de, .en, .gold (also the sample and test releases)
_BUCC = re.compile(r"^(?P<pair>(?P<lang>[a-z]{2})-en)\.(?P<split>[a-z]+)\.(?P<part>[a-z]{2}|gold)$")


def _rows(
    path: Path, label: str, count: int, split: Callable[[str], list[str]], layout: str
) -> Iterator[tuple[int, list[str]]]:
    for number, text in lines(path, label):
        fields = split(text)
        if len(fields) != count:
            raise ReaderError(
                f"{label}:{number}: {len(fields)} column(s), expected {count} ({layout}); "
                "fix or remove the line"
            )
        yield number, fields


def _write_columns(
    rows: Iterator[tuple[int, list[str]]], outputs: dict[int, Path]
) -> Iterator[list[str]]:
    """Write the chosen columns of each row to their files, passing each row on."""
    with ExitStack() as stack:
        handles = {
            column: stack.enter_context(open(path, "w", encoding="utf-8", newline="\n"))
            for column, path in outputs.items()
        }
        for _, fields in rows:
            for column, handle in handles.items():
                handle.write(fields[column].strip() + "\n")
            yield fields


def _tab(text: str) -> list[str]:
    return text.split("\t")


def _bucc_side(source: Source, name: str, lang: str, file: Path, label: str) -> dict[str, Path]:
    outputs = {
        0: scratch_file(source, f"{name}.{lang}.ids"),
        1: scratch_file(source, f"{name}.{lang}"),
    }
    seen: set[str] = set()
    for number, fields in enumerate(
        _write_columns(_rows(file, label, 2, _tab, "id<TAB>sentence"), outputs), 1
    ):
        if fields[0] in seen:
            raise ReaderError(f"{label}:{number}: id {fields[0]} appears twice; ids must be unique")
        seen.add(fields[0])
    return {lang: outputs[1], f"{lang}.ids": outputs[0]}


def _check_gold(gold: Path, label: str, sides: dict[str, Path]) -> int:
    """Gold pairs must name ids that exist on their side; returns the number of pairs."""
    pairs = [(n, f) for n, f in _rows(gold, label, 2, _tab, "source id<TAB>English id")]
    for column, ids_file in enumerate(sides.values()):
        wanted = {fields[column] for _, fields in pairs}
        for _, known in lines(ids_file):
            wanted.discard(known)
        if wanted:
            number = next(n for n, f in pairs if f[column] in wanted)
            raise ReaderError(
                f"{label}:{number}: gold id {sorted(wanted)[0]} is not among the sentences "
                f"({len(wanted)} missing); gold and sentence files are from different releases"
            )
    return len(pairs)


def bucc_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """BUCC 2018 archives: ``<xx>-en.<split>.{<xx>,en}`` (id TAB sentence) and ``.gold``.

    The two sides are comparable, not aligned: each is written with its ids
    (``<split>.<xx>-en.<xx>`` + ``….<xx>.ids``, line by line), and ``….gold`` keeps the
    gold id pairs, so mining can be scored. ``max_lines`` caps each side; the gold file stays
    whole (its pairs beyond the cap simply find no sentence).
    """
    chosen = source.languages(languages)
    found: dict[tuple[str, str], dict[str, tuple[Path, str]]] = defaultdict(dict)
    for spec in source.dataset.files:
        if spec.lang not in chosen or spec.path not in source.fetched:
            continue
        root = source.unpacked(spec.path)
        for file in sorted(root.rglob("*")):
            if (match := _BUCC.match(file.name)) and match["lang"] == spec.lang:
                label = f"{source.raw / spec.path}!{file.relative_to(root).as_posix()}"
                found[(match["split"], match["pair"])][match["part"]] = (file, label)
    sets = []
    for (split, pair), parts in sorted(found.items()):
        lang = pair.split("-")[0]
        missing = sorted({lang, "en"} - set(parts))
        if missing:
            raise ReaderError(
                f"{source.raw}: BUCC {split} {pair} has no {missing} side; fetch it again"
            )
        name = f"{split}.{pair}"
        files: dict[str, Path] = {}
        for side in (lang, "en"):
            files.update(_bucc_side(source, name, side, *parts[side]))
        info = {}
        if "gold" in parts:
            ids = {side: files[f"{side}.ids"] for side in (lang, "en")}
            info["gold_pairs"] = _check_gold(*parts["gold"], ids)
            files["gold"] = parts["gold"][0]
        aligned = ((lang, f"{lang}.ids"), ("en", "en.ids"))
        sets.append(TextSet(name, files, (lang, "en"), "comparable", aligned, info))
    return sets


def _fields(text: str) -> list[str]:
    return text.split(" ||| ")


def aspec_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """ASPEC (manual): `` ||| ``-separated lines whose last two fields are the two languages.

    The registry gives each file's field count (JE train: score, id, document, ja, en; JE dev
    and test: id, document, ja, en; JC: id, ja, zh). Each file is a set named by its stem
    (``train-1.ja-en``: the thesis uses the first million pairs, train-1).
    """
    langs = source.dataset.languages
    require(source.dataset, languages, list(langs), "are not in this corpus")
    pair = "-".join(langs)
    sets = []
    for spec in source.dataset.files:
        if spec.path not in source.fetched:
            continue
        if spec.columns is None:
            raise ReaderError(f"registry: {source.dataset.key}/{spec.path} needs `columns`")
        file = source.raw / spec.path
        name = f"{Path(spec.path).stem}.{pair}"
        layout = f"fields separated by ' ||| ', the last two {langs[0]} and {langs[1]}"
        rows = _rows(file, str(file), spec.columns, _fields, layout)
        outputs = {
            spec.columns - 2 + i: scratch_file(source, f"{name}.{lang}")
            for i, lang in enumerate(langs)
        }
        for _ in _write_columns(rows, outputs):
            pass
        texts = {lang: outputs[spec.columns - 2 + i] for i, lang in enumerate(langs)}
        sets.append(TextSet(name, texts, tuple(langs)))
    return sets


def muse_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """MUSE dictionaries ``<src>-<tgt>.txt``: a word and one translation per line.

    A word with several translations has several lines; they stay (one line per pair) and
    ``source_words`` counts distinct source words. Kind ``dictionary``: aligned like a
    parallel set, but the units are words.
    """
    sets = []
    chosen = source.languages(languages)
    for spec in source.dataset.files:
        if spec.lang not in chosen or spec.path not in source.fetched:
            continue
        pair = Path(spec.path).name.split(".")[0]
        src, tgt = pair.split("-")
        file = source.raw / spec.path
        name = f"dict.{pair}"
        outputs = {
            0: scratch_file(source, f"{name}.{src}"),
            1: scratch_file(source, f"{name}.{tgt}"),
        }
        rows = _rows(file, str(file), 2, str.split, "a word, a space or tab, its translation")
        words = {fields[0] for fields in _write_columns(rows, outputs)}
        texts = {src: outputs[0], tgt: outputs[1]}
        sets.append(
            TextSet(name, texts, (src, tgt), "dictionary", info={"source_words": len(words)})
        )
    return sets


def _ted_split(source: Source, file: Path, label: str, split: str, wanted: list[str]) -> TextSet:
    rows = lines(file, label)
    _, first = next(rows, (0, ""))
    header = first.split("\t")
    require(source.dataset, wanted, header[1:], f"are not columns of {label}")
    columns = [header.index(lang) for lang in wanted]
    name = f"{split}.multiway"
    outputs = {lang: scratch_file(source, f"{name}.{lang}") for lang in wanted}
    untranslated = 0
    with ExitStack() as stack:
        handles = [
            stack.enter_context(open(outputs[lang], "w", encoding="utf-8", newline="\n"))
            for lang in wanted
        ]
        for number, text in rows:
            fields = text.split("\t")
            if len(fields) != len(header):
                raise ReaderError(
                    f"{label}:{number}: {len(fields)} column(s), expected {len(header)} (one per "
                    "header column); fix or remove the line"
                )
            picked = [fields[i].strip() for i in columns]
            if "__NULL__" in picked:
                untranslated += 1
                continue
            for handle, value in zip(handles, picked, strict=True):
                handle.write(value + "\n")
    info = {"untranslated_rows": untranslated}
    return TextSet(name, outputs, tuple(wanted), "multiway", info=info)


def ted_tsv_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """Qi et al.'s TED talks: ``all_talks_<split>.tsv``, a header of language codes, one talk
    sentence per row, ``__NULL__`` where a language lacks the translation.

    Multi-way sets ``<split>.multiway`` keep the rows translated into every chosen language
    (default: the registry's list); the others are counted as ``untranslated_rows``.
    """
    wanted = languages or list(source.dataset.languages)
    sets = []
    for path in source.fetched_paths():
        root = source.unpacked(path)
        for file in sorted(root.rglob("all_talks_*.tsv")):
            label = f"{source.raw / path}!{file.relative_to(root).as_posix()}"
            split = file.stem.removeprefix("all_talks_")
            sets.append(_ted_split(source, file, label, split, wanted))
    return sets


_ALT_SENTENCE = re.compile(r"^SNT\.(?P<doc>\d+)\.\d+$")
_ALT_URL = re.compile(r"^URL\.(?P<doc>\d+)$")


def _alt_splits(source: Source) -> dict[str, str]:
    """Document id -> split, from the URL-<split>.txt lists."""
    splits = {}
    for path in source.fetched_paths():
        split = re.fullmatch(r"URL-(\w+)\.txt", PurePosixPath(path).name)
        if split:
            for number, text in lines(source.raw / path):
                match = _ALT_URL.match(text.split("\t")[0])
                if match is None:
                    raise ReaderError(
                        f"{source.raw / path}:{number}: expected URL.<document id> TAB <url>"
                    )
                splits[match["doc"]] = split.group(1)
    return splits


def alt_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """The Asian Language Treebank: ``data_<lang>.txt`` lines ``SNT.<doc>.<n> TAB sentence``.

    The language files list the same sentence ids in the same order (checked); the
    ``URL-{train,dev,test}.txt`` lists assign whole documents to the standard splits.
    """
    langs = list(source.dataset.languages)
    require(source.dataset, languages, langs, "are not in this corpus")
    splits = _alt_splits(source)
    files: dict[str, tuple[Path, str]] = {}
    for path in source.fetched_paths():
        root = source.unpacked(path)
        for lang in langs:
            for file in root.rglob(f"data_{lang}.txt") if root.is_dir() else []:
                files[lang] = (file, f"{source.raw / path}!{file.relative_to(root).as_posix()}")
    if set(files) != set(langs):
        raise ReaderError(f"{source.raw}: no data_{{{','.join(langs)}}}.txt in the ALT archive")
    pair = "-".join(langs)
    outputs = {
        (split, lang): scratch_file(source, f"{split}.{pair}.{lang}")
        for split in sorted(set(splits.values()))
        for lang in langs
    }
    unassigned = 0
    with ExitStack() as stack:
        handles = {
            key: stack.enter_context(open(path, "w", encoding="utf-8", newline="\n"))
            for key, path in outputs.items()
        }
        streams = [_rows(*files[lang], 2, _tab, "SNT.<doc>.<n> TAB sentence") for lang in langs]
        for row in zip_longest(*streams):
            if None in row:
                ended = files[langs[row.index(None)]][1]
                raise ReaderError(f"{ended}: ends before the other language files; they must align")
            ids = {fields[0] for _, fields in row}
            if len(ids) != 1:
                where = ", ".join(
                    f"{files[lang][1]}:{n}" for lang, (n, _) in zip(langs, row, strict=True)
                )
                raise ReaderError(
                    f"{where}: sentence ids {sorted(ids)} differ; the files must align"
                )
            match = _ALT_SENTENCE.match(ids.pop())
            split = splits.get(match["doc"]) if match else None
            if split is None:
                unassigned += 1
                continue
            for lang, (_, fields) in zip(langs, row, strict=True):
                handles[(split, lang)].write(fields[1].strip() + "\n")
    info = {"sentences_in_no_split": unassigned}
    return [
        TextSet(
            f"{split}.{pair}",
            {lang: outputs[(split, lang)] for lang in langs},
            tuple(langs),
            info=info,
        )
        for split in sorted(set(splits.values()))
    ]
