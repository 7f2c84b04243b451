"""The validation log: one row per validation, extra metrics by name, no duplicates after a
resume. The real fairseq runs that write it are in test_nmt_train.py."""

from __future__ import annotations

from types import SimpleNamespace

import fairseq_cli.train as fairseq_train

from mlrep.nmt import valid_log
from mlrep.nmt.train import _logging_validations

STATS = {"loss": 9.66, "nll_loss": 9.5, "ppl": 724.0, "wps": 1234.5, "num_updates": 4}


def test_a_row_keeps_fairseqs_scalars_by_name_but_not_throughput():
    row = valid_log.row(1, 4, False, "valid", STATS | {"p_at_1": 0.25})
    assert row == {
        "epoch": 1,
        "updates": 4,
        "end_of_epoch": False,
        "subset": "valid",
        "loss": 9.66,
        "nll_loss": 9.5,
        "ppl": 724.0,
        "p_at_1": 0.25,
    }


def test_a_replayed_validation_replaces_the_rows_its_checkpoint_did_not_keep(tmp_path):
    """Killed after validating at 12 but before saving: the resumed run (from 8) validates
    at 12 again; one row per update remains, the new one, and other subsets are untouched."""
    path = tmp_path / valid_log.VALID_LOG
    for updates, loss in ((4, 9.0), (8, 8.5), (12, 8.0)):
        valid_log.append(path, valid_log.row(1, updates, False, "valid", {"loss": loss}))
    valid_log.append(path, valid_log.row(1, 12, False, "valid2", {"loss": 7.0}))
    valid_log.append(path, valid_log.row(1, 12, False, "valid", {"loss": 7.9}))
    rows = valid_log.read(path)
    assert [(r["subset"], r["updates"], r["loss"]) for r in rows] == [
        ("valid", 4, 9.0),
        ("valid", 8, 8.5),
        ("valid2", 12, 7.0),
        ("valid", 12, 7.9),
    ]


def _fake_validation(extra: dict[str, float]):
    """fairseq's validate in miniature: per subset, `get_valid_stats` (looked up on the
    module, as fairseq does), then a task's post_validate adding a metric to the same stats."""

    def validate(cfg, trainer, task, epoch_itr, subsets):
        losses = []
        for _subset in subsets:
            stats = fairseq_train.get_valid_stats(cfg, trainer, dict(STATS), False)
            stats.update(extra)
            losses.append(stats["loss"])
        return losses

    return validate


def test_the_hook_records_each_subset_with_a_plugged_in_metric(tmp_path):
    cfg = SimpleNamespace(
        checkpoint=SimpleNamespace(save_dir=str(tmp_path), best_checkpoint_metric="loss"),
        distributed_training=SimpleNamespace(distributed_rank=0),
    )
    trainer = SimpleNamespace(get_num_updates=lambda: 8)
    epoch_itr = SimpleNamespace(epoch=2, end_of_epoch=lambda: True)
    validate = _logging_validations(_fake_validation({"p_at_1": 0.5}))
    assert validate(cfg, trainer, None, epoch_itr, ["valid", "valid1"]) == [9.66, 9.66]
    rows = valid_log.read(tmp_path / valid_log.VALID_LOG)
    assert [(r["subset"], r["epoch"], r["updates"], r["end_of_epoch"]) for r in rows] == [
        ("valid", 2, 8, True),
        ("valid1", 2, 8, True),
    ]
    assert all(r["p_at_1"] == 0.5 and r["loss"] == 9.66 for r in rows)
    # another rank validates too but leaves the log to the first
    cfg.distributed_training.distributed_rank = 1
    trainer.get_num_updates = lambda: 12
    validate(cfg, trainer, None, epoch_itr, ["valid"])
    assert len(valid_log.read(tmp_path / valid_log.VALID_LOG)) == 2


def test_epoch_nmt_losses_read_each_epochs_end_and_prefer_the_criterions_nmt_loss() -> None:
    rows = [
        valid_log.row(1, 50, False, "valid", {"loss": 9.0}),
        valid_log.row(1, 80, True, "valid", {"loss": 8.0}),
        valid_log.row(2, 160, True, "valid", {"loss": 7.5, "nmt_loss": 6.0}),
        valid_log.row(2, 160, True, "test", {"loss": 1.0}),
    ]
    assert valid_log.epoch_nmt_losses(rows) == {1: 8.0, 2: 6.0}


def test_curves_keep_every_validation_of_the_subset_in_order() -> None:
    """Figure 5.1: each validation's update, NMT loss and the criterion's retrieval P@1, mid-
    epoch ones included; another subset's rows and absent columns stay out."""
    rows = [
        valid_log.row(1, 40, False, "valid", {"loss": 9.0, "nmt_loss": 8.0, "sent_p_at_1": 5.0}),
        valid_log.row(1, 55, True, "valid", {"loss": 7.5, "sent_p_at_1": 9.0}),
        valid_log.row(1, 55, True, "test", {"loss": 1.0, "sent_p_at_1": 99.0}),
        valid_log.row(2, 80, False, "valid", {"loss": 7.0, "nmt_loss": 6.0, "word_p_at_1": 3.0}),
    ]
    assert valid_log.curves(rows) == {
        "valid1_updates": 40.0,
        "valid1_nmt_loss": 8.0,
        "valid1_sent_p_at_1": 5.0,
        "valid2_updates": 55.0,
        "valid2_nmt_loss": 7.5,
        "valid2_sent_p_at_1": 9.0,
        "valid3_updates": 80.0,
        "valid3_nmt_loss": 6.0,
        "valid3_word_p_at_1": 3.0,
    }
