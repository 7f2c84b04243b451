"""The OneAligner paper (Niu et al. 2022): pretrained encoders scored without training (Table
1), and XLM-R-large fine-tuned with OneAligner on all pairs, one English-centred pair, one
non-English pair or the top-k pairs (Tables 3-9, Figure 1).

`snakemake onealigner` scores the twelve unsupervised runs, fine-tunes every run of the
section's lists per seed (resuming after preemption), scores each on Tatoeba-36 (the Top1
models also on the New-Tatoeba set cut here, and BUCC), writes Figure 2's per-language points
and rebuilds the report. At tiny the pretrained encoders are stand-ins MLM-pretrained here on
the corpus's leak-free text; at full they are hub ids. Run names and their settings are
`mlrep/chapters/onealigner/runs.py`'s.
"""

import os
import re

from mlrep.chapters.onealigner import languages as aligner_languages
from mlrep.chapters.onealigner import runs as aligner_runs

ALIGNER = CFG["onealigner"]
ALIGNER_CHAPTER = aligner_runs.SECTION
ALIGNER_MONO = str(PATHS.chapter_data(ALIGNER_CHAPTER, "monolingual"))
ALIGNER_STAND_IN = os.path.join(
    str(PATHS.chapter_data(ALIGNER_CHAPTER, "encoders")), "{encoder}"
)
ALIGNER_RUN = str(PATHS.run(ALIGNER_CHAPTER, "{run}", "{seed}"))
ALIGNER_MODEL = str(PATHS.model(ALIGNER_CHAPTER, "{run}", "{seed}"))
ALIGNER_UNSUP = str(PATHS.run(ALIGNER_CHAPTER, "{run}", aligner_runs.UNTRAINED_SEED))
# an encoder's four unsupervised runs, {similarity} and {norm} as the run names spell them
ALIGNER_UNSUP_METRICS = os.path.join(
    ALIGNER_UNSUP.format(run=aligner_runs.unsup_template("{encoder}")), "metrics.json"
)
ALIGNER_TUNED = aligner_runs.fine_tuned(ALIGNER)
ALIGNER_FULL_PROTOCOL = aligner_runs.full_protocol(ALIGNER)
ALIGNER_TATOEBA = str(PATHS.benchmark(ALIGNER["tatoeba"]))
ALIGNER_NEW_TATOEBA = str(PATHS.chapter_data(ALIGNER_CHAPTER, "new_tatoeba"))
ALIGNER_LANGUAGES = str(PATHS.run_group(ALIGNER_CHAPTER, aligner_languages.RUN))
ALIGNER_BUCC = str(PATHS.dataset(ALIGNER["bucc"]))
# what fine-tuning keeps out: the test sets' sentences (a test set cut from a training
# corpus's own held-out splits, the tiny BUCC, is disjoint from its train split already)
ALIGNER_EXCLUDE = [
    ALIGNER_TATOEBA,
    *(
        [ALIGNER_BUCC]
        if ALIGNER["bucc"] not in (ALIGNER["en_data"], ALIGNER["ne_data"])
        else []
    ),
]


CHAPTER_DATA[ALIGNER_CHAPTER] = list(
    dict.fromkeys(
        [
            str(PATHS.dataset(ALIGNER["en_data"])),
            str(PATHS.dataset(ALIGNER["ne_data"])),
            ALIGNER_TATOEBA,
            str(PATHS.dataset(ALIGNER["new_tatoeba"])),
            ALIGNER_BUCC,
            str(PATHS.dataset(ALIGNER["monolingual"]["corpus"])),
        ]
    )
)
CHAPTER_TARGETS[ALIGNER_CHAPTER] = [
    os.path.join(folder, "metrics.json")
    for folder in [
        *(ALIGNER_UNSUP.format(run=run) for run in aligner_runs.unsupervised()),
        *(
            ALIGNER_RUN.format(run=run, seed=seed)
            for seed in ALIGNER["seeds"]
            for run in ALIGNER_TUNED
        ),
    ]
] + [ALIGNER_LANGUAGES]


localrules:
    onealigner,


