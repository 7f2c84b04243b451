"""A synthetic parallel corpus with known gold alignments: a reordering word-substitution cipher.

The source side is Zipf-distributed pseudo-words; the target side substitutes each word by a
cipher word, splits some words into two target words (1-to-many), drops some frequent
"function" words (aligned to nothing), inserts unaligned particles, and reorders blocks of the
sentence (so a diagonal prior alone cannot solve it). Every link the generator makes is a sure
gold link; alignment backends are scored against it (`mlrep.align.score`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mlrep.align.pharaoh import Link

_CONSONANTS = "bcdfghjklmnprstvz"
_VOWELS = "aeiou"


@dataclass(frozen=True)
class CipherSettings:
    sentences: int = 2000
    vocabulary: int = 2000
    min_length: int = 4
    max_length: int = 20
    dropped_words: int = 5  # the most frequent source words have no translation
    split_fraction: float = 0.1  # words whose translation is two target words
    particle_rate: float = 0.1  # chance of an unaligned target particle after a word
    swap_rate: float = 0.5  # chance that a sentence swaps two blocks (SOV-like reordering)
    seed: int = 1


@dataclass(frozen=True)
class CipherPair:
    source: list[str]
    target: list[str]
    links: frozenset[Link]


def _pseudo_word(rng: random.Random, taken: set[str]) -> str:
    while True:
        syllables = rng.randint(1, 3)
        word = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))
        if word not in taken:
            taken.add(word)
            return word


def generate(settings: CipherSettings) -> list[CipherPair]:
    """Sentence pairs with their gold links, fully determined by `settings` (incl. the seed)."""
    rng = random.Random(settings.seed)
    taken: set[str] = set()
    source_vocab = [_pseudo_word(rng, taken) for _ in range(settings.vocabulary)]
    translation: dict[str, list[str]] = {}
    for rank, word in enumerate(source_vocab):
        if rank < settings.dropped_words:
            translation[word] = []
        elif rng.random() < settings.split_fraction:
            translation[word] = [_pseudo_word(rng, taken).upper(), _pseudo_word(rng, taken).upper()]
        else:
            translation[word] = [_pseudo_word(rng, taken).upper()]
    particles = [_pseudo_word(rng, taken).upper() for _ in range(3)]
    weights = [1 / (rank + 1) for rank in range(settings.vocabulary)]
    pairs = []
    for _ in range(settings.sentences):
        length = rng.randint(settings.min_length, settings.max_length)
        source = rng.choices(source_vocab, weights=weights, k=length)
        order = list(range(length))
        if rng.random() < settings.swap_rate and length >= 2:
            cut = rng.randint(1, length - 1)
            order = order[cut:] + order[:cut]
        target: list[str] = []
        links = set()
        for i in order:
            for piece in translation[source[i]]:
                links.add((i, len(target)))
                target.append(piece)
            if rng.random() < settings.particle_rate:
                target.append(rng.choice(particles))
        if not target:
            target.append(rng.choice(particles))
        pairs.append(CipherPair(source, target, frozenset(links)))
    return pairs
