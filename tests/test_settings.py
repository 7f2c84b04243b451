"""Every params.yaml setting is read by something.

A setting nothing reads is worse than a missing one: changing it silently changes nothing. The
settings are the leaf keys of params.yaml resolved for each scale, walked along the schema. A
mapping the schema marks ``x-user-keys: true`` (run names, registry keys, languages) is one
setting, and the keys its entries' schema declares are settings under ``*``
(``ch8_layernorm.datasets.*.arch``). A setting is read when:

- planning the workflow reads it: every target rule is planned at each scale, through
  Snakemake's API, with the resolved config wrapped in a `Recorder`, and every job's shell
  command is rendered, so rule files, their input/params functions and the library code they
  hand the config to are all recorded. Handing a mapping over whole (``flags_from``,
  ``{**section}``, ``json.dumps``) reads each of its keys;
- or a CLI reads it from ``--params``: `mlrep.cliutil.settings_from` with literal sections
  (the keys its dataclass's fields name).

A key a rule renders with ``flags_from`` reaches a verb as an option, so every planned ``mlrep``
command must also parse with `mlrep.cli.build_parser`: a key the verb has no option for fails
there. The sections of chapters not built yet are exempt until their chapter lands.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import functools
import importlib
import io
import json
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from snakemake.api import SnakemakeApi
from snakemake.settings.types import (
    ConfigSettings,
    DAGSettings,
    OutputSettings,
    Quietness,
    ResourceSettings,
)

from mlrep import chapters, cli
from mlrep import config as cfg
from mlrep.cliutil import option_names
from tests.conftest import REPO, copy_workflow

USER_KEYS = "x-user-keys"
ANY = "*"
Key = tuple[str, ...]
SCHEMA = cfg.load_yaml(cfg.DEFAULT_SCHEMA)
# Planning at full scale is dominated by 64 preprocessing shards per file; two shards take
# the same code paths (scatter and gather) and read the same keys.
PLAN_OVERRIDES = {
    section: {cfg.SCALES_KEY: {"full": {"shards": 2}}} for section in ("preprocess", "align")
}


def _dotted(key: Key) -> str:
    return ".".join(key)


def _schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """`node` with its ``$ref`` and ``allOf`` merged in: its declared properties and flags."""
    merged: dict[str, Any] = {"properties": {}}
    parts = [node]
    while parts:
        part = parts.pop()
        if "$ref" in part:
            target: Any = SCHEMA
            for name in part["$ref"].removeprefix("#/").split("/"):
                target = target[name]
            parts.append(target)
        parts.extend(part.get("allOf", []))
        merged["properties"].update(part.get("properties", {}))
        for name in (USER_KEYS, "additionalProperties"):
            if name in part:
                merged[name] = part[name]
    return merged


def settings(config: Mapping[str, Any]) -> tuple[set[Key], set[Key]]:
    """The settings of a resolved config and the user-keyed mappings among them.

    Raises AssertionError for a mapping whose schema neither lists its keys nor marks them as
    user data: whether its keys are settings must be declared.
    """
    leaves: set[Key] = set()
    user_keyed: set[Key] = set()

    def walk(value: Any, schema: dict[str, Any], key: Key) -> None:
        if schema.get(USER_KEYS):
            leaves.add(key)
            user_keyed.add(key)
            entry = _schema(schema.get("additionalProperties") or {})
            for item in value.values():
                if isinstance(item, Mapping) and entry["properties"]:
                    walk(item, entry, (*key, ANY))
        elif isinstance(value, Mapping):
            assert schema["properties"], (
                f"{_dotted(key)}: the schema lists no keys for this mapping; list them, or "
                f"mark it `{USER_KEYS}: true` if its keys are user data"
            )
            for name, item in value.items():
                walk(item, _schema(schema["properties"][name]), (*key, name))
        else:
            leaves.add(key)

    exempt = {chapter.id for chapter in chapters.placeholders()}
    top = _schema(SCHEMA)
    for name, value in config.items():
        if name not in exempt:
            walk(value, _schema(top["properties"][name]), (name,))
    return leaves, user_keyed


class Recorder(dict):
    """A resolved config that records the setting of every value read from it.

    A dict, so that ``json.dumps`` and ``isinstance(..., dict)`` accept it; every way of reading
    a value (``[]``, ``get``, ``items``, ``values``, ``{**m}``, copies) goes through
    `__getitem__`, and the values it returns are Recorders of the setting below.
    """

    def __init__(self, data: Mapping[str, Any], key: Key, reads: set[Key], user_keyed: set[Key]):
        super().__init__(data)
        self._key, self._reads, self._user_keyed = key, reads, user_keyed

    def _child(self, name: str) -> Key:
        return (*self._key, ANY if self._key in self._user_keyed else name)

    def __getitem__(self, name: str) -> Any:
        value = super().__getitem__(name)
        key = self._child(name)
        self._reads.add(key)
        if isinstance(value, dict):
            return Recorder(value, key, self._reads, self._user_keyed)
        return value

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        # overridden so that ``{**m}`` and ``dict(m)`` take the keys-and-getitem path
        return super().__iter__()

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(name, self[name]) for name in self]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[name] for name in self]

    def copy(self) -> dict[str, Any]:
        return dict(self.items())

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self.items()), memo)


@dataclass(frozen=True)
class Plan:
    """What planning every target rule at one scale read, and the commands it rendered."""

    settings: set[Key]
    reads: set[Key]
    commands: list[str]


def _plan(scale: str, workdir: Path) -> Plan:
    copy_workflow(workdir)
    overrides = {"scale": scale, **PLAN_OVERRIDES}
    leaves: set[Key] = set()
    reads: set[Key] = set()
    load = cfg.load

    def recorded(*args: Any, **kwargs: Any) -> Recorder:
        resolved = load(*args, **kwargs)
        found, user_keyed = settings(resolved)
        leaves.update(found)
        return Recorder(resolved, (), reads, user_keyed)

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(workdir)  # Snakemake changes into its workdir; this changes back
        patch.setattr(cfg, "load", recorded)
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            workflow_api = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(config=overrides),
                snakefile=workdir / "Snakefile",
                workdir=workdir,
            )
            # no public API lists a workflow's rules or its planned jobs
            workflow = workflow_api._workflow
            targets = {rule.name for rule in workflow.rules if not rule.has_wildcards()}
            workflow_api.dag(DAGSettings(targets=targets)).execute_workflow(executor="dryrun")
            commands = [job.shellcmd for job in workflow.dag.jobs if job.shellcmd]
    return Plan(leaves, reads, commands)


def _assignments(body: list[ast.stmt]) -> dict[str, list[ast.expr]]:
    """The values assigned to each plain name in `body` (nested functions included)."""
    names: dict[str, list[ast.expr]] = {}
    for node in (n for statement in body for n in ast.walk(statement)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, []).append(node.value)
    return names


def _strings(node: ast.expr, names: Mapping[str, list[ast.expr]]) -> set[str]:
    """Every string constant `node` may evaluate to, one level of assigned names deep."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            found.add(child.value)
        elif isinstance(child, ast.Name):
            for value in names.get(child.id, []):
                found |= {c.value for c in ast.walk(value) if isinstance(c, ast.Constant)}
    return found


