"""Instruction examples: JSONL records ``{"input": …, "output": …}`` as masked token rows.

The instruction builders write one record per line. A row is ``tokens(input) tokens(output)
</s>``, the two parts tokenized apart (so the boundary is where the builder put it, and the
prompt is tokenized exactly as at decoding time) and joined with nothing in between: the
builder's input carries its own separator. Only the output tokens and ``</s>`` carry labels;
the prompt's are `IGNORE`, so the loss is the output's alone.

**Over-length policy: drop and count.** An example whose input has more than
``max_input_tokens`` tokens, or whose output (with ``</s>``) more than ``max_output_tokens``, is
left out of training, never cut: a cut output teaches the model to stop mid-sentence, a cut
prompt loses the source sentence. Each file's counts (read, kept, input too long, output too
long; an example may be too long on both sides) go into the run record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mlrep.errors import MlrepError
from mlrep.io import read_lines
from mlrep.llm.batches import IGNORE, Row

FIELDS = ("input", "output")


class ExampleError(MlrepError):
    """A JSONL example file that is missing, malformed or empty."""


@dataclass
class Counts:
    """What happened to one file's examples."""

    read: int = 0
    kept: int = 0
    input_too_long: int = 0
    output_too_long: int = 0

    @property
    def dropped(self) -> int:
        return self.read - self.kept

    def as_dict(self) -> dict[str, int]:
        return asdict(self) | {"dropped": self.dropped}


def parse(line: str, path: Path, number: int, fields: tuple[str, ...] = FIELDS) -> dict[str, str]:
    """One record with string `fields`, or `ExampleError` naming ``file:line`` and the fix."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ExampleError(
            f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno}); each line must be "
            'one object {"input": ..., "output": ...}'
        ) from None
    if not isinstance(record, dict) or any(not isinstance(record.get(k), str) for k in fields):
        raise ExampleError(
            f"{path}:{number}: not an object with string fields {' and '.join(fields)}; "
            "rebuild the file with the instruction builder"
        )
    return record


def read_jsonl(path: Path, fields: tuple[str, ...] = FIELDS) -> list[dict[str, str]]:
    """The records of a JSONL file (blank lines skipped)."""
    return [
        parse(line, path, number, fields)
        for number, line in enumerate(read_lines(path, ExampleError), start=1)
        if line.strip()
    ]


def encode(tokenizer: Any, record: dict[str, str]) -> tuple[list[int], list[int]]:
    """(prompt ids, output ids with </s>) of one record."""
    prompt = tokenizer(record["input"], add_special_tokens=False)["input_ids"]
    output = tokenizer(record["output"], add_special_tokens=False)["input_ids"]
    return prompt, [*output, tokenizer.eos_token_id]


def masked_row(prompt: list[int], output: list[int]) -> Row:
    """The row of an example: the prompt's labels `IGNORE`, the output's its own ids."""
    return [*prompt, *output], [IGNORE] * len(prompt) + output


def load(
    tokenizer: Any, paths: Sequence[Path], max_input_tokens: int, max_output_tokens: int
) -> tuple[list[Row], dict[str, dict[str, int]]]:
    """(rows of every kept example, in file order; {file: its `Counts`})."""
    rows: list[Row] = []
    counts: dict[str, dict[str, int]] = {}
    for path in paths:
        tally = Counts()
        for record in read_jsonl(path):
            prompt, output = encode(tokenizer, record)
            tally.read += 1
            too_long_in = len(prompt) > max_input_tokens
            too_long_out = len(output) > max_output_tokens
            tally.input_too_long += too_long_in
            tally.output_too_long += too_long_out
            if not (too_long_in or too_long_out):
                tally.kept += 1
                rows.append(masked_row(prompt, output))
        counts[str(path)] = tally.as_dict()
    if not rows:
        raise ExampleError(
            f"{', '.join(map(str, paths))}: no example to train on ({counts}); check the files "
            "or raise max_input_tokens / max_output_tokens"
        )
    return rows, counts
