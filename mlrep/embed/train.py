"""Train one EMS variant under the checkpoint contract (`mlrep.train.checkpoint`).

The batch of update t is drawn from a permutation seeded by (seed, epoch of t), the learning
rate is a function of t (linear warm-up, then constant: the thesis names no decay) and UGT's
masks come from a generator seeded by (seed, t), so a run resumed from a checkpoint is
bit-identical to one that never stopped. The loss curve goes to ``loss.tsv`` line by line (cut
back to the checkpoint on resume) and the wall time of the updates gives seconds per 1k steps,
the efficiency column of Table 2.14.

The thesis trained on 4 V100s, 152 pairs each, the in-batch negatives of the contrastive loss
being each GPU's own batch, and averaged the four gradients. One process here does the same on
the job's device (`mlrep.device`): each update draws ``gpus`` × ``batch_size`` pairs and
accumulates the gradients of ``gpus`` batches of ``batch_size``, each its own contrastive batch.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from mlrep.device import plan_batch, visible
from mlrep.embed.data import PairArrays
from mlrep.embed.model import EmsModel, count_parameters
from mlrep.embed.settings import EmsConfig, TrainSettings
from mlrep.io import atomic_file, atomic_write_text
from mlrep.train.checkpoint import Checkpoints, train

TERMS = ("loss", "xtr", "cntrs", "mlm")
MODEL_FILE = "model.pt"
SUMMARY_FILE = "train.json"
CURVE_FILE = "loss.tsv"


def seed_everything(seed: int, threads: int, device: str) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(threads)
    # CPU kernels are deterministic; on a GPU a few are not and would raise, so only warn
    torch.use_deterministic_algorithms(True, warn_only=device != "cpu")


class Schedule:
    """Rows of update t: epoch-wise permutations seeded by (seed, epoch), cached per epoch."""

    def __init__(self, size: int, batch_size: int, seed: int) -> None:
        self.size, self.batch_size, self.seed = size, min(batch_size, size), seed
        self._epoch, self._order = -1, np.arange(0)

    def rows(self, step: int) -> np.ndarray:
        per_epoch = self.size // self.batch_size
        epoch, index = divmod(step - 1, per_epoch)
        if epoch != self._epoch:
            self._epoch = epoch
            self._order = np.random.default_rng([self.seed, epoch]).permutation(self.size)
        return self._order[index * self.batch_size : (index + 1) * self.batch_size]


def learning_rate(settings: TrainSettings, step: int) -> float:
    if settings.warmup <= 0:
        return settings.lr
    return settings.lr * min(1.0, step / settings.warmup)


def _step_generator(seed: int, step: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1_000_003 + step)


def resume_curve(path: Path, last_step: int, terms: tuple[str, ...] = TERMS) -> None:
    """Keep the curve's lines up to the checkpoint a resumed run starts from."""
    if not path.exists():
        path.write_text("\t".join(("step", *terms)) + "\n", encoding="utf-8")
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [lines[0], *(line for line in lines[1:] if int(line.split("\t")[0]) <= last_step)]
    atomic_write_text(path, "\n".join(kept) + "\n")


def validation_loss(model: EmsModel, data: PairArrays, batch_size: int, seed: int) -> float:
    """Mean joint loss over the valid pairs in order, dropout off (Table 2.2's criterion)."""
    model.eval()
    device = next(model.parameters()).device
    losses, weights = [], []
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            rows = np.arange(start, min(start + batch_size, len(data)))
            batch = data.batch(rows, device)
            terms = model.loss_terms(batch, _step_generator(seed, -start - 1))
            losses.append(float(terms["loss"]))
            weights.append(len(rows))
    model.train()
    return float(np.average(losses, weights=weights))


