"""Distil a frozen teacher into a `Student` (LEALLA, thesis §3.3) under the checkpoint contract.

The loss is α·AMS + β·FD + γ·LD (Eq. 3.5) over the terms `DistillConfig.loss` names, plus
the two feature-distillation patterns of Appendix A.1:

- ``fd``: a training-only dense head f (dim → D_t) maps the student's vector to the teacher's
  width and regresses the teacher's vector (Eq. 3.3);
- ``df`` ("distillation first"): the student's pooled vector is widened to D_t, regressed
  there, and a dense layer D_t → dim gives the embedding AMS and evaluation use;
- ``syn`` ("synchronised"): the teacher's vector is projected to the student's width by the
  frozen dense layer of dimension reduction (`mlrep.embed.reduce`) and regressed there;
- ``ld``: the teacher's and the student's in-batch cosine matrices, each over T, matched by
  mean squared error (Eq. 3.4).

The teacher's vectors come from its cache (`mlrep.embed.teacher`), so a step costs only the
student. AMS's in-batch negatives are every process's ``batch_size`` pairs when a process group
runs (`mlrep.train.distributed.gather_processes`, as LaBSE's devices share theirs), and the
process's own batch otherwise. A batch too large for the device's activations runs by
gradient caching (`mlrep.train.grad_cache`, ``chunk_size`` rows of the student at a time): the
loss and its gradients are still those of the whole batch. Batches, learning rate and dropout
are functions of (seed, step), as in `mlrep.embed.train`, so a resumed run is bit-identical.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict
from pathlib import Path

import torch
from torch import nn

from mlrep.device import visible
from mlrep.embed import objectives, reduce
from mlrep.embed.data import PairArrays
from mlrep.embed.settings import DistillConfig, DistillTrainSettings, EmsConfigError, StudentConfig
from mlrep.embed.student import Student, parameter_counts
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
from mlrep.io import atomic_write_text
from mlrep.train import grad_cache
from mlrep.train.checkpoint import Checkpoints
from mlrep.train.distributed import gather_processes

TERMS = ("loss", "ams", "fd", "df", "syn", "ld")


class DistillModel(nn.Module):
    """A student and the training-only heads its loss needs; `embed` is what is evaluated."""

    def __init__(self, student: StudentConfig, objective: DistillConfig) -> None:
        super().__init__()
        self.objective = objective
        self.student = Student(student)
        terms, dim, wide = objective.terms, student.dim, objective.teacher_dim
        self.fd = nn.Linear(dim, wide) if "fd" in terms else None
        self.widen = nn.Linear(dim, wide) if "df" in terms else None
        self.narrow = nn.Linear(wide, dim) if "df" in terms else None
        if "syn" in terms:  # frozen: buffers, saved with the model but never trained
            self.register_buffer("syn_weight", torch.zeros(dim, wide))
            self.register_buffer("syn_bias", torch.zeros(dim))

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        pooled = self.student(tokens)
        return pooled if self.narrow is None else self.narrow(self.widen(pooled))

    def loss_terms(
        self, src: torch.Tensor, tgt: torch.Tensor, t_src: torch.Tensor, t_tgt: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """Each term of the objective for a batch of pairs and its weighted sum ``loss``."""
        return self.head_terms(self.student(src), self.student(tgt), t_src, t_tgt)

    def head_terms(
        self, src: torch.Tensor, tgt: torch.Tensor, t_src: torch.Tensor, t_tgt: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """`loss_terms` from the student's pooled vectors of the pairs: the part of the loss
        gradient caching (`mlrep.train.grad_cache`) runs once over the whole batch."""
        config = self.objective
        pooled = src, tgt
        if self.widen is not None:
            wide = self.widen(pooled[0]), self.widen(pooled[1])
            x, y = self.narrow(wide[0]), self.narrow(wide[1])
        else:
            x, y = pooled
        terms: dict[str, torch.Tensor] = {}
        if "ams" in config.terms:
            terms["ams"] = objectives.ams(x, y, config.temperature, config.margin, gather_processes)
        if self.fd is not None:
            terms["fd"] = objectives.feature_distillation(
                t_src, self.fd(x)
            ) + objectives.feature_distillation(t_tgt, self.fd(y))
        if self.widen is not None:
            terms["df"] = objectives.feature_distillation(
                t_src, wide[0]
            ) + objectives.feature_distillation(t_tgt, wide[1])
        if "syn" in config.terms:
            project = lambda t: t @ self.syn_weight.T + self.syn_bias  # noqa: E731
            terms["syn"] = objectives.feature_distillation(
                project(t_src), x
            ) + objectives.feature_distillation(project(t_tgt), y)
        if "ld" in config.terms:
            terms["ld"] = objectives.logit_distillation(
                (t_src, t_tgt), (x, y), config.ld_temperature
            )
        weights = {"ams": config.alpha, "fd": config.beta, "df": config.beta}
        weights |= {"syn": config.beta, "ld": config.gamma}
        terms["loss"] = sum(weights[name] * value for name, value in terms.items())
        return terms


def run(
    student: StudentConfig,
    objective: DistillConfig,
    settings: DistillTrainSettings,
    pairs: PairArrays,
    teacher: TeacherPairs,
    out: Path,
    projection: Path | None = None,
    log=print,
) -> dict:
    """Train (or resume) a student into `out`: ``model.pt``, ``train.json``, ``loss.tsv``.

    `teacher` holds the cached teacher vectors of `pairs`' rows; `projection` is the
    dimension-reduction layer (``model.pt`` of `reduce.run`) the ``syn`` loss needs.
    """
    teacher.check(len(pairs), "distillation")
    if teacher.dim != objective.teacher_dim:
        raise EmsConfigError(
            f"teacher_dim {objective.teacher_dim} but the cached teacher vectors are "
            f"{teacher.dim}-d; set teacher_dim from the cache"
        )
    if settings.gpus != 1:
        raise EmsConfigError(
            f"gpus {settings.gpus}: distillation runs in one process, so batch_size is already "
            "the global batch (the thesis's 8 GPUs × 1,024 pairs is batch_size 8192, fitted on "
            "one device by chunk_size); set gpus: 1 and the whole batch in batch_size"
        )
    devices = visible()
    seed_everything(settings.seed, settings.threads, devices.device)
    model = DistillModel(student, objective)
    if "syn" in objective.terms:
        if projection is None:
            raise EmsConfigError("loss ams+syn needs the dimension-reduction layer (projection)")
        weight, bias = reduce.load_projection(projection, objective.teacher_dim, student.dim)
        model.syn_weight.copy_(weight)
        model.syn_bias.copy_(bias)
    model.to(devices.device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    checkpoints = Checkpoints(out / "checkpoints", keep=2)
    schedule = Schedule(len(pairs), settings.batch_size, settings.seed)
    curve = out / CURVE_FILE
    out.mkdir(parents=True, exist_ok=True)
    resume_curve(curve, max(checkpoints.steps(), default=0), TERMS)
    elapsed: list[float] = []

    def update(step: int) -> float:
        began = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(settings, step)
        optimizer.zero_grad()
        rows = schedule.rows(step)
        batch = pairs.batch(rows, devices.device)
        t_src = torch.from_numpy(teacher.src[rows]).to(devices.device)
        t_tgt = torch.from_numpy(teacher.tgt[rows]).to(devices.device)
        if 0 < settings.chunk_size < len(rows):
            terms = {}

            def loss(pooled: list[torch.Tensor]) -> torch.Tensor:
                terms.update(model.head_terms(*pooled, t_src, t_tgt))
                return terms["loss"]

            grad_cache.backward(model.student, (batch.src, batch.tgt), loss, settings.chunk_size)
        else:
            terms = model.loss_terms(batch.src, batch.tgt, t_src, t_tgt)
            terms["loss"].backward()
        optimizer.step()
        elapsed.append(time.perf_counter() - began)
        values = [terms[t].item() if t in terms else float("nan") for t in TERMS]
        with open(curve, "a", encoding="utf-8") as handle:
            handle.write("\t".join([str(step), *(f"{v:.6g}" for v in values)]) + "\n")
        return values[0]

    model.train()
    train_steps(model, optimizer, update, settings, checkpoints, log)
    save_weights(out / MODEL_FILE, model, student=student.as_dict(), objective=asdict(objective))
    losses = [float(line.split("\t")[1]) for line in curve.read_text().splitlines()[1:]]
    seconds = statistics.fmean(elapsed) if elapsed else None
    summary = {
        "steps": settings.steps,
        "final_loss": statistics.fmean(losses[-max(1, len(losses) // 10) :]),
        "sec_per_1k_steps": 1000 * seconds if seconds else None,
        # two sentences per pair, as the thesis counts its batch
        "sentences_per_second": 2 * len(schedule.rows(1)) / seconds if seconds else None,
        **parameter_counts(model.student.bert),
    }
    atomic_write_text(out / SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return summary


def load_model(path: Path) -> DistillModel:
    """A trained student (and its heads) from ``model.pt``, in inference mode."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    model = DistillModel(StudentConfig(**saved["student"]), DistillConfig(**saved["objective"]))
    model.load_state_dict(saved["state"])
    return model.eval()


def losses(folder: Path, term: str = "loss") -> list[float]:
    """One term of every update, in update order, from a run's ``loss.tsv``."""
    lines = (folder / CURVE_FILE).read_text(encoding="utf-8").splitlines()
    column = lines[0].split("\t").index(term)
    return [float(line.split("\t")[column]) for line in lines[1:]]
