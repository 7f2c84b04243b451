"""Instructions for tuning a causal LM to translate (thesis §6.2 and Table D.2).

Six instruction types are built from one word-aligned parallel corpus, as the thesis builds
every set of a run from the same sentence pairs (its footnote 5): ``mt`` (MTInstruct),
``align`` (AlignInstruct, True/False judgements on aligned spans), ``hint`` (HintInstruct,
translation with up to five aligned span pairs as hints), ``revise`` (ReviseInstruct, find
and correct one corrupted span of a translation), ``mono-full`` and ``mono-half``
(MonoInstruct: complete a sentence from nothing or from its first half). The templates are
the thesis's, character for character; the language names, texts and links are arguments, so
nothing here knows Chapter 6's languages or runs.

What the thesis leaves open, and what is done here (project decisions, also in
docs/chapters/ch6_aligninstruct.md):

* **Text shown, spans found.** fast_align saw tokens (space-separated words); a prompt shows
  the natural (raw) text of the sentence. Each token is located in the raw text
  (`token_offsets`, Moses escapes undone), so a span of tokens is shown as the raw characters
  it covers (``don't``, not ``don 't``). Where a side's tokens cannot be found in its raw
  text, that side shows its tokens joined by spaces, so spans and sentence still agree.
* **Aligned spans** are the tight consistent phrase pairs of the links (`phrase_pairs`), as
  in phrase-based SMT's extraction: contiguous on both sides, no link leaving the box, both
  spans starting and ending on a linked word, at most `InstructSettings.max_span` words a
  side (3: the thesis's example pairs 2 words with 3), and each side holding a letter or
  digit (a pair of commas teaches nothing). These are the "gold" pairs.
* **Directions.** The thesis shows only the Y→X (English→unseen) form of each template. MT,
  Align, Hint and Revise are built in both directions of every pair (`both_directions`), so
  each set has as many instances as MTInstruct and MT+Align doubles the data (footnote 5).
* **Align**: one instance per sentence pair and direction (`align_per_pair`); True with
  probability `true_share` (0.5). A False instance keeps one side of a gold pair and
  replaces the other side (which side: uniform) by a span of the same sentence side, drawn
  uniformly from the spans of the sentence's other gold pairs, else from all its spans of at
  most `max_span` words, such that the result is no gold pair, by position or by text.
* **Hint**: up to `max_hints` (5) gold pairs that overlap on neither side, drawn uniformly,
  listed in the order of the target text as ``(target span, source span)`` as the thesis
  writes ``(x-span, y-span)``. A pair without gold pairs gets no Hint instance.
* **Revise**: the target span of one gold pair (uniform) is replaced by one word (a token
  with a letter or digit that is a whole word of its text, `Side.is_word`) of the target side
  of another sentence pair of the corpus (sentence uniform, then word uniform), different
  from the span. The output names the inserted word and the original span.
* **Mono**: the sentences of one side (`build`'s ``mono``: the unseen language's).
  ``mono-half`` shows the first ⌊N/2⌋ of the N words and asks for the rest (N ≥ 2);
  ``mono-full`` has no prefix: the template ends at ``sentence:`` and the output is the whole
  sentence.
* **Terminal period.** The templates end each sentence with "." (``{Y}: y_1…y_M.``, output
  ``x_1…x_N.``); it is written as the templates have it, whatever the sentence's own last
  character, and `strip_terminal` removes that one period from a decoded output. A trainer
  joins input and output with `SEPARATOR`.
* **Randomness.** Every choice comes from a `random.Random` seeded with the run's seed, the
  instruction type and the direction, so a set is the same on every machine and does not
  change when another type is added to the run.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from mlrep.align.bitext import read_token_pairs
from mlrep.align.pharaoh import Link, read_alignments
from mlrep.cliutil import positive_int, probability
from mlrep.errors import MlrepError
from mlrep.io import atomic_file, read_lines

TYPES = ("mt", "align", "hint", "revise", "mono-full", "mono-half")
InstructionType = Literal["mt", "align", "hint", "revise", "mono-full", "mono-half"]
PROMPTS = ("default", "p1", "p2", "p3", "p4", "p5")  # Table D.2: PROMPT-default, PROMPT-1..5
SEPARATOR = " "  # between an instruction's input and its output when a trainer joins them
TERMINAL = "."  # the period the templates put after every sentence
HINT_BULLET = "–"  # U+2013, as the thesis prints HintInstruct's list
# Moses escapes (and its aggressive-hyphen mark) that tokenized text may hold: undone before
# a token is looked up in its raw sentence
_ESCAPES = {
    "&amp;": "&",
    "&#124;": "|",
    "&lt;": "<",
    "&gt;": ">",
    "&apos;": "'",
    "&quot;": '"',
    "&#91;": "[",
    "&#93;": "]",
    "@-@": "-",
}

Span = tuple[int, int]  # words [start, end) of one side
PhrasePair = tuple[Span, Span]  # (source span, target span)


class InstructionDataError(MlrepError):
    """Inputs of an instruction set that do not fit together (line counts, link ranges)."""


@dataclass(frozen=True)
class Language:
    """A language as the prompts name it: ``code`` in the record's direction, ``name`` in the
    text (the thesis spells names out: "Translate from English to Afrikaans")."""

    code: str
    name: str


@dataclass(frozen=True)
class InstructSettings:
    """The instruction sets' constants; the thesis gives only ``max_hints`` (S ≤ 5), the rest
    are project defaults (module docstring), so a params section may leave any out."""

    max_span: int = field(
        default=3,
        metadata={
            "type": positive_int,
            "omissible": True,
            "help": "most words a side of an aligned span pair may have (Align, Hint, Revise)",
        },
    )
    max_hints: int = field(
        default=5,
        metadata={"type": positive_int, "omissible": True, "help": "most hints of a HintInstruct"},
    )
    true_share: float = field(
        default=0.5,
        metadata={
            "type": probability,
            "omissible": True,
            "help": "probability that an AlignInstruct instance is True",
        },
    )
    align_per_pair: int = field(
        default=1,
        metadata={
            "type": positive_int,
            "omissible": True,
            "help": "AlignInstruct instances per sentence pair and direction",
        },
    )
    both_directions: bool = field(
        default=True,
        metadata={
            "omissible": True,
            "help": "build MT, Align, Hint and Revise in both directions (else source→target)",
        },
    )


@dataclass(frozen=True)
class Record:
    """One instruction: what the model reads, what it learns to write, its type and direction
    (``src-tgt`` codes; a monolingual type's is its language's code)."""

    input: str
    output: str
    type: str
    direction: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def _unescape(token: str) -> str:
    for escaped, plain in _ESCAPES.items():
        token = token.replace(escaped, plain)
    return token


def token_offsets(text: str, tokens: Sequence[str]) -> tuple[Span, ...] | None:
    """The characters [start, end) of each token in `text`, tokens found left to right with
    only whitespace between them (Moses escapes undone); None if a token is not there."""
    spans: list[Span] = []
    cursor = 0
    for token in tokens:
        word = _unescape(token)
        start = text.find(word, cursor)
        if start < 0 or text[cursor:start].strip():
            return None
        spans.append((start, start + len(word)))
        cursor = start + len(word)
    return tuple(spans) if not text[cursor:].strip() else None


@dataclass(frozen=True)
class Side:
    """One side of a sentence pair: the tokens the aligner saw and the text a prompt shows,
    with each token's place in that text (`of` builds it)."""

    language: Language
    tokens: tuple[str, ...]
    text: str
    offsets: tuple[Span, ...]

    @classmethod
    def of(cls, language: Language, tokens: Sequence[str], text: str | None = None) -> Side:
        """The side showing `text` (raw), or its tokens (Moses escapes undone) joined by spaces
        where `text` is None or does not hold them (so that spans and sentence always agree)."""
        offsets = token_offsets(text, tokens) if text is not None else None
        if text is None or offsets is None:
            text = " ".join(_unescape(token) for token in tokens)
            offsets = token_offsets(text, tokens)
            assert offsets is not None  # tokens joined by spaces hold every token
        return cls(language, tuple(tokens), text, offsets)

    def surface(self, span: Span) -> str:
        """Words [start, end) as the text shows them."""
        start, end = span
        return self.text[self.offsets[start][0] : self.offsets[end - 1][1]]

    def replaced(self, span: Span, new: str) -> str:
        """The text with words [start, end) replaced by `new`."""
        start, end = span
        return self.text[: self.offsets[start][0]] + new + self.text[self.offsets[end - 1][1] :]

    def is_word(self, k: int) -> bool:
        """Whether token k holds a letter or digit and starts and ends a word of the text
        (``n't`` of "don't" does not: a corruption inserts whole words)."""
        start, end = self.offsets[k]
        before = self.text[start - 1] if start else " "
        after = self.text[end] if end < len(self.text) else " "
        return _has_word([self.tokens[k]]) and before.isspace() and not after.isalnum()

    def split(self, words: int) -> tuple[str, str]:
        """The text before and after the first `words` words (1 ≤ words < number of words)."""
        return self.text[: self.offsets[words - 1][1]], self.text[self.offsets[words][0] :]