def train_steps(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    update: Callable[[int], float],
    settings: TrainSettings,
    checkpoints: Checkpoints,
    log: Callable[[str], object],
) -> None:
    """Every trainer of the area (Chapter 2's encoder, a LEALLA student, a dimension-reduction
    layer) runs `update` for each step up to ``settings.steps`` under the checkpoint contract
    (`mlrep.train.checkpoint`): saved every ``settings.checkpoint_every`` steps, so a rerun
    resumes where the last one stopped."""
    train(
        model=model,
        optimizer=optimizer,
        update=update,
        total_updates=settings.steps,
        checkpoint_every=settings.checkpoint_every,
        checkpoints=checkpoints,
        log=log,
    )


def save_weights(path: Path, model: torch.nn.Module, **meta: object) -> None:
    """The trained weights, on the CPU so a machine without the training device loads them,
    beside `meta` (what rebuilds the model), written atomically: a killed job leaves none."""
    with atomic_file(path) as tmp:
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        torch.save({**meta, "state": state}, tmp)


def run(
    config: EmsConfig,
    settings: TrainSettings,
    data: PairArrays,
    valid: PairArrays | None,
    out: Path,
    log=print,
) -> dict:
    """Train (or resume) into `out`; write ``model.pt``, ``train.json`` and ``loss.tsv``."""
    devices = visible()
    seed_everything(settings.seed, settings.threads, devices.device)
    model = EmsModel(config).to(devices.device)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    checkpoints = Checkpoints(out / "checkpoints", keep=2)
    # one process: the thesis's data-parallel GPUs become accumulated batches
    plan = plan_batch(settings.gpus, settings.batch_size, 1)
    schedule = Schedule(len(data), plan.effective, settings.seed)
    curve = out / CURVE_FILE
    out.mkdir(parents=True, exist_ok=True)
    resume_curve(curve, max(checkpoints.steps(), default=0))
    elapsed: list[float] = []

    def update(step: int) -> float:
        began = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(settings, step)
        optimizer.zero_grad()
        rows = schedule.rows(step)
        parts = [rows[i : i + plan.per_device] for i in range(0, len(rows), plan.per_device)]
        generator = _step_generator(settings.seed, step)
        sums = dict.fromkeys(TERMS, 0.0)
        for part in parts:  # as the thesis's GPUs: each its batch, the gradients averaged
            terms = model.loss_terms(data.batch(part, devices.device), generator)
            (terms["loss"] / len(parts)).backward()
            for t in TERMS:
                sums[t] += terms[t].item() if t in terms else float("nan")
        optimizer.step()
        elapsed.append(time.perf_counter() - began)
        values = [sums[t] / len(parts) for t in TERMS]
        with open(curve, "a", encoding="utf-8") as handle:
            handle.write("\t".join([str(step), *(f"{v:.6f}" for v in values)]) + "\n")
        return values[0]

    model.train()
    train_steps(model, optimizer, update, settings, checkpoints, log)
    save_weights(out / MODEL_FILE, model, config=config.as_dict())
    rows = curve.read_text(encoding="utf-8").splitlines()[1:]
    losses = [float(line.split("\t")[1]) for line in rows]
    tail = losses[-max(1, len(losses) // 10) :]
    summary = {
        "steps": settings.steps,
        "final_loss": statistics.fmean(tail),
        "valid_loss": validation_loss(model, valid, settings.batch_size, settings.seed)
        if valid is not None and len(valid)
        else None,
        # the updates this process ran (a resumed run times only its own), every pass included
        "sec_per_1k_steps": 1000 * statistics.fmean(elapsed) if elapsed else None,
        "gpus_visible": devices.gpus,
        "batch": plan.as_dict(),  # pairs: the thesis's (reference) and this run's (effective)
        "parameters": {
            "encoder": count_parameters(model.encoder),
            "generative_head": count_parameters(model.generative),
            "projection": count_parameters(model.projection),
        },
    }
    atomic_write_text(out / SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return summary


def load_model(path: Path) -> EmsModel:
    """A trained model from ``model.pt``, in inference mode."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    model = EmsModel(EmsConfig(**saved["config"]))
    model.load_state_dict(saved["state"])
    return model.eval()
