"""Chapter 4 (JASS / ENSS), the data half: fine-tuning pools, leak-free pre-training text, its
words, one joint BPE per pair model and the static pre-training pairs.

Per fine-tuning pair (ja-en, ja-zh, en-ko) `ch4_pool` cuts a seeded pool of training lines
(the nested fine-tuning sizes are its prefixes) and the capped valid/test sets from the words of
preprocess dataset `preprocess.subwords.settings.ch4_jass.dataset` (ja-zh joined on segment
ids, the Japanese bunsetsu spans carried along). The `monolingual` rule (data.smk) leaves every
held-out id and every pool's ids out of the pre-training text; `ch4_tokenize`, `ch4_segment`
and `ch4_segment_ja` are the preprocessing rules with the same flags on that text (the first
`ch4_jass.data.max_monolingual` lines per language), and `ch4_parse` parses English words for
the tree tasks. Each pair model (jaen, jazh, enko) learns one joint BPE on its two languages'
monolingual words (`ch4_bpe`, setting `preprocess.subwords.settings.ch4_jass`) and
`ch4_pretrain_pairs` writes the pairs of one (pair model, language, task set, split): train
from the monolingual words, valid from the pool's valid words. `ch4_jass_pretrain_data`
builds the sides the planned runs read (`mlrep.chapters.ch4_jass.training.pretrain_data_ids`).

The training half (`mlrep.chapters.ch4_jass.training` says where everything is):
`ch4_subwords` writes a pool's words in its pair model's BPE (the fine-tuning text);
`ch4_pretrain_data` binarises a pre-training's two sides with the pair's dictionary, which
also counts the pool's subwords (`mlrep nmt pair-pretrain`), and `ch4_pretrain` trains it;
each `ch4_finetune_<job>` (`training.finetune_jobs`: at tiny one per start, at full one per
fine-tune) runs, in one process, the steps of its fine-tunes: binarise a fine-tune's sample
(the first `runs.sample_size` pool lines) in its direction with its start's dictionary
(`mlrep nmt pair-finetune`), train it from the pre-trained `checkpoint_best.pt` (#0, vanilla:
from scratch), decode its pool's test subwords into words and write their WAT-style BLEU into
its metrics.json, at every seed. Each fine-tune's folder is a run of the chapter's tables.
`ch4_jass_train` trains every planned model at every seed; `ch4_jass_evaluate` asks for every
planned fine-tune's metrics.
"""

import glob
import os
import re
import shlex
from pathlib import Path

from mlrep.chapters.ch4_jass import cases as ch4_cases
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.chapters.ch4_jass import human as ch4_human
from mlrep.chapters.ch4_jass import runs as ch4_runs
from mlrep.chapters.ch4_jass import training as ch4_training
from mlrep.text import pretrain_tasks

CH4_CHAPTER = ch4_data.SECTION
CH4 = CFG[CH4_CHAPTER]
CH4_DATASET = preprocess_plan.subword_setting(PRE, CH4_CHAPTER)["dataset"]
# the corpus whose segment ids the preprocessed words have
CH4_CORPUS = str(PATHS.dataset(preprocess_plan.dataset(PRE, CH4_DATASET)["corpus"]))
CH4_MONO = str(PATHS.chapter_data(CH4_CHAPTER, "monolingual"))
CH4_WORDS = ch4_data.words(PATHS, "{lang}")
CH4_BUNSETSU = ch4_data.bunsetsu(PATHS, "{lang}")
CH4_TREES = ch4_data.trees(PATHS, "{text}")
CH4_PAIRS_OUT = ch4_data.pretrain(PATHS, "{model}", "{lang}", "{tasks}", "{split}")
CH4_MODELS = "|".join(ch4_data.FINETUNE_PAIRS)
CH4_CAP = flags_from({"max_lines": CH4["data"]["max_monolingual"]})
CH4_TASKS = "|".join(
    re.escape(t) for t in [*pretrain_tasks.TASKS, *pretrain_tasks.COMPOSITES]
)
CH4_PRETRAINED = "|".join(re.escape(r) for r in ch4_runs.pretrainings())
CH4_FINETUNED = "|".join(re.escape(r) for r in ch4_runs.finetunes())
CH4_SUBWORDS = ch4_data.subwords(PATHS, "{pair}", "{split}", "{lang}")
CH4_PRETRAIN_MODEL = ch4_training.model(PATHS, ch4_training.PRETRAIN, "{run}", "{seed}")
CH4_FINETUNE_MODEL = ch4_training.model(PATHS, ch4_training.FINETUNE, "{run}", "{seed}")

