"""Shared fixtures: synthetic gettext catalogs packed into wheel-shaped zip files."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# the session's shared tiny project and its chapter runs (fixtures tiny_project, ch2_run, …)
pytest_plugins = ["tests.tiny_runs"]

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

HEADER = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: {lang}\\n"
"Plural-Forms: {plural}\\n"

"""
PLURALS = {
    "ja": "nplurals=1; plural=0;",
    "de": "nplurals=2; plural=(n != 1);",
    "fr": "nplurals=2; plural=(n > 1);",
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
    "(n%100<10 || n%100>=20) ? 1 : 2);",
    "ar": "nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : "
    "n%100>=11 ? 4 : 5;",
}


def po_text(lang: str, body: str, plural: str | None = None) -> str:
    """A catalog: the standard header for `lang` followed by `body`."""
    return HEADER.format(lang=lang, plural=plural or PLURALS.get(lang, PLURALS["de"])) + body


def make_wheel(path: Path, package: str, catalogs: dict[str, str]) -> Path:
    """Write a zip whose members are ``<package>/locale/<locale>/LC_MESSAGES/django.po``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{package}/__init__.py", "")
        for locale, text in catalogs.items():
            archive.writestr(f"{package}/locale/{locale}/LC_MESSAGES/django.po", text)
    return path


@pytest.fixture
def wheel_factory(tmp_path):
    def factory(package: str, catalogs: dict[str, str]) -> Path:
        return make_wheel(tmp_path / f"{package}-1.0-py3-none-any.whl", package, catalogs)

    return factory


def tiny_corpus(out: Path, languages: list[str]) -> Path:
    """`mlrep corpus tiny` for `languages` from the pinned wheels in resources/wheels."""
    from mlrep import cli

    args = ["corpus", "tiny", "--params", str(REPO / "params.yaml"), "--languages", *languages]
    assert cli.main([*args, "--wheels", str(REPO / "resources/wheels"), "--out", str(out)]) == 0
    return out


def copy_workflow(dest: Path) -> Path:
    """The Snakefile, params.yaml and workflow/ of the repository in `dest`, to run isolated."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "params.yaml"):
        shutil.copy(REPO / name, dest / name)
    shutil.copytree(REPO / "workflow", dest / "workflow")
    return dest


def preprocess_tiny_corpus(params: dict, pairs: list[str], settings: dict) -> str:
    """`params` with a dataset `tiny_corpus` (`pairs` of the corpus in results/data/tiny_corpus,
    aligned by `align`) and the subword settings `settings` added; returns the dataset's record,
    the target that builds it and nothing else (the chapters' own datasets and settings stay,
    unbuilt: Chapter 4's rules read theirs when the workflow is parsed)."""
    pre = params["preprocess"]
    spec = {"corpus": "tiny_corpus", "corpora": {}, "pairs": pairs, "steps": {}}
    pre["datasets"]["tiny_corpus"] = spec
    pre["subwords"]["settings"].update(settings)
    params["align"]["dataset"] = "tiny_corpus"
    return "results/preprocess/tiny_corpus/provenance.json"


def params_at(scale: str) -> dict:
    """The project's params.yaml resolved at `scale` and checked, as the Snakefile reads it."""
    from mlrep import config

    return config.load({**config.load_yaml(REPO / "params.yaml"), "scale": scale})


def snakemake(workdir: Path, *args: str, timeout: int = 900, env: dict | None = None):
    """Run this environment's Snakemake in `workdir`, with its bin folder first on PATH."""
    base = dict(os.environ if env is None else env)
    base["PATH"] = f"{BIN}{os.pathsep}{base['PATH']}"
    return subprocess.run(
        [str(BIN / "snakemake"), *args],
        cwd=workdir,
        env=base,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class PlannedJob(dict):
    """One job of a dry run's plan: its printed fields (input, output, wildcards, threads,
    resources, …) by name, and `text`, everything printed for it (with -p its command)."""

    text: str

    def values(self, field: str) -> dict[str, str]:  # type: ignore[override]
        """A ``k=v, k=v`` field (wildcards, resources) as a mapping."""
        return dict(item.split("=", 1) for item in self.get(field, "").split(", ") if item)


def planned_jobs(stdout: str) -> dict[str, list[PlannedJob]]:
    """The jobs of `snakemake -n` output by rule."""
    jobs: dict[str, list[PlannedJob]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", stdout):
        match = re.match(r"(?:local)?rule (\w+):", block)
        if match:
            job = PlannedJob(re.findall(r"^    (\w+): (.*)$", block, re.MULTILINE))
            job.text = block
            jobs.setdefault(match.group(1), []).append(job)
    return jobs


@pytest.fixture(scope="session")
def tatoeba_raw(tmp_path_factory) -> Path:
    """A Tatoeba v1 look-alike in LASER's raw layout (tests/tatoeba_helpers.py); read-only."""
    from tests import tatoeba_helpers

    return tatoeba_helpers.write(tmp_path_factory.mktemp("tatoeba") / "raw")


@pytest.fixture(scope="session")
def tatoeba_registry(tatoeba_raw, tmp_path_factory) -> Path:
    """A registry file pinning the look-alike's files under its own key (`--registry`)."""
    from tests import tatoeba_helpers

    path = tmp_path_factory.mktemp("registry") / "registry.yaml"
    return tatoeba_helpers.registry_file(tatoeba_raw, path)


@pytest.fixture
def workdir(tmp_path):
    return copy_workflow(tmp_path)
