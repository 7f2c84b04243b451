"""The checkpoint contract in-process, step by step: the mutants of `mlrep.train.checkpoint` that
benchmarks/mutation.py found surviving the preemption tests (which run the trainer in a
subprocess and see only its end state).

Which updates run, when checkpoints are written and pruned, what a resume restores, what a
stop signal does mid-run, and that the RNG states round-trip.
"""

from __future__ import annotations

import os
import random
import signal

import numpy as np
import pytest
import torch

from mlrep.train.checkpoint import (
    EXIT_PREEMPTED,
    STOP_SIGNALS,
    Checkpoints,
    Preempted,
    StopRequest,
    rng_state,
    set_rng_state,
    stop_on_signals,
    train,
)


def _draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.random()), float(torch.rand(1))


def test_rng_states_round_trip_through_a_checkpoint(tmp_path):
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    Checkpoints(tmp_path).save(1, {"rng": rng_state()})
    first = _draws()
    set_rng_state(Checkpoints(tmp_path).load_latest()["rng"])
    assert _draws() == first
    assert _draws() != first  # the generators moved on: the equality above was no accident


@pytest.fixture
def cuda_generators(monkeypatch) -> list:
    """CUDA's RNG calls on a CPU-only machine: the state is a marker, restores are recorded."""
    restored: list = []
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: ["gpu 0 state"])
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.append)
    return restored


def test_cuda_generators_are_saved_and_restored_where_cuda_is(monkeypatch, cuda_generators):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    state = rng_state()
    assert state["cuda"] == ["gpu 0 state"]
    set_rng_state(state)
    assert cuda_generators == [["gpu 0 state"]]
    # a checkpoint written on a CPU machine resumes on a GPU one: CUDA keeps its own seeding
    set_rng_state({k: v for k, v in state.items() if k != "cuda"})
    assert cuda_generators == [["gpu 0 state"]]


def test_a_gpu_checkpoint_resumes_on_a_cpu_machine(monkeypatch, cuda_generators):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    state = rng_state()
    assert "cuda" not in state
    set_rng_state({**state, "cuda": ["gpu 0 state"]})
    assert cuda_generators == []


def test_file_names_and_the_default_of_two_kept(tmp_path):
    ckpt = Checkpoints(tmp_path)
    assert ckpt.path(7).name == "step-000000007.pt"
    for step in (1, 2, 3):
        assert ckpt.save(step, {"step": step}) == tmp_path / f"step-00000000{step}.pt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000000002.pt", "step-000000003.pt"]


def test_keep_prunes_all_but_the_newest(tmp_path):
    ckpt = Checkpoints(tmp_path, keep=3)
    for step in (10, 20, 30, 40, 50):
        ckpt.save(step, {"step": step})
    assert ckpt.steps() == [30, 40, 50]
    assert ckpt.load_latest() == {"step": 50}


def test_a_folder_not_yet_created_has_no_checkpoints(tmp_path):
    ckpt = Checkpoints(tmp_path / "not-yet")
    assert ckpt.steps() == []
    assert ckpt.load_latest() is None


def test_a_stop_request_is_false_until_a_signal_sets_it():
    request = StopRequest()
    assert not request and request.signal is None
    request.signal = "SIGTERM"
    assert request


@pytest.mark.parametrize("sig", STOP_SIGNALS)
def test_stop_signals_are_caught_in_the_block_and_handlers_restored_after(sig):
    heard = []
    previous = signal.signal(sig, lambda signum, frame: heard.append(signum))
    try:
        with stop_on_signals() as stop:
            os.kill(os.getpid(), sig)
        assert stop.signal == sig.name and not heard
        os.kill(os.getpid(), sig)
        assert heard == [sig]
    finally:
        signal.signal(sig, previous)


class Job:
    """A one-weight model trained with momentum towards a noisy target (so the optimiser and
    RNG states matter); its update records the step, its log keeps the trainer's lines."""

    def __init__(self, stop_at: int | None = None, sig: signal.Signals = signal.SIGUSR1) -> None:
        self.model = torch.nn.Linear(1, 1, bias=False)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.steps: list[int] = []
        self.lines: list[str] = []
        self.stop_at, self.sig = stop_at, sig

    def update(self, step: int) -> float:
        self.steps.append(step)
        self.optimizer.zero_grad()
        target = step + torch.rand(1)
        (self.model(torch.ones(1, 1)) - target).pow(2).sum().backward()
        self.optimizer.step()
        if step == self.stop_at:
            os.kill(os.getpid(), self.sig)
        return step / 4

    def run(self, ckpt: Checkpoints, total: int, every: int) -> int:
        return train(
            model=self.model,
            optimizer=self.optimizer,
            update=self.update,
            total_updates=total,
            checkpoint_every=every,
            checkpoints=ckpt,
            log=self.lines.append,
        )


def test_a_fresh_run_updates_once_per_step_and_checkpoints_every_n_and_at_the_end(tmp_path):
    ckpt = Checkpoints(tmp_path, keep=10)
    job = Job()
    assert job.run(ckpt, total=7, every=3) == 7
    assert job.steps == [1, 2, 3, 4, 5, 6, 7]
    assert ckpt.steps() == [3, 6, 7]
    assert job.lines == ["step 3 loss 0.750000", "step 6 loss 1.500000"]
    state = ckpt.load_latest()
    assert state["step"] == 7
    assert torch.equal(state["model"]["weight"], job.model.weight)
    momentum = job.optimizer.state_dict()["state"][0]["momentum_buffer"]
    assert torch.equal(state["optimizer"]["state"][0]["momentum_buffer"], momentum)


def test_a_resumed_run_ends_bit_identical_to_an_uninterrupted_one(tmp_path):
    torch.manual_seed(0)
    reference = Job()
    reference.run(Checkpoints(tmp_path / "reference"), total=6, every=2)

    ckpt = Checkpoints(tmp_path / "resumed")
    torch.manual_seed(0)
    Job().run(ckpt, total=4, every=2)
    torch.manual_seed(99)  # other initial weights and RNG: the resume must restore both
    resumed = Job()
    assert resumed.run(ckpt, total=6, every=2) == 6
    assert resumed.steps == [5, 6]
    assert resumed.lines[0] == f"resumed from step 4 ({ckpt.path(4)})"
    assert torch.equal(resumed.model.weight, reference.model.weight)


def test_a_run_already_complete_does_no_update(tmp_path):
    ckpt = Checkpoints(tmp_path)
    Job().run(ckpt, total=3, every=3)
    again = Job()
    assert again.run(ckpt, total=3, every=3) == 3
    assert again.steps == []


@pytest.mark.parametrize("sig", STOP_SIGNALS)
def test_a_stop_signal_saves_at_the_next_boundary_and_exits_for_a_rerun(tmp_path, sig):
    ckpt = Checkpoints(tmp_path, keep=10)
    job = Job(stop_at=4, sig=sig)
    with pytest.raises(Preempted) as raised:
        job.run(ckpt, total=20, every=3)
    assert raised.value.code == EXIT_PREEMPTED == 75
    assert (raised.value.step, raised.value.signal_name) == (4, sig.name)
    assert job.steps == [1, 2, 3, 4]
    assert ckpt.steps() == [3, 4]
    assert job.lines[-1] == f"{sig.name} at step 4: checkpoint saved, exiting for a rerun"
