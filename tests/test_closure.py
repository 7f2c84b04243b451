"""`mlrep.closure`: the code a verb runs and the digest that reruns its jobs when that code changes.

A small synthetic package in tmp_path pins each rule of the closure (imports inside functions,
relative imports, ``from package import submodule``, data files located from code, a plugin
folder loaded by path) and of the digest (comments and docstrings do not count, semantics do);
the real mlrep checks the verbs the rules run.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import mlrep
from mlrep.cli import build_parser
from mlrep.closure import Closure, Package, Verbs
from tests.conftest import REPO

SYNTH = {
    "__init__.py": "",
    "cli.py": '''
"""The synthetic command line."""
import argparse

from synth.util import helper
from . import shared


def _run(args):
    """Runs the engine."""
    from synth.engine import run  # a function-level import

    return run(helper(args.x))


def _other(args):
    from synth import unrelated  # a submodule imported from its package

    return unrelated.go(shared.VALUE)


def build_parser(default=1):
    parser = argparse.ArgumentParser(prog="synth")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run it")
    run.add_argument("--x", type=int, default=default, help="x")
    run.add_argument("--flag", type=lambda t: t == "yes")
    run.set_defaults(func=_run)
    other = sub.add_parser("other")
    other.set_defaults(func=_other)
    return parser
''',
    "util.py": """
from functools import cache

PLUGINS = {}


def register(function):
    PLUGINS[function.__name__] = function
    return function


def helper(x):
    return x + 1 + len(PLUGINS)


@register  # registered at import time: part of what helper does, though no code names it
def plugin():
    return "plugged in"


@cache  # only wraps: unused is no part of helper
def unused():
    return 0


for name in ("a", "b"):
    PLUGINS[name] = name
""",
    "shared.py": "VALUE = 3\n",
    "unrelated.py": "def go(x):\n    return x\n",
    "engine.py": """
import importlib
from importlib import resources
from pathlib import Path

from .sub import deep

CONFIG = Path(__file__).resolve().parent / "config.yaml"
PLUGINS = Path(__file__).parent / "plugins"


def run(x):
    # a comment
    table = resources.files("synth.sub").joinpath("table.yaml").read_text()
    kind = "a"
    extra = importlib.import_module("synth.dynamic").VALUE
    extra += importlib.import_module(f"synth.{kind}_plugin").VALUE
    user_dir = str(PLUGINS)  # where fairseq would load plugins from (--user-dir)
    return deep.twice(x) + len(table) + len(CONFIG.read_text()) + extra + len(user_dir)
""",
    "config.yaml": "# settings\nsize: 2\n",
    # a package that runs only because its module `deep` is imported
    "sub/__init__.py": """
from pathlib import Path

NOTES = Path(__file__).parent / "notes.txt"


def notes():
    return NOTES.read_text()
