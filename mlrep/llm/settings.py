"""The settings of the instruction-tuning steps, spelled once: each field is a params.yaml key
of the section a verb is pointed at (``--section``), an option of its verb
(`mlrep.cliutil.add_options`) and its help. Free of torch, so the parser and the workflow read
the names without loading it.

The LoRA and decoding fields carry the defaults Chapter 6's spec gives (LoRA r 8, alpha 32,
dropout 0.1 on ``query_key_value``; warm-up ratio 0.03; 384 input, output and new tokens) and
are ``omissible``: a section that leaves one out, or a verb run without ``--section``, keeps
the default. The stand-in's shape has no default: it is a choice of the scale, not the thesis.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Literal

from mlrep.cliutil import positive_float, positive_int, probability
from mlrep.errors import MlrepError

# where a GPU runs the model: its floating-point type (the CPU always computes in float32)
Precision = Literal["fp32", "bf16", "fp16"]
BYTE_ALPHABET = 256 + 4  # the byte-level BPE's bytes and the stand-in's 4 specials
# checkpoints of a run with other settings or data: refused (by hand) or dropped (workflow)
ON_STALE = ("refuse", "restart")


class LlmSettingsError(MlrepError):
    """Settings that cannot describe a model or a run."""


def _positive(help_text: str, **more: typing.Any) -> dict[str, typing.Any]:
    return {"type": positive_int, "help": help_text, **more}


def _default(help_text: str, **more: typing.Any) -> dict[str, typing.Any]:
    return {"help": help_text, "omissible": True, **more}


@dataclass(frozen=True)
class StandInSettings:
    """A tiny ``BloomForCausalLM`` with its own byte-level BPE, briefly pretrained as a causal LM
    on leak-free text (``mlrep llm stand-in``): the tiny scale's BLOOMZ checkpoint, saved so the
    loader reads it as it reads a hub model."""

    layers: int = field(metadata=_positive("decoder layers (e.g. 2/3/4 for 1b1/3b/7b1)"))
    hidden_size: int = field(metadata=_positive("model dimension"))
    heads: int = field(metadata=_positive("attention heads"))
    vocab_size: int = field(metadata=_positive("byte-level BPE vocabulary, 4 specials included"))
    max_tokens: int = field(metadata=_positive("tokens kept per pretraining line, </s> included"))
    steps: int = field(metadata=_positive("pretraining updates"))
    batch_size: int = field(metadata=_positive("lines per pretraining update"))
    lr: float = field(metadata={"type": positive_float, "help": "peak AdamW learning rate"})
    warmup: int = field(metadata={"help": "linear warm-up updates, then linear decay to 0"})

    def __post_init__(self) -> None:
        if self.hidden_size % self.heads:
            raise LlmSettingsError(
                f"hidden_size {self.hidden_size} is not a multiple of heads {self.heads}"
            )
        if self.vocab_size <= BYTE_ALPHABET:
            raise LlmSettingsError(
                f"vocab_size {self.vocab_size} leaves no merges: the 256 bytes and 4 specials "
                f"take {BYTE_ALPHABET}; raise it"
            )


@dataclass(frozen=True)
class LoraSettings:
    """One LoRA fine-tuning run (``mlrep llm lora-train``): adapter shape, optimisation and the
    length limits over which an example is dropped (and counted)."""

    r: int = field(default=8, metadata=_default("LoRA rank", type=positive_int))
    alpha: int = field(default=32, metadata=_default("LoRA alpha (scale alpha / r)"))
    dropout: float = field(
        default=0.1, metadata=_default("dropout on the LoRA branch's input", type=probability)
    )
    target_modules: tuple[str, ...] = field(
        default=("query_key_value",),
        metadata=_default("module names LoRA wraps (BLOOM's fused attention projection)"),
    )
    lr: float = field(
        default=2e-4, metadata=_default("peak AdamW learning rate", type=positive_float)
    )
    epochs: int = field(default=5, metadata=_default("passes over the training examples"))
    batch_size: int = field(default=8, metadata=_default("examples per pass", type=positive_int))
    grad_accum: int = field(
        default=1, metadata=_default("passes accumulated per update", type=positive_int)
    )
    warmup_ratio: float = field(
        default=0.03,
        metadata=_default(
            "share of the updates warming up linearly, then decay to 0", type=probability
        ),
    )
    weight_decay: float = field(default=0.0, metadata=_default("AdamW weight decay"))
    max_input_tokens: int = field(
        default=384, metadata=_default("longest prompt kept; longer examples are dropped")
    )
    max_output_tokens: int = field(
        default=384,
        metadata=_default("longest output kept, </s> included; longer examples are dropped"),
    )
    checkpoint_every: int = field(
        default=500, metadata=_default("updates between checkpoints", type=positive_int)
    )
    precision: Precision = field(default="bf16", metadata=_default("the base's type on a GPU"))

    def __post_init__(self) -> None:
        if not self.target_modules:
            raise LlmSettingsError("target_modules is empty: LoRA would train nothing")
        if self.epochs < 1 or self.max_input_tokens < 1 or self.max_output_tokens < 2:
            raise LlmSettingsError(
                "epochs and max_input_tokens must be ≥ 1 and max_output_tokens ≥ 2 (an output "
                "token and </s>)"
            )


@dataclass(frozen=True)
class GenerateSettings:
    """Greedy decoding (``mlrep llm generate``): cut at the first newline."""

    max_new_tokens: int = field(
        default=384, metadata=_default("new tokens at most per prompt", type=positive_int)
    )
    batch_size: int = field(default=8, metadata=_default("prompts per batch", type=positive_int))
    precision: Precision = field(default="bf16", metadata=_default("the base's type on a GPU"))


@dataclass(frozen=True)
class CosineSettings:
    """Layer-wise cosine of parallel sentences (``mlrep llm cosine``, Figures 6.3/D.1)."""

    batch_size: int = field(default=16, metadata=_default("sentences per batch", type=positive_int))
    max_tokens: int = field(
        default=384, metadata=_default("tokens kept per sentence", type=positive_int)
    )
    precision: Precision = field(default="fp32", metadata=_default("the base's type on a GPU"))
