"""Chapter 3 and Appendix A (LEALLA): a frozen teacher, its reduction ladder, the architecture
search and the distilled students with their loss ablations.

`snakemake ch3_lealla` prepares the teacher's languages, caches the teacher's vectors of every
prepared sentence once, trains the reduction ladder (one job: each width takes seconds on the
cached vectors) and every student of `ch3_lealla.architectures`, `sizes` and `losses` per seed,
scores the teacher, the ladder's widths (one job: the teacher encodes each benchmark once),
each student and the pretrained baselines with the same protocols (held-out pairs, Tatoeba,
UN, BUCC), and rebuilds the report. Run names and their settings are
`mlrep/chapters/ch3_lealla/runs.py`'s.
"""

import os
import re

from mlrep.chapters.ch3_lealla import runs as lealla_runs
from mlrep.report.metrics import UNTRAINED_SEED

LEALLA = CFG["ch3_lealla"]
LEALLA_CHAPTER = lealla_runs.SECTION
LEALLA_DATA = str(PATHS.chapter_data(LEALLA_CHAPTER, "pairs"))
LEALLA_CACHE = str(PATHS.chapter_data(LEALLA_CHAPTER, "teacher"))
LEALLA_RUN = str(PATHS.run(LEALLA_CHAPTER, "{run}", "{seed}"))
LEALLA_MODEL = str(PATHS.model(LEALLA_CHAPTER, "{run}", "{seed}"))
LEALLA_LADDER = str(PATHS.model(LEALLA_CHAPTER, "reduce", "{seed}"))
LEALLA_UNTRAINED = str(PATHS.run(LEALLA_CHAPTER, "{run}", UNTRAINED_SEED))
LEALLA_TRAINED = lealla_runs.trained(LEALLA)
LEALLA_DIMS = lealla_runs.reduction_dims(LEALLA)
LEALLA_LADDER_DIMS = lealla_runs.reduce_dims(LEALLA["teacher"]["dim"])
LEALLA_REDUCED_RUNS = [
    f"{lealla_runs.REDUCE_PREFIX}{dim}" for dim in LEALLA_LADDER_DIMS
]
LEALLA_STUDENTS = "|".join(re.escape(run) for run in LEALLA_TRAINED) or "(?!)"
LEALLA_UNTRAINED_RUNS = [lealla_runs.TEACHER_RUN, *LEALLA["baselines"]]
# what every evaluation reads besides its encoder, and its settings as flags
LEALLA_SCORING = {
    "tatoeba": str(PATHS.benchmark(LEALLA["tatoeba"])),
    "un": str(PATHS.dataset(LEALLA["un"])),
    "bucc": str(PATHS.dataset(LEALLA["bucc"])),
}
LEALLA_EVALUATE_FLAGS = " ".join(
    flags_from(section)
    for section in (
        LEALLA["evaluate"],
        LEALLA["benchmarks"],
        CFG["evaluate"]["search"],
        CFG["evaluate"]["bucc"],
    )
)

CHAPTER_DATA[LEALLA_CHAPTER] = list(
    dict.fromkeys(
        [
            *(str(PATHS.dataset(source)) for source in LEALLA["sources"]),
            *LEALLA_SCORING.values(),
        ]
    )
)
CHAPTER_TARGETS[LEALLA_CHAPTER] = [
    os.path.join(folder, "metrics.json")
    for folder in [
        *(LEALLA_UNTRAINED.format(run=run) for run in LEALLA_UNTRAINED_RUNS),
        *(
            LEALLA_RUN.format(run=run, seed=seed)
            for seed in LEALLA["seeds"]
            for run in LEALLA_REDUCED_RUNS
        ),
        *(
            LEALLA_RUN.format(run=run, seed=seed)
            for seed in LEALLA["seeds"]
            for run in LEALLA_TRAINED
        ),
    ]
]


localrules:
    ch3_lealla,


