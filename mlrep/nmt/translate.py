"""Translate every test direction of a prepared dataset, directly or through English.

Output folder: ``<src>-<tgt>.hyp`` (hypotheses as plain text, one per test line: subwords
merged and the tokenizer undone as the prepared data's ``detokenize.json`` says, so they are
scored against the raw references) and ``<src>-<tgt>.sub`` (their subwords, which the probes
feed back to the decoder); for an interlingua model also ``<src>-<tgt>.len``, the interlingua
length each line was decoded with (`mlrep nmt metrics` compares it with the English reference's).
Pivot decoding (Table 8.2 #0) translates each zero-shot direction X→Y as X→en→Y with the
same model, both passes batched over all directions. Gold-length decoding (Table 7.5) translates
only the supervised X→en directions, each line with its English reference's subword count as
the interlingua length instead of the predicted one.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt.data import PIVOT, Direction, NmtDataError, directions, read_stats
from mlrep.nmt.decode import BeamSettings, DecodeError, Translator
from mlrep.nmt.prepare import read_detokenize, read_subwords
from mlrep.text.detokenize import detokenize, merge_subwords

SUMMARY = "translate.json"


def hypothesis_path(folder: Path, d: Direction, suffix: str = "hyp") -> Path:
    return folder / f"{d.name}.{suffix}"


def _wanted(
    languages: list[str], pivot: bool, gold_length: bool, supervised: bool
) -> list[Direction]:
    if pivot + gold_length + supervised > 1:
        raise DecodeError(
            "pivot, gold-length and supervised-only decoding are separate runs: choose one"
        )
    every = directions(languages)
    if gold_length:
        return [d for d in every if d.tgt == PIVOT and not d.zero_shot]
    if supervised:
        return [d for d in every if not d.zero_shot]
    return [d for d in every if d.zero_shot or not pivot]


def translate(
    translator: Translator,
    prepared: Path,
    out: Path,
    beam: BeamSettings,
    pivot: bool = False,
    gold_length: bool = False,
    supervised: bool = False,
) -> dict:
    """Decode the test set (every direction, with `pivot` the zero-shot ones via English, with
    `gold_length` the X→en ones at their references' lengths, with `supervised` the
    English-centric ones only: a chapter that evaluates no zero-shot direction decodes none)."""
    languages = read_stats(prepared / "text")["languages"]
    wanted = _wanted(languages, pivot, gold_length, supervised)
    pairs = {d: read_subwords(prepared, "test", d) for d in wanted}
    tests = {d: src for d, (src, _) in pairs.items()}
    sources = [line for d in wanted for line in tests[d]]
    first = [Direction(d.src, PIVOT) if pivot else d for d in wanted for _ in tests[d]]
    gold = [len(r.split()) for d in wanted for r in pairs[d][1]] if gold_length else None
    hypotheses, lengths = translator.generate_with_lengths(sources, first, beam, gold)
    if pivot:
        second = [Direction(PIVOT, d.tgt) for d in wanted for _ in tests[d]]
        hypotheses = translator.generate([" ".join(h) for h in hypotheses], second, beam)
    how = read_detokenize(prepared)
    start = 0
    counts = {}
    for d in wanted:
        n = len(tests[d])
        block = hypotheses[start : start + n]
        start += n
        subwords = [" ".join(h) for h in block]
        plain = detokenize(subwords, d.tgt, **how)
        atomic_write_text(hypothesis_path(out, d), "".join(line + "\n" for line in plain))
        atomic_write_text(hypothesis_path(out, d, "sub"), "".join(x + "\n" for x in subwords))
        if lengths is not None and not pivot:
            used = lengths[start - n : start]
            atomic_write_text(hypothesis_path(out, d, "len"), "".join(f"{k}\n" for k in used))
        counts[d.name] = n
    summary = {
        "pivot": PIVOT if pivot else None,
        "gold_length": gold_length,
        "supervised": supervised,
        "lines": counts,
        **beam.__dict__,
    }
    atomic_write_text(out / SUMMARY, json.dumps(summary, indent=2) + "\n")
    return summary


def translate_pair(
    translator: Translator, source: Path, d: Direction, beam: BeamSettings
) -> list[str]:
    """The hypotheses of a subword file in direction `d`, one per line, as words: the model's
    subword-nmt pieces merged (``@@ `` joiners), nothing else undone."""
    lines = read_lines(source, NmtDataError)
    if not lines:
        raise NmtDataError(f"{source}: no lines to translate; give the test set's subword file")
    hypotheses = translator.generate(lines, [d] * len(lines), beam)
    return [merge_subwords(" ".join(h), "subword_nmt") for h in hypotheses]
