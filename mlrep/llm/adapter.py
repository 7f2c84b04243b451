"""LoRA adapters (PEFT) on a base, saved with the identity of the base they were trained on.

An adapter folder is PEFT's (``adapter_config.json``, ``adapter_model.safetensors``) plus
``base.json``: the base's identity (`mlrep.llm.base`). Loading an adapter onto a base whose
fingerprint differs is refused, naming both: PEFT itself would apply the low-rank updates to
whatever model has modules of the right shapes, and the 1b1/3b/7b1 stand-ins (or a retrained
stand-in) are exactly such models. An adapter without ``base.json`` (made elsewhere) is checked
by PEFT's ``base_model_name_or_path`` against the base's name instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlrep.errors import MlrepError
from mlrep.io import atomic_directory
from mlrep.llm.base import Base

BASE_FILE = "base.json"
PEFT_CONFIG = "adapter_config.json"
WEIGHTS = "adapter_model.safetensors"  # PEFT's name for the weights


class AdapterError(MlrepError):
    """An adapter folder that is missing or belongs to another base model."""


def attach(base: Base, r: int, alpha: int, dropout: float, target_modules: tuple[str, ...]) -> Any:
    """A fresh, trainable LoRA adapter on `base.model` (PEFT's ``get_peft_model``; the adapter's
    weights in float32 whatever the base's precision)."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=list(target_modules),
        task_type="CAUSAL_LM",
    )
    return get_peft_model(base.model, config)


def check(folder: Path, base: Base) -> None:
    """Refuse `folder` unless its adapter was trained on `base` (see the module docstring)."""
    if not (folder / PEFT_CONFIG).exists():
        raise AdapterError(
            f"{folder}: no {PEFT_CONFIG}; give the adapter folder `mlrep llm lora-train` wrote "
            "(its --out/adapter)"
        )
    if (folder / BASE_FILE).exists():
        trained_on = json.loads((folder / BASE_FILE).read_text(encoding="utf-8"))
        same = trained_on["fingerprint"] == base.identity["fingerprint"]
    else:
        recorded = json.loads((folder / PEFT_CONFIG).read_text(encoding="utf-8"))
        trained_on = {"name": recorded.get("base_model_name_or_path"), "fingerprint": "unknown"}
        same = trained_on["name"] == base.identity["name"]
    if not same:
        raise AdapterError(
            f"{folder}: this adapter was trained on base {trained_on['name']} "
            f"({trained_on['fingerprint']}), not on {base.identity['name']} "
            f"({base.identity['fingerprint']}); pass --base {trained_on['name']}, or train an "
            f"adapter on {base.identity['name']}"
        )


def load(folder: Path, base: Base, trainable: bool) -> Any:
    """The base with the adapter of `folder` (checked by `check`): trainable to continue
    training it (a curriculum's next stage), else for inference."""
    from peft import PeftModel

    check(folder, base)
    return PeftModel.from_pretrained(base.model, str(folder), is_trainable=trainable)


def save(model: Any, base: Base, folder: Path) -> None:
    """The adapter's weights and config with ``base.json``, replacing `folder` atomically."""
    with atomic_directory(folder) as staging:
        model.save_pretrained(staging)
        (staging / BASE_FILE).write_text(json.dumps(base.identity, indent=1) + "\n")


def trainable_parameters(model: Any) -> dict[str, float]:
    """Trainable (adapter) and total parameters, and the trainable share in percent."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return {"trainable": trainable, "total": total, "trainable_percent": 100 * trainable / total}
