"""Subword models: SentencePiece (unigram or BPE) and joint BPE with subword-nmt.

Both are trained jointly on the text of every language of a pair (the thesis's joint
vocabularies) and applied line by line, so subword files stay aligned with their inputs.
SentencePiece reads every sentence (no sampling), so the same input gives the same model.
"""

from __future__ import annotations

import argparse
import io
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mlrep.cliutil import positive_int
from mlrep.text.lines import TextInputError, read_lines

Method = Literal["sentencepiece", "subword_nmt"]
ModelType = Literal["unigram", "bpe"]
METHODS = typing.get_args(Method)
MODEL_TYPES = typing.get_args(ModelType)


def coverage(text: str) -> float:
    """SentencePiece character coverage: in (0, 1], 1.0 being usual for small alphabets."""
    value = float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not in (0, 1]")
    return value


@dataclass(frozen=True)
class SubwordSettings:
    """One subword model's settings: the values of a ``preprocess.subwords`` setting (its
    ``default``, overridden by the setting and ``per_pair``: `mlrep.text.plan.subword_options`)
    and the options of ``mlrep text train-subwords``."""

    method: Method = field(metadata={"help": "SentencePiece, or joint BPE with subword-nmt"})
    model_type: ModelType = field(metadata={"help": "SentencePiece's model"})
    vocab_size: int = field(metadata={"type": positive_int, "help": "SentencePiece's vocabulary"})
    character_coverage: float = field(
        metadata={"type": coverage, "help": "SentencePiece's character coverage, in (0, 1]"}
    )
    merges: int = field(metadata={"type": positive_int, "help": "subword-nmt's BPE merges"})


def training_lines(inputs: list[Path], max_lines: int = 0) -> list[str]:
    """The lines a model learns from: the first `max_lines` of each input (0: all), so a model
    can learn on a sample that is a prefix of its files (Chapter 4's #0*: its sample's BPE)."""
    return [line for path in inputs for line in read_lines(path)[: max_lines or None]]


def train_sentencepiece(
    inputs: list[Path],
    prefix: Path,
    model_type: str,
    vocab_size: int,
    character_coverage: float,
    threads: int = 1,
    max_lines: int = 0,
) -> Path:
    """Train ``PREFIX.model`` / ``PREFIX.vocab`` on `training_lines`; returns the model path."""
    import sentencepiece as spm

    sentences = [line for line in training_lines(inputs, max_lines) if line.strip()]
    if not sentences:
        raise TextInputError(f"no non-empty lines in {', '.join(map(str, inputs))}")
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_prefix=str(prefix),
            model_type=model_type,
            vocab_size=vocab_size,
            character_coverage=character_coverage,
            num_threads=threads,
            minloglevel=2,
        )
    except RuntimeError as exc:
        raise TextInputError(
            f"SentencePiece could not train on {len(sentences)} lines: {exc} "
            "(if the vocabulary is too large for the text, lower --vocab-size)"
        ) from None
    return prefix.with_suffix(".model")


def encode_sentencepiece(model: Path, lines: list[str]) -> list[str]:
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(model))
    return [" ".join(pieces) for pieces in processor.encode(lines, out_type=str)]


def learn_bpe(
    inputs: list[Path], codes: Path, merges: int, min_frequency: int = 2, max_lines: int = 0
) -> Path:
    """Joint BPE merges (subword-nmt) over the concatenation of `inputs`' `training_lines`."""
    from subword_nmt.learn_bpe import learn_bpe as learn

    text = "".join(line + "\n" for line in training_lines(inputs, max_lines))
    out = io.StringIO()
    learn(io.StringIO(text), out, merges, min_frequency=min_frequency)
    codes.write_text(out.getvalue(), encoding="utf-8")
    return codes


def apply_bpe(codes: Path, lines: list[str]) -> list[str]:
    from subword_nmt.apply_bpe import BPE

    with codes.open(encoding="utf-8") as handle:
        bpe = BPE(handle)
    return [bpe.process_line(line).strip() for line in lines]
