"""Fine-tune a Hugging Face encoder with OneAligner's objective (Niu et al. 2022, §2.4) under
the checkpoint contract (`mlrep.train.checkpoint`).

Each update takes ``batch_size`` aligned pairs, scores every source against every target with
BERT-score on raw dot products of one hidden layer's token states, normalises the matrix and
contrasts each positive with every off-diagonal score (`bertscore.training_loss`). The paper
names only the learning rate; AdamW with a linear decay to 0 and no warm-up is the default
reading. Batches are a function of (seed, update) (`mlrep.embed.train.Schedule`), the learning
rate of the update and dropout of the restored RNG state, so a resumed run is bit-identical to
one that never stopped. The result is a ``save_pretrained`` folder (model + tokenizer) that
`mlrep.embed.hf_encoder.load` and ``AutoModel.from_pretrained`` read, plus ``train.json``
and the loss curve ``loss.tsv``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import torch

from mlrep.device import visible
from mlrep.embed import bertscore, hf_encoder
from mlrep.embed.align_data import Examples
from mlrep.embed.settings import AlignFinetuneSettings, EmsConfigError
from mlrep.embed.train import CURVE_FILE, SUMMARY_FILE, Schedule, resume_curve, seed_everything
from mlrep.io import atomic_directory, atomic_write_text
from mlrep.train.checkpoint import Checkpoints, train

CHECKPOINTS = "checkpoints"  # beside the output folder: `out` itself is replaced at the end


def total_steps(settings: AlignFinetuneSettings, examples: int) -> int:
    """Updates of `epochs` passes of full batches (a last partial batch is dropped)."""
    return settings.epochs * max(1, examples // min(settings.batch_size, examples))


def learning_rate(settings: AlignFinetuneSettings, step: int, total: int) -> float:
    """Linear decay from ``lr`` at update 1 to 0 after the last."""
    return settings.lr * (1 - (step - 1) / total)


WORK_SETTINGS = "settings.json"  # what the checkpoints in <out>.work/ were trained with


def _work_for(
    out: Path, settings: AlignFinetuneSettings, examples: int, log: Callable[[str], object]
) -> Path:
    """``<out>.work/``, emptied when its checkpoints were trained with other settings or data
    (a changed learning rate must retrain, not resume to the old run's end)."""
    work = out.parent / f"{out.name}.work"
    trained = {k: v for k, v in asdict(settings).items() if k != "threads"}  # not the result
    wanted = json.dumps({"settings": trained, "examples": examples}, sort_keys=True)
    recorded = work / WORK_SETTINGS
    if work.exists() and (not recorded.is_file() or recorded.read_text() != wanted):
        log(f"{work}: checkpoints of other settings; starting over")
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    atomic_write_text(recorded, wanted)
    return work


def run(
    settings: AlignFinetuneSettings,
    encoder_name: str | Path,
    examples: Examples,
    out: Path,
    counts: dict[str, int],
    log: Callable[[str], object] = print,
) -> dict:
    """Fine-tune the encoder `encoder_name` on `examples` into the folder `out`; return (and
    write) ``train.json``: `counts` (the data steps' numbers), steps, final loss, speed.

    Checkpoints and the loss curve live in ``<out>.work/``, so a rerun resumes there and
    `out` appears whole or not at all."""
    if len(examples) < 2:
        raise EmsConfigError(
            f"{len(examples)} training examples left after filtering: in-batch negatives need "
            "at least 2; raise the budget or choose other pairs"
        )
    device = visible().device
    seed_everything(settings.seed, settings.threads, device)
    encoder = hf_encoder.load(encoder_name, device)
    model = encoder.model
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    work = _work_for(out, settings, len(examples), log)
    checkpoints = Checkpoints(work / CHECKPOINTS, keep=2)
    schedule = Schedule(len(examples), settings.batch_size, settings.seed)
    total = total_steps(settings, len(examples))
    curve = work / CURVE_FILE
    resume_curve(curve, max(checkpoints.steps(), default=0), ("loss",))
    elapsed: list[float] = []

    def side(sentences: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        ids, attention = encoder.tokenize(sentences, settings.max_tokens)
        return encoder.states(ids, attention, settings.layer)

    def update(step: int) -> float:
        began = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(settings, step, total)
        optimizer.zero_grad()
        rows = schedule.rows(step).tolist()
        batch = examples.rows(rows)
        loss = bertscore.training_loss(
            *side(batch.src),
            *side(batch.tgt),
            temperature=settings.temperature,
            alpha=settings.alpha,
        )
        loss.backward()
        optimizer.step()
        elapsed.append(time.perf_counter() - began)
        value = float(loss.detach())
        with open(curve, "a", encoding="utf-8") as handle:
            handle.write(f"{step}\t{value:.6g}\n")
        return value

    model.train()
    train(
        model=model,
        optimizer=optimizer,
        update=update,
        total_updates=total,
        checkpoint_every=settings.checkpoint_every,
        checkpoints=checkpoints,
        log=log,
    )
    curve_losses = losses(out)
    seconds = statistics.fmean(elapsed) if elapsed else None
    summary = {
        **counts,
        "steps": total,
        "final_loss": statistics.fmean(curve_losses[-max(1, len(curve_losses) // 10) :]),
        # two sentences per pair; None when every update ran before a resume
        "sentences_per_second": 2 * len(schedule.rows(1)) / seconds if seconds else None,
    }
    with atomic_directory(out) as staging:
        model.eval().cpu().save_pretrained(staging)
        encoder.tokenizer.save_pretrained(staging)
        atomic_write_text(staging / SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return summary


def losses(out: Path) -> list[float]:
    """The loss of every update, in update order, from the run's ``loss.tsv``."""
    curve = out.parent / f"{out.name}.work" / CURVE_FILE
    return [float(line.split("\t")[1]) for line in curve.read_text().splitlines()[1:]]
