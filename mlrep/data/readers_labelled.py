"""Readers of labelled classification sets: MLDoc (TSV), Amazon CLS-10 (review markup), MARC (JSON).

Kind ``labelled``: per language, ``<split>.<name>.<lang>`` holds one document per line and
``<split>.<name>.<lang>.label`` its label on the same line; languages are not aligned with
each other (each side is its own group).
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from mlrep.data.source import ReaderError, Source, TextSet, lines, scratch_file

Document = tuple[str, str]  # (label, text)
_FIELD = {name: re.compile(rf"<{name}>(.*?)</{name}>", re.S) for name in ("rating", "text")}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _mldoc(file: Path, label: str) -> Iterator[Document]:
    """MLDoc: ``<label> TAB <document>`` per line (labels CCAT, ECAT, GCAT, MCAT)."""
    for number, text in lines(file, label):
        fields = text.split("\t")
        if len(fields) != 2 or not fields[0]:
            raise ReaderError(
                f"{label}:{number}: {len(fields)} column(s), expected 2 (label TAB document); "
                "rebuild the split with the MLDoc scripts"
            )
        yield fields[0], _one_line(fields[1])


def _marc(file: Path, label: str) -> Iterator[Document]:
    """MARC: one JSON object per line with ``stars`` and ``review_body``."""
    for number, text in lines(file, label):
        try:
            record = json.loads(text)
            yield str(record["stars"]), _one_line(record["review_body"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ReaderError(
                f"{label}:{number}: not a MARC review ({exc!r}); each line must be a JSON "
                "object with stars and review_body"
            ) from None


def _cls(file: Path, label: str) -> Iterator[Document]:
    """CLS-10 ``.review`` files: ``<item>`` blocks with ``<rating>`` and ``<text>``.

    Ratings above 3 are ``positive``, below 3 ``negative`` (the corpus has no 3-star
    reviews; one would stop the run, since it has no binary label).
    """
    block: list[str] | None = None
    start = 0
    for number, text in lines(file, label):
        if "<item>" in text:
            if block is not None:
                raise ReaderError(f"{label}:{number}: <item> inside the <item> of line {start}")
            block, start = [], number
        if block is not None:
            block.append(text)
        if "</item>" in text:
            if block is None:
                raise ReaderError(f"{label}:{number}: </item> without <item>")
            item = "\n".join(block)
            found = {name: pattern.search(item) for name, pattern in _FIELD.items()}
            missing = [name for name, match in found.items() if match is None]
            if missing:
                raise ReaderError(f"{label}:{start}: <item> without <{missing[0]}>")
            rating = float(found["rating"].group(1))  # type: ignore[union-attr]
            if rating == 3:
                raise ReaderError(f"{label}:{start}: a 3-star review has no binary label")
            polarity = "positive" if rating > 3 else "negative"
            yield polarity, _one_line(html.unescape(found["text"].group(1)))  # type: ignore[union-attr]
            block = None
    if block is not None:
        raise ReaderError(f"{label}: <item> opened at line {start} is never closed")


def _mldoc_layout(path: str) -> tuple[str, str]:
    """english.train.1000 -> (train1000, labelled)."""
    return "".join(PurePosixPath(path).name.split(".")[1:]), "labelled"


def _cls_layout(path: str) -> tuple[str, str]:
    """cls-acl10-unprocessed/<lang>/<domain>/<split>.review -> (<split>, <domain>)."""
    return PurePosixPath(path).stem, PurePosixPath(path).parts[-2]


def _marc_layout(path: str) -> tuple[str, str]:
    """<split>/dataset_<lang>_<split>.json -> (<split>, labelled)."""
    return PurePosixPath(path).parts[0], "labelled"


Parser = Callable[[Path, str], Iterator[Document]]
Layout = Callable[[str], tuple[str, str]]


def _reader(parse: Parser, layout: Layout) -> Callable[[Source, list[str] | None], list[TextSet]]:
    def read(source: Source, languages: list[str] | None) -> list[TextSet]:
        chosen = source.languages(languages)
        found: dict[str, dict[str, Path]] = defaultdict(dict)
        for spec in source.dataset.files:
            if spec.lang not in chosen or spec.path not in source.fetched:
                continue
            split, name = layout(spec.path)
            stem = f"{split}.{name}"
            text_path = scratch_file(source, f"{stem}.{spec.lang}")
            label_path = scratch_file(source, f"{stem}.{spec.lang}.label")
            with (
                open(text_path, "w", encoding="utf-8", newline="\n") as texts,
                open(label_path, "w", encoding="utf-8", newline="\n") as labels,
            ):
                file = source.raw / spec.path
                for tag, text in parse(file, str(file)):
                    labels.write(tag + "\n")
                    texts.write(text + "\n")
            found[stem].update({spec.lang: text_path, f"{spec.lang}.label": label_path})
        sets = []
        for stem, files in sorted(found.items()):
            langs = tuple(s for s in files if not s.endswith(".label"))
            aligned = tuple((lang, f"{lang}.label") for lang in langs)
            sets.append(TextSet(stem, files, langs, "labelled", aligned))
        return sets

    read.__doc__ = f"Documents and labels of each split and language ({parse.__doc__})"
    return read


mldoc_sets = _reader(_mldoc, _mldoc_layout)
cls_review_sets = _reader(_cls, _cls_layout)
marc_json_sets = _reader(_marc, _marc_layout)
