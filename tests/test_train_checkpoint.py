import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from mlrep.train.checkpoint import (
    EXIT_PREEMPTED,
    STOP_SIGNALS,
    Checkpoints,
    leave_stop_signals_to_trainers,
    stop_on_signals,
)
from tests.conftest import REPO


def test_save_keeps_the_newest_and_ignores_partial_files(tmp_path):
    ckpt = Checkpoints(tmp_path, keep=2)
    for step in (5, 10, 15):
        ckpt.save(step, {"step": step})
    (tmp_path / ".step-crashed.partial").write_bytes(b"half a checkpoint")
    assert ckpt.steps() == [10, 15]
    assert ckpt.load_latest() == {"step": 15}


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
