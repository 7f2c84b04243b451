"""Translate every test direction of a prepared dataset, directly or through English.

Output folder: ``<src>-<tgt>.hyp`` (hypotheses as plain text, one per test line: subwords
merged and the tokenizer undone as the prepared data's ``detokenize.json`` says, so they are
scored against the raw references) and ``<src>-<tgt>.sub`` (their subwords, which the probes
feed back to the decoder).
Pivot decoding (Table 8.2 #0) translates each zero-shot direction X→Y as X→en→Y with the
same model, both passes batched over all directions.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlrep.io import atomic_write_text
from mlrep.nmt.data import PIVOT, Direction, directions, read_stats
from mlrep.nmt.decode import BeamSettings, Translator
from mlrep.nmt.prepare import read_detokenize, read_subwords
from mlrep.text.detokenize import detokenize

SUMMARY = "translate.json"


def hypothesis_path(folder: Path, d: Direction, suffix: str = "hyp") -> Path:
    return folder / f"{d.name}.{suffix}"


def translate(
    translator: Translator, prepared: Path, out: Path, beam: BeamSettings, pivot: bool = False
) -> dict:
    """Decode the test set (every direction, or with `pivot` the zero-shot ones via English)."""
    languages = read_stats(prepared / "text")["languages"]
    wanted = [d for d in directions(languages) if d.zero_shot or not pivot]
    tests = {d: read_subwords(prepared, "test", d)[0] for d in wanted}
    sources = [line for d in wanted for line in tests[d]]
    first = [Direction(d.src, PIVOT) if pivot else d for d in wanted for _ in tests[d]]
    hypotheses = translator.generate(sources, first, beam)
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
        counts[d.name] = n
    summary = {"pivot": PIVOT if pivot else None, "lines": counts, **beam.__dict__}
    atomic_write_text(out / SUMMARY, json.dumps(summary, indent=2) + "\n")
    return summary