# the monolingual text leaves every pool's training ids out (data.smk)
MONOLINGUAL_EXCLUDE[CH4_CHAPTER] = ch4_data.exclude_ids(PATHS)
CHAPTER_DATA[CH4_CHAPTER] = list(
    dict.fromkeys([CH4_CORPUS, str(PATHS.dataset(CH4["monolingual"]["corpus"]))])
)
# the chapter's run folders: every planned fine-tune's metrics at every seed, and the human
# evaluation's systems (pending until their sheets are returned)
CHAPTER_TARGETS[CH4_CHAPTER] = [
    *ch4_training.evaluation_targets(PATHS, CH4),
    *ch4_human.targets(PATHS, CH4),
]


localrules:
    ch4_jass,
    ch4_jass_pretrain_data,
    ch4_jass_train,


rule ch4_jass:
    """Every Chapter 4 run evaluated, and the report with its tables."""
    input:
        CHAPTER_TARGETS[CH4_CHAPTER],
        str(PATHS.report.index),


# The Japanese side of a pool also carries its bunsetsu spans.
ruleorder: ch4_pool_ja > ch4_pool


rule ch4_pool:
    """A fine-tuning pair's pool (nested sizes are prefixes) and valid/test sets, in words."""
    input:
        words=lambda w: ch4_data.pool_sources(PATHS, CH4_DATASET, f"{w.a}-{w.b}", "tok"),
        corpus=CH4_CORPUS,
    output:
        ch4_data.pool_outputs(PATHS, "{a}", "{b}", "ids"),
    log:
        log_path(CH4_CHAPTER, "pool", "{a}-{b}"),
    wildcard_constraints:
        a="[a-z]{2}",
        b="[a-z]{2}",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("data finetune-pool"),
        words=str(PATHS.preprocessed(CH4_DATASET, "tok")),
        ids=lambda w, input: input.corpus,
        out=lambda w, output: os.path.dirname(output[0]),
        aligned="",
        section=f"{CH4_CHAPTER}.data",
        scale=CFG["scale"],
    shell:
        "mlrep data finetune-pool --pair {wildcards.a}-{wildcards.b} --words {params.words} "
        "--ids {params.ids} --out {params.out} --section {params.section} "
        "--scale {params.scale} {params.aligned} > {log} 2>&1"


use rule ch4_pool as ch4_pool_ja with:
    input:
        words=lambda w: ch4_data.pool_sources(PATHS, CH4_DATASET, f"{w.a}-{w.b}", "tok"),
        corpus=CH4_CORPUS,
        bunsetsu=lambda w: ch4_data.pool_sources(
            PATHS, CH4_DATASET, f"ja-{w.b}", "bunsetsu"
        ),
    output:
        ch4_data.pool_outputs(PATHS, "{a}", "{b}", "ids", "ja.bunsetsu"),
    wildcard_constraints:
        a="ja",
        b="[a-z]{2}",
    params:
        aligned=f"--aligned ja.bunsetsu={PATHS.preprocessed(CH4_DATASET, 'bunsetsu')}",


use rule tokenize_shard as ch4_tokenize with:
    input:
        CH4_MONO,
    output:
        text=CH4_WORDS,
        meta=f"{CH4_WORDS}.meta.json",
    log:
        log_path(CH4_CHAPTER, "tokenize", "mono.{lang}"),
    wildcard_constraints:
        lang=preprocess_plan.moses_language_pattern(PRE),
    params:
        source=lambda w, input: f"{input[0]}/{w.lang}.txt",
        steps="",
        flags=f"{PRE_TOKENIZE} {PRE_FLAGS} {CH4_CAP}",
        shard=0,
        shards=1,


use rule segment_shard as ch4_segment with:
    input:
        CH4_MONO,
    output:
        text=CH4_WORDS,
        meta=f"{CH4_WORDS}.meta.json",
    log:
        log_path(CH4_CHAPTER, "segment", "mono.{lang}"),
    wildcard_constraints:
        lang="|".join([lang for lang in PRE_SEGMENTED if lang != "ja"] or ["-"]),
    params:
        source=lambda w, input: f"{input[0]}/{w.lang}.txt",
        flags=f"{PRE_FLAGS} {CH4_CAP}",
        shard=0,
        shards=1,


use rule segment_ja_shard as ch4_segment_ja with:
    input:
        CH4_MONO,
    output:
        text=CH4_WORDS,
        meta=f"{CH4_WORDS}.meta.json",
        bunsetsu=CH4_BUNSETSU,
        bunsetsu_meta=f"{CH4_BUNSETSU}.meta.json",
    log:
        log_path(CH4_CHAPTER, "segment", "mono.{lang}"),
    wildcard_constraints:
        lang="ja",
    params:
        source=lambda w, input: f"{input[0]}/{w.lang}.txt",
        external="",
        flags=f"{PRE_BUNSETSU} {PRE_FLAGS} {CH4_CAP}",
        shard=0,
        shards=1,


