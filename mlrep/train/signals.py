"""The stop signals of the checkpoint contract (`mlrep.train.checkpoint`), free of torch.

The Snakefile applies `leave_stop_signals_to_trainers` on every parse, including the Snakemake
that the SLURM executor starts inside each job step, so this module must import nothing heavy:
torch alone took seconds of every parse.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

EXIT_PREEMPTED = 75  # EX_TEMPFAIL: "try again later"
STOP_SIGNALS = (signal.SIGUSR1, signal.SIGTERM)


def leave_stop_signals_to_trainers(environ: Mapping[str, str] = os.environ) -> bool:
    """In a SLURM job step, make this process (and the shells it starts) ignore SIGUSR1/SIGTERM.

    SLURM signals every process of a job step: the executor plugin runs the rule through a
    Snakemake inside the step, which would die of SIGUSR1 (Python's default) or exit on
    SIGTERM, ending the step and getting the trainer killed while it saves. Ignored, the
    signal reaches the trainer alone (its own handlers replace the inherited "ignore"), the
    trainer saves and exits `EXIT_PREEMPTED`, and Snakemake's retry resumes it. Returns
    whether it applied (only inside a step: ``SLURM_STEP_ID`` set).
    """
    if "SLURM_STEP_ID" not in environ:
        return False
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    return True
