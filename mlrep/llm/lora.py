"""LoRA fine-tuning of a causal LM on instruction examples, under the checkpoint contract.

One run trains one adapter on a list of JSONL files (`mlrep.llm.examples`: prompt masked,
over-length examples dropped and counted) for a number of epochs: AdamW over the adapter's
weights only, linear warm-up over ``warmup_ratio`` of the updates and linear decay to 0, each
update ``grad_accum`` passes of ``batch_size`` examples, its loss the mean over the update's
output tokens (`mlrep.llm.batches`).

**A curriculum is a chain of runs.** Stage 2 of a curriculum is its own run, started from
stage 1's adapter (``init_adapter``) with its own data, epochs and schedule: each stage is a
complete, resumable job with its own record, and a stage that is done is never retrained when
a later one changes.

**Resuming.** `mlrep.train.checkpoint.train` saves every ``checkpoint_every`` updates (and on
SIGUSR1/SIGTERM, then exits `EXIT_PREEMPTED`); its ``model`` here is `AdapterState`, the
adapter's weights and the per-update losses so far, never the frozen base (gigabytes at 7b1).
An update's examples and learning rate are functions of its number (`mlrep.llm.schedule`)
and the RNG (LoRA dropout) is restored with the optimiser, so a resumed run ends with the
adapter an uninterrupted one does.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, sha256_file
from mlrep.llm import adapter, examples, schedule
from mlrep.llm.base import Base, load_base
from mlrep.llm.batches import IGNORE, Row, collate, summed_loss
from mlrep.llm.settings import ON_STALE, LoraSettings
from mlrep.train.checkpoint import Checkpoints, train

ADAPTER_DIR = "adapter"
CHECKPOINT_DIR = "checkpoints"
SUMMARY_FILE = "train.json"


class CheckpointMismatchError(MlrepError):
    """A run folder whose checkpoints were made by a run with other data or settings."""


class AdapterState(torch.nn.Module):
    """The checkpoint contract's ``model``: saves and restores the adapter's weights and the
    losses of the updates run so far (so a resumed run's record has every update's), with the
    run's `identity`; a checkpoint of another identity (other data, settings, seed or base in
    the same folder) is refused instead of being continued."""

    def __init__(self, model: Any, identity: dict[str, Any], folder: Path) -> None:
        super().__init__()
        object.__setattr__(self, "peft", model)  # not a submodule: its base is not state
        self.identity, self.folder = identity, folder
        self.losses: list[float] = []

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        from peft import get_peft_model_state_dict

        weights = get_peft_model_state_dict(self.peft)
        return {
            "adapter": {k: v.detach().cpu() for k, v in weights.items()},
            "losses": self.losses,
            "identity": self.identity,
        }

    def load_state_dict(  # type: ignore[override]
        self, state: dict[str, Any], strict: bool = True, assign: bool = False
    ) -> None:
        from peft import set_peft_model_state_dict

        if state["identity"] != self.identity:
            changed = sorted(
                k for k in self.identity if state["identity"].get(k) != self.identity[k]
            )
            raise CheckpointMismatchError(
                f"{self.folder}: its checkpoints belong to a run with other {', '.join(changed)}; "
                "delete the folder to train this run from scratch, or rerun with the old values"
            )
        set_peft_model_state_dict(self.peft, state["adapter"])
        self.losses = list(state["losses"])


def run_identity(
    base: Base, files: Sequence[Path], settings: LoraSettings, seed: int, init: Path | None
) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: everything that shapes the updates (not
    ``checkpoint_every``, which only says when they are saved)."""
    shaping = {k: v for k, v in asdict(settings).items() if k != "checkpoint_every"}
    return {
        "base": base.identity["fingerprint"],
        "data": [sha256_file(path) for path in files],
        "settings": json.loads(json.dumps(shaping)),
        "seed": seed,
        "init_adapter": sha256_file(init / adapter.WEIGHTS) if init else None,
    }


def labelled(rows: Sequence[Row]) -> int:
    """Tokens the loss covers in `rows` (a first token is never predicted)."""
    return sum(sum(label != IGNORE for label in labels[1:]) for _, labels in rows)