rule ch4_parse:
    """English trees of a words file (the tree tasks check a tree's words are the line's)."""
    input:
        lambda w: ch4_data.parsed_words(PATHS, w.text),
    output:
        text=CH4_TREES,
        meta=f"{CH4_TREES}.meta.json",
    log:
        log_path(CH4_CHAPTER, "parse", "{text}"),
    wildcard_constraints:
        text=r"mono|valid\.[a-z]{2}-[a-z]{2}",
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text parse"),
        flags=PRE_FLAGS,
        scale=CFG["scale"],
    shell:
        "mlrep text parse --pretokenized --input {input} --output {output.text} "
        "--max-lines 0 --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch4_bpe:
    """A pair model's joint BPE, learned on its two languages' monolingual words."""
    input:
        lambda w: [CH4_WORDS.format(lang=lang) for lang in ch4_data.languages(w.model)],
    output:
        directory(ch4_data.bpe(PATHS, "{model}")),
    log:
        log_path(CH4_CHAPTER, "bpe", "{model}"),
    wildcard_constraints:
        model=CH4_MODELS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text train-subwords"),
        # per_pair names a pair as the corpus does (en-ja: the thesis's 40k merges)
        flags=lambda w: flags_from(
            preprocess_plan.pair_options(
                PRE, CH4_CHAPTER, "-".join(sorted(ch4_data.languages(w.model)))
            )
        ),
        setting=CH4_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep text train-subwords --input {input} --out {output} --threads {threads} "
        "--setting {params.setting} --model {wildcards.model} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch4_pretrain_pairs:
    """Static pre-training pairs of one side: a task set on a language of a pair model, in
    the pair's BPE with task and language tags."""
    input:
        unpack(
            lambda w: ch4_data.pretrain_inputs(
                PATHS, w.model, w.split, w.lang, w.tasks
            )
        ),
    output:
        source=f"{CH4_PAIRS_OUT}.src",
        target=f"{CH4_PAIRS_OUT}.tgt",
    log:
        log_path(CH4_CHAPTER, "pretrain_pairs", "{model}.{lang}.{tasks}.{split}"),
    wildcard_constraints:
        model=CH4_MODELS,
        lang="[a-z]{2}",
        tasks=rf"(?:{CH4_TASKS})(?:\+(?:{CH4_TASKS}))*",
        split="train|valid",
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text pretrain-pairs"),
        tasks=lambda w: w.tasks.replace("+", " "),
        analyses=lambda w: " ".join(
            f"--{name} {path}"
            for name, path in ch4_data.pretrain_inputs(
                PATHS, w.model, w.split, w.lang, w.tasks
            ).items()
            if name in ("bunsetsu", "trees")
        ),
        seed=CH4["data"]["seed"],
        scale=CFG["scale"],
    shell:
        "mlrep text pretrain-pairs --input {input.words} --lang {wildcards.lang} "
        "--tasks {params.tasks} --seed {params.seed} --model {input.bpe} {params.analyses} "
        "--source {output.source} --target {output.target} --scale {params.scale} "
        "> {log} 2>&1"


rule ch4_jass_pretrain_data:
    """Every pre-training side's train and valid pairs."""
    input:
        ch4_data.pretrain_targets(PATHS, ch4_training.pretrain_data_ids(CH4)),


use rule encode_subwords as ch4_subwords with:
    input:
        unpack(lambda w: ch4_data.subword_inputs(PATHS, w.pair, w.split, w.lang)),
    output:
        text=CH4_SUBWORDS,
        meta=f"{CH4_SUBWORDS}.meta.json",
    log:
        log_path(CH4_CHAPTER, "subwords", "{pair}.{split}.{lang}"),
    wildcard_constraints:
        pair="|".join(ch4_data.FINETUNE_PAIRS.values()),
        split="|".join(ch4_data.SPLITS),
        lang="[a-z]{2}",


