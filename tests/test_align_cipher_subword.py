"""The cipher corpus generator and the word ↔ subword link mapping."""

import pytest

from mlrep.align import cipher
from mlrep.align.subword import (
    SubwordMismatch,
    subwords_to_words,
    word_of_pieces,
    words_to_subwords,
)


def test_cipher_is_deterministic_and_its_gold_is_consistent():
    settings = cipher.CipherSettings(sentences=200, seed=7)
    first, second = cipher.generate(settings), cipher.generate(settings)
    assert first == second
    assert cipher.generate(cipher.CipherSettings(sentences=200, seed=8)) != first
    reordered = 0
    for pair in first:
        assert all(0 <= i < len(pair.source) and 0 <= j < len(pair.target) for i, j in pair.links)
        targets = [j for _, j in pair.links]
        assert len(targets) == len(set(targets))  # each target word has at most one source
        reordered += any(j2 < j1 for (i1, j1) in pair.links for (i2, j2) in pair.links if i2 > i1)
    assert reordered > 50  # about half the sentences swap two blocks


def test_sentencepiece_and_bpe_pieces_map_to_their_words():
    words = ["Hello", "world", "!"]
    assert word_of_pieces(words, ["▁Hel", "lo", "▁world", "▁", "!"]) == [0, 0, 1, 2, 2]
    assert word_of_pieces(words, ["Hel@@", "lo", "wor@@", "ld", "!"]) == [0, 0, 1, 1, 2]
    with pytest.raises(SubwordMismatch, match="does not continue word 1"):
        word_of_pieces(words, ["▁Hello", "▁word", "!"])
    with pytest.raises(SubwordMismatch, match="cover every word"):
        word_of_pieces(words, ["▁Hello", "▁world"])


def test_links_move_between_words_and_subwords_and_back():
    source_owners = [0, 0, 1]  # "▁Hel lo ▁world"
    target_owners = [0, 1, 1]  # "▁Hallo ▁Wel t"
    word_links = {(0, 0), (1, 1)}
    pieces = words_to_subwords(word_links, source_owners, target_owners)
    assert pieces == {(0, 0), (1, 0), (2, 1), (2, 2)}
    assert subwords_to_words(pieces, source_owners, target_owners) == word_links
