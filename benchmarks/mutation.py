"""Mutation score of the modules that make the reported numbers (mutmut, pinned in the dev extra).

A test suite that passes says little until it is shown to fail when the code is wrong. mutmut
makes small changes to a module (an operator, a constant, an argument), one at a time, and runs
the tests that call the changed function: a mutant is *killed* when a test fails (or hangs
past mutmut's time limit), and *survives* when every test still passes.

Each module in MODULES runs on its own, with only its own test files: on 2 cores the whole suite
per mutant would take days. Each run happens in a fresh temporary copy of the working tree
(tracked files and untracked ones git does not ignore, so new tests count), because mutmut
writes its mutated copy and results into the folder it runs in; the working tree is never
written, and an interrupt (Ctrl-C, SIGTERM) stops mutmut's whole process group before the copy
is removed.

Prints, per module, the surviving mutants as ``file:line``, the function and the changed line,
with the note from benchmarks/mutation_survivors.yaml where a survivor is listed there: why it
is equivalent (no test can tell it from the original: left out of the score), or which test
would kill it next (still counted as surviving); then a table of the killed share. The target
is TARGET killed among the non-equivalent mutants of every module; the exit status is 1 when a
module misses it. Not part of `make test` or CI: about 20 minutes on 2 shared cores.

    python benchmarks/mutation.py                                  # every module
    python benchmarks/mutation.py --modules report/stats train/checkpoint --jobs 2
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import libcst
import yaml
from mutmut.mutation.diff_apply import read_mutant_function, read_original_function

REPO = Path(__file__).resolve().parent.parent
SURVIVORS = REPO / "benchmarks" / "mutation_survivors.yaml"
TARGET = 0.85

# module (under mlrep/) -> glob patterns of its own test files, relative to the repository
MODULES: dict[str, tuple[str, ...]] = {
    "evaluate/retrieval": ("tests/test_evaluate_retrieval*.py",),
    "evaluate/mining": ("tests/test_evaluate_mining*.py",),
    "report/claims": ("tests/test_report_claims*.py",),
    "report/stats": ("tests/test_report_stats*.py",),
    "report/fill": (
        "tests/test_report_fill*.py",
        "tests/test_report_tables.py",
        "tests/test_report_render.py",
    ),
    "nmt/score": ("tests/test_nmt_score*.py", "tests/test_metric_names.py"),
    "align/symmetrize": ("tests/test_align_symmetrize*.py",),
    "train/checkpoint": ("tests/test_train_checkpoint*.py",),
}

# mutmut's statuses (`mutmut results`) that count as detected by the tests
KILLED = {"killed", "timeout", "segfault", "suspicious", "caught by type check"}


@dataclass
class Survivor:
    name: str  # mutmut's mutant name, e.g. mlrep.report.stats.x_sign_test__mutmut_4
    function: str
    line: int
    removed: list[str]
    added: list[str]
    why: str | None = None  # why it is equivalent, when listed as such
    next: str | None = None  # the test that would kill it, when listed as a known survivor


@dataclass
class Result:
    module: str
    total: int = 0
    killed: int = 0
    timeouts: int = 0  # among the killed: worth a look, a slow machine can cause them
    survivors: list[Survivor] = field(default_factory=list)

    @property
    def equivalent(self) -> int:
        return sum(s.why is not None for s in self.survivors)

    @property
    def score(self) -> float:
        """Killed share among the mutants a test could tell apart from the original."""
        relevant = self.total - self.equivalent
        return self.killed / relevant if relevant else 1.0


class Interrupted(Exception):
    """SIGTERM, raised in the main thread so the same cleanup as Ctrl-C runs."""


def _on_sigterm(signum, frame) -> None:
    raise Interrupted


def copy_tree(dest: Path) -> None:
    """The working tree as git sees it (tracked plus untracked, not ignored), as plain files."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listing.split("\0")):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is skipped
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def test_files(module: str) -> list[str]:
    found = sorted({p for pattern in MODULES[module] for p in REPO.glob(pattern)})
    if not found:
        raise SystemExit(f"{module}: no test file matches {MODULES[module]}")
    return [str(p.relative_to(REPO)) for p in found]