rule ch4_pretrain_data:
    """A pre-training's data-bin: its two sides' pairs and the pair's dictionary."""
    input:
        unpack(lambda w: ch4_training.pretrain_inputs(PATHS, w.run)),
    output:
        directory(ch4_training.pretrain_data(PATHS, "{run}")),
    log:
        log_path(CH4_CHAPTER, "pretrain_data", "{run}"),
    wildcard_constraints:
        run=CH4_PRETRAINED,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("nmt pair-pretrain"),
        languages=lambda w: " ".join(ch4_runs.pretraining(w.run).languages),
        scale=CFG["scale"],
    shell:
        "mlrep nmt pair-pretrain --languages {params.languages} "
        "--train-source {input.train_source} --train-target {input.train_target} "
        "--valid-source {input.valid_source} --valid-target {input.valid_target} "
        "--finetune-text {input.finetune_text} --out {output} --scale {params.scale} "
        "> {log} 2>&1"


rule ch4_pretrain:
    """Pre-train one model (resumes from checkpoint_last.pt; exit 75 on SIGUSR1/SIGTERM)."""
    input:
        ch4_training.pretrain_data(PATHS, "{run}"),
    output:
        CH4_PRETRAIN_MODEL,
    log:
        log_path(CH4_CHAPTER, "pretrain_{run}_seed{seed}"),
    wildcard_constraints:
        run=CH4_PRETRAINED,
        seed=r"\d+",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train", gpu=CH4[ch4_training.PRETRAIN]["gpus"]),
    params:
        section=CH4_CHAPTER,
        stage=ch4_training.PRETRAIN,
        code=code_version("nmt pair-train"),
        out=lambda w, output: os.path.dirname(output[0]),
        flags=flags_from(CH4[ch4_training.PRETRAIN]),
        scale=CFG["scale"],
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first
    shell:
        "exec mlrep nmt pair-train --section {params.section} --stage {params.stage} "
        "--data {input} --name {wildcards.run} --seed {wildcards.seed} --out {params.out} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


# Fine-tuning jobs (`training.finetune_jobs`): each binarises its fine-tunes' samples with
# their start's dictionary, trains them from the pre-trained checkpoint_best.pt (#0, vanilla:
# from scratch; a rerun resumes from a run's own checkpoint_last.pt), decodes their test
# sources and scores them, at every seed, in one process (`mlrep nmt pair-runs`).
for CH4_JOB, CH4_JOB_RUNS in ch4_training.finetune_jobs(CH4).items():
    CH4_JOB_OUT = ch4_training.finetune_job_outputs(PATHS, CH4, CH4_JOB_RUNS)

    rule:
        """Binarise, fine-tune, decode and score a group of fine-tunes in one process."""
        name:
            f"ch4_finetune_{CH4_JOB}"
        input:
            **ch4_training.finetune_job_inputs(PATHS, CH4, CH4_JOB_RUNS),
        output:
            data=[directory(path) for path in CH4_JOB_OUT["data"]],
            runs=CH4_JOB_OUT["runs"],
        log:
            log_path(CH4_CHAPTER, "finetune", CH4_JOB),
        conda:
            MLREP_ENV
        threads: job_threads("gpu_train")
        resources:
            **job_resources("gpu_train", gpu=CH4[ch4_training.FINETUNE]["gpus"]),
        params:
            code=code_version("nmt pair-runs"),
            steps=ch4_training.pair_runs_arguments(
                ch4_training.finetune_steps(
                    PATHS, CH4, CH4_JOB_RUNS, PRE["tokenize"]["backend"]
                )
            ),
            scale=CFG["scale"],
        # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first
        shell:
            "exec mlrep nmt pair-runs --threads {threads} --scale {params.scale} "
            "{params.steps} > {log} 2>&1"


rule ch4_jass_train:
    """Every planned pre-training and fine-tune, at every seed."""
    input:
        ch4_training.targets(PATHS, CH4),


rule ch4_jass_evaluate:
    """Every planned fine-tune decoded and scored, at every seed: the BLEU cells of Tables
    4.3-4.6, 4.8, 4.9 and B.2-B.4."""
    input:
        ch4_training.evaluation_targets(PATHS, CH4),


# ---- Human evaluation, Tables 4.8/4.9 (mlrep.chapters.ch4_jass.human says where each file is)
# `ch4_human_export` draws one blind sheet per evaluation (a table's corpus, direction and size:
# its planned systems' test hypotheses at the judged seed) and writes its key to a folder of its
# own; `ch4_human_aggregate` reads the judges' sheets from params.yaml ch4_jass.human.returned
# (<returned>/<sheet name>/*.csv, listed when the workflow is parsed, so a new, edited or removed
# sheet reruns it) and writes every judged system's run human/<fine-tune>: means, or pending
# ("awaiting human scores") while none is returned. `ch4_jass_human` is the piece's target.
CH4_HUMAN = ch4_human.evaluations(CH4)
CH4_HUMAN_RETURNED = Path(CH4["human"]["returned"])


