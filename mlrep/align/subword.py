"""Map alignments between words and the subwords (SentencePiece ``▁`` or BPE ``@@``) made of them.

Alignments are extracted on words and the models see subwords (ch5 §3.2), so links must move
between the two. Pieces are assigned to words by consuming each word's characters, which works
for both marker styles and fails loudly when the pieces do not spell the words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mlrep.align.pharaoh import Link
from mlrep.errors import MlrepError

SENTENCEPIECE_SPACE = "\u2581"
BPE_CONTINUATION = "@@"


class SubwordMismatch(MlrepError):
    """Subword pieces that do not spell the word sequence they are said to segment."""


def _surface(piece: str) -> str:
    text = piece.removeprefix(SENTENCEPIECE_SPACE)
    return text.removesuffix(BPE_CONTINUATION)


def word_of_pieces(words: Sequence[str], pieces: Sequence[str]) -> list[int]:
    """For each piece, the index of the word it belongs to.

    A bare ``▁`` piece belongs to the word that follows it; a piece with nothing else to
    place (empty once its marker is removed) to the word being read.
    """
    owners: list[int] = []
    word, used = 0, 0
    for piece in pieces:
        text = _surface(piece)
        if not text and words and not piece.startswith(SENTENCEPIECE_SPACE):
            # none of a word's characters (marks the caller's comparison leaves out): part of
            # the word being read
            owners.append(min(word, len(words) - 1))
            continue
        if word < len(words) and used == len(words[word]):
            word, used = word + 1, 0
        if word >= len(words) or not words[word][used:].startswith(text):
            expected = words[word][used:] if word < len(words) else "<end of sentence>"
            raise SubwordMismatch(
                f"piece {piece!r} does not continue word {word} ({expected!r}); the subwords must "
                "segment exactly the word-tokenized sentence that was aligned"
            )
        owners.append(word)
        used += len(text)
    if words and (word != len(words) - 1 or used != len(words[-1])):
        raise SubwordMismatch(
            f"pieces end inside word {word} of {len(words)}; the subwords must cover every word"
        )
    return owners


def words_to_subwords(
    links: Iterable[Link], source_owners: Sequence[int], target_owners: Sequence[int]
) -> set[Link]:
    """Every subword pair whose words are linked (a word link links all their pieces)."""
    source_pieces: dict[int, list[int]] = {}
    target_pieces: dict[int, list[int]] = {}
    for index, owner in enumerate(source_owners):
        source_pieces.setdefault(owner, []).append(index)
    for index, owner in enumerate(target_owners):
        target_pieces.setdefault(owner, []).append(index)
    return {
        (s, t) for i, j in links for s in source_pieces.get(i, ()) for t in target_pieces.get(j, ())
    }


def subwords_to_words(
    links: Iterable[Link], source_owners: Sequence[int], target_owners: Sequence[int]
) -> set[Link]:
    """Word links implied by subword links (two words are linked if any of their pieces are)."""
    return {(source_owners[s], target_owners[t]) for s, t in links}
