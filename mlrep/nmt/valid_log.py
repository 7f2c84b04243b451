"""The validation log of an NMT run: one row per validation, in the run folder.

fairseq keeps only the best validation loss (in ``checkpoint_last.pt``); learning curves
(Chapter 7's per-epoch loss, Chapter 5's validation retrieval P@1 over training) need every
validation. `mlrep.nmt.train` appends a row to ``valid.jsonl`` after each validation of each
subset with the epoch, the update number, whether the epoch had ended, and every scalar
fairseq reported for that validation, under fairseq's names (``loss``, ``nll_loss``, ``ppl``,
``wpb``, ``bsz``, ``best_loss``), less the wall-clock-dependent ones.

**Extra validation metrics** come the same way: a chapter's criterion (registered in the
``--user-dir`` plugin, `mlrep.nmt.mlrep_fairseq`) that reduces a scalar in its
``reduce_metrics`` (``metrics.log_scalar("p_at_1", correct / total, total)``) and that the
training command selects gets a ``p_at_1`` column; nothing here names it.

Each row is written atomically (the whole small file replaced), so a killed job leaves whole
rows. A preempted run may have validated after its last checkpoint; the resumed run replays
those updates and validates again, and its row replaces every row of the same subset at that
update or later: one row per validation however often the job was stopped.

This module imports no torch, so report and figure code can read the log cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text

VALID_LOG = "valid.jsonl"
# fairseq's validation stats that are not recorded: throughput depends on the machine, and
# the update number is the row's own `updates`
NOT_RECORDED = frozenset({"wps", "wall", "num_updates"})


class ValidLogError(MlrepError):
    """A validation log that is not one JSON object per line."""


def row(
    epoch: int, updates: int, end_of_epoch: bool, subset: str, stats: Mapping[str, Any]
) -> dict[str, Any]:
    """The log row of one validation: where it happened, then fairseq's scalars by name."""
    scalars = {k: float(v) for k, v in stats.items() if k not in NOT_RECORDED}
    where = {"epoch": epoch, "updates": updates, "end_of_epoch": end_of_epoch, "subset": subset}
    return where | scalars


def read(path: Path) -> list[dict[str, Any]]:
    """The rows of a validation log, in order (none when the run has not validated yet)."""
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValidLogError(f"{path}:{number}: not a JSON row ({error})") from error
    return rows


def append(path: Path, new: dict[str, Any]) -> None:
    """Add `new`, replacing the rows of its subset at its update or later (a resumed run
    replaying what its checkpoint did not keep), atomically."""
    kept = [r for r in read(path) if r["subset"] != new["subset"] or r["updates"] < new["updates"]]
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in (*kept, new)))


def epoch_nmt_losses(rows: list[dict[str, Any]], subset: str = "valid") -> dict[int, float]:
    """The NMT loss of each end-of-epoch validation of `subset`, by epoch: the criterion's
    ``nmt_loss`` where it logs one beside a total (the interlingua's L_NMT, apart from its
    L_IA and L_LP), fairseq's ``loss`` otherwise (label-smoothed cross-entropy is all of it),
    so curves of both kinds of model read one quantity (Chapter 7's Fig. 7.3)."""
    return {
        int(r["epoch"]): float(r.get("nmt_loss", r["loss"]))
        for r in rows
        if r["subset"] == subset and r["end_of_epoch"]
    }


CURVES = ("nmt_loss", "sent_p_at_1", "word_p_at_1")  # what `curves` keeps of each validation


def curves(rows: list[dict[str, Any]], subset: str = "valid") -> dict[str, float]:
    """Every validation of `subset` in order, k = 1, 2, …: ``valid<k>_updates`` (when it
    ran), ``valid<k>_nmt_loss`` (as `epoch_nmt_losses` reads it) and the in-batch retrieval
    P@1 the contrastive criterion logs (``valid<k>_sent_p_at_1``, ``valid<k>_word_p_at_1``)
    where the run has them: Chapter 5's Figure 5.1 plots them against training."""
    out: dict[str, float] = {}
    for k, r in enumerate((r for r in rows if r["subset"] == subset), 1):
        values = {"updates": r["updates"], "nmt_loss": r.get("nmt_loss", r["loss"])}
        values |= {name: r[name] for name in CURVES[1:] if name in r}
        out |= {f"valid{k}_{name}": float(v) for name, v in values.items()}
    return out
