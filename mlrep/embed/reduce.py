"""Dimension reduction of a frozen teacher (LEALLA §3.2.2, Fig. 3.1, Table A.2).

One trainable dense layer D_t → d on top of the frozen teacher, trained with AMS, tells how
small the embedding can be before parallel-sentence retrieval suffers. The teacher is frozen,
so it reads the teacher's cached vectors (`mlrep.embed.teacher`): a ladder of widths trains
in seconds each. The trained layer is also the fixed projection of the ``syn`` distillation
loss (`mlrep.embed.distill`). Training follows the checkpoint contract, batches a function of
(seed, step), like every trainer of the project.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import torch
from torch import nn

from mlrep.device import visible
from mlrep.embed import objectives
from mlrep.embed.baselines import Encode
from mlrep.embed.settings import EmsConfigError, ReduceSettings, TrainSettings
from mlrep.embed.teacher import TeacherPairs
from mlrep.embed.train import (
    CURVE_FILE,
    MODEL_FILE,
    SUMMARY_FILE,
    Schedule,
    learning_rate,
    resume_curve,
    save_weights,
    seed_everything,
    train_steps,
)
from mlrep.evaluate import retrieval
from mlrep.io import atomic_write_text
from mlrep.report.metrics import Scores
from mlrep.train.checkpoint import Checkpoints


def check_ladder(dims: tuple[int, ...], teacher_dim: int) -> tuple[int, ...]:
    """The widths of the ladder, each below the teacher's (a reduction, not an expansion)."""
    wide = [d for d in dims if d >= teacher_dim]
    if wide or not dims:
        raise EmsConfigError(
            f"dims {list(dims)}: give widths below the teacher's {teacher_dim} ({wide} are not)"
        )
    return tuple(dims)


def run(
    teacher: TeacherPairs,
    dim: int,
    settings: TrainSettings,
    margin: float,
    temperature: float,
    out: Path,
    log=print,
) -> dict:
    """Train the dense layer teacher_dim → `dim` with AMS on the cached pairs into `out`:
    ``model.pt`` (``weight``, ``bias``), ``train.json``, ``loss.tsv``."""
    check_ladder((dim,), teacher.dim)
    device = visible().device
    seed_everything(settings.seed, settings.threads, device)
    layer = nn.Linear(teacher.dim, dim).to(device)
    optimizer = torch.optim.AdamW(
        layer.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    checkpoints = Checkpoints(out / "checkpoints", keep=2)
    schedule = Schedule(len(teacher), settings.batch_size, settings.seed)
    curve = out / CURVE_FILE
    out.mkdir(parents=True, exist_ok=True)
    resume_curve(curve, max(checkpoints.steps(), default=0), ("loss",))

    def update(step: int) -> float:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(settings, step)
        optimizer.zero_grad()
        rows = schedule.rows(step)
        x = layer(torch.from_numpy(teacher.src[rows]).to(device))
        y = layer(torch.from_numpy(teacher.tgt[rows]).to(device))
        loss = objectives.ams(x, y, temperature, margin)
        loss.backward()
        optimizer.step()
        with open(curve, "a", encoding="utf-8") as handle:
            handle.write(f"{step}\t{loss.item():.6g}\n")
        return loss.item()

    train_steps(layer, optimizer, update, settings, checkpoints, log)
    save_weights(out / MODEL_FILE, layer)
    losses = [float(line.split("\t")[1]) for line in curve.read_text().splitlines()[1:]]
    summary = {
        "steps": settings.steps,
        "dim": dim,
        "final_loss": statistics.fmean(losses[-max(1, len(losses) // 10) :]),
        "parameters": sum(p.numel() for p in layer.parameters()),
    }
    atomic_write_text(out / SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return summary


def load_projection(path: Path, teacher_dim: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight, bias) of a trained layer, refused unless it maps `teacher_dim` → `dim`."""
    if not path.exists():
        raise EmsConfigError(f"{path} not found: train the {dim}-d dimension reduction first")
    state = torch.load(path, map_location="cpu", weights_only=True)["state"]
    if tuple(state["weight"].shape) != (dim, teacher_dim):
        raise EmsConfigError(
            f"{path}: maps {state['weight'].shape[1]} → {state['weight'].shape[0]}, but "
            f"{teacher_dim} → {dim} is needed; use the reduction of width {dim}"
        )
    return state["weight"], state["bias"]


def project(vectors: np.ndarray, weight: torch.Tensor, bias: torch.Tensor) -> np.ndarray:
    """The reduced embeddings of teacher vectors."""
    with torch.no_grad():
        return (torch.from_numpy(np.asarray(vectors)) @ weight.T + bias).numpy()


def project_pairs(teacher: TeacherPairs, weight: torch.Tensor, bias: torch.Tensor) -> TeacherPairs:
    """Both sides of cached teacher pairs through the layer."""
    return TeacherPairs(project(teacher.src, weight, bias), project(teacher.tgt, weight, bias))


def encoder(encode: Encode, weight: torch.Tensor, bias: torch.Tensor) -> Encode:
    """The reduced teacher as an encoder of text, for the benchmarks' protocols (Tatoeba,
    mining): the teacher's vectors through the trained layer."""
    return lambda sentences: project(encode(sentences), weight, bias)


def heldout(teacher: TeacherPairs, weight: torch.Tensor | None, bias=None) -> Scores:
    """``heldout_avg``: P@1 of the held-out pairs (both directions, cosine) through the layer;
    `weight` None scores the teacher's own vectors (the full-width row)."""
    if weight is not None:
        teacher = project_pairs(teacher, weight, bias)
    r = retrieval.evaluate(np.ascontiguousarray(teacher.tgt), np.ascontiguousarray(teacher.src))
    scores = Scores()
    scores.add("heldout_avg", r["p_at_1"], r["chance"], r["hits"])
    return scores


def run_ladder(
    teacher: TeacherPairs,
    heldout_pairs: TeacherPairs,
    ladder: ReduceSettings,
    settings: TrainSettings,
    margin: float,
    temperature: float,
    out: Path,
    log=print,
) -> dict[int, Scores]:
    """Every width of the ladder in one process (each trains in seconds, so start-up would
    dominate one process per width): ``out/<dim>/`` as `run` writes it, and each width's
    held-out scores; a width already trained resumes from its checkpoint and is not redone."""
    scores = {}
    for dim in check_ladder(ladder.dims, teacher.dim):
        run(teacher, dim, settings, margin, temperature, out / str(dim), log)
        weight, bias = load_projection(out / str(dim) / MODEL_FILE, teacher.dim, dim)
        scores[dim] = heldout(heldout_pairs, weight, bias)
    return scores
