"""The Chapter 4 settings groups that `mlrep.nmt.settings` does not already spell: which runs a
scale plans (`Plan`, the section's top-level keys) and the optimised no-pre-training Transformer
#0* of each fine-tuning size (`Optimized`, Table B.1).

Training and decoding reuse the NMT layer's dataclasses: the section's ``pretrain`` and
``finetune`` blocks hold `mlrep.nmt.settings.TrainSettings` fields, ``decode`` holds
`BeamSettings` fields. Torch-free, so a rule file can read them while it plans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mlrep.cliutil import option_names, positive_int
from mlrep.errors import MlrepError

SECTION = "ch4_jass"


class Ch4SettingsError(MlrepError):
    """A ch4_jass params block that lacks a key or names one its dataclass does not have."""


@dataclass(frozen=True)
class Plan:
    """What a scale runs; every other cell of the chapter's tables reads "not run at this scale".

    A fine-tune runs when its corpus lists its size, its direction is listed and its starting
    point is a listed pre-trained model of the corpus's pair or a listed baseline."""

    pretrained: dict[str, list[str]] = field(
        metadata={"help": "per pair model (jaen, jazh, enko): the pre-trained models it trains"}
    )
    baselines: list[str] = field(
        metadata={"help": "no-pre-training rows: vanilla (#0, Transformer-big), optimized (#0*)"}
    )
    directions: list[str] = field(metadata={"help": "fine-tuning directions (ja-en, en-ja, …)"})
    sizes: dict[str, dict[str, int]] = field(
        metadata={
            "help": "per corpus, size label -> training pairs sampled (nested: the first n of "
            "one seeded shuffle; 0: the whole corpus)"
        }
    )


@dataclass(frozen=True)
class Optimized:
    """Table B.1's optimised Transformer #0* for one data size (Araabi and Monz 2020): its own
    BPE and a small model; the other settings are the ``finetune`` block's."""

    merges: int = field(metadata={"type": positive_int, "help": "BPE merge operations"})
    layers: int = field(metadata={"type": positive_int, "help": "encoder and decoder layers"})
    heads: int = field(metadata={"type": positive_int, "help": "attention heads"})
    embed_dim: int = field(metadata={"type": positive_int, "help": "embedding dimension"})
    ffn_dim: int = field(metadata={"type": positive_int, "help": "feed-forward dimension"})
    dropout: float = field(metadata={"help": "dropout probability"})
    label_smoothing: float = field(metadata={"help": "label-smoothed cross-entropy's epsilon"})
    max_tokens: int = field(metadata={"type": positive_int, "help": "tokens per batch"})


def build(cls: type, values: Mapping[str, Any], where: str) -> Any:
    """A settings dataclass from a params mapping holding exactly its fields."""
    names = option_names(cls)
    missing = [n for n in names if n not in values]
    unknown = sorted(set(values) - set(names))
    if missing or unknown:
        raise Ch4SettingsError(
            f"params.yaml {where}: missing {missing or 'none'}, unknown {unknown or 'none'}; "
            f"{cls.__name__} has exactly {', '.join(names)}"
        )
    return cls(**{n: values[n] for n in names})


def plan(section: Mapping[str, Any]) -> Plan:
    """The `Plan` of a resolved ``ch4_jass`` section (its other keys are other groups')."""
    return build(Plan, {n: section[n] for n in option_names(Plan) if n in section}, SECTION)


def optimized(section: Mapping[str, Any], size: str) -> Optimized:
    """#0*'s settings at one size label (``optimized.<size>``)."""
    table = section.get("optimized", {})
    if size not in table:
        raise Ch4SettingsError(
            f"params.yaml {SECTION}.optimized has no size {size!r} (has {', '.join(table)}): "
            "add Table B.1's column for it, or drop the optimized baseline at this size"
        )
    return build(Optimized, table[size], f"{SECTION}.optimized.{size}")
