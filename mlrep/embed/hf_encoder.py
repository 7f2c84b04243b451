"""A Hugging Face encoder and its tokenizer as OneAligner uses them: token states of one hidden
layer for lists of sentences, with the mask of the tokens BERT-score matches.

One folder (``save_pretrained``'s: model + tokenizer) or a cached hub id is the whole encoder,
so a fine-tuned encoder and the pretrained one it started from load and score the same way.
Special tokens (<s>, </s>, [CLS], [SEP]) are never matched (`bertscore.content_mask`), and a
sentence is cut at ``max_tokens`` tokens, special tokens included (the paper's length 100).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from mlrep.embed import bertscore
from mlrep.errors import MlrepError


class EncoderLoadError(MlrepError):
    """A folder or hub id that holds no encoder and tokenizer ``transformers`` can load."""


@dataclass
class Encoder:
    """A model, its tokenizer and the device the model sits on."""

    model: Any
    tokenizer: Any
    device: str

    @property
    def special_ids(self) -> tuple[int, ...]:
        """The tokens framing every sentence; BERT-score leaves them out."""
        t = self.tokenizer
        ids = (t.cls_token_id, t.sep_token_id, t.bos_token_id, t.eos_token_id)
        return tuple(sorted({i for i in ids if i is not None}))

    def tokenize(self, sentences: Sequence[str], max_tokens: int) -> tuple[torch.Tensor, ...]:
        """(ids, attention mask) of `sentences`, padded to the longest, on the device."""
        batch = self.tokenizer(
            list(sentences),
            padding=True,
            truncation=True,
            max_length=max_tokens,
            return_tensors="pt",
        )
        return batch["input_ids"].to(self.device), batch["attention_mask"].to(self.device)

    def content_tokens(self, sentence: str) -> int:
        """Tokens of `sentence` without special tokens: what the length filter counts."""
        return len(self.tokenizer(sentence, add_special_tokens=False)["input_ids"])

    def states(
        self, ids: torch.Tensor, attention: torch.Tensor, layer: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(token states of `layer`, BERT-score mask) of one tokenized batch."""
        states = bertscore.layer_states(self.model, ids, attention, layer)
        return states, bertscore.content_mask(ids, attention, self.special_ids)


def _loaded(name: str | Path, what: str, loader: Any) -> Any:
    try:
        return loader.from_pretrained(str(name))
    except (OSError, ValueError) as exc:
        raise EncoderLoadError(
            f"{name}: cannot load a Hugging Face {what} ({exc}); give a folder written by "
            "save_pretrained (`mlrep embed align-finetune --out`) or a cached hub id"
        ) from exc


def tokenizer_only(name: str | Path) -> Encoder:
    """The tokenizer of `name` without its model: enough to count tokens (`content_tokens`)."""
    from transformers import AutoTokenizer

    return Encoder(None, _loaded(name, "tokenizer", AutoTokenizer), "cpu")


def load(name: str | Path, device: str) -> Encoder:
    """The encoder and tokenizer of a ``save_pretrained`` folder or a cached hub id."""
    from transformers import AutoModel

    model = _loaded(name, "encoder", AutoModel)
    return Encoder(model.to(device), tokenizer_only(name).tokenizer, device)


@torch.no_grad()
def batches(
    encoder: Encoder, sentences: Sequence[str], layer: int, max_tokens: int, batch_size: int
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """(token states, BERT-score mask) of `batch_size` sentences at a time, on the encoder's
    device, each batch padded to its own longest sentence: a side too large to hold whole
    (BUCC at full) is consumed batch by batch."""
    encoder.model.eval()
    for start in range(0, len(sentences), batch_size):
        ids, attention = encoder.tokenize(sentences[start : start + batch_size], max_tokens)
        yield encoder.states(ids, attention, layer)


def encode(
    encoder: Encoder, sentences: Sequence[str], layer: int, max_tokens: int, batch_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token states (sentences × length × width, on the CPU, padded with zeros to the longest
    sentence) and their BERT-score mask, for every sentence, `batch_size` at a time."""
    parts = [
        (states.float().cpu(), mask.cpu())
        for states, mask in batches(encoder, sentences, layer, max_tokens, batch_size)
    ]
    length = max(states.shape[1] for states, _ in parts)
    states = torch.cat([F.pad(s, (0, 0, 0, length - s.shape[1])) for s, _ in parts])
    mask = torch.cat([F.pad(m, (0, length - m.shape[1])) for _, m in parts])
    return states, mask