def ch4_human_aggregate(evaluation):
    """The `mlrep eval human-aggregate` command of one evaluation (a judge names a sheet:
    quoted)."""
    sheets = ch4_human.sheets_read(PATHS, CH4_HUMAN_RETURNED, evaluation.name)
    return (
        f"mlrep eval human-aggregate --sheets {' '.join(map(shlex.quote, sheets))} "
        f"--key {ch4_human.key(PATHS, evaluation.name)} --section {CH4_CHAPTER} "
        f"--run-group {ch4_human.GROUP} --seed {evaluation.seed} "
        f"--out {PATHS.run_group(CH4_CHAPTER, ch4_human.GROUP)} --scale {CFG['scale']}"
    )


localrules:
    ch4_human_export,
    ch4_human_aggregate,
    ch4_jass_human,


rule ch4_human_export:
    """One evaluation's blind sheet (`evaluate.human` test sentences, shuffled anonymous
    outputs) and its key, kept apart."""
    input:
        unpack(
            lambda w: ch4_human.export_inputs(PATHS, ch4_human.evaluation(CH4, w.name))
        ),
    output:
        sheet=ch4_human.sheet(PATHS, "{name}"),
        key=ch4_human.key(PATHS, "{name}"),
    log:
        log_path(CH4_CHAPTER, "human_export", "{name}"),
    wildcard_constraints:
        name="|".join(re.escape(e.name) for e in CH4_HUMAN) or "(?!)",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("eval human-export"),
        direction=lambda w: ch4_human.evaluation(CH4, w.name).direction,
        # NAME=FILE: a system is named by its fine-tune id, its run under human/
        systems=lambda w, input: " ".join(
            f"{system}={path}"
            for system, path in zip(
                ch4_human.evaluation(CH4, w.name).systems,
                input.hypotheses,
                strict=True,
            )
        ),
        flags=flags_from(CFG["evaluate"]["human"]),
        scale=CFG["scale"],
    shell:
        "mlrep eval human-export --source {input.source} --systems {params.systems} "
        "--direction {params.direction} --sheet {output.sheet} --key {output.key} "
        "{params.flags} --scale {params.scale} > {log} 2>&1"


rule ch4_human_aggregate:
    """Every judged system's adequacy and fluency from its evaluation's returned sheets (one
    job for the scale: a few milliseconds of work per evaluation)."""
    input:
        key=[ch4_human.key(PATHS, e.name) for e in CH4_HUMAN],
        sheets=[
            path
            for e in CH4_HUMAN
            for path in ch4_human.sheets_read(PATHS, CH4_HUMAN_RETURNED, e.name)
        ],
    output:
        ch4_human.targets(PATHS, CH4),
    log:
        log_path(CH4_CHAPTER, "human_aggregate"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("eval human-aggregate"),
        commands=" && ".join(ch4_human_aggregate(e) for e in CH4_HUMAN),
    shell:
        "({params.commands}) > {log} 2>&1"


rule ch4_jass_human:
    """Tables 4.8/4.9's human cells: every judged system's run (`ch4_human.targets`)."""
    input:
        ch4_human.targets(PATHS, CH4),


# ---- Case tables, Tables 4.10/4.11 (mlrep.chapters.ch4_jass.cases says where each file is)
# `ch4_cases` writes, in one job for the scale, every case's run cases/<corpus>.<dir>.<size>:
# the test line params.yaml ch4_jass.cases.<table>.line names (0: the line whose reference is
# the published one), its reference and each planned system's hypothesis at the shown seed.
# `ch4_jass_cases` is the piece's target.
CH4_CASES = ch4_cases.cases(CH4)


localrules:
    ch4_cases,
    ch4_jass_cases,


rule ch4_cases:
    """Every case table's texts (`mlrep eval case`, one command per case)."""
    input:
        [path for c in CH4_CASES for path in ch4_cases.files(PATHS, c)],
        # the published tables a line 0 reads (globbed, as the report's: shipped, never built)
        published=[
            path
            for c in CH4_CASES
            for path in glob.glob(f"{PATHS.reference / c.table}.csv")
        ],
    output:
        ch4_cases.targets(PATHS, CH4),
    log:
        log_path(CH4_CHAPTER, "cases"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("eval case"),
        commands=" && ".join(
            ch4_cases.command(PATHS, CH4, c, CFG["scale"]) for c in CH4_CASES
        ),
    shell:
        "({params.commands}) > {log} 2>&1"


rule ch4_jass_cases:
    """Tables 4.10/4.11's text cells: every case's run (`ch4_cases.targets`)."""
    input:
        ch4_cases.targets(PATHS, CH4),