def drop_stale(folder: Path, identity: dict[str, Any], log: Callable[[str], object]) -> None:
    """Empty `folder` of checkpoints made by a run of another identity: a workflow rerun of a
    run whose settings or data changed trains it anew instead of stopping at the refusal."""
    latest = Checkpoints(folder).load_latest()
    if latest is not None and latest["model"].get("identity") != identity:
        log(f"{folder}: checkpoints of a run with other settings or data: training anew")
        shutil.rmtree(folder)


def run(
    base_name: str | Path,
    train_files: Sequence[Path],
    settings: LoraSettings,
    out: Path,
    seed: int,
    threads: int,
    init_adapter: Path | None = None,
    log: Callable[[str], object] = print,
    on_stale: str = "refuse",
) -> dict[str, Any]:
    """Train (or resume) the adapter of `out`: writes ``adapter/`` (PEFT's folder with
    ``base.json``) and then ``train.json``, the run's record, which it returns. Checkpoints in
    `out` of a run with other settings or data are refused (`on_stale` "refuse": a run by hand
    into the wrong folder) or removed first ("restart": the workflow's reruns)."""
    if on_stale not in ON_STALE:
        raise MlrepError(f"on_stale {on_stale!r}: one of {', '.join(ON_STALE)}")
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    base = load_base(base_name, settings.precision)
    rows, counts = examples.load(
        base.tokenizer, train_files, settings.max_input_tokens, settings.max_output_tokens
    )
    if init_adapter is None:
        model = adapter.attach(
            base, settings.r, settings.alpha, settings.dropout, settings.target_modules
        )
    else:
        model = adapter.load(init_adapter, base, trainable=True)
    model.train()
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=settings.lr,
        weight_decay=settings.weight_decay,
    )
    per_update = settings.batch_size * settings.grad_accum
    total = settings.epochs * schedule.updates_per_epoch(len(rows), per_update)
    warmup = schedule.warmup_steps(total, settings.warmup_ratio)
    identity = run_identity(base, train_files, settings, seed, init_adapter)
    if on_stale == "restart":
        drop_stale(out / CHECKPOINT_DIR, identity, log)
    state = AdapterState(model, identity, out / CHECKPOINT_DIR)
    elapsed: list[float] = []

    def update(step: int) -> float:
        began = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = schedule.linear_lr(settings.lr, step, total, warmup)
        chosen = [rows[i] for i in schedule.update_rows(len(rows), per_update, seed, step)]
        tokens = labelled(chosen)
        optimizer.zero_grad()
        summed = 0.0
        for start in range(0, len(chosen), settings.batch_size):
            part = collate(chosen[start : start + settings.batch_size], base.pad_id, base.device)
            loss, _ = summed_loss(model, part)
            (loss / tokens).backward()
            summed += loss.item()
        optimizer.step()
        state.losses.append(summed / tokens)
        elapsed.append(time.perf_counter() - began)
        return state.losses[-1]

    train(
        model=state,
        optimizer=optimizer,
        update=update,
        total_updates=total,
        checkpoint_every=settings.checkpoint_every,
        checkpoints=Checkpoints(out / CHECKPOINT_DIR, keep=2),
        log=log,
    )
    if not all(math.isfinite(value) for value in state.losses):
        raise MlrepError(f"{out}: the LoRA loss diverged (lr {settings.lr}); lower --lr")
    adapter.save(model, base, out / ADAPTER_DIR)
    tail = state.losses[-max(1, len(state.losses) // 10) :]
    summary = {
        "base": base.identity,
        "init_adapter": str(init_adapter) if init_adapter else None,
        "settings": asdict(settings),
        "seed": seed,
        "device": base.device,
        "examples": {"kept": len(rows), "files": counts},
        "updates": total,
        "warmup_updates": warmup,
        "examples_per_update": per_update,
        "parameters": adapter.trainable_parameters(model),
        "final_loss": statistics.fmean(tail),
        # the updates this process ran (a resumed run times only its own)
        "sec_per_update": statistics.fmean(elapsed) if elapsed else None,
        "losses": state.losses,
    }
    atomic_write_text(out / SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return summary
