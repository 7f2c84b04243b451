"""Readers of marked-up test sets: WMT's SGML (``.sgm``) and IWSLT's XML plus ``train.tags``.

Both keep one ``<seg id="…">text</seg>`` per line inside ``<doc docid="…">``; the parser reads
line by line (files stay streamed), so it also accepts WMT's "fake SGML" that no XML parser
takes. A source and its reference are paired by (docid, seg id), in order: a segment missing
on one side, an unclosed ``<seg>`` or ``<doc>``, or a ``<seg>`` outside any document stops with
file, line and fix. Entities (``&amp;``, ``&quot;``, HTML names) are decoded and whitespace is
collapsed as sacrebleu does; sacrebleu keeps WMT SGML entities as they are, so the metadata
counts the segments whose text changed by decoding (``entities_decoded``).
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from mlrep.data.source import ReaderError, Source, TextSet, lines, scratch_file

_DOC = re.compile(r"<doc\b([^>]*)>", re.IGNORECASE)
_SEG = re.compile(r"<seg\b([^>]*)>(.*?)</seg>", re.IGNORECASE)
_ID = {
    name: re.compile(rf'\b{name}\s*=\s*"?([^"\s>]+)"?', re.IGNORECASE) for name in ("id", "docid")
}
# newstest2014-deen-src.de.sgm (one pair), newstest2009-src.de.sgm (multi-way)
_WMT_NAME = re.compile(
    r"^(?P<set>[^.]+?)(?:-(?P<code>[a-z]{4}))?-(?P<role>src|ref)\.(?P<lang>[a-z]{2,3})\.sgm$"
)
# IWSLT17.TED.tst2017.en-fr.en.xml and train.tags.en-fr.en
_IWSLT_XML = re.compile(
    r"^.+\.(?P<set>[^.]+)\.(?P<pair>[a-z]{2,3}-[a-z]{2,3})\.(?P<lang>[a-z]{2,3})\.xml$"
)
_TRAIN_TAGS = re.compile(r"^train\.tags\.(?P<pair>[a-z]{2,3}-[a-z]{2,3})\.(?P<lang>[a-z]{2,3})$")


@dataclass(frozen=True)
class Segment:
    line: int
    docid: str
    segid: str
    text: str
    decoded: bool  # whether decoding entities changed the text


def segments(path: Path, label: str) -> Iterator[Segment]:
    """Every ``<seg>`` of a WMT SGML or IWSLT XML file, in order, with its document id."""
    doc: tuple[int, str] | None = None  # (line opened, docid)
    seen: set[str] = set()
    for number, text in lines(path, label):
        where = f"{label}:{number}"
        opened = _DOC.search(text)
        if opened:
            if doc is not None:
                raise ReaderError(
                    f"{where}: <doc> opens before the one opened at line {doc[0]} is closed; "
                    "add the missing </doc>"
                )
            docid = _ID["docid"].search(opened.group(1))
            doc = (number, docid.group(1) if docid else str(number))
            seen = set()
        found = list(_SEG.finditer(text))
        if len(found) != text.lower().count("<seg"):
            raise ReaderError(
                f"{where}: <seg> is not closed on its line; each segment must end with </seg> "
                "on the line where it starts"
            )
        for match in found:
            if doc is None:
                raise ReaderError(f"{where}: <seg> outside any <doc>; wrap it in <doc docid=…>")
            segid = _ID["id"].search(match.group(1))
            if segid is None:
                raise ReaderError(f'{where}: <seg> without an id; write <seg id="N">')
            if segid.group(1) in seen:
                raise ReaderError(f"{where}: seg id {segid.group(1)} repeats in its document")
            seen.add(segid.group(1))
            raw = match.group(2)
            decoded = html.unescape(raw)
            yield Segment(number, doc[1], segid.group(1), " ".join(decoded.split()), decoded != raw)
        if "</doc>" in text.lower():
            if doc is None:
                raise ReaderError(f"{where}: </doc> without an open <doc>; remove it")
            doc = None
    if doc is not None:
        raise ReaderError(f"{label}: <doc> opened at line {doc[0]} is never closed; add </doc>")


def paired(source: Source, name: str, files: dict[str, tuple[Path, str]]) -> TextSet:
    """A set of line-aligned texts from marked-up files that must hold the same segments."""
    outputs = {lang: scratch_file(source, f"{name}.{lang}") for lang in files}
    decoded = 0
    with ExitStack() as stack:
        handles = {
            lang: stack.enter_context(open(path, "w", encoding="utf-8", newline="\n"))
            for lang, path in outputs.items()
        }
        labels = [label for _, label in files.values()]
        for row in zip_longest(*(segments(path, label) for path, label in files.values())):
            first = next(seg for seg in row if seg is not None)
            expected = (first.docid, first.segid)
            for label, seg in zip(labels, row, strict=True):
                if seg is None or (seg.docid, seg.segid) != expected:
                    where = (
                        f"{label}:{seg.line}: has doc {seg.docid} seg {seg.segid}"
                        if seg
                        else f"{label}: ends"
                    )
                    raise ReaderError(
                        f"{where} where {labels[row.index(first)]}:{first.line} has doc "
                        f"{first.docid} seg {first.segid}; source and reference must list the "
                        "same segments in the same order"
                    )
            for lang, seg in zip(files, row, strict=True):
                handles[lang].write(seg.text + "\n")
                decoded += seg.decoded
    kind = "multiway" if name.endswith(".multiway") else "parallel"
    return TextSet(name, outputs, tuple(files), kind, info={"entities_decoded": decoded})


def _chosen(langs: set[str], languages: list[str] | None) -> bool:
    return not languages or langs <= set(languages)


def _members(source: Source) -> list[tuple[Path, str]]:
    """(file, label) of every fetched file and every member of a fetched archive."""
    found = []
    for path in source.fetched_paths():
        root = source.unpacked(path)
        for file in [root] if root.is_file() else sorted(root.rglob("*")):
            if file.is_file():
                inner = "" if file == root else f"!{file.relative_to(root).as_posix()}"
                found.append((file, f"{source.raw / path}{inner}"))
    return found


def wmt_sgml_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """WMT test archives: ``<set>-<xxyy>-{src,ref}.<lang>.sgm`` pairs and multi-way sets.

    A pair-coded set gives one set per direction (``newstest2014.de-en``: src.de with ref.en),
    as sacrebleu pairs them; a set without a pair code (newstest2009) is multi-way
    (``newstest2009.multiway``, the source-side file of each language).
    """
    groups: dict[tuple[str, str], dict[tuple[str, str], tuple[Path, str]]] = defaultdict(dict)
    for file, label in _members(source):
        if match := _WMT_NAME.match(file.name):
            key = (match["set"], match["code"] or "")
            groups[key][(match["role"], match["lang"])] = (file, label)
    sets = []
    for (name, code), files in sorted(groups.items()):
        if not code:
            langs = sorted({lang for _, lang in files if not languages or lang in languages})
            if len(langs) > 1:
                chosen = {lang: files.get(("src", lang)) or files[("ref", lang)] for lang in langs}
                sets.append(paired(source, f"{name}.multiway", chosen))
            continue
        for (role, src), src_file in sorted(files.items()):
            for (other, ref), ref_file in sorted(files.items()):
                if (
                    role == "src"
                    and other == "ref"
                    and ref != src
                    and _chosen({src, ref}, languages)
                ):
                    sets.append(
                        paired(source, f"{name}.{src}-{ref}", {src: src_file, ref: ref_file})
                    )
    return sets


def _tagless(source: Source, name: str, file: Path, label: str) -> Path:
    """A ``train.tags`` file without its talk metadata lines (<url>, <title>, <doc …>, …)."""
    out = scratch_file(source, name)
    with open(out, "w", encoding="utf-8", newline="\n") as handle:
        for _, text in lines(file, label):
            if not text.strip().startswith("<"):
                handle.write(text.strip() + "\n")
    return out


def iwslt_xml_sets(source: Source, languages: list[str] | None) -> list[TextSet]:
    """WIT3 IWSLT archives: ``IWSLT17.TED.<set>.<l1>-<l2>.<lang>.xml`` and ``train.tags.*``.

    Sides of one set may come from the two directions' archives (the 2017 test release has
    only source sides: en-fr.tgz holds the English, fr-en.tgz the French); each language is
    taken from the direction where it is the source, else from the other. Sets are named
    with the pair in alphabetical order (``tst2017.en-fr``).
    """
    xml: dict[tuple[str, str], dict[str, dict[bool, tuple[Path, str]]]] = defaultdict(dict)
    tags: dict[str, dict[str, dict[str, tuple[Path, str]]]] = defaultdict(lambda: defaultdict(dict))
    for file, label in _members(source):
        if match := _IWSLT_XML.match(file.name):
            pair = "-".join(sorted(match["pair"].split("-")))
            is_source = match["pair"].split("-")[0] == match["lang"]
            xml[(match["set"], pair)].setdefault(match["lang"], {})[is_source] = (file, label)
        elif match := _TRAIN_TAGS.match(file.name):
            pair = "-".join(sorted(match["pair"].split("-")))
            tags[pair][match["pair"]].setdefault(match["lang"], (file, label))
    sets = []
    for pair, directions in sorted(tags.items()):
        langs = pair.split("-")
        both = [files for _, files in sorted(directions.items()) if set(files) == set(langs)]
        if both and _chosen(set(langs), languages):  # both sides from one direction's release
            texts = {
                lang: _tagless(source, f"train.{pair}.{lang}", *both[0][lang]) for lang in langs
            }
            sets.append(TextSet(f"train.{pair}", texts, tuple(langs)))
    for (name, pair), sides in sorted(xml.items()):
        langs = pair.split("-")
        if set(sides) == set(langs) and _chosen(set(langs), languages):
            chosen = {lang: sides[lang].get(True) or sides[lang][False] for lang in langs}
            sets.append(paired(source, f"{name}.{pair}", chosen))
    return sets
