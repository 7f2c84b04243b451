"""mlrep: reproduce Mao (2024) "Breaking Language Barriers" and its companion papers.

Thin on purpose: configuration, validation, rule files, and the `all` target. Logic lives in
the `mlrep` package; each rule file under workflow/rules/ covers one area.
"""

from pathlib import Path

from snakemake.exceptions import WorkflowError

from mlrep import chapters as mlrep_chapters
from mlrep import config as mlrep_config
from mlrep import config_checks
from mlrep.paths import Paths
from mlrep.train.signals import leave_stop_signals_to_trainers


configfile: "params.yaml"


# Validate params.yaml (plus --configfile and --config overrides) for every scale before any
# job is planned; a problem is reported under the file or option that introduced it.
try:
    CFG = config_checks.load_checked(
        config,
        Path(workflow.basedir) / "workflow/schemas/params.schema.yaml",
        label="params.yaml with --configfile/--config overrides",
        sources=mlrep_config.snakemake_sources(workflow.config_settings, "params.yaml"),
    )
except mlrep_config.ConfigError as exc:
    raise WorkflowError(str(exc)) from None
PATHS = Paths.from_config(CFG)
# Under SLURM, the time-limit warning and preemption signals are for the training jobs.
leave_stop_signals_to_trainers()


localrules:
    all,
    data,
    tiny_sources,


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/cluster.smk"


# one rule file per built (or landing) chapter of the registry (mlrep/chapters/__init__.py), a chapter
# after the one whose rules it reuses
for chapter in mlrep_chapters.include_order():

    include: chapter.rules


include: "workflow/rules/reports.smk"
include: "workflow/rules/summaries.smk"


rule all:
    default_target: True
    input:
        all_targets(),
