"""Helpers that all rule files share (job resources, flags, targets)."""

from mlrep.cli import build_parser
from mlrep.cliutil import flags_from
from mlrep.closure import Verbs, user_store

# The software of every rule (used with --sdm conda; the README's .venv holds the same pins).
MLREP_ENV = "../envs/mlrep.yaml"


def job_resources(kind, gpu=None):
    """Portable resources (mem_mb, runtime, gpu) of a job kind from params.yaml `resources`.

    `gpu` (a number or a function of the wildcards) is what a step needs beyond its kind's
    count, e.g. the thesis's GPUs of a dataset's training; it applies only where the kind has
    GPUs at this scale, so the same rule is a CPU job at tiny.
    """
    spec = CFG["resources"][kind]
    out = {k: v for k, v in spec.items() if k not in ("threads", "gpu")}
    if spec.get("gpu", 0) > 0:
        out["gpu"] = spec["gpu"] if gpu is None else gpu
    return out


def job_threads(kind):
    return CFG["resources"][kind].get("threads", 1)


# The verbs of the `mlrep` command and the code each of them runs (mlrep/closure.py), kept
# between runs in the user's cache while the package's files stay the same.
MLREP_VERBS = Verbs(build_parser(), store=user_store())


def code_version(verb):
    """The `code` param of the rules that run ``mlrep <verb>``, the digest of the code the
    verb runs (its import closure and the data files it reads), so Snakemake's params trigger
    reruns their jobs when, and only when, that code changes. Name the verb the shell command
    runs; tests/test_code_version.py checks that each one does."""
    return MLREP_VERBS.closure(verb).digest


def log_path(*parts):
    """Where a job writes its log: results/logs/<area>/<name>.log."""
    return str(PATHS.results.joinpath("logs", *parts)) + ".log"


# Each chapter's rule file registers the files its chapter target needs (its runs'
# metrics.json) and the datasets it reads (results/data/<key>), so `all`, `data`, the
# report and the DVC stages are derived from one place.
CHAPTER_TARGETS = {}
CHAPTER_DATA = {}


def data_targets():
    """The `data` target: the tiny corpus and every dataset an enabled chapter reads."""
    datasets = [str(PATHS.tiny_corpus)]
    for chapter in CFG["chapters"]:
        datasets.extend(CHAPTER_DATA.get(chapter, []))
    return list(dict.fromkeys(datasets))


def all_targets():
    """The `all` target: the data, each enabled chapter's outputs, the report."""
    targets = data_targets()
    for chapter in CFG["chapters"]:
        targets.extend(CHAPTER_TARGETS.get(chapter, []))
    targets.append(str(PATHS.report.index))
    return targets


def report_waits_for(wildcards):
    """The runs the report is rendered after: those of the chapters this invocation builds.

    `snakemake report` alone renders whatever results exist and runs nothing; `all` (or no
    target) waits for every enabled chapter and a chapter target (`ch8_layernorm`) for its
    own runs, so their report is rendered last. Inside a cluster job (`--target-jobs`) the
    DAG is the report job alone and its inputs exist already.
    """
    settings = workflow.dag_settings
    if settings.target_jobs:
        return []
    targets = settings.targets or {"all"}
    chapters = CFG["chapters"] if "all" in targets else targets
    return [t for c in chapters for t in CHAPTER_TARGETS.get(c, [])]
