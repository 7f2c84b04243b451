"""Padded causal-LM batches and their token-summed loss, shared by pretraining and LoRA.

A row is (token ids, labels) of one sequence; a label of `IGNORE` takes no part in the loss
(a prompt token, padding). The loss is summed over the labelled tokens and returned with their
count, so an update over several passes (gradient accumulation) or a held-out set over several
batches weighs every labelled token alike, however the tokens fall into batches.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

IGNORE = -100  # label of a token the loss skips (`transformers`' convention)
Row = tuple[list[int], list[int]]


def collate(
    rows: Sequence[Row], pad_id: int, device: torch.device | str
) -> dict[str, torch.Tensor]:
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` of `rows` on `device`:
    padding comes after each sequence, so a causal model's states of the real tokens do not
    depend on it."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (row_ids, row_labels) in enumerate(rows):
        ids[i, : len(row_ids)] = torch.tensor(row_ids)
        labels[i, : len(row_labels)] = torch.tensor(row_labels)
        attention[i, : len(row_ids)] = 1
    batch = {"input_ids": ids, "attention_mask": attention, "labels": labels}
    return {key: value.to(device) for key, value in batch.items()}


def summed_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
    """(sum of the next-token cross-entropies over the labelled tokens, their number)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    targets = batch["labels"][:, 1:]
    loss = F.cross_entropy(
        logits[:, :-1].flatten(0, 1).float(),
        targets.flatten(),
        ignore_index=IGNORE,
        reduction="sum",
    )
    return loss, int((targets != IGNORE).sum())


@torch.no_grad()
def mean_loss(model: torch.nn.Module, rows: Sequence[Row], pad_id: int, batch_size: int) -> float:
    """Mean loss per labelled token of `rows`, dropout off: a held-out measure (lower is
    better). The model's training mode is restored after."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(rows), batch_size):
        loss, tokens = summed_loss(model, collate(rows[start : start + batch_size], pad_id, device))
        total += float(loss)
        count += tokens
    model.train(was_training)
    return total / count
