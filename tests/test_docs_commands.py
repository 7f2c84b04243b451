"""Every command that README.md and docs/**/*.md show in a `bash`/`sh` block works.

Each command of those blocks is checked by what it calls:

- `snakemake …`: dry-run (`-n` right after `snakemake`) in a copy of the workflow with the
  `slurm` profile link, so an unknown target or option, a --config value the schema refuses or
  a target swallowed by `--resources`/`--config` fails. Commands that differ only in their
  targets are planned together, in one dry run of all their targets (`DryRuns`). A command
  that is not itself a dry run must give cores or a profile (Snakemake refuses a local run
  without). `--report FILE` needs the report's outputs on disk, so those lines are parsed by
  Snakemake's own parser instead.
- `mlrep …`: `mlrep data list` and `mlrep config check` are run (read-only, fast); every other
  line is parsed by `mlrep.cli.build_parser()`, so an unknown verb or option fails.
- `dvc …`: parsed by DVC's own parser; `dvc exp run -S key=…` keys must exist in params.yaml.
- `make …`: the targets and variables exist in the Makefile.
- `python benchmarks/….py …`, `python tools/….py …`: the script exists and defines each
  option given.
- anything else must be listed in `UNCHECKED` with the reason.

Upper-case words (DIR, RUN) are placeholders; the parsers accept them as paths.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, copy_workflow, snakemake

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SHELLS = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
OPERATORS = {"&&", "||", ";", "|"}
REDIRECTS = {">", ">>", "<", "2>", "&>"}
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# Commands shown in the docs that no check here can run, each with the reason.
UNCHECKED = {
    "source .venv/bin/activate": "changes the calling shell; `make run` creates .venv",
    "git add -A": "commits the workspace (the DVC experiment recipe); plain git",
    "git commit -m baseline": "commits the workspace (the DVC experiment recipe); plain git",
    "hf download lucadiliello/BLEURT-20": "downloads 2 GB from the Hugging Face Hub",
}
# Run rather than parsed: read-only and fast.
RUN_MLREP = (("data", "list"), ("config", "check"))
SNAKEMAKE_DRY = {"-n", "--dry-run", "--dryrun"}
SNAKEMAKE_CORES = re.compile(r"^(--cores|-c|--jobs|-j|--profile)(=.*|\d+)?$")


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    where: str  # file:line of its first appearance

    @property
    def text(self) -> str:
        return shlex.join(self.argv)


def shell_blocks(path: Path):
    """(first line number, lines) of each fenced bash/sh block of a Markdown file."""
    fence, shell, block, start = None, False, [], 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if fence is None:
            if match := FENCE.match(line):
                fence, shell = match.group(2), match.group(3).lower() in SHELLS
                block, start = [], number + 1
        elif stripped.startswith(fence) and not stripped.strip(fence[0]):
            if shell:
                yield start, block
            fence = None
        elif shell:
            block.append(line)


def split_commands(line: str) -> list[list[str]]:
    """The simple commands of one shell line: operators split, comments, redirections and
    leading environment assignments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, current, tokens = [], [], list(lexer)
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
        elif token in OPERATORS:
            commands.append(current)
            current = []
        elif token in REDIRECTS or token.endswith(">"):
            skip_next = True
        elif not current and ENV_ASSIGNMENT.match(token):
            continue
        else:
            current.append(token)
    commands.append(current)
    return [c for c in commands if c]


def documented_commands() -> list[Command]:
    seen: dict[tuple[str, ...], Command] = {}
    for path in DOCS:
        for start, lines in shell_blocks(path):
            joined, first = "", start
            for offset, line in enumerate(lines):
                if not joined:
                    first = start + offset
                if line.rstrip().endswith("\\"):
                    joined += line.rstrip()[:-1] + " "
                    continue
                joined += line
                for argv in split_commands(joined):
                    where = f"{path.relative_to(REPO)}:{first}"
                    seen.setdefault(tuple(argv), Command(tuple(argv), where))
                joined = ""
    return list(seen.values())


COMMANDS = documented_commands()


