import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from mlrep.train.checkpoint import Checkpoints, stop_on_signals
from mlrep.train.signals import EXIT_PREEMPTED, STOP_SIGNALS, leave_stop_signals_to_trainers
from tests.conftest import REPO


def test_save_keeps_the_newest_and_ignores_partial_files(tmp_path):
    ckpt = Checkpoints(tmp_path, keep=2)
    for step in (5, 10, 15):
        ckpt.save(step, {"step": step})
    # what a save killed mid-write leaves (mlrep.io.atomic_file names its temporary file
    # ".<name>.<random>.partial"), and a name that only an unanchored pattern would take
    (tmp_path / f".{ckpt.path(20).name}.k2x9a.partial").write_bytes(b"half a checkpoint")
    (tmp_path / f"{ckpt.path(20).name}.partial").write_bytes(b"half a checkpoint")
    assert ckpt.steps() == [10, 15]
    assert ckpt.load_latest() == {"step": 15}


# A child process that saves step 5, then dies (SIGKILL from the test) halfway through writing
# step 10: torch.save writes the first half of its bytes, syncs them and waits to be killed.
_KILLED_MID_SAVE = """
import io, os, sys, time
from pathlib import Path
import torch
from mlrep.train import checkpoint

folder = Path(sys.argv[1])
ckpt = checkpoint.Checkpoints(folder, keep=1)
ckpt.save(5, {"step": 5, "model": torch.arange(1000.0)})

real_save = torch.save

def half_then_hang(payload, handle):
    buffer = io.BytesIO()
    real_save(payload, buffer)
    handle.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    handle.flush()
    os.fsync(handle.fileno())
    print("half written", flush=True)
    time.sleep(120)

checkpoint.torch.save = half_then_hang
ckpt.save(10, {"step": 10, "model": torch.zeros(1000)})
"""


def test_a_save_killed_mid_write_leaves_the_previous_checkpoint_loadable(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_SAVE, str(tmp_path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline() == "half written\n"
    finally:
        proc.kill()
        proc.wait(timeout=60)
    # the half-written file is there, under a name no loader takes
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "step-000000005.pt"]
    assert len(leftovers) == 1 and leftovers[0].endswith(".partial")
    assert (tmp_path / leftovers[0]).stat().st_size > 0
    ckpt = Checkpoints(tmp_path, keep=1)
    assert ckpt.steps() == [5]
    state = ckpt.load_latest()
    assert state["step"] == 5 and torch.equal(state["model"], torch.arange(1000.0))
    # the rerun saves over it as usual
    ckpt.save(10, {"step": 10})
    assert ckpt.steps() == [10] and ckpt.load_latest() == {"step": 10}


def test_a_save_that_fails_mid_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    """A write error (disk full) halfway: the error surfaces, nothing half-written remains."""
    ckpt = Checkpoints(tmp_path, keep=1)
    ckpt.save(5, {"step": 5})

    def half_then_fail(payload, handle):
        handle.write(b"the first half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        ckpt.save(10, {"step": 10})
    assert [p.name for p in tmp_path.iterdir()] == ["step-000000005.pt"]
    monkeypatch.undo()
    assert ckpt.steps() == [5] and ckpt.load_latest() == {"step": 5}


def _job(folder: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tests.train_job", str(folder), *extra]


def _final_weights(folder: Path) -> dict[str, torch.Tensor]:
    return Checkpoints(folder).load_latest()["model"]


def _wait_for_checkpoint(folder: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not Checkpoints(folder).steps():
        assert proc.poll() is None, "job ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint in time"
        time.sleep(0.05)


def _assert_same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGTERM])
def test_signal_saves_exits_and_the_rerun_resumes_bit_identically(tmp_path, sig):
    reference = tmp_path / "reference"
    subprocess.run(_job(reference), cwd=REPO, check=True, timeout=120)

    interrupted = tmp_path / "interrupted"
    proc = subprocess.Popen(
        _job(interrupted, "--sleep", "0.2"), cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    _wait_for_checkpoint(interrupted, proc)
    os.kill(proc.pid, sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_PREEMPTED
    stopped_at = Checkpoints(interrupted).steps()[-1]
    assert 5 <= stopped_at < 60 and f"{sig.name} at step {stopped_at}" in out

    rerun = subprocess.run(
        _job(interrupted), cwd=REPO, capture_output=True, text=True, check=True, timeout=120
    )
    assert f"resumed from step {stopped_at}" in rerun.stdout
    assert Checkpoints(interrupted).steps()[-1] == 60
    _assert_same(_final_weights(reference), _final_weights(interrupted))


def test_only_a_slurm_job_step_leaves_the_stop_signals_to_the_trainer():
    saved = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    try:
        assert not leave_stop_signals_to_trainers({})
        assert all(signal.getsignal(s) == saved[s] for s in STOP_SIGNALS)
        assert leave_stop_signals_to_trainers({"SLURM_STEP_ID": "0"})
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in STOP_SIGNALS)
        # a trainer started under "ignore" still hears the signal
        with stop_on_signals() as stop:
            os.kill(os.getpid(), signal.SIGUSR1)
        assert stop.signal == "SIGUSR1"
        assert signal.getsignal(signal.SIGUSR1) == signal.SIG_IGN
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