def cli_reads() -> set[Key]:
    """The settings CLIs read from ``--params``: `settings_from` calls with literal sections
    (a call whose section and class are both run-time values, like `mlrep.llm.cli`'s, is the
    command check's to cover).

    The keys are the fields of the call's dataclass, less those its keywords set or skip
    (directly or through a name assigned in its function or module). The NMT verbs name their
    section at run time (``--section``), and `mlrep.cliutil.fill`'s fallbacks are computed (a
    run's values, a subword model's); the rules pass those verbs every key they read, which
    the command check covers.
    """
    reads: set[Key] = set()
    for path in sorted((REPO / "mlrep").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = _assignments([s for s in tree.body if isinstance(s, ast.Assign)])
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            names = module | _assignments(function.body)
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "settings_from"
                    and isinstance(node.args[2], ast.Tuple)
                ):
                    sections = [e.value for e in node.args[2].elts if isinstance(e, ast.Constant)]
                    if not sections:
                        continue
                    keys = option_names(_resolve(node.args[1], tree), _set_by_verb(node, names))
                    for dotted in sections:
                        reads |= {(*dotted.split("."), key) for key in keys}
    return reads


def _set_by_verb(call: ast.Call, names: Mapping[str, list[ast.expr]]) -> list[str]:
    """The fields a ``settings_from`` call fills itself: its keywords and what its skip
    names (`_strings`)."""
    given = [k.arg for k in call.keywords if k.arg != "skip"]
    skipped = [_strings(k.value, names) for k in call.keywords if k.arg == "skip"]
    return given + [name for names_ in skipped for name in names_]


