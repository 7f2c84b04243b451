"""Chapter 2 (EMS): one tokenisation, every Table 2.14 / LaBSE-EMS-* run and the Table 2.2 grid.

`snakemake ch2_ems` prepares the chapter's pairs, trains each run of `ch2_ems.runs` and each
grid point (`grid/<key>-<value>`) per seed, evaluates the runs on Tatoeba and the held-out
pairs (grid points on their validation loss) and rebuilds the report.
"""

import os
import re

from mlrep.embed import runs as ems_runs

EMS = CFG["ch2_ems"]
EMS_CHAPTER = ems_runs.SECTION
EMS_RUN = str(PATHS.embed_run(EMS_CHAPTER, "{run}", "{seed}"))
EMS_GRID = str(PATHS.embed_run(EMS_CHAPTER, ems_runs.GRID_PREFIX + "{point}", "{seed}"))
EMS_NAMES = "|".join(re.escape(run) for run in ems_runs.run_names(EMS))
EMS_POINTS = "|".join(re.escape(point) for point in ems_runs.grid_points(EMS))

CHAPTER_DATA[EMS_CHAPTER] = [
    str(PATHS.dataset(key)) for key in [*EMS["sources"], EMS["tatoeba"]]
]
CHAPTER_TARGETS[EMS_CHAPTER] = [
    os.path.join(folder, "metrics.json")
    for seed in EMS["seeds"]
    for folder in [
        *(EMS_RUN.format(run=run, seed=seed) for run in ems_runs.run_names(EMS)),
        *(EMS_GRID.format(point=p, seed=seed) for p in ems_runs.grid_points(EMS)),
    ]
]


localrules:
    ch2_ems,


rule ch2_ems:
    """Every Chapter 2 run and grid point, evaluated, and the report with its tables."""
    input:
        CHAPTER_TARGETS[EMS_CHAPTER],
        str(PATHS.report.index),


rule ems_prepare:
    """SentencePiece over every training side and the token ids of all pairs."""
    input:
        [str(PATHS.dataset(source)) for source in EMS["sources"]],
    output:
        directory(str(PATHS.embed_prepared(EMS_CHAPTER))),
    log:
        log_path(EMS_CHAPTER, "prepare"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        flags=flags_from(EMS["prepare"]),
        scale=CFG["scale"],
    shell:
        "mlrep embed prepare --sources {input} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ems_train:
    """One run or grid point at one seed; resumes from its checkpoints after preemption."""
    input:
        rules.ems_prepare.output,
    output:
        model=os.path.join(EMS_RUN, "model.pt"),
        summary=os.path.join(EMS_RUN, "train.json"),
    log:
        log_path(EMS_CHAPTER, "{run}", "train_seed{seed}"),
    wildcard_constraints:
        run=f"{EMS_NAMES}|{re.escape(ems_runs.GRID_PREFIX)}({EMS_POINTS})",
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        out=lambda wildcards, output: os.path.dirname(output.model),
        flags=lambda wildcards: flags_from(ems_runs.run_values(EMS, wildcards.run)),
        scale=CFG["scale"],
    shell:
        "mlrep embed train --data {input} --out {params.out} --run {wildcards.run} "
        "--seed {wildcards.seed} --threads {threads} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule ems_evaluate:
    """Tatoeba P@1 per language (real benchmark) and held-out P@1 of one run's encoder."""
    input:
        model=rules.ems_train.output.model,
        summary=rules.ems_train.output.summary,
        prepared=rules.ems_prepare.output,
        tatoeba=str(PATHS.dataset(EMS["tatoeba"])),
    output:
        os.path.join(EMS_RUN, "metrics.json"),
    log:
        log_path(EMS_CHAPTER, "{run}", "evaluate_seed{seed}"),
    wildcard_constraints:
        run=EMS_NAMES,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        flags=flags_from(EMS["evaluate"]),
        scale=CFG["scale"],
    shell:
        "mlrep embed evaluate --model {input.model} --data {input.prepared} "
        "--tatoeba {input.tatoeba} --out {output} --run {wildcards.run} --seed {wildcards.seed} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ems_grid_evaluate:
    """A grid point's validation loss (Table 2.2's selection criterion) and held-out P@1."""
    input:
        model=os.path.join(EMS_GRID, "model.pt"),
        summary=os.path.join(EMS_GRID, "train.json"),
        prepared=rules.ems_prepare.output,
    output:
        os.path.join(EMS_GRID, "metrics.json"),
    log:
        log_path(EMS_CHAPTER, "grid", "{point}", "evaluate_seed{seed}"),
    wildcard_constraints:
        point=EMS_POINTS,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        run=lambda wildcards: ems_runs.GRID_PREFIX + wildcards.point,
        flags=flags_from(EMS["evaluate"]),
        scale=CFG["scale"],
    shell:
        "mlrep embed evaluate --model {input.model} --data {input.prepared} --out {output} "
        "--run {params.run} --seed {wildcards.seed} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"
