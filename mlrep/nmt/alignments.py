"""Word alignments as the NMT data's subword links: what the word-level contrastive loss
(`mlrep.nmt.contrastive`) reads through fairseq's ``--load-alignments``.

The alignment layer links words (`mlrep.align`: a unit, word or merged phrase, is the cross
product of its words); the model reads subwords behind a language tag. Two moves turn one
into the other, each in one function here:

* `subword_links`: a word link links every subword of its two words (`mlrep.align.subword`),
  so a unit stays the cross product of its subwords and a connected component;
* `tagged`: the binarised lines carry tags (`mlrep.nmt.data.tag_source`/`tag_target`), which
  shift positions: the source always starts with a tag, the target only in the
  ``s-enc-t-dec`` format; a reversed direction (xx→en made from an en-xx pair) swaps sides.

A links file of a cut dataset, ``align/<split>.<src>-<tgt>``, holds one line per line of
``sub/<split>.<src>-<tgt>.*``: the untagged subword links of that pair (pharaoh ``i-j``).
`check_lines` refuses a file whose line count or indices do not fit those subwords, naming
the file, the line and the fix, before fairseq would silently skip the sentence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mlrep.align.pharaoh import (
    AlignmentFormatError,
    Link,
    format_links,
    parse_links,
    read_alignments,
)
from mlrep.align.subword import SubwordMismatch, word_of_pieces, words_to_subwords
from mlrep.align.units import units
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt.data import PIVOT, read_pair, split_directions

ALIGN = "align"  # a cut dataset's folder of subword links, and fairseq's --align-suffix


class AlignmentDataError(MlrepError):
    """Subword links that do not fit the lines they are said to align."""


def subword_links(
    source_words: Sequence[str],
    target_words: Sequence[str],
    links: Iterable[Link],
    source_pieces: Sequence[str],
    target_pieces: Sequence[str],
) -> set[Link]:
    """The word `links` of a pair as links between its subwords (every piece of a linked
    word with every piece of the word it is linked to). Words and pieces are compared by
    `_comparable` forms."""
    return words_to_subwords(
        links,
        word_of_pieces(_comparable(source_words), _comparable(source_pieces)),
        word_of_pieces(_comparable(target_words), _comparable(target_pieces)),
    )


def _comparable(texts: Sequence[str]) -> list[str]:
    """Each text in NFKC, which SentencePiece's default normaliser applies to its pieces
    (full-width characters of Japanese tokens come out half-width), less its combining marks:
    NFKC puts a run of them in canonical order and SentencePiece does not, and a piece may end
    between two of them (Burmese ``င့်`` typed with the asat first comes out as ``င်`` + ``့``),
    so the pieces are placed by the characters the two agree on."""
    out = []
    for text in texts:
        normal = unicodedata.normalize("NFKC", text)
        out.append("".join(ch for ch in normal if not unicodedata.combining(ch)))
    return out


def tagged(links: Iterable[Link], tag_format: str, reverse: bool) -> list[Link]:
    """Untagged subword links of an en-xx line as positions in the binarised line of one
    direction: `reverse` for xx→en, shifted past the tags `tag_format` puts there."""
    target_shift = 1 if tag_format == "s-enc-t-dec" else 0
    oriented = ((t, s) for s, t in links) if reverse else links
    return sorted((s + 1, t + target_shift) for s, t in oriented)


def check_lines(path: Path, sources: list[str], targets: list[str]) -> list[frozenset[Link]]:
    """The links of `path`, one line per subword line pair, every index inside its line."""
    lines = read_lines(path, AlignmentDataError)
    if len(lines) != len(sources):
        raise AlignmentDataError(
            f"{path}: {len(lines)} lines of links for {len(sources)} subword lines; the links "
            "must come from the same cut of the dataset: rebuild them after cutting"
        )
    found = []
    for number, (line, source, target) in enumerate(zip(lines, sources, targets, strict=True), 1):
        try:
            links = parse_links(line, f"{path}:{number}")
        except AlignmentFormatError as error:
            raise AlignmentDataError(str(error)) from error
        lengths = (len(source.split()), len(target.split()))
        for s, t in links:
            if s >= lengths[0] or t >= lengths[1]:
                raise AlignmentDataError(
                    f"{path}:{number}: link {s}-{t} outside the line's {lengths[0]} source and "
                    f"{lengths[1]} target subwords; the links were made for other subwords: "
                    "rebuild them from this dataset's subword files"
                )
        found.append(links)
    return found


def format_lines(links: Iterable[Iterable[Link]]) -> str:
    return "".join(format_links(line) + "\n" for line in links)


def attach(
    cut: Path,
    languages: Sequence[str],
    encoded: Sequence[Path],
    tokens: Sequence[Path],
    links: Mapping[str, Path],
    out: Path,
) -> dict[str, float]:
    """Write ``out/<split>.<src>-<tgt>`` for every direction file of the cut dataset `cut`
    whose split and pair `links` aligns (keys ``<split>.en-xx``, the alignment layer's word
    links of the preprocessed split, line by line with its `tokens` files). Each cut line is
    found in the preprocessed `encoded` files it was cut from (the same subword pair; files
    named ``<split>.<pair>.<lang>`` as the preprocessing names them), then its words' links
    become subword links. Returns the units per sentence of each direction written."""
    unlinked = [
        d.name for d in split_directions(languages, "train") if f"train.{d.name}" not in links
    ]
    if unlinked:
        raise AlignmentDataError(
            f"{cut}: no word links for the training pairs {', '.join(unlinked)}: the word-level "
            "loss reads every training line's units; give train.<pair>=<links> for each"
        )
    by_name = {p.name: p for p in encoded}
    words_by_name = {p.name: p for p in tokens}
    stats = {}
    for key, link_file in links.items():
        split, pair = key.split(".")
        xx = pair.split("-")[1]
        found = _pair_lines(split, pair, by_name, words_by_name, link_file)
        for d in split_directions(languages, split):
            if {d.src, d.tgt} != {PIVOT, xx}:
                continue
            src, tgt = read_pair(cut / "sub", split, d)
            written = []
            for number, (a, b) in enumerate(zip(src, tgt, strict=True), 1):
                english, other = (a, b) if d.src == PIVOT else (b, a)
                if (english, other) not in found:
                    raise AlignmentDataError(
                        f"{cut}/sub/{split}.{d.name}:{number}: this line pair is not in the "
                        f"preprocessed {split}.{pair} files given; give the subword files the "
                        "dataset was cut from (and their tokens and links)"
                    )
                en_words, xx_words, word_links = found[(english, other)]
                where = f"{cut}/sub/{split}.{d.name}:{number}"
                pieces = subword_links_at(
                    where, en_words, xx_words, word_links, english.split(), other.split()
                )
                written.append(pieces if d.src == PIVOT else {(t, s) for s, t in pieces})
            atomic_write_text(out / f"{split}.{d.name}", format_lines(written))
            stats[f"{split}.{d.name}"] = sum(len(units(x)) for x in written) / max(1, len(written))
    return stats


def subword_links_at(
    where: str,
    en_words: list[str],
    xx_words: list[str],
    links: frozenset[Link],
    en_pieces: list[str],
    xx_pieces: list[str],
) -> set[Link]:
    try:
        return subword_links(en_words, xx_words, links, en_pieces, xx_pieces)
    except SubwordMismatch as error:
        raise AlignmentDataError(
            f"{where}: {error}; the tokens given are not the words these subwords were made of"
        ) from error


def _pair_lines(
    split: str,
    pair: str,
    encoded: Mapping[str, Path],
    tokens: Mapping[str, Path],
    link_file: Path,
) -> dict[tuple[str, str], tuple[list[str], list[str], frozenset[Link]]]:
    """Each preprocessed subword line pair of `split`.`pair` → its words and word links."""
    en, xx = pair.split("-")
    names = [f"{split}.{pair}.{lang}" for lang in (en, xx)]
    missing = [n for n in names if n not in encoded or n not in tokens]
    if missing:
        raise AlignmentDataError(
            f"no subword or token file {', '.join(missing)} for the links {link_file}; give "
            "the preprocessed files of every aligned split and pair"
        )
    sub_en, sub_xx = (read_lines(encoded[n], AlignmentDataError) for n in names)
    tok_en, tok_xx = (read_lines(tokens[n], AlignmentDataError) for n in names)
    try:
        word_links = read_alignments(link_file)
    except AlignmentFormatError as error:
        raise AlignmentDataError(str(error)) from error
    if not len(tok_en) == len(tok_xx) == len(word_links) >= len(sub_en) == len(sub_xx):
        raise AlignmentDataError(
            f"{link_file}: {len(word_links)} lines of links for {len(tok_en)}/{len(tok_xx)} "
            f"token lines and {len(sub_en)}/{len(sub_xx)} subword lines of {split}.{pair}; "
            "the links must align these token files, which the subwords were made from"
        )
    found: dict[tuple[str, str], tuple[list[str], list[str], frozenset[Link]]] = {}
    for i, key in enumerate(zip(sub_en, sub_xx, strict=True)):
        found.setdefault(key, (tok_en[i].split(), tok_xx[i].split(), word_links[i]))
    return found