def _resolve(node: ast.expr, tree: ast.Module) -> type:
    """The settings dataclass a ``settings_from`` call names (``Settings`` or ``module.Settings``),
    through the imports of its module."""
    imported = {
        alias.asname or alias.name: f"{n.module}.{alias.name}"
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        for alias in n.names
    }
    first, *rest = ast.unparse(node).split(".")
    target = imported[first]
    try:
        value: Any = importlib.import_module(target)
    except ModuleNotFoundError:
        module, name = target.rsplit(".", 1)
        value = getattr(importlib.import_module(module), name)
    for name in rest:
        value = getattr(value, name)
    return value


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Plan]:
    return {
        scale: _plan(scale, tmp_path_factory.mktemp(f"plan_{scale}"))
        for scale in cfg.scale_names(SCHEMA)
    }


def unread(plans: Mapping[str, Plan]) -> list[str]:
    """The settings of any scale that no scale's plan and no CLI reads."""
    leaves = set().union(*(plan.settings for plan in plans.values()))
    reads = set().union(*(plan.reads for plan in plans.values())) | cli_reads()
    return sorted(_dotted(key) for key in leaves - reads)


def test_every_setting_is_read(plans):
    missing = unread(plans)
    assert not missing, (
        "params.yaml settings that no rule, library code the rules call, or CLI reads "
        f"(remove them, or read them): {', '.join(missing)}"
    )


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return cli.build_parser()


def _parse(command: str) -> str | None:
    """The error `mlrep` gives for a rendered ``mlrep …`` command's options, if any, after the
    verb's name."""
    words = shlex.split(command)
    words = words[1:] if words[0] == "exec" else words
    ends = [i for i, word in enumerate(words) if word in {">", "2>&1", "|", "&&", ";"}]
    words = words[: min(ends, default=len(words))]
    if words[0] != "mlrep":
        return None
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.suppress(SystemExit):
        _parser().parse_args(words[1:])
        return None
    verb = " ".join(word for word in words[:3] if not word.startswith("-"))
    return f"{verb}: {stderr.getvalue().strip().splitlines()[-1]}"


@pytest.mark.parametrize("scale", cfg.scale_names(SCHEMA))
def test_every_planned_command_has_the_options_its_rule_passes(plans, scale):
    commands = plans[scale].commands
    assert commands
    errors = sorted({error for error in map(_parse, commands) if error})
    assert not errors, "rules pass options their verbs lack:\n" + "\n".join(errors)


def test_the_recorder_sees_mappings_handed_over_whole():
    reads: set[Key] = set()
    config = Recorder(
        {"train": {"lr": 1, "steps": 2}, "runs": {"ems": {"lr": 3}}}, (), reads, {("runs",)}
    )
    json.dumps(config["train"])
    assert reads == {("train",), ("train", "lr"), ("train", "steps")}
    reads.clear()
    assert {**config["train"]} == {"lr": 1, "steps": 2}
    assert reads == {("train",), ("train", "lr"), ("train", "steps")}
    reads.clear()
    assert config["runs"].get("ems")["lr"] == 3 and config["runs"].get("none") is None
    assert reads == {("runs",), ("runs", ANY), ("runs", ANY, "lr")}
