"""The base causal LM and its tokenizer, from a hub id or a `save_pretrained` folder.

One loader serves both scales: ``bigscience/bloomz-7b1`` at full, a stand-in folder written by
`mlrep.llm.stand_in` at tiny. A GPU computes in the asked precision (bf16/fp16), the CPU in
float32 (its half-precision kernels are slow or missing). The base's *identity* (its name and
a fingerprint) goes into every run record and every adapter folder, so an adapter is never
applied to a model it was not trained on: for a hub model the fingerprint is the commit the
files were resolved at, for a folder the sha256 of its config and weight files (so a copied or
moved folder stays the same base, and a retrained one does not).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from mlrep.device import visible
from mlrep.errors import MlrepError
from mlrep.io import sha256_file
from mlrep.llm.settings import Precision

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
WEIGHT_PATTERNS = ("config.json", "*.safetensors", "*.bin")


class BaseLoadError(MlrepError):
    """A base model or tokenizer that cannot be loaded."""


@dataclass
class Base:
    """A loaded base: the model (in eval mode, on `device`), its tokenizer and its identity."""

    model: Any
    tokenizer: Any
    identity: dict[str, str]
    device: str

    @property
    def pad_id(self) -> int:
        return self.tokenizer.pad_token_id


def dtype_for(precision: Precision, device: str) -> torch.dtype:
    """`precision`'s torch type on a GPU; float32 on the CPU."""
    return DTYPES[precision] if device == "cuda" else torch.float32


def fingerprint(name: str | Path, model: Any) -> str:
    """What identifies the base's weights (see the module's docstring)."""
    folder = Path(name)
    if folder.is_dir():
        digest = hashlib.sha256()
        files = sorted({f for pattern in WEIGHT_PATTERNS for f in folder.glob(pattern)})
        for file in files:
            digest.update(f"{file.name}\0{sha256_file(file)}\n".encode())
        return "sha256:" + digest.hexdigest()
    return "commit:" + str(getattr(model.config, "_commit_hash", None))


def load_base(name: str | Path, precision: Precision = "fp32", device: str | None = None) -> Base:
    """The causal LM and tokenizer of `name` (a hub id or a `save_pretrained` folder), in eval
    mode on `device` (default: `mlrep.device.visible`'s)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = device or visible().device
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(name))
        model = AutoModelForCausalLM.from_pretrained(str(name), dtype=dtype_for(precision, device))
    except (OSError, ValueError) as exc:
        raise BaseLoadError(
            f"{name}: cannot load a causal LM and its tokenizer ({exc}); give a folder written "
            "by `mlrep llm stand-in` or a cached hub id such as bigscience/bloomz-7b1"
        ) from exc
    if tokenizer.pad_token_id is None or tokenizer.eos_token_id is None:
        raise BaseLoadError(
            f"{name}: its tokenizer has no pad or eos token; batching and stopping need both"
        )
    identity = {"name": str(name), "fingerprint": fingerprint(name, model)}
    return Base(model.to(device).eval(), tokenizer, identity, device)