def write_config(tree: Path, module: str, tests: list[str]) -> None:
    """mutmut reads [mutmut] in setup.cfg unless pyproject.toml has [tool.mutmut]."""
    if "[tool.mutmut]" in (tree / "pyproject.toml").read_text(encoding="utf-8"):
        raise SystemExit("pyproject.toml has [tool.mutmut], which would override this config")
    # tests find data through the repository root, which becomes mutmut's mutants/ folder
    also_copy = sorted(p.name for p in tree.iterdir() if p.name not in {"mlrep", "tests"})
    lines = [
        "[mutmut]",
        "source_paths = mlrep",
        f"only_mutate = mlrep/{module}.py",
        "pytest_add_cli_args_test_selection =",
        *(f"    {t}" for t in tests),
        "also_copy =",
        *(f"    {p}" for p in also_copy),
    ]
    (tree / "setup.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _mutmut_command(*args: str) -> tuple[list[str], dict[str, str]]:
    """mutmut's command line and environment."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the mutated copy must be the only mlrep the tests can import
    # mutmut forks a worker per mutant from a process that has run torch: a forked OpenMP
    # thread pool deadlocks, which mutmut would count as a timeout, that is as killed
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return [str(Path(sys.executable).parent / "mutmut"), *args], env


def run_mutmut(tree: Path, jobs: int, log: Path) -> None:
    """`mutmut run` in `tree`, in its own process group so that an interrupt stops all of it."""
    command, env = _mutmut_command("run", "--max-children", str(jobs))
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            command,
            cwd=tree,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = proc.wait()
        except BaseException:
            _stop(proc)
            raise
    if code != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"mutmut run failed ({code}) in {tree}:\n{tail}")


def _stop(proc: subprocess.Popen) -> None:
    """Terminate mutmut and its forked workers, then make sure none is left."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def _mutmut(tree: Path, *args: str) -> str:
    command, env = _mutmut_command(*args)
    return subprocess.run(
        command, cwd=tree, env=env, capture_output=True, text=True, check=True
    ).stdout


def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """mutmut's mangled function name -> (def line, last line): x_f, or xǁClassǁmethod."""
    spans = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            spans[f"x_{node.name}"] = (node.lineno, node.end_lineno)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    spans[f"xǁ{node.name}ǁ{item.name}"] = (item.lineno, item.end_lineno)
    return spans


def survivor(name: str, diff: str, lines: list[str], spans: dict) -> Survivor:
    """Locate a mutant in the original file from `mutmut show`'s function-relative diff."""
    mangled = name.partition("__mutmut_")[0].rpartition(".")[2]
    start, end = spans[mangled]
    removed = [ln[1:].strip() for ln in diff.splitlines() if ln[:1] == "-" and ln[:3] != "---"]
    added = [ln[1:].strip() for ln in diff.splitlines() if ln[:1] == "+" and ln[:3] != "+++"]
    hunk = re.search(r"^@@ -(\d+)", diff, re.MULTILINE)
    line = start
    if hunk and removed:
        body = diff[hunk.end() :].split("\n", 1)[1].splitlines()
        offset = next(i for i, ln in enumerate(ln for ln in body if ln[:1] != "+") if ln[:1] == "-")
        guess = start + int(hunk.group(1)) - 1 + offset
        candidates = [i for i in range(start, end + 1) if lines[i - 1].strip() == removed[0]]
        line = min(candidates, key=lambda i: abs(i - guess)) if candidates else guess
    # x_name for a function, xǁClassǁname for a method
    function = mangled[2:].replace("ǁ", ".")
    return Survivor(name, function, line, removed, added)


def _diff(mutated: libcst.Module, name: str) -> str:
    """Unified diff of a mutant's function against the original, as `mutmut show` makes it."""
    before, after = (
        libcst.Module([read(mutated, name)]).code.strip().split("\n")
        for read in (read_original_function, read_mutant_function)
    )
    return "\n".join(difflib.unified_diff(before, after, lineterm=""))


def collect(tree: Path, module: str) -> Result:
    result = Result(module)
    source = (tree / "mlrep" / f"{module}.py").read_text(encoding="utf-8")
    spans = function_spans(source)
    lines = source.splitlines()
    # what `mutmut show` prints, from one parse of the mutated module: a mutmut start (or a
    # parse of that large file) per survivor would take minutes
    mutated = libcst.parse_module((tree / "mutants" / "mlrep" / f"{module}.py").read_text("utf-8"))
    for row in _mutmut(tree, "results", "--all", "true").splitlines():
        name, _, status = row.strip().partition(": ")
        if "__mutmut_" not in name:
            continue
        result.total += 1
        if status in KILLED:
            result.killed += 1
            result.timeouts += status == "timeout"
        else:  # "survived", or "no tests": no selected test calls the function
            result.survivors.append(survivor(name, _diff(mutated, name), lines, spans))
    return result


def annotate(result: Result, listed: list[dict]) -> list[dict]:
    """Attach each listed note to its survivor; returns the entries that matched none."""
    mine = [e for e in listed if e["module"] == result.module]
    matched = []
    for s in result.survivors:
        for entry in mine:
            if entry["function"] == s.function and entry["mutant"] == " ".join(s.added):
                s.why, s.next = entry.get("why"), entry.get("next")
                matched.append(entry)
                break
    return [e for e in mine if e not in matched]


def report(result: Result, tests: list[str], stale: list[dict]) -> None:
    print(f"\n== mlrep/{result.module}.py ({', '.join(tests)})")
    for s in sorted(result.survivors, key=lambda s: (s.why is not None, s.line)):
        tag = "equivalent" if s.why else "SURVIVED"
        print(f"  {tag} mlrep/{result.module}.py:{s.line} in {s.function} ({s.name})")
        for text in s.removed:
            print(f"      - {text}")
        for text in s.added:
            print(f"      + {text}")
        if s.why:
            print(f"      why equivalent: {s.why}")
        if s.next:
            print(f"      killed next by: {s.next}")
    for entry in stale:
        print(f"  stale entry in {SURVIVORS.name}: {entry['function']}: {entry['mutant']}")


def summary(results: list[Result]) -> None:
    columns = ("mutants", "killed", "timeout", "survived", "equiv")
    print(f"\n{'module':<19} {' '.join(f'{c:>8}' for c in columns)}  killed share")
    for r in results:
        survived = len(r.survivors) - r.equivalent
        raw = r.killed / r.total if r.total else 1.0
        mark = "" if r.score >= TARGET else f"  < {TARGET:.0%}"
        print(
            f"{r.module:<19} {r.total:>8} {r.killed:>8} {r.timeouts:>8} {survived:>8} "
            f"{r.equivalent:>8}  "
            f"{r.score:6.1%} of non-equivalent ({raw:.1%} of all){mark}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", choices=sorted(MODULES), default=list(MODULES))
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested in parallel")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even where started with it ignored
    results = []
    try:
        for module in args.modules:
            tests = test_files(module)
            with tempfile.TemporaryDirectory(prefix="mlrep-mutation-") as tmp:
                tree = Path(tmp) / "tree"
                tree.mkdir()
                copy_tree(tree)
                write_config(tree, module, tests)
                print(f"mutating mlrep/{module}.py ...", flush=True)
                run_mutmut(tree, args.jobs, Path(tmp) / "mutmut.log")
                result = collect(tree, module)
            listed = yaml.safe_load(SURVIVORS.read_text(encoding="utf-8")) or []
            report(result, tests, annotate(result, listed))
            results.append(result)
    except (KeyboardInterrupt, Interrupted):
        print("\ninterrupted: the temporary copy is removed; the working tree was not touched")
        summary(results)
        sys.exit(130)
    summary(results)
    sys.exit(0 if all(r.score >= TARGET for r in results) else 1)


if __name__ == "__main__":
    main()
