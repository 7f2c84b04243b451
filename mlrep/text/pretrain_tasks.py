"""Sequence-to-sequence pre-training tasks on monolingual words (thesis Chapter 4, JASS/ENSS).

Each task turns one sentence into one (source, target) pair for an ordinary NMT trainer, as
the thesis fed OpenNMT static pairs rather than masking on the fly:

* masking tasks (MASS, BMASS, PMASS.S/.P, MultiMASS): a set C of words is masked in the
  source; the target is the sentence with every word *outside* C masked, so the decoder
  predicts C in place (thesis Eq. 4.1); fed that target shifted by one, as any NMT target,
  the decoder sees ``[M]`` outside C as MASS's decoder does. Only the choice of C differs:
  one contiguous span of half the words (MASS), half the bunsetsu (BMASS), one or several
  phrases of the tree (PMASS), scattered words (MultiMASS). Every one of them replaces a
  word of C by ``[M]`` 80% of the time, by a random word 10% and keeps it 10% (MASS's
  setting, which the thesis keeps; BMASS and PMASS redefine only C, so they keep it too);
* reordering tasks (BRSS.F/.R, HFSS, Deshuffling): the words in another order → the
  original (BRSS.R: the other way round);
* BART text infilling: Poisson-length spans each replaced by one ``[M]`` → the original.

A pair is kept at word level (`Pair`: word indices, `Masked` words, literal words) and only
`render` applies subwords, so a mask covers whole words and a masked word becomes one ``[M]``
per subword piece: the masked source and the inverse target stay piece-aligned, as in MASS
(only a random replacement word, drawn from the corpus's words, brings its own pieces).
Each generator takes its `random.Random`, so a seed gives the same pairs on every machine.
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Union

from mlrep.cliutil import fraction, positive_float, probability
from mlrep.errors import MlrepError
from mlrep.text.tree import Node, head_final_order, pmass_plural, pmass_single, size

MASK = "[M]"
TOPIC_PARTICLE = "は"  # with punctuation, the "chunking signal words" that bound BRSS segments

# Task tags by group (one tag per group, as the thesis's footnote suggests): every masking
# task shares MASS's, every reordering task BRSS's, and BART has its own.
MASKING_TAG, REORDERING_TAG, BART_TAG = "[MASS]", "[BRSS]", "[BART]"
TASK_TAGS = {
    "mass": MASKING_TAG,
    "bmass": MASKING_TAG,
    "pmass.s": MASKING_TAG,
    "pmass.p": MASKING_TAG,
    "multimass": MASKING_TAG,
    "brss.f": REORDERING_TAG,
    "brss.r": REORDERING_TAG,
    "hfss": REORDERING_TAG,
    "deshuffle": REORDERING_TAG,
    "bart": BART_TAG,
}
TASKS = tuple(TASK_TAGS)
# the thesis's multi-task objectives; ENSS is MASS + HFSS in all its experiments
COMPOSITES = {"jass": ("bmass", "brss.f"), "enss": ("mass", "hfss")}
BUNSETSU_TASKS = frozenset({"bmass", "brss.f", "brss.r"})
TREE_TASKS = frozenset({"pmass.s", "pmass.p", "hfss"})


class TaskError(MlrepError):
    """A pre-training task that cannot be built as asked."""


@dataclass(frozen=True)
class TaskSettings:
    """The tasks' constants (MASS's and BART's published settings are the defaults).

    Omissible: a params section that leaves a key out keeps the published value."""

    mask_ratio: float = field(
        default=0.5,
        metadata={
            "type": fraction,
            "omissible": True,
            "help": "share of the words (MASS, MultiMASS) or bunsetsu (BMASS) masked",
        },
    )
    mask_token_prob: float = field(
        default=0.8,
        metadata={"type": probability, "omissible": True, "help": "a masked word becomes [M]"},
    )
    random_word_prob: float = field(
        default=0.1,
        metadata={
            "type": probability,
            "omissible": True,
            "help": "a masked word becomes a random word (else it is kept)",
        },
    )
    bart_mask_ratio: float = field(
        default=0.3,
        metadata={"type": fraction, "omissible": True, "help": "BART: share of words masked"},
    )
    bart_span_lambda: float = field(
        default=3.0,
        metadata={
            "type": positive_float,
            "omissible": True,
            "help": "BART: mean (Poisson) length of a masked span",
        },
    )

    def __post_init__(self) -> None:
        if self.mask_token_prob + self.random_word_prob > 1:
            raise TaskError(
                f"mask_token_prob {self.mask_token_prob} + random_word_prob "
                f"{self.random_word_prob} exceed 1; lower one of them"
            )


@dataclass(frozen=True)
class Masked:
    """The sentence's word `index`, masked: one ``[M]`` per subword piece of that word."""

    index: int