@dataclass(frozen=True)
class SentencePair:
    """A sentence pair and its word links ``(i, j)``: source word i, target word j."""

    source: Side
    target: Side
    links: frozenset[Link]

    def reversed(self) -> SentencePair:
        """The pair the other way round (target becomes source, links flipped)."""
        return SentencePair(self.target, self.source, frozenset((j, i) for i, j in self.links))

    @property
    def direction(self) -> str:
        return f"{self.source.language.code}-{self.target.language.code}"


def _has_word(tokens: Sequence[str]) -> bool:
    return any(ch.isalnum() for token in tokens for ch in token)


def phrase_pairs(
    links: Iterable[Link], source: Sequence[str], target: Sequence[str], max_span: int
) -> list[PhrasePair]:
    """The tight consistent phrase pairs of one sentence pair's links, each side at most
    `max_span` words and holding a letter or digit: source words [i1, i2) and target words
    [j1, j2) such that every link of a word inside either span stays inside both spans, and
    each span starts and ends on a linked word. Ordered by source, then target span."""
    by_source: dict[int, set[int]] = {}
    for i, j in links:
        by_source.setdefault(i, set()).add(j)
    pairs = []
    for i1 in sorted(by_source):
        for i2 in range(i1, min(i1 + max_span, len(source))):
            if i2 not in by_source:
                continue
            linked = {j for i in range(i1, i2 + 1) for j in by_source.get(i, ())}
            j1, j2 = min(linked), max(linked)
            if j2 - j1 >= max_span:
                continue
            if any(j1 <= j <= j2 and not i1 <= i <= i2 for i, j in links):
                continue
            src, tgt = (i1, i2 + 1), (j1, j2 + 1)
            if _has_word(source[src[0] : src[1]]) and _has_word(target[tgt[0] : tgt[1]]):
                pairs.append((src, tgt))
    return pairs


