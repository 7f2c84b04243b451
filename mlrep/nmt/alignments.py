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

from collections.abc import Iterable, Sequence
from pathlib import Path

from mlrep.align.pharaoh import AlignmentFormatError, Link, format_links, parse_links
from mlrep.align.subword import word_of_pieces, words_to_subwords
from mlrep.errors import MlrepError
from mlrep.io import read_lines

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
    word with every piece of the word it is linked to)."""
    return words_to_subwords(
        links,
        word_of_pieces(source_words, source_pieces),
        word_of_pieces(target_words, target_pieces),
    )


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