# an int is the sentence's word at that index; a str a literal word (a random replacement,
# or BART's one ``[M]`` for a whole span)
Item = Union[int, str, Masked]  # noqa: UP007 (a runtime alias)


@dataclass(frozen=True)
class Pair:
    task: str
    source: tuple[Item, ...]
    target: tuple[Item, ...]


def masked_count(n_units: int, ratio: float) -> int:
    """⌊ratio·n⌋ units, at least one: MASS's span is never empty (0 < p_i ≤ p_j)."""
    return max(1, math.floor(n_units * ratio)) if n_units else 0


def masking_pair(
    task: str,
    n_words: int,
    chosen: Sequence[int],
    rng: random.Random,
    vocabulary: Sequence[str],
    settings: TaskSettings,
) -> Pair:
    """Source: the words of `chosen` replaced 80/10/10 by [M] / a random word / themselves;
    target: the inverse mask, so the decoder predicts exactly the chosen words."""
    masked = set(chosen)
    source: list[Item] = []
    for index in range(n_words):
        if index not in masked:
            source.append(index)
            continue
        draw = rng.random()
        if draw < settings.mask_token_prob:
            source.append(Masked(index))
        elif draw < settings.mask_token_prob + settings.random_word_prob:
            source.append(rng.choice(vocabulary))
        else:
            source.append(index)
    target = tuple(i if i in masked else Masked(i) for i in range(n_words))
    return Pair(task, tuple(source), target)


def mass(
    n_words: int, rng: random.Random, vocabulary: Sequence[str], settings: TaskSettings
) -> Pair:
    """MASS: one contiguous span of ⌊ratio·L⌋ words at a uniformly random start."""
    length = masked_count(n_words, settings.mask_ratio)
    start = rng.randrange(n_words - length + 1)
    return masking_pair("mass", n_words, range(start, start + length), rng, vocabulary, settings)


def multimass(
    n_words: int, rng: random.Random, vocabulary: Sequence[str], settings: TaskSettings
) -> Pair:
    """MultiMASS: as many words as MASS, chosen uniformly and not necessarily adjacent."""
    chosen = rng.sample(range(n_words), masked_count(n_words, settings.mask_ratio))
    return masking_pair("multimass", n_words, chosen, rng, vocabulary, settings)


def bmass(
    spans: Sequence[tuple[int, int]],
    rng: random.Random,
    vocabulary: Sequence[str],
    settings: TaskSettings,
) -> Pair:
    """BMASS: ⌊ratio·n⌋ whole bunsetsu, chosen at random (not necessarily adjacent)."""
    picked = rng.sample(list(spans), masked_count(len(spans), settings.mask_ratio))
    chosen = [i for start, end in picked for i in range(start, end)]
    n_words = spans[-1][1] if spans else 0
    return masking_pair("bmass", n_words, chosen, rng, vocabulary, settings)


def pmass(
    tree: Node,
    single: bool,
    rng: random.Random,
    vocabulary: Sequence[str],
    settings: TaskSettings,
) -> Pair:
    """PMASS.S (one phrase, Algorithm 1) or PMASS.P (several, Algorithm 2), ≤ L//2 words.

    The algorithms fix the budget at half the words, so `mask_ratio` does not apply."""
    n_words = size(tree)
    chosen = pmass_single(tree) if single else pmass_plural(tree, rng)
    task = "pmass.s" if single else "pmass.p"
    return masking_pair(task, n_words, chosen, rng, vocabulary, settings)


def is_punctuation(word: str) -> bool:
    return bool(word) and all(unicodedata.category(c).startswith("P") for c in word)