# ---- the templates (thesis §6.2, Table D.2) ---------------------------------------------


def mt_instruct(source: Language, target: Language, source_text: str, target_text: str) -> Record:
    """MTInstruct (§6.2.1): translate `source_text` into `target` (the thesis's Y → X)."""
    return Record(
        mt_prompt(source, target, source_text),
        target_text + TERMINAL,
        "mt",
        f"{source.code}-{target.code}",
    )


def mt_prompt(
    source: Language, target: Language, source_text: str, variant: str = "default"
) -> str:
    """The inference prompt `variant` of Table D.2 (``default`` is MTInstruct's input). The
    table prints each prompt on one line; the variants keep the line breaks of the default
    where they keep its parts."""
    y, x, text = source.name, target.name, source_text + TERMINAL
    prompts = {
        "default": f"Translate from {y} to {x}.\n{y}: {text}\n{x}:",
        "p1": f"{y}: {text}\n{x}:",
        "p2": f"{text}\n{x}:",
        "p3": f"Translate to {x}.\n{y}: {text}\n{x}:",
        "p4": f"Translate from {y} to {x}.\n{text}\n{x}:",
        "p5": f"Translate to {x}.\n{text}\n{x}:",
    }
    if variant not in prompts:
        raise InstructionDataError(f"no MT prompt {variant!r}; prompts: {', '.join(PROMPTS)}")
    return prompts[variant]


