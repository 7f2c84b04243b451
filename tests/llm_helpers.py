"""Made-up text and instruction examples for the `mlrep.llm` tests, and a stand-in base.

The language is a small word list with a little structure (subject, verb, object), enough
for a 2-layer stand-in to learn in a few seconds; the instruction task maps each word to a
fixed translation, so held-out examples (the same words in other prompts) share what a
fine-tuned adapter learns.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from mlrep.cli import main

SUBJECTS = ["kato", "mirel", "sunda", "pelo", "zuk", "orav"]
VERBS = ["vidi", "amas", "portas", "tenis"]
OBJECTS = ["libron", "panon", "akvon", "lomu"]
# each word's "translation": another word of its role, so outputs are sentences the stand-in
# already models and the adapter learns only the mapping
LEXICON = {
    **dict(zip(SUBJECTS, SUBJECTS[1:] + SUBJECTS[:1], strict=True)),
    **dict(zip(VERBS, VERBS[1:] + VERBS[:1], strict=True)),
    **dict(zip(OBJECTS, OBJECTS[1:] + OBJECTS[:1], strict=True)),
}

STAND_IN = {
    "layers": 2, "hidden_size": 64, "heads": 4, "vocab_size": 400, "max_tokens": 32,
    "steps": 60, "batch_size": 32, "lr": 3e-3, "warmup": 6,
}  # fmt: skip


def sentences(count: int, seed: int) -> list[str]:
    """Subject-verb-object sentences of the made-up language. The object follows from the
    subject, so a pretrained stand-in tells the words apart (with every choice free, words of
    one role would get near-identical embeddings, and no adapter could tell them apart)."""
    draw = random.Random(seed)
    chosen = [(draw.randrange(len(SUBJECTS)), draw.choice(VERBS)) for _ in range(count)]
    return [f"{SUBJECTS[s]} {verb} {OBJECTS[s % len(OBJECTS)]}" for s, verb in chosen]


def write_text(folder: Path, count: int = 400, seed: int = 0) -> Path:
    """A folder in ``mlrep data monolingual``'s layout with the language's text."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "aa.txt").write_text("".join(f"{s}\n" for s in sentences(count, seed)))
    return folder


def object_examples(count: int, seed: int) -> list[dict[str, str]]:
    """``{"input": "<sentence> =", "output": " <its object's translation>"}``: the answer is
    in the prompt, one lexicon step away, so held-out sentences share what an adapter learns."""
    return [
        {"input": f"{s} =", "output": " " + LEXICON[s.split()[2]]} for s in sentences(count, seed)
    ]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def flags(values: dict) -> list[str]:
    """``--key value …`` of a settings mapping, as a rule renders it."""
    out: list[str] = []
    for key, value in values.items():
        out += [
            "--" + key.replace("_", "-"),
            *map(str, value if isinstance(value, tuple) else (value,)),
        ]
    return out


def build_stand_in(text: Path, out: Path, seed: int = 1, **changed) -> Path:
    """A stand-in base through ``mlrep llm stand-in``, every setting an option."""
    args = ["llm", "stand-in", "--scale", "tiny", "--text", str(text), "--out", str(out)]
    assert main([*args, "--seed", str(seed), *flags(STAND_IN | changed)]) == 0
    return out