def bunsetsu_order(words: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[int]:
    """BRSS's reordering, as word indices.

    Sentence-final punctuation is detached and stays last. The other bunsetsu are cut into
    segments, each ending with a bunsetsu that holds a signal word (punctuation or は) or at
    the sentence's end; inside a segment the bunsetsu before its signal bunsetsu are
    reversed, and the signal bunsetsu stays last, so は and commas keep their positions.
    """
    final = len(words)
    while final > 0 and is_punctuation(words[final - 1]):
        final -= 1
    units = [(start, min(end, final)) for start, end in spans if start < final]
    order: list[int] = []
    segment: list[tuple[int, int]] = []
    for start, end in units:
        if any(is_punctuation(w) or w == TOPIC_PARTICLE for w in words[start:end]):
            segment.reverse()
            order.extend(i for s, e in [*segment, (start, end)] for i in range(s, e))
            segment = []
        else:
            segment.append((start, end))
    segment.reverse()
    order.extend(i for s, e in segment for i in range(s, e))
    return order + list(range(final, len(words)))


def brss(words: Sequence[str], spans: Sequence[tuple[int, int]], forward: bool) -> Pair:
    """BRSS.F: reordered → original; BRSS.R: original → reordered."""
    reordered = tuple(bunsetsu_order(words, spans))
    original = tuple(range(len(words)))
    if forward:
        return Pair("brss.f", reordered, original)
    return Pair("brss.r", original, reordered)


def hfss(tree: Node) -> Pair:
    """HFSS: head-finalized English → original (reordering only, words 1:1)."""
    order = tuple(head_final_order(tree))
    return Pair("hfss", order, tuple(range(len(order))))


def deshuffle(n_words: int, rng: random.Random) -> Pair:
    """Deshuffling: a uniformly random permutation of the words → the original."""
    order = list(range(n_words))
    rng.shuffle(order)
    return Pair("deshuffle", tuple(order), tuple(range(n_words)))


def poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (Knuth's method: exact, and seeded by `rng` alone)."""
    limit, count, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


def bart(n_words: int, rng: random.Random, settings: TaskSettings) -> Pair:
    """BART text infilling (Lewis et al.'s settings): ⌈ratio·L⌉ words in spans of Poisson
    lengths, each span (a zero-length one too, which inserts) becoming one [M] → the
    original. The spans are placed at random, without overlapping."""
    budget = math.ceil(n_words * settings.bart_mask_ratio)
    lengths: list[int] = []
    while sum(lengths) < budget:
        lengths.append(min(poisson(rng, settings.bart_span_lambda), budget - sum(lengths)))
    kept = n_words - budget
    # a random interleaving of the kept words and the spans: which of the slots are spans
    span_slots = set(rng.sample(range(kept + len(lengths)), len(lengths)))
    source: list[Item] = []
    index = 0
    spans = iter(lengths)
    for slot in range(kept + len(lengths)):
        if slot in span_slots:
            source.append(MASK)
            index += next(spans)
        else:
            source.append(index)
            index += 1
    return Pair("bart", tuple(source), tuple(range(n_words)))


def language_tag(lang: str) -> str:
    """``[Ja]``, ``[En]``, ``[Zh]``, ``[Ko]``: the tag of a language code."""
    return f"[{lang.capitalize()}]"


def finetune_source(line: str, target_lang: str) -> str:
    """A fine-tuning source line: only the target language's tag goes before it."""
    return f"{language_tag(target_lang)} {line}"


def expand(item: Item, words: Sequence[str], pieces: Callable[[str], Sequence[str]]) -> list[str]:
    if isinstance(item, Masked):
        return [MASK] * len(pieces(words[item.index]))
    if item == MASK:
        return [MASK]
    return list(pieces(words[item] if isinstance(item, int) else item))


def render(
    pair: Pair, words: Sequence[str], lang: str, pieces: Callable[[str], Sequence[str]]
) -> tuple[str, str]:
    """The pair's (source, target) lines in subword pieces, the source led by its task's and
    its language's tags."""

    def line(items: Sequence[Item]) -> list[str]:
        return [piece for item in items for piece in expand(item, words, pieces)]

    source = [TASK_TAGS[pair.task], language_tag(lang), *line(pair.source)]
    return " ".join(source), " ".join(line(pair.target))


def moved_words(pair: Pair) -> tuple[int, int]:
    """(words whose position changed, words) of a reordering pair: the thesis's reordering
    statistic (79.58% for BRSS, 91.97% for HFSS on its corpus)."""
    order = pair.source if pair.task != "brss.r" else pair.target
    return sum(1 for at, index in enumerate(order) if at != index), len(order)


def expand_tasks(names: Sequence[str]) -> list[str]:
    """Task names with the composites (JASS, ENSS) spelled out, each task once, in order."""
    out: list[str] = []
    for name in names:
        for task in COMPOSITES.get(name, (name,)):
            if task not in TASK_TAGS:
                raise TaskError(
                    f"unknown pre-training task {task!r}; choose from "
                    f"{', '.join([*TASKS, *COMPOSITES])}"
                )
            if task not in out:
                out.append(task)
    return out
