"""fairseq training on the devices a job sees: world size, --update-freq and a stop that every
rank takes together. No training runs here: fairseq's own parser builds the config, and the
process launch is replaced by a recorder."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from fairseq import distributed_utils

from mlrep.device import Devices
from mlrep.nmt import train
from mlrep.nmt.variant import Variant
from tests.nmt_helpers import settings


class _Launched(Exception):
    """Raised by the recorder in place of fairseq's training."""


def launch(monkeypatch, tmp_path: Path, gpus_visible: int, run: train.TrainSettings) -> dict:
    """The fairseq config `train` would start on `gpus_visible` GPUs, and how it starts it."""
    seen = {}

    def call_main(cfg, main, **kwargs):
        seen.update(cfg=cfg, main=main, kwargs=kwargs)
        raise _Launched

    monkeypatch.setattr(train, "visible", lambda: Devices(gpus_visible))
    monkeypatch.setattr(distributed_utils, "call_main", call_main)
    # process-wide torch settings a real training makes: not for the test process
    monkeypatch.setattr(torch, "use_deterministic_algorithms", lambda *a, **k: None)
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)
    with pytest.raises(_Launched):
        train.train(tmp_path / "bin", tmp_path / "out", "postnorm", Variant(), run)
    return seen


@pytest.mark.parametrize(
    ("visible", "thesis", "world_size", "update_freq", "max_tokens"),
    [
        (4, 4, 4, 1, 4096),  # Transformer-base as the thesis trained it
        (1, 4, 1, 4, 4096),  # one GPU: four accumulated batches per update
        (2, 8, 2, 4, 4096),  # Transformer-big on two GPUs
        (0, 8, 1, 8, 4096),  # the CPU
    ],
)
def test_training_spans_the_visible_gpus_and_accumulates_for_missing_ones(
    monkeypatch, tmp_path, visible, thesis, world_size, update_freq, max_tokens
):
    run = replace(settings(), gpus=thesis, max_tokens=4096, threads=8)
    seen = launch(monkeypatch, tmp_path, visible, run)
    cfg = seen["cfg"]
    assert seen["kwargs"] == {"threads": 8 // world_size}  # the job's threads, shared
    assert cfg.distributed_training.distributed_world_size == world_size
    assert list(cfg.optimization.update_freq) == [update_freq]
    assert cfg.dataset.max_tokens == max_tokens
    assert cfg.common.cpu == (visible == 0)
    method = cfg.distributed_training.distributed_init_method
    # ranks meet on a local port of their own, never through SLURM's variables
    assert (method or "").startswith("tcp://localhost:") == (world_size > 1)


def test_tiny_scale_trains_as_before_on_the_cpu(monkeypatch, tmp_path):
    seen = launch(monkeypatch, tmp_path, 0, settings())
    cfg = seen["cfg"]
    assert list(cfg.optimization.update_freq) == [1] and cfg.dataset.max_tokens == 512
    assert seen["main"] is train._rank_main and seen["kwargs"] == {"threads": 1}


def _trainer(world_size: int) -> SimpleNamespace:
    return SimpleNamespace(
        device=torch.device("cpu"),
        data_parallel_world_size=world_size,
        data_parallel_process_group=None,
    )


def _stop_time(world_size: int, received: list[str], monkeypatch, other_rank_stops=False) -> float:
    """fairseq's stop_time_hours after one wrapped validate_and_save on this rank."""
    cfg = SimpleNamespace(optimization=SimpleNamespace(stop_time_hours=0.0))

    def all_reduce(tensor, group, op="sum"):  # the other rank's flag, summed in
        return tensor + float(other_rank_stops)

    monkeypatch.setattr(distributed_utils, "all_reduce", all_reduce)
    monkeypatch.setattr(train, "_received", received)
    wrapped = train._stop_together(lambda cfg, trainer, *a, **k: ([None], False))
    wrapped(cfg, _trainer(world_size), "task", "itr", ["valid"], False)
    return cfg.optimization.stop_time_hours


def test_a_signal_to_any_rank_stops_every_rank(monkeypatch):
    assert _stop_time(1, [], monkeypatch) == 0.0
    assert _stop_time(1, ["SIGUSR1"], monkeypatch) > 0
    assert _stop_time(2, [], monkeypatch) == 0.0
    # this rank got nothing, another did: it stops (and saves) at the same update
    assert _stop_time(2, [], monkeypatch, other_rank_stops=True) > 0


def test_the_parent_records_a_signal_and_passes_it_to_its_ranks(monkeypatch):
    killed = []
    monkeypatch.setattr(train, "_received", [])
    monkeypatch.setattr(
        train.multiprocessing, "active_children", lambda: [SimpleNamespace(pid=12345)]
    )
    monkeypatch.setattr(train.os, "kill", lambda pid, signum: killed.append((pid, signum)))
    with train._recording_signals() as received:
        signal.raise_signal(signal.SIGUSR1)
    assert received == ["SIGUSR1"] and killed == [(12345, signal.SIGUSR1)]
    assert signal.getsignal(signal.SIGUSR1) is not train._record
    assert os.getpid()  # the test process itself survived the signal
