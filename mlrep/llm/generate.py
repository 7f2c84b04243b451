"""Greedy decoding of prompts with a base, with or without a LoRA adapter.

"No fine-tuning" (Table 6's BLOOMZ rows) is the base alone; a fine-tuned system is the base
with its adapter (checked to belong to that base, `mlrep.llm.adapter.check`). Prompts are
tokenized as in training (no special tokens added) and decoded in batches, padded on the left
so that every prompt ends where generation starts.

**Stop rule.** Decoding is greedy and ends at ``</s>``, at ``max_new_tokens``, or once the
text holds a newline; the hypothesis is the text before the first newline, stripped of
surrounding spaces. An instruction's answer is one line, and a model that goes on past it
(a second instruction, a continuation of the source) would otherwise have that text scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from mlrep.io import atomic_write_text, read_lines
from mlrep.llm import adapter
from mlrep.llm.base import Base, load_base
from mlrep.llm.examples import ExampleError, read_jsonl
from mlrep.llm.settings import GenerateSettings, Precision


def read_prompts(path: Path) -> list[str]:
    """The prompts of `path`: the ``input`` of each record of a ``.jsonl`` file (so the test
    set the instruction builder writes decodes as it trains), else each line of a text file."""
    if path.suffix == ".jsonl":
        prompts = [record["input"] for record in read_jsonl(path, ("input",))]
    else:
        prompts = read_lines(path, ExampleError)
    if empty := [number for number, prompt in enumerate(prompts, start=1) if not prompt.strip()]:
        raise ExampleError(f"{path}: prompt {empty[0]} is empty; every line needs a prompt")
    return prompts


def system(base_name: str | Path, adapter_dir: Path | None, precision: Precision) -> Base:
    """The base of `base_name`, with the adapter of `adapter_dir` applied when one is given."""
    base = load_base(base_name, precision)
    if adapter_dir is not None:
        base.model = adapter.load(adapter_dir, base, trainable=False).eval()
    return base


def first_line(text: str) -> str:
    """The hypothesis of a decoded continuation (the stop rule above)."""
    return text.split("\n", 1)[0].strip()


@torch.no_grad()
def greedy(base: Base, prompts: Sequence[str], max_new_tokens: int, batch_size: int) -> list[str]:
    """One hypothesis per prompt, in order."""
    tokenizer: Any = base.tokenizer
    tokenizer.padding_side = "left"
    hypotheses: list[str] = []
    for start in range(0, len(prompts), batch_size):
        batch = tokenizer(
            list(prompts[start : start + batch_size]),
            add_special_tokens=False,
            padding=True,
            return_tensors="pt",
        ).to(base.device)
        out = base.model.generate(
            **batch,
            do_sample=False,
            num_beams=1,
            max_new_tokens=max_new_tokens,
            pad_token_id=base.pad_id,
            eos_token_id=tokenizer.eos_token_id,
            stop_strings=["\n"],
            tokenizer=tokenizer,
        )
        new = out[:, batch["input_ids"].shape[1] :]
        hypotheses += [first_line(t) for t in tokenizer.batch_decode(new, skip_special_tokens=True)]
    return hypotheses


def run(
    base_name: str | Path,
    adapter_dir: Path | None,
    prompts_file: Path,
    settings: GenerateSettings,
    out: Path,
) -> int:
    """Decode every prompt of `prompts_file` into `out`, one line each, atomically; returns
    the number of lines."""
    base = system(base_name, adapter_dir, settings.precision)
    prompts = read_prompts(prompts_file)
    hypotheses = greedy(base, prompts, settings.max_new_tokens, settings.batch_size)
    atomic_write_text(out, "".join(f"{line}\n" for line in hypotheses))
    return len(hypotheses)