def align_instruct(
    source: Language,
    target: Language,
    source_text: str,
    target_text: str,
    source_span: str,
    target_span: str,
    aligned: bool,
) -> Record:
    """AlignInstruct (§6.2.2): does `source_span` (Y side) align with `target_span` (X)?"""
    prompt = (
        f"Given the following parallel sentence between {source.name} and {target.name}, "
        "judge whether the assertion is True or False.\n"
        f"{source.name}: {source_text}{TERMINAL}\n"
        f"{target.name}: {target_text}{TERMINAL}\n"
        f'Assertion: "{source_span}" can be aligned with "{target_span}" statistically.'
    )
    return Record(prompt, "True" if aligned else "False", "align", f"{source.code}-{target.code}")


def hint_instruct(
    source: Language,
    target: Language,
    source_text: str,
    target_text: str,
    hints: Sequence[tuple[str, str]],
) -> Record:
    """HintInstruct (§6.2.3): translate with `hints`, each ``(target span, source span)``."""
    lines = "".join(f"{HINT_BULLET} ({x}, {y}),\n" for x, y in hints)
    prompt = (
        f"Use the following alignment hints and translate from {source.name} to {target.name}.\n"
        f"Alignments between {target.name} and {source.name}:\n"
        f"{lines}"
        f"{source.name}: {source_text}{TERMINAL}\n"
        f"{target.name}:"
    )
    return Record(prompt, target_text + TERMINAL, "hint", f"{source.code}-{target.code}")


def revise_instruct(
    source: Language,
    target: Language,
    source_text: str,
    corrupted_target: str,
    wrong: str,
    right: str,
) -> Record:
    """ReviseInstruct (§6.2.3): name the wrong span of `corrupted_target` and correct it."""
    prompt = (
        f"Given the following translation of {target.name} from {source.name}, "
        "output the incorrectly translated word and correct it.\n"
        f"{source.name}: {source_text}{TERMINAL}\n"
        f"{target.name}: {corrupted_target}{TERMINAL}"
    )
    answer = f'The incorrectly translated word is "{wrong}". It should be "{right}".'
    return Record(prompt, answer, "revise", f"{source.code}-{target.code}")


def mono_instruct(language: Language, prefix: str, rest: str) -> Record:
    """MonoInstruct (§6.2.4): complete a sentence from `prefix` ("" for Mono-full, whose
    template then ends at ``sentence:``, the thesis giving no prefix-free form)."""
    lead = "Given the context, complete the following sentence:"
    kind = "mono-half" if prefix else "mono-full"
    prompt = f"{lead} {prefix}," if prefix else lead
    return Record(prompt, rest + TERMINAL, kind, language.code)


def strip_terminal(output: str) -> str:
    """A decoded output without the one period the templates add after a sentence."""
    output = output.strip()
    return output[: -len(TERMINAL)] if output.endswith(TERMINAL) else output


# ---- instances of one sentence pair --------------------------------------------------------


class Gold:
    """The gold phrase pairs of one oriented sentence pair, by position and by text: a False
    assertion may repeat neither (a repeated word elsewhere would still be a true pair)."""

    def __init__(self, pair: SentencePair, max_span: int) -> None:
        self.pair = pair
        self.pairs = phrase_pairs(pair.links, pair.source.tokens, pair.target.tokens, max_span)
        self._positions = set(self.pairs)
        self._texts = {self.texts(p) for p in self.pairs}

    def texts(self, phrase: PhrasePair) -> tuple[str, str]:
        return self.pair.source.surface(phrase[0]), self.pair.target.surface(phrase[1])

    def __contains__(self, phrase: PhrasePair) -> bool:
        return phrase in self._positions or self.texts(phrase) in self._texts


