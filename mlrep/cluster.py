"""What a job actually got from the scheduler: host, SLURM allocation, CPUs and GPUs.

`snakemake --profile slurm cluster_probe` runs this with the resources of a training job, so a
site can check that GPU jobs land on GPU nodes with the devices visible before it launches the
thesis-scale grids.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
from pathlib import Path
from typing import Any

from mlrep.cliutil import scale_of
from mlrep.io import atomic_write_text
from mlrep.provenance import SLURM_VARIABLES, record

_EXTRA_SLURM = (
    "SLURM_GPUS",
    "SLURM_JOB_GPUS",
    "SLURM_GPUS_ON_NODE",
    "SLURM_CPUS_ON_NODE",
    "SLURM_MEM_PER_NODE",
    "SLURM_JOB_NAME",
)


def probe() -> dict[str, Any]:
    """Describe the allocation this process runs in."""
    import torch

    cuda = torch.cuda.is_available()
    return {
        "host": socket.gethostname(),
        "slurm": {k: os.environ[k] for k in (*SLURM_VARIABLES, *_EXTRA_SLURM) if k in os.environ},
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "torch": torch.__version__,
        "cuda_available": cuda,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if cuda
        else [],
    }


def _probe(args: argparse.Namespace) -> int:
    scale = scale_of(args)
    info = probe()
    atomic_write_text(args.out, json.dumps(info, indent=2) + "\n")
    record(args.out.parent, "cluster probe", {"scale": scale})
    print(json.dumps(info))
    return 0


def register(top: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    cluster = top.add_parser("cluster", help="check what jobs get from the scheduler")
    sub = cluster.add_subparsers(dest="cluster_command", required=True)
    probe_cmd = sub.add_parser("probe", parents=[common], help="record host, SLURM and GPU state")
    probe_cmd.add_argument("--out", type=Path, required=True, help="JSON file to write")
    probe_cmd.set_defaults(func=_probe)