""",
    "sub/notes.txt": "hello\n",
    "dynamic.py": "VALUE = 1\n",
    "a_plugin.py": "VALUE = 1\n",
    "sub/deep.py": "def twice(x):\n    return 2 * x\n",
    "sub/table.yaml": "rows: [1, 2]\n",
    "plugins/__init__.py": "import synth.plugged  # noqa: F401\n",
    "plugged.py": "REGISTERED = True\n",
}


@pytest.fixture
def synth(tmp_path, monkeypatch) -> Path:
    """The synthetic package, importable as `synth` for this test only."""
    for name, text in SYNTH.items():
        path = tmp_path / "synth" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit within a second reloads
    yield tmp_path / "synth"
    for name in [m for m in sys.modules if m == "synth" or m.startswith("synth.")]:
        del sys.modules[name]


def synth_verbs(package: Path, default: int = 1, store: Path | None = None) -> Verbs:
    """The verbs of the package as it is now (its cli imported afresh, as each run does)."""
    sys.modules.pop("synth.cli", None)
    cli = importlib.import_module("synth.cli")
    return Verbs(cli.build_parser(default), Package(package), store)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def test_closure_follows_imports_inside_functions_relative_imports_and_submodules(synth):
    verbs = synth_verbs(synth)
    run = verbs.closure("run").paths
    assert {"synth/engine.py", "synth/sub/deep.py", "synth/util.py", "synth/__init__.py"} <= set(
        run
    )
    # the other handler's import and module-level names it alone uses are not `run`'s code
    assert "synth/unrelated.py" not in run and "synth/shared.py" not in run
    other = verbs.closure("other").paths
    assert {"synth/unrelated.py", "synth/shared.py"} <= set(other)
    assert "synth/engine.py" not in other


def test_data_files_and_plugin_folders_located_from_code_are_in_the_closure(synth):
    run = set(synth_verbs(synth).closure("run").paths)
    assert {"synth/config.yaml", "synth/sub/table.yaml"} <= run
    # a folder loaded by path (fairseq's --user-dir): its modules and what they import
    assert {"synth/plugins/__init__.py", "synth/plugged.py"} <= run


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("engine.py", "# a comment", "# another comment, longer"),
        ("cli.py", '"""Runs the engine."""', '"""Runs the engine, documented better."""'),
        ("cli.py", "def _run(args):", "\n\ndef _run(args):  # spaced out"),
        ("cli.py", "    return unrelated.go(shared.VALUE)", "    return unrelated.go(0)"),
        ("unrelated.py", "return x", "return -x"),
        ("util.py", "return 0", "return 1"),  # `run` imports helper from util, not unused
        ("config.yaml", "# settings", "# the settings, explained"),
        ("sub/table.yaml", "rows: [1, 2]", "rows:\n  - 1\n  - 2"),
        ("sub/__init__.py", "return NOTES.read_text()", "return ''"),  # never called
        ("sub/notes.txt", "hello", "bye"),  # read by a function that `run` never calls
    ],
)
def test_edits_that_do_not_change_what_run_does_keep_its_digest(synth, file, old, new):
    before = synth_verbs(synth).closure("run").digest
    edit(synth / file, old, new)
    assert synth_verbs(synth).closure("run").digest == before


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("sub/deep.py", "2 * x", "3 * x"),  # reached by a relative import
        ("engine.py", "+ len(table)", "- len(table)"),
        ("cli.py", "run(helper(args.x))", "run(helper(args.x + 1))"),
        ("cli.py", 't == "yes"', 't == "true"'),  # the option's type, a lambda in build_parser
        ("util.py", "x + 1", "x + 2"),
        ("util.py", "@cache", "print('imported')\n\n\n@cache"),  # at import time
        ("util.py", '"plugged in"', '"plugged out"'),  # a function registered by a decorator
        ("util.py", '("a", "b")', '("a", "b", "c")'),  # a loop at import time
        ("config.yaml", "size: 2", "size: 3"),
        ("sub/table.yaml", "[1, 2]", "[1, 2, 3]"),
        ("plugged.py", "True", "False"),
        ("dynamic.py", "1", "2"),  # importlib.import_module("synth.dynamic")
        ("a_plugin.py", "1", "2"),  # importlib.import_module(f"synth.{kind}_plugin")
        ("sub/__init__.py", "def notes():", "print('imported')\n\n\ndef notes():"),
    ],
)
def test_edits_that_change_what_run_does_change_its_digest(synth, file, old, new):
    before = synth_verbs(synth).closure("run").digest
    edit(synth / file, old, new)
    assert synth_verbs(synth).closure("run").digest != before


def test_an_option_default_is_part_of_the_digest_and_its_help_is_not(synth):
    before = synth_verbs(synth, default=1).closure("run").digest
    assert synth_verbs(synth, default=2).closure("run").digest != before
    edit(synth / "cli.py", 'help="x"', 'help="the x"')
    assert synth_verbs(synth, default=1).closure("run").digest == before


def test_a_closure_is_the_same_after_other_verbs_filled_the_package_caches(synth):
    """`Package` keeps what each statement uses and its dump for every verb after: what one
    verb reached in a module must not leak into the closure of the next."""
    for order in (["run", "other"], ["other", "run"]):
        shared = synth_verbs(synth)
        together = {verb: shared.closure(verb) for verb in order}
        assert together == {verb: synth_verbs(synth).closure(verb) for verb in order}
    parser = build_parser()
    shared = Verbs(parser)
    names = ["ch2 train", "report build", "nmt train", "data fetch"]
    together = {verb: shared.closure(verb).sources for verb in names}
    assert together == {verb: Verbs(parser).closure(verb).sources for verb in names}


def reads(package: Path, location: str) -> None:
    """Make the synthetic `run` read `location` too (a path expression in engine.py)."""
    edit(
        package / "engine.py",
        "return deep.twice(x)",
        f"return len(str({location})) + deep.twice(x)",
    )


def _closures(verbs: Verbs) -> dict[str, Closure]:
    return {verb: verbs.closure(verb) for verb in verbs.names()}


def test_stored_closures_are_the_computed_ones_and_a_process_after_reads_them(
    synth, tmp_path, monkeypatch
):
    store = tmp_path / "store"
    assert _closures(synth_verbs(synth, store=store)) == _closures(synth_verbs(synth))
    assert len(list(store.glob("closures-*.json"))) == 1

    def computed(*args):
        raise AssertionError("computed, not read from the store")

    monkeypatch.setattr(Package, "closure", computed)
    assert _closures(synth_verbs(synth, store=store))["run"].paths  # read back
    assert synth_verbs(synth, default=2, store=store).closure("run").options != (
        synth_verbs(synth, store=store).closure("run").options
    )  # the options are the parser's now, never stored


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("synth/util.py", "return x + 1", "return x + 2"),  # in the package
        ("outside.yaml", "size: 1", "size: 2"),  # outside it, read by the package's code
    ],
)
def test_an_edit_that_changes_a_closure_is_never_read_from_the_store(
    synth, tmp_path, file, old, new
):
    (tmp_path / "outside.yaml").write_text("size: 1\n")
    reads(synth, 'Path(__file__).resolve().parent.parent / "outside.yaml"')
    store = tmp_path / "store"
    before = synth_verbs(synth, store=store).closure("run")
    assert "outside.yaml" in before.sources
    edit(tmp_path / file, old, new)
    after = synth_verbs(synth, store=store).closure("run")
    assert after == synth_verbs(synth).closure("run") and after.digest != before.digest


def test_closures_that_read_a_folder_outside_the_package_are_not_stored(synth, tmp_path):
    (tmp_path / "shelf").mkdir()
    reads(synth, 'Path(__file__).parent.parent / "shelf"')
    store = tmp_path / "store"
    synth_verbs(synth, store=store).closure("run")
    assert not store.exists()


def test_an_unwritable_store_only_costs_the_time(synth, tmp_path):
    store = tmp_path / "store"
    store.write_text("a file where the folder should be")
    assert _closures(synth_verbs(synth, store=store)) == _closures(synth_verbs(synth))


def test_verbs_and_the_verb_a_shell_command_runs():
    verbs = Verbs(build_parser())
    assert {"nmt train", "align", "align symmetrize", "report build"} <= set(verbs.names())
    assert verbs.verb_of("exec mlrep nmt train --data x > log 2>&1") == "nmt train"
    assert verbs.verb_of("mlrep align -i {input} -r --out x") == "align"
    assert verbs.verb_of("mlrep data fetch tatoeba --dest x") == "data fetch"
    assert verbs.verb_of("mkdir -p x") is None
    with pytest.raises(ValueError, match="no verb 'nmt nope'"):
        verbs.closure("nmt nope")
    with pytest.raises(ValueError, match="'nmt' is not a verb"):
        verbs.closure("nmt")


def test_the_closures_of_mlrep_verbs():
    verbs = Verbs(build_parser())
    train = set(verbs.closure("nmt train").paths)
    assert {"mlrep/nmt/model.py", "mlrep/nmt/train.py", "mlrep/nmt/mlrep_fairseq/__init__.py"} <= (
        train
    )
    assert "mlrep/nmt/decode.py" not in train  # another nmt verb's code: decoding never retrains
    assert "mlrep/nmt/model.py" in verbs.closure("nmt translate").paths
    ems = set(verbs.closure("ch2 train").paths)
    assert "mlrep/embed/model.py" in ems
    # mlrep.chapters only runs as the package of ch2_ems: the tables its functions locate are
    # not Chapter 2's training code
    assert "mlrep/report/tables/ch2_ems.yaml" not in ems
    report = set(verbs.closure("report build").paths)
    assert "mlrep/nmt/model.py" not in report and "mlrep/report/fill.py" in report
    assert {"mlrep/report/claims.yaml", "mlrep/report/figures.yaml"} <= report
    assert "mlrep/report/tables/ch8_layernorm.yaml" in report
    assert "mlrep/data/tiny_sources.yaml" in verbs.closure("corpus tiny").paths
    fetch = set(verbs.closure("data fetch").paths)
    assert {"mlrep/data/registry.yaml", "mlrep/data/registry-lock.yaml"} <= fetch
    assert "workflow/schemas/params.schema.yaml" in fetch  # mlrep.config validates with it


def test_every_file_under_mlrep_that_is_not_python_is_read_by_some_verb():
    """A data file that code finds in a way the closure cannot see fails here, naming it."""
    verbs = Verbs(build_parser())
    reached = {path for verb in verbs.names() for path in verbs.closure(verb).paths}
    package = Path(mlrep.__file__).resolve().parent
    data = {
        p.relative_to(package.parent).as_posix()
        for p in package.rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"}
    }
    assert sorted(data - reached) == []


def test_a_comment_edit_of_a_real_module_keeps_the_digest_and_a_semantic_edit_changes_it(
    tmp_path,
):
    copy = tmp_path / "mlrep"
    shutil.copytree(Path(mlrep.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "workflow" / "schemas", tmp_path / "workflow" / "schemas")
    parser = build_parser()

    def digests() -> dict[str, str]:
        verbs = Verbs(parser, Package(copy))
        return {v: verbs.closure(v).digest for v in ("nmt train", "report build", "ch2 train")}

    before = digests()
    assert before == {v: Verbs(parser).closure(v).digest for v in before}  # same code, same digest
    model = copy / "nmt" / "model.py"
    model.write_text(model.read_text().replace('"""', '"""Reworded. ', 1) + "\n# a note\n")
    assert digests() == before
    model.write_text(model.read_text() + "\nEXTRA = 1\n")
    after = digests()
    assert after["nmt train"] != before["nmt train"]
    assert after["report build"] == before["report build"]
    assert after["ch2 train"] == before["ch2 train"]


def test_a_schema_counts_by_its_scales_alone(tmp_path):
    """A new chapter's keys in the params schema rerun no finished job; a scale changes all."""
    copy = tmp_path / "mlrep"
    shutil.copytree(Path(mlrep.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "workflow" / "schemas", tmp_path / "workflow" / "schemas")
    schema = tmp_path / "workflow" / "schemas" / "params.schema.yaml"
    parser = build_parser()

    def digests() -> dict[str, str]:
        verbs = Verbs(parser, Package(copy))
        return {v: verbs.closure(v).digest for v in ("data fetch", "nmt train", "ch2 train")}

    before = digests()
    loaded = yaml.safe_load(schema.read_text(encoding="utf-8"))
    loaded["properties"]["ch5_wordcl"] = {"type": "object", "required": ["seeds", "new_key"]}
    schema.write_text(yaml.safe_dump(loaded), encoding="utf-8")
    assert digests() == before
    loaded["properties"]["scale"]["enum"].append("medium")
    schema.write_text(yaml.safe_dump(loaded), encoding="utf-8")
    assert all(after != before[v] for v, after in digests().items())


def test_the_digest_is_the_same_in_every_process():
    """Snakemake compares it with the one recorded by an earlier run: no hash seed may leak in."""
    code = (
        "from mlrep.cli import build_parser; from mlrep.closure import Verbs; "
        "v = Verbs(build_parser()); print([v.closure(n).digest for n in v.names()])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