def _all_spans(length: int, max_span: int) -> list[Span]:
    return [(a, b) for a in range(length) for b in range(a + 1, min(a + max_span, length) + 1)]


def misaligned(
    gold: Gold, true: PhrasePair, rng: random.Random, max_span: int
) -> PhrasePair | None:
    """A False assertion made from the gold pair `true`: one side (uniform) replaced by another
    span of the same sentence side, drawn from the other gold pairs' spans that make no gold
    pair with the side kept, else from every such span of at most `max_span` words holding a
    letter or digit; the other side is tried if the first has none. None if neither has."""
    sides = [0, 1]
    rng.shuffle(sides)
    for side in sides:
        kept = true[1 - side]
        tokens = (gold.pair.source.tokens, gold.pair.target.tokens)[side]

        def joined(span: Span, side: int = side, kept: Span = kept) -> PhrasePair:
            return (span, kept) if side == 0 else (kept, span)

        own = sorted({p[side] for p in gold.pairs if joined(p[side]) not in gold})
        anywhere = [
            span
            for span in _all_spans(len(tokens), max_span)
            if _has_word(tokens[span[0] : span[1]]) and joined(span) not in gold
        ]
        candidates = own or anywhere
        if candidates:
            return joined(rng.choice(candidates))
    return None


def align_records(
    pair: SentencePair, rng: random.Random, settings: InstructSettings
) -> list[Record]:
    """`settings.align_per_pair` AlignInstruct instances of one oriented pair (none without a
    gold pair; a False draw that no span can make wrong becomes no instance)."""
    gold = Gold(pair, settings.max_span)
    records = []
    for _ in range(settings.align_per_pair if gold.pairs else 0):
        true = rng.choice(gold.pairs)
        aligned = rng.random() < settings.true_share
        shown = true if aligned else misaligned(gold, true, rng, settings.max_span)
        if shown is None:
            continue
        records.append(
            align_instruct(
                pair.source.language,
                pair.target.language,
                pair.source.text,
                pair.target.text,
                pair.source.surface(shown[0]),
                pair.target.surface(shown[1]),
                aligned,
            )
        )
    return records