def split_targets(args: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A Snakemake command's options (its arguments less its targets, as Snakemake's own parser
    reads them: a target swallowed by `--config` stays an option) and its targets; None when
    it names no target (it builds the default rule) or does not parse."""
    from snakemake.cli import get_argument_parser

    with contextlib.redirect_stderr(io.StringIO()):
        try:
            targets = list(get_argument_parser().parse_args(args).targets or ())
        except (SystemExit, ValueError):
            return None
    if not targets:
        return None
    return tuple(a for a in args if a not in targets), tuple(a for a in args if a in targets)


class DryRuns:
    """The dry runs of the documented Snakemake commands, one per group of commands that
    differ only in their targets: planning a thesis-scale DAG takes a minute or two, and each
    chapter's full-scale command plans a part of what `all` with the same options plans.

    A group plans the union of its commands' targets with their shared options, so a target,
    option or --config value that fails alone fails the group, and each of its commands'
    tests (the error names the group's targets). A command without a target, or one that
    `dry_run` is asked about and no documented command shares options with, runs alone."""

    def __init__(self, workdir: Path, commands: list[Command]) -> None:
        self.workdir = workdir
        self.groups: dict[tuple[str, ...], list[str]] = {}
        for command in commands:
            if command.argv[0] == "snakemake" and (split := split_targets(command.argv[1:])):
                targets = self.groups.setdefault(split[0], [])
                targets += [t for t in split[1] if t not in targets]
        self.done: dict[tuple[str, ...], str | None] = {}

    def error(self, args: list[str]) -> str | None:
        """Why a dry run of `args` fails (its group's, where it has one), or None."""
        split = split_targets(args)
        if split is None or split[0] not in self.groups:
            return self._run(tuple(args))
        options, _ = split
        targets = self.groups[options]
        separator = () if "--" in options else ("--",)  # no option swallows the targets
        command = (*options, *separator, *targets)
        if command not in self.done:
            self.done[command] = self._run(command)
        error = self.done[command]
        return error and f"planned with {shlex.join(targets)}: {error}"

    def _run(self, args: tuple[str, ...]) -> str | None:
        result = snakemake(self.workdir, "-n", *args, timeout=600)
        if result.returncode != 0:
            output = (result.stdout + result.stderr)[-3000:]
            return f"dry run failed (exit {result.returncode}):\n{output}"
        return None


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    root = copy_workflow(tmp_path_factory.mktemp("docs-workflow"))
    os.symlink(os.readlink(REPO / "slurm"), root / "slurm")
    return root


@pytest.fixture(scope="module")
def dry_runs(workflow_copy) -> DryRuns:
    return DryRuns(workflow_copy, COMMANDS)


def check_snakemake(argv: list[str], dry_runs: DryRuns) -> str | None:
    """Why a documented Snakemake command fails, or None."""
    args = argv[1:]
    if "--report" in args:
        from snakemake.cli import get_argument_parser

        return parse_error(get_argument_parser().parse_args, args)
    if not SNAKEMAKE_DRY & set(args) and not any(SNAKEMAKE_CORES.match(a) for a in args):
        return "a local run needs --cores N (or --profile): Snakemake refuses to run without"
    return dry_runs.error(args)


def parse_error(parse, args: list[str]) -> str | None:
    """The parser's complaint about `args`, or None when they parse."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parse(args)
    except SystemExit as exc:
        return None if exc.code in (0, None) else err.getvalue() or f"exit {exc.code}"
    except Exception as exc:  # DVC's parser raises its own error; Snakemake's a ValueError
        return f"{type(exc).__name__}: {exc}\n{err.getvalue()}"
    return None


def check_mlrep(argv: list[str], monkeypatch) -> str | None:
    from mlrep import cli

    args = argv[1:]
    if (error := parse_error(cli.build_parser().parse_args, args)) or tuple(
        args[:2]
    ) not in RUN_MLREP:
        return error
    monkeypatch.chdir(REPO)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(args)
    return None if code == 0 else f"exit {code}: {out.getvalue()[-2000:]}"


def params_key_exists(key: str) -> bool:
    node = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def check_dvc(argv: list[str]) -> str | None:
    import dvc.cli

    args = argv[1:]
    if error := parse_error(dvc.cli.parse_args, args):
        return error
    for flag, value in itertools.pairwise(args):
        if flag in {"-S", "--set-param"}:
            key = value.split("=", 1)[0]
            if not params_key_exists(key):
                return f"dvc exp -S {key}: no such key in params.yaml"
    return None


def check_make(argv: list[str]) -> str | None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for arg in argv[1:]:
        name = arg.split("=", 1)[0]
        pattern = rf"^{re.escape(name)}\s*[:?]?=" if "=" in arg else rf"^{re.escape(name)}:"
        if not re.search(pattern, makefile, re.MULTILINE):
            return f"the Makefile has no {'variable' if '=' in arg else 'target'} {name!r}"
    return None


SCRIPTS = ("benchmarks/", "tools/")  # folders of scripts the docs may show


def check_script(argv: list[str]) -> str | None:
    script = REPO / argv[1]
    if not script.is_file():
        return f"{argv[1]} does not exist"
    source = script.read_text(encoding="utf-8")
    for option in (a.split("=", 1)[0] for a in argv[2:] if a.startswith("--")):
        if f'"{option}"' not in source:
            return f"{argv[1]} defines no option {option}"
    return None


def check(command: Command, dry_runs: DryRuns, monkeypatch) -> str | None:
    """Why `command` does not work as the docs show it, or None."""
    argv = list(command.argv)
    program = argv[0]
    if command.text in UNCHECKED:
        return None
    if program == "snakemake":
        return check_snakemake(argv, dry_runs)
    if program == "mlrep":
        return check_mlrep(argv, monkeypatch)
    if program == "dvc":
        return check_dvc(argv)
    if program == "make":
        return check_make(argv)
    if program in {"python", "python3"} and len(argv) > 1 and argv[1].startswith(SCRIPTS):
        return check_script(argv)
    return f"no check for {program!r}: add one, or list the command in UNCHECKED with the reason"


def _case(command: Command):
    # planning the thesis-scale DAG takes Snakemake up to half a minute of CPU
    full = command.argv[0] == "snakemake" and "scale=full" in command.argv
    return pytest.param(
        command, id=f"{command.where} {command.text[:70]}", marks=[pytest.mark.slow] if full else []
    )


@pytest.mark.parametrize("command", [_case(c) for c in COMMANDS])
def test_documented_command_works(command, dry_runs, monkeypatch):
    error = check(command, dry_runs, monkeypatch)
    assert error is None, f"{command.where}: {command.text}\n{error}"


def test_every_page_is_read_and_the_allow_list_is_current():
    sources = {c.where.split(":")[0] for c in COMMANDS}
    assert "README.md" in sources and "docs/running.md" in sources
    texts = {c.text for c in COMMANDS}
    stale = sorted(set(UNCHECKED) - texts)
    assert not stale, f"UNCHECKED lists commands the docs no longer show: {stale}"
    programs = {c.argv[0] for c in COMMANDS}
    assert {"snakemake", "mlrep", "dvc", "make"} <= programs


@pytest.mark.parametrize(
    "line, complaint",
    [
        # --resources takes several values: the target became a second resource
        ("snakemake --cores 2 --resources network=2 results/data/laser_tatoeba_v1", "ValueError"),
        # --config takes several values: the target became a config entry
        ("snakemake --cores 2 --config scale=full ch2_ems", "dry run failed"),
        ("snakemake report", "needs --cores"),
        ("mlrep data lsit", "invalid choice"),
        (
            "mlrep nmt translate --section ch8_layernorm --data D --model M --tag-format t-enc "
            "--out O --pivots",
            "unrecognized",
        ),
        ("dvc exp run -S ch8_layernorm.decode.beams=2", "no such key"),
        ("make rnu", "no target"),
        ("python benchmarks/download_memory.py --size 512", "no option --size"),
        ("python tools/check_reference.py --spec DIR --seed DIR", "no option --seed"),
        ("rm -rf results", "no check for 'rm'"),
    ],
)
def test_broken_commands_are_caught(line, complaint, dry_runs, monkeypatch):
    (argv,) = split_commands(line)
    error = check(Command(tuple(argv), "example"), dry_runs, monkeypatch)
    assert error is not None and complaint in error, error


def test_shell_lines_are_split_into_commands():
    line = "SNAKEMAKE_PROFILE=slurm dvc repro && dvc push > log.txt  # share"
    assert split_commands(line) == [["dvc", "repro"], ["dvc", "push"]]
    quoted = "snakemake --config 'ch2_ems={grid: {values: {layers: [1, 3]}}}'"
    config = "ch2_ems={grid: {values: {layers: [1, 3]}}}"
    assert split_commands(quoted) == [["snakemake", "--config", config]]
