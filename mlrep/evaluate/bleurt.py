"""BLEURT (Sellam et al. 2020; BLEURT-20: Pu et al. 2021) in PyTorch, for Table E.9.

The thesis scores with Google's TensorFlow BLEURT (checkpoint not stated; BLEURT-20 assumed,
reported ×100). Its checkpoints are on the Hugging Face hub as PyTorch ports in
bleurt-pytorch's format (``lucadiliello/BLEURT-20`` and the distilled ``-D12``, ``-D6``,
``-D3``): a BERT encoder whose SentencePiece embeddings are projected to the hidden size,
a tanh pooler over ``[CLS]`` and a one-output regression head. That is RemBERT's layout, so
`load` puts the port's weights into transformers' own `RemBertForSequenceClassification`
(bleurt-pytorch 0.0.1 itself does not import with transformers 5, which this environment
needs) and tokenises as BLEURT does: SentencePiece ids, ``[CLS] reference [SEP] candidate
[SEP]`` with segment ids 0 then 1, the longer side trimmed first to the maximum length.
tests/test_evaluate_bleurt.py checks the scores against bleurt-pytorch's own output on a
tiny checkpoint that bleurt-pytorch wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlrep.device import visible
from mlrep.errors import MlrepError

# what a checkpoint folder needs; the hub download fetches only these
FILES = ("config.json", "model.safetensors", "pytorch_model.bin", "spm.model")
SPECIALS = ("[CLS]", "[SEP]", "[PAD]")


class BleurtError(MlrepError):
    """A BLEURT checkpoint that cannot be loaded as the BLEURT-20 family."""


@dataclass
class Bleurt:
    """A loaded checkpoint: `score` gives one BLEURT value per (reference, candidate)."""

    model: Any  # RemBertForSequenceClassification, in eval mode
    pieces: Any  # sentencepiece.SentencePieceProcessor
    cls: int
    sep: int
    pad: int
    max_length: int
    device: str

    def encode(self, reference: str, candidate: str) -> tuple[list[int], list[int]]:
        """Token and segment ids of one pair, trimmed longest-first as BLEURT does."""
        ref, cand = self.pieces.encode(reference), self.pieces.encode(candidate)
        while len(ref) + len(cand) > self.max_length - 3:
            if len(ref) > len(cand):
                ref.pop()
            else:
                cand.pop()
        ids = [self.cls, *ref, self.sep, *cand, self.sep]
        return ids, [0] * (len(ref) + 2) + [1] * (len(cand) + 1)

    def score(
        self, references: Sequence[str], candidates: Sequence[str], batch_size: int = 64
    ) -> list[float]:
        """BLEURT of each candidate against its reference; batches hold similar lengths."""
        import torch

        if len(references) != len(candidates):
            raise BleurtError(
                f"{len(candidates)} candidates for {len(references)} references; give one each"
            )
        encoded = [self.encode(r, c) for r, c in zip(references, candidates, strict=True)]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]))
        scores = [0.0] * len(encoded)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(encoded[i][0]) for i in batch)
            ids = torch.full((len(batch), width), self.pad, dtype=torch.long)
            segments = torch.zeros((len(batch), width), dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                tokens, types = encoded[i]
                ids[row, : len(tokens)] = torch.tensor(tokens)
                segments[row, : len(types)] = torch.tensor(types)
                mask[row, : len(tokens)] = 1
            with torch.no_grad():
                logits = self.model(
                    input_ids=ids.to(self.device),
                    token_type_ids=segments.to(self.device),
                    attention_mask=mask.to(self.device),
                ).logits
            for i, value in zip(batch, logits[:, 0].tolist(), strict=True):
                scores[i] = float(value)
        return scores


def checkpoint_folder(
    checkpoint: str, revision: str | None = None, files: Sequence[str] = FILES
) -> Path:
    """A local folder as it is, else a hub repository id at `revision` (None: the default
    branch) downloaded into the hub's cache, only its `files` (glob patterns).

    Compute nodes without internet: download once on a login node (the same call, or
    ``hf download lucadiliello/BLEURT-20``) and keep ``HF_HOME`` shared, or give the folder.
    """
    local = Path(checkpoint)
    if local.is_dir():
        return local
    from huggingface_hub import snapshot_download

    return Path(
        snapshot_download(repo_id=checkpoint, revision=revision, allow_patterns=list(files))
    )


def _rembert_config(port: dict[str, Any], folder: Path):
    from transformers import RemBertConfig

    if port.get("model_type") != "bleurt" or not port.get("embedding_size"):
        raise BleurtError(
            f"{folder / 'config.json'}: model_type {port.get('model_type')!r}, embedding_size "
            f"{port.get('embedding_size')!r}; expected a bleurt-pytorch port of the BLEURT-20 "
            "family (model_type bleurt with SentencePiece embeddings), e.g. lucadiliello/BLEURT-20"
        )
    keys = (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "hidden_act",
        "max_position_embeddings",
        "type_vocab_size",
        "initializer_range",
        "layer_norm_eps",
        "pad_token_id",
    )
    return RemBertConfig(
        **{k: port[k] for k in keys if k in port},
        input_embedding_size=port["embedding_size"],
        output_embedding_size=port["embedding_size"],  # the MLM head's width: not loaded
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0,
        num_labels=1,
        bos_token_id=None,  # RemBERT's generation defaults, meaningless for a regressor
        eos_token_id=None,
    )


def _port_weights(folder: Path) -> dict[str, Any]:
    """The port's state dict with RemBERT's module names."""
    import torch

    if (folder / "model.safetensors").exists():
        from safetensors.torch import load_file

        state = load_file(str(folder / "model.safetensors"))
    elif (folder / "pytorch_model.bin").exists():
        state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
    else:
        raise BleurtError(f"{folder}: no model.safetensors or pytorch_model.bin")
    renamed = {}
    for key, value in state.items():
        if key.endswith(("position_ids", "token_type_ids")):
            continue  # buffers, rebuilt by the model
        key = key.replace("bleurt.", "rembert.", 1)
        renamed[key.replace(".embedding_projection.", ".embedding_hidden_mapping_in.")] = value
    return renamed


def load(checkpoint: str, device: str | None = None) -> Bleurt:
    """A BLEURT-20-family checkpoint (hub id or folder) ready to score, on `device`."""
    import sentencepiece as spm
    from transformers import RemBertForSequenceClassification

    folder = checkpoint_folder(checkpoint)
    if not (folder / "config.json").exists() or not (folder / "spm.model").exists():
        raise BleurtError(
            f"{folder}: needs config.json and spm.model (a BLEURT-20-family port); "
            "WordPiece BLEURT checkpoints (bleurt-base-512, …) are not supported"
        )
    port = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    model = RemBertForSequenceClassification(_rembert_config(port, folder))
    problems = model.load_state_dict(_port_weights(folder), strict=False)
    missing = [k for k in problems.missing_keys if not k.endswith("position_ids")]
    if missing or problems.unexpected_keys:
        raise BleurtError(
            f"{folder}: weights do not match a BLEURT-20 port: missing {missing[:5]}, unexpected "
            f"{problems.unexpected_keys[:5]}"
        )
    device = device or visible().device
    pieces = spm.SentencePieceProcessor(model_file=str(folder / "spm.model"))
    cls, sep, pad = (pieces.piece_to_id(token) for token in SPECIALS)
    if pieces.unk_id() in (cls, sep, pad):
        raise BleurtError(f"{folder / 'spm.model'}: lacks one of {SPECIALS}")
    return Bleurt(
        model.eval().to(device),
        pieces,
        cls,
        sep,
        pad,
        int(port.get("max_position_embeddings", 512)),
        device,
    )