def _overlaps(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def hint_record(
    pair: SentencePair, rng: random.Random, settings: InstructSettings
) -> Record | None:
    """A HintInstruct instance: up to `max_hints` gold pairs overlapping on neither side."""
    pairs = phrase_pairs(pair.links, pair.source.tokens, pair.target.tokens, settings.max_span)
    rng.shuffle(pairs)
    chosen: list[PhrasePair] = []
    for src, tgt in pairs:
        if len(chosen) == settings.max_hints:
            break
        if not any(_overlaps(src, s) or _overlaps(tgt, t) for s, t in chosen):
            chosen.append((src, tgt))
    if not chosen:
        return None
    hints = [
        (pair.target.surface(t), pair.source.surface(s))
        for s, t in sorted(chosen, key=lambda p: p[1])
    ]
    return hint_instruct(
        pair.source.language, pair.target.language, pair.source.text, pair.target.text, hints
    )


def revise_record(
    pair: SentencePair,
    pool: Sequence[Side],
    index: int,
    rng: random.Random,
    settings: InstructSettings,
    tries: int = 10,
) -> Record | None:
    """A ReviseInstruct instance: one gold target span replaced by a word (`Side.is_word`) of
    another sentence of `pool` (the target sides of the corpus, `pair`'s at `index`), drawn until it
    differs from the span (`tries` draws; None if none differs or there is no gold pair)."""
    pairs = phrase_pairs(pair.links, pair.source.tokens, pair.target.tokens, settings.max_span)
    if not pairs or len(pool) < 2:
        return None
    _, span = rng.choice(pairs)
    right = pair.target.surface(span)
    for _ in range(tries):
        draw = rng.randrange(len(pool) - 1)  # any sentence but `pair`'s own
        other = pool[draw + 1 if draw >= index else draw]
        words = [k for k in range(len(other.tokens)) if other.is_word(k)]
        if not words:
            continue
        word = rng.choice(words)
        wrong = other.surface((word, word + 1))
        if wrong != right:
            return revise_instruct(
                pair.source.language,
                pair.target.language,
                pair.source.text,
                pair.target.replaced(span, wrong),
                wrong,
                right,
            )
    return None


def mono_record(side: Side, half: bool) -> Record | None:
    """Mono-half (the first ⌊N/2⌋ words given; None for N < 2) or Mono-full of one side."""
    if not half:
        return mono_instruct(side.language, "", side.text)
    n = len(side.tokens)
    if n < 2:
        return None
    prefix, rest = side.split(n // 2)
    return mono_instruct(side.language, prefix, rest)


# ---- a corpus ------------------------------------------------------------------------------


def read_pairs(
    source: Language,
    target: Language,
    source_tokens: Path,
    target_tokens: Path,
    links: Path,
    source_text: Path | None = None,
    target_text: Path | None = None,
    max_pairs: int | None = None,
) -> list[SentencePair]:
    """The sentence pairs of line-aligned files: the tokens fast_align saw, its Pharaoh links
    (source-target orientation) and, optionally, the raw text the prompts show (its first
    lines: preprocessing may have tokenized only a corpus file's first lines). `max_pairs`
    keeps the first that many lines (None: all), after the files were checked to agree in
    full, so that a small scale builds from a corpus prefix the same way as from all of it."""
    tokens = read_token_pairs(source_tokens, target_tokens)
    alignments = read_alignments(links)
    texts: list[list[str] | None] = []
    for path, other in ((source_text, source_tokens), (target_text, target_tokens)):
        lines = read_lines(path, InstructionDataError) if path is not None else None
        # preprocessing may tokenize only the first lines of a corpus file (max_lines)
        if lines is not None and len(lines) < len(tokens):
            raise InstructionDataError(
                f"{path} has {len(lines)} lines but {other} has {len(tokens)}: give the raw "
                "text of the same sentences, one per line, that were tokenized for fast_align"
            )
        texts.append(lines[: len(tokens)] if lines is not None else None)
    if len(alignments) != len(tokens):
        raise InstructionDataError(
            f"{links} has {len(alignments)} lines but {source_tokens} has {len(tokens)}: give "
            "the links fast_align wrote for these token files (one line per sentence pair)"
        )
    if max_pairs is not None:
        if max_pairs < 1:
            raise InstructionDataError(
                f"max_pairs {max_pairs}: keep at least one sentence pair of {links}, or give "
                "None for all"
            )
        tokens, alignments = tokens[:max_pairs], alignments[:max_pairs]
    pairs = []
    for n, ((src, tgt), found) in enumerate(zip(tokens, alignments, strict=True)):
        for i, j in sorted(found):
            if i >= len(src) or j >= len(tgt):
                raise InstructionDataError(
                    f"{links}:{n + 1}: link {i}-{j} is out of range for a pair of {len(src)} "
                    f"source and {len(tgt)} target words ({source_tokens}:{n + 1}, "
                    f"{target_tokens}:{n + 1}); align these token files again, or swap the "
                    "sides if the links are target-source"
                )
        src_raw = texts[0][n] if texts[0] is not None else None
        tgt_raw = texts[1][n] if texts[1] is not None else None
        pairs.append(
            SentencePair(Side.of(source, src, src_raw), Side.of(target, tgt, tgt_raw), found)
        )
    return pairs


def _rng(seed: int, kind: str, direction: str) -> random.Random:
    return random.Random(f"{seed}:{kind}:{direction}")


def _bilingual(
    kind: str, group: Sequence[SentencePair], rng: random.Random, settings: InstructSettings
) -> list[Record | None]:
    """One bilingual set of one direction; None where a pair gives no instance."""
    built: list[Record | None] = []
    pool = [p.target for p in group]
    for n, pair in enumerate(group):
        src, tgt = pair.source, pair.target
        if kind == "mt":
            built.append(mt_instruct(src.language, tgt.language, src.text, tgt.text))
        elif kind == "align":
            built.extend(align_records(pair, rng, settings) or [None])
        elif kind == "hint":
            built.append(hint_record(pair, rng, settings))
        else:
            built.append(revise_record(pair, pool, n, rng, settings))
    return built


def instructions(
    pairs: Sequence[SentencePair],
    types: Sequence[InstructionType],
    seed: int,
    settings: InstructSettings = InstructSettings(),
    mono: Literal["source", "target"] = "target",
) -> tuple[list[Record], Counter[str]]:
    """The instruction sets `types` of `pairs`, set after set, pairs in corpus order, and the
    counts (``<type>`` built, ``<type>_skipped`` pairs without an instance, ``empty_side``).
    Pairs with an empty side (fast_align's skipped lines) are left out of every set; `mono` is
    the side whose sentences the Mono sets complete."""
    unknown = [t for t in types if t not in TYPES]
    if unknown:
        raise InstructionDataError(
            f"unknown instruction type(s) {', '.join(unknown)}; types: {', '.join(TYPES)}"
        )
    usable = [p for p in pairs if p.source.tokens and p.target.tokens]
    counts: Counter[str] = Counter(empty_side=len(pairs) - len(usable))
    groups = [usable, [p.reversed() for p in usable]] if settings.both_directions else [usable]
    records: list[Record] = []
    for kind in types:
        built: list[Record | None] = []
        if kind in ("mono-full", "mono-half"):
            sides = [p.target if mono == "target" else p.source for p in usable]
            built = [mono_record(side, kind == "mono-half") for side in sides]
        else:
            for group in filter(None, groups):
                rng = _rng(seed, kind, group[0].direction)
                built.extend(_bilingual(kind, group, rng, settings))
        kept = [r for r in built if r is not None]
        counts[kind] = len(kept)
        counts[f"{kind}_skipped"] = len(built) - len(kept)
        records.extend(kept)
    return records, counts


def write_jsonl(records: Iterable[Record], out: Path) -> None:
    """One JSON object per line, published atomically."""
    with atomic_file(out) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(record.to_json() + "\n")


def read_jsonl(path: Path) -> list[Record]:
    """The records of an instruction file; a line that is no record names file:line."""
    records = []
    for n, line in enumerate(read_lines(path, InstructionDataError), 1):
        try:
            records.append(Record(**json.loads(line)))
        except (json.JSONDecodeError, TypeError) as exc:
            raise InstructionDataError(
                f"{path}:{n}: not an instruction record ({exc}); expected a JSON object with "
                "input, output, type and direction: rebuild the file with `build`"
            ) from None
    return records


def mix(inputs: Sequence[Path], out: Path, seed: int) -> int:
    """A multi-task set (MT+Align, …): the records of `inputs` concatenated and shuffled with
    `seed`; returns how many."""
    records = [r for path in inputs for r in read_jsonl(path)]
    random.Random(seed).shuffle(records)
    write_jsonl(records, out)
    return len(records)


def build(
    out: Path,
    types: Sequence[InstructionType],
    source: Language,
    target: Language,
    source_tokens: Path,
    target_tokens: Path,
    links: Path,
    seed: int,
    source_text: Path | None = None,
    target_text: Path | None = None,
    settings: InstructSettings = InstructSettings(),
    mono: Literal["source", "target"] = "target",
    max_pairs: int | None = None,
) -> Counter[str]:
    """Write the instruction sets `types` of one aligned corpus to `out` (JSONL), shuffled
    together with `seed` when there are several, and return the counts (`instructions`).
    `max_pairs` builds from the corpus's first that many sentence pairs (`read_pairs`)."""
    pairs = read_pairs(
        source, target, source_tokens, target_tokens, links, source_text, target_text, max_pairs
    )
    records, counts = instructions(pairs, types, seed, settings, mono)
    if len(types) > 1:
        random.Random(seed).shuffle(records)
    write_jsonl(records, out)
    return counts