rule ch3_lealla:
    """Every Chapter 3 run evaluated, and the report with its tables."""
    input:
        CHAPTER_TARGETS[LEALLA_CHAPTER],
        str(PATHS.report.index),


rule ch3_prepare:
    """SentencePiece over the teacher's languages and the token ids of their pairs."""
    input:
        [str(PATHS.dataset(source)) for source in LEALLA["sources"]],
    output:
        directory(LEALLA_DATA),
    log:
        log_path(LEALLA_CHAPTER, "prepare"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("embed prepare"),
        flags=flags_from(LEALLA["prepare"]),
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep embed prepare --section {params.section} --sources {input} --out {output} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch3_teacher_cache:
    """The frozen teacher's vector of every prepared sentence, computed once for all runs."""
    input:
        data=rules.ch3_prepare.output,
        teacher=lealla_runs.fetched(
            LEALLA, lealla_runs.TEACHER_RUN, str(PATHS.resources)
        ),
    output:
        directory(LEALLA_CACHE),
    log:
        log_path(LEALLA_CHAPTER, "teacher_cache"),
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("embed teacher-cache"),
        flags=flags_from(LEALLA["teacher"]),
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep embed teacher-cache --section {params.section} --data {input.data} "
        "--out {output} --threads {threads} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule ch3_reduce:
    """The dimension-reduction ladder: one dense layer per width on the cached teacher
    (Fig 3.1, Table A.2), and the fixed projections of the ams+syn students."""
    input:
        data=rules.ch3_prepare.output,
        cache=rules.ch3_teacher_cache.output,
    output:
        ladder=os.path.join(LEALLA_LADDER, "ladder.json"),
        models=[
            os.path.join(LEALLA_LADDER, str(dim), "model.pt") for dim in LEALLA_DIMS
        ],
    log:
        log_path(LEALLA_CHAPTER, "reduce", "train_seed{seed}"),
    wildcard_constraints:
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("embed reduce"),
        out=lambda wildcards, output: os.path.dirname(output.ladder),
        flags=flags_from(
            {
                **lealla_runs.reduce_train(LEALLA),
                "lr": LEALLA["schedule"]["wide_lr"],
                **LEALLA["reduce"],
                **LEALLA["objective"],
                "dims": LEALLA_DIMS,
            }
        ),
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    shell:
        "exec mlrep embed reduce --section {params.section} --data {input.data} "
        "--teacher-cache {input.cache} --out {params.out} --seed {wildcards.seed} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch3_distill:
    """One student (an architecture of the search, or a LEALLA size and loss) at one seed;
    resumes from its checkpoints after preemption."""
    input:
        data=rules.ch3_prepare.output,
        cache=rules.ch3_teacher_cache.output,
        projection=lambda wildcards: lealla_runs.projection(
            LEALLA, wildcards.run, LEALLA_LADDER.format(seed=wildcards.seed)
        ),
    output:
        model=os.path.join(LEALLA_MODEL, "model.pt"),
        summary=os.path.join(LEALLA_MODEL, "train.json"),
    log:
        log_path(LEALLA_CHAPTER, "{run}", "train_seed{seed}"),
    wildcard_constraints:
        run=LEALLA_STUDENTS,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("embed distill"),
        out=lambda wildcards, output: os.path.dirname(output.model),
        flags=lambda wildcards: flags_from(
            lealla_runs.run_values(LEALLA, wildcards.run)
        ),
        projection=lambda wildcards, input: (
            f"--projection {input.projection}" if input.projection else ""
        ),
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first
    shell:
        "exec mlrep embed distill --section {params.section} --data {input.data} "
        "--teacher-cache {input.cache} --out {params.out} --seed {wildcards.seed} "
        "--threads {threads} --scale {params.scale} {params.projection} {params.flags} "
        "> {log} 2>&1"


rule ch3_evaluate:
    """A student's held-out, Tatoeba, UN and BUCC scores (a GPU job at full: UN searches
    millions of English sentences per language)."""
    input:
        unpack(lambda wildcards: LEALLA_SCORING),
        model=rules.ch3_distill.output.model,
        summary=rules.ch3_distill.output.summary,
        data=rules.ch3_prepare.output,
    output:
        os.path.join(LEALLA_RUN, "metrics.json"),
    log:
        log_path(LEALLA_CHAPTER, "{run}", "evaluate_seed{seed}"),
    wildcard_constraints:
        run=LEALLA_STUDENTS,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("embed evaluate"),
        flags=LEALLA_EVALUATE_FLAGS,
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep embed evaluate --section {params.section} --data {input.data} "
        "--model {input.model} --tatoeba {input.tatoeba} --un {input.un} --bucc {input.bucc} "
        "--out {output} --run {wildcards.run} --seed {wildcards.seed} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch3_evaluate_reduced:
    """The teacher through each width of the ladder, scored like a student: one process per
    seed, so the teacher encodes each benchmark once for every width."""
    input:
        unpack(lambda wildcards: LEALLA_SCORING),
        reductions=[
            os.path.join(LEALLA_LADDER, str(dim), "model.pt")
            for dim in LEALLA_LADDER_DIMS
        ],
        cache=rules.ch3_teacher_cache.output,
        data=rules.ch3_prepare.output,
    output:
        [
            os.path.join(str(PATHS.run(LEALLA_CHAPTER, run, "{seed}")), "metrics.json")
            for run in LEALLA_REDUCED_RUNS
        ],
    log:
        log_path(LEALLA_CHAPTER, "reduce", "evaluate_seed{seed}"),
    wildcard_constraints:
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("embed evaluate"),
        flags=f"{LEALLA_EVALUATE_FLAGS} {lealla_runs.teacher_flags(LEALLA)}",
        runs=" ".join(LEALLA_REDUCED_RUNS),
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep embed evaluate --section {params.section} --data {input.data} "
        "--teacher-cache {input.cache} --reduction {input.reductions} "
        "--tatoeba {input.tatoeba} --un {input.un} --bucc {input.bucc} --out {output} "
        "--run {params.runs} --seed {wildcards.seed} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch3_evaluate_pretrained:
    """The teacher at full width (its cached vectors for the held-out pairs) or a pretrained
    baseline of Table 3.3 (encoding them itself), scored like a student."""
    input:
        unpack(lambda wildcards: LEALLA_SCORING),
        cache=rules.ch3_teacher_cache.output,
        data=rules.ch3_prepare.output,
        checkpoint=lambda wildcards: lealla_runs.fetched(
            LEALLA, wildcards.run, str(PATHS.resources)
        ),
    output:
        os.path.join(LEALLA_UNTRAINED, "metrics.json"),
    log:
        log_path(LEALLA_CHAPTER, "{run}", "evaluate"),
    wildcard_constraints:
        run="|".join(re.escape(run) for run in LEALLA_UNTRAINED_RUNS),
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("embed evaluate"),
        # the encoder's settings of the wildcards alone (Snakemake records only such params,
        # so a changed teacher or baseline reruns the job), the teacher's cache of the input
        encoder=lambda wildcards: lealla_runs.pretrained_flags(LEALLA, wildcards.run),
        cache=lambda wildcards, input: (
            f"--teacher-cache {input.cache}"
            if wildcards.run == lealla_runs.TEACHER_RUN
            else ""
        ),
        flags=LEALLA_EVALUATE_FLAGS,
        seed=UNTRAINED_SEED,
        section=LEALLA_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep embed evaluate --section {params.section} --data {input.data} "
        "{params.cache} {params.encoder} --tatoeba {input.tatoeba} --un {input.un} "
        "--bucc {input.bucc} "
        "--out {output} --run {wildcards.run} --seed {params.seed} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"