rule onealigner:
    """Every OneAligner run evaluated, and the report with its tables."""
    input:
        CHAPTER_TARGETS[ALIGNER_CHAPTER],
        str(PATHS.report.index),


rule onealigner_pretrain:
    """A stand-in for a pretrained encoder (mBERT's or XLM-R's class, the section's shape),
    MLM-pretrained on the leak-free text; only where the encoder is no hub id."""
    input:
        ALIGNER_MONO,
    output:
        directory(ALIGNER_STAND_IN),
    log:
        log_path(ALIGNER_CHAPTER, "pretrain_{encoder}"),
    wildcard_constraints:
        encoder=aligner_runs.alternatives(
            [n for n, spec in ALIGNER["encoders"].items() if not spec["encoder"]]
        ),
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("embed mlm-pretrain"),
        flags=lambda wildcards: flags_from(
            ALIGNER["encoders"][wildcards.encoder]["stand_in"]
        ),
        seed=ALIGNER["seeds"][0],
        section=f"{ALIGNER_CHAPTER}.pretrain",
        scale=CFG["scale"],
    shell:
        "mlrep embed mlm-pretrain --section {params.section} --text {input} --out {output} "
        "--seed {params.seed} --threads {threads} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule onealigner_evaluate_unsupervised:
    """A pretrained encoder's four Table 1 scorers on Tatoeba-36 without training (mean
    pooling and BERT-score, without and with the normalisation): one process, one encoding
    of the sentences, each scorer written as its own run."""
    input:
        tatoeba=ALIGNER_TATOEBA,
        encoder=lambda wildcards: aligner_runs.encoder_input(
            ALIGNER, wildcards.encoder, ALIGNER_STAND_IN
        ),
    output:
        expand(
            ALIGNER_UNSUP_METRICS,
            similarity=aligner_runs.SIMILARITIES,
            norm=aligner_runs.NORMS,
            allow_missing=True,
        ),
    log:
        log_path(ALIGNER_CHAPTER, "unsup-{encoder}", "evaluate"),
    wildcard_constraints:
        encoder=aligner_runs.alternatives(list(aligner_runs.ENCODERS)),
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("embed align-evaluate"),
        encoder=lambda wildcards: aligner_runs.encoder(
            ALIGNER, wildcards.encoder, ALIGNER_STAND_IN
        ),
        flags=lambda wildcards: flags_from(
            aligner_runs.grid_values(ALIGNER, wildcards.encoder)
        ),
        # templates of {similarity} and {norm}, which the verb fills per scorer
        run=lambda wildcards: aligner_runs.unsup_template(wildcards.encoder),
        out=lambda wildcards: ALIGNER_UNSUP_METRICS.format(
            encoder=wildcards.encoder, similarity="{similarity}", norm="{norm}"
        ),
        seed=aligner_runs.UNTRAINED_SEED,
        section=f"{ALIGNER_CHAPTER}.evaluate",
        scale=CFG["scale"],
    shell:
        "mlrep embed align-evaluate --section {params.section} --encoder {params.encoder} "
        "--tatoeba {input.tatoeba} --grid --out '{params.out}' --run '{params.run}' "
        "--seed {params.seed} --threads {threads} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule onealigner_finetune:
    """One OneAligner fine-tuning of the section's encoder on a run's pairs and budget, at
    one seed; resumes from its checkpoints after preemption."""
    input:
        data=lambda wildcards: str(
            PATHS.dataset(aligner_runs.data_key(ALIGNER, wildcards.run))
        ),
        exclude=ALIGNER_EXCLUDE,
        encoder=aligner_runs.encoder_input(
            ALIGNER, ALIGNER["finetune_encoder"], ALIGNER_STAND_IN
        ),
    output:
        os.path.join(ALIGNER_MODEL, "train.json"),
    log:
        log_path(ALIGNER_CHAPTER, "{run}", "train_seed{seed}"),
    wildcard_constraints:
        run=aligner_runs.alternatives(ALIGNER_TUNED),
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("embed align-finetune"),
        encoder=lambda wildcards: aligner_runs.encoder(
            ALIGNER, ALIGNER["finetune_encoder"], ALIGNER_STAND_IN
        ),
        out=lambda wildcards, output: os.path.dirname(output[0]),
        flags=lambda wildcards: flags_from(
            aligner_runs.finetune_values(ALIGNER, wildcards.run)
        ),
        section=f"{ALIGNER_CHAPTER}.finetune",
        scale=CFG["scale"],
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first
    shell:
        "exec mlrep embed align-finetune --section {params.section} "
        "--encoder {params.encoder} --data {input.data} --exclude {input.exclude} "
        "--out {params.out} --seed {wildcards.seed} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule onealigner_evaluate:
    """A fine-tuned encoder's Tatoeba-36 scores (the Top1 models' also New-Tatoeba and BUCC)
    and its training pairs (Figure 1's x)."""
    input:
        tatoeba=ALIGNER_TATOEBA,
        new_tatoeba=ALIGNER_NEW_TATOEBA,
        bucc=ALIGNER_BUCC,
        summary=rules.onealigner_finetune.output[0],
    output:
        os.path.join(ALIGNER_RUN, "metrics.json"),
    log:
        log_path(ALIGNER_CHAPTER, "{run}", "evaluate_seed{seed}"),
    wildcard_constraints:
        run=aligner_runs.alternatives(ALIGNER_TUNED),
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("embed align-evaluate"),
        encoder=lambda wildcards, input: os.path.dirname(input.summary),
        flags=lambda wildcards: flags_from(
            aligner_runs.evaluate_values(ALIGNER, wildcards.run)
        ),
        # the mining settings of the wildcards alone (Snakemake records only such params, so
        # a changed setting reruns the job), the benchmarks' folders of the input
        protocols=lambda wildcards: aligner_runs.protocol_flags(ALIGNER, wildcards.run),
        benchmarks=lambda wildcards, input: (
            f"--new-tatoeba {input.new_tatoeba} --bucc {input.bucc}"
            if wildcards.run in aligner_runs.full_protocol(ALIGNER)
            else ""
        ),
        section=f"{ALIGNER_CHAPTER}.evaluate",
        scale=CFG["scale"],
    shell:
        "mlrep embed align-evaluate --section {params.section} --encoder {params.encoder} "
        "--tatoeba {input.tatoeba} {params.benchmarks} {params.protocols} --out {output} "
        "--run {wildcards.run} "
        "--seed {wildcards.seed} --threads {threads} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule onealigner_new_tatoeba:
    """The New-Tatoeba set: every pair of two CC-100 languages with its held-out splits
    merged, the pairs of enough examples kept and sampled with a recorded seed."""
    input:
        str(PATHS.dataset(ALIGNER["new_tatoeba"])),
    output:
        directory(ALIGNER_NEW_TATOEBA),
    log:
        log_path(ALIGNER_CHAPTER, "new_tatoeba"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("embed new-tatoeba"),
        flags=flags_from(aligner_runs.new_tatoeba_values(ALIGNER)),
        section=f"{ALIGNER_CHAPTER}.new_tatoeba_set",
        scale=CFG["scale"],
    shell:
        "mlrep embed new-tatoeba --section {params.section} --corpus {input} --out {output} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule onealigner_language_points:
    """Figure 2's points: per language, its CC-100 size (tiny: its pretraining text) and Top1
    (Eng)'s New-Tatoeba mean over the pairs involving it, as runs top1-eng/<X> per seed.
    """
    input:
        metrics=[
            os.path.join(
                ALIGNER_RUN.format(
                    run=aligner_runs.aliases(ALIGNER)[aligner_languages.RUN], seed=seed
                ),
                "metrics.json",
            )
            for seed in ALIGNER["seeds"]
        ],
        text=[] if ALIGNER["cc100_gb"] else [ALIGNER_MONO],
    output:
        directory(ALIGNER_LANGUAGES),
    log:
        log_path(ALIGNER_CHAPTER, "language_points"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("onealigner language-points"),
        sizes=aligner_runs.size_flags(ALIGNER, ALIGNER_MONO),
        scale=CFG["scale"],
    shell:
        "mlrep onealigner language-points --metrics {input.metrics} {params.sizes} "
        "--out {output} --scale {params.scale} > {log} 2>&1"
