"""Chapter 4 (JASS / ENSS), the data half: fine-tuning pools, leak-free pre-training text, its
words, one joint BPE per pair model and the static pre-training pairs.

Per fine-tuning corpus (aspec_je, aspec_jc, wiki_jc, news_ek) `ch4_pool_<corpus>` cuts a
seeded pool of training lines (the nested fine-tuning sizes are its prefixes) and the capped
valid/test sets from the words of the preprocess dataset `ch4_jass.corpora` names for it (tiny:
the embedded corpus's, ja-zh joined on segment ids; full: the corpus's own download, ASPEC
placed by hand), the Japanese bunsetsu spans carried along. The `monolingual` rule (data.smk)
leaves every held-out id and every pool's ids out of the pre-training text (full: CC-100);
`ch4_tokenize`, `ch4_segment` and `ch4_segment_ja` are the preprocessing rules with the same
flags on that text (the first `ch4_jass.data.max_monolingual` lines per language), and
`ch4_parse` parses English words for the tree tasks. Each pair model (jaen, jazh, enko) learns
one joint BPE on its two languages' monolingual words (`ch4_bpe`, setting
`preprocess.subwords.settings.ch4_jass`) and `ch4_pretrain_pairs` writes the pairs of one (pair
model, language, task set, split): train from the monolingual words, valid from the valid words
of the pair model's home pool. `ch4_jass_pretrain_data` builds the sides the planned runs read
(`mlrep.chapters.ch4_jass.training.pretrain_data_ids`).

The training half (`mlrep.chapters.ch4_jass.training` says where everything is):
`ch4_subwords` writes a pool's words in its pair model's BPE (the fine-tuning text);
`ch4_pretrain_data` binarises a pre-training's two sides with the pair's dictionary, which
also counts the subwords of the pair's pools (`mlrep nmt pair-pretrain`), and `ch4_pretrain`
trains it;
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
from pathlib import Path

from mlrep.chapters.ch4_jass import accuracy as ch4_accuracy
from mlrep.chapters.ch4_jass import adequacy as ch4_adequacy
from mlrep.chapters.ch4_jass import cases as ch4_cases
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.chapters.ch4_jass import human as ch4_human
from mlrep.chapters.ch4_jass import runs as ch4_runs
from mlrep.chapters.ch4_jass import training as ch4_training
from mlrep.text import pretrain_tasks

CH4_CHAPTER = ch4_data.SECTION
CH4 = CFG[CH4_CHAPTER]
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
CH4_SUBWORDS = ch4_data.subwords(PATHS, "{corpus}", "{split}", "{lang}")
CH4_PRETRAIN_MODEL = ch4_training.model(PATHS, ch4_training.PRETRAIN, "{run}", "{seed}")

# the monolingual text leaves every pool's training ids out (data.smk)
MONOLINGUAL_EXCLUDE[CH4_CHAPTER] = ch4_data.exclude_ids(PATHS, CH4)
CHAPTER_DATA[CH4_CHAPTER] = ch4_data.corpus_folders(PRE, PATHS, CH4)
# the chapter's run folders: every planned fine-tune's metrics at every seed, their adequacy
# (Table 4.7), the pre-trained models' token accuracy (Tables 4.12, 4.13), the human
# evaluation's systems (pending until their sheets are returned) and the case tables' texts
# (Tables 4.10, 4.11)
CHAPTER_TARGETS[CH4_CHAPTER] = [
    *ch4_training.evaluation_targets(PATHS, CH4),
    *ch4_adequacy.outputs(PATHS, CH4),
    *ch4_accuracy.targets(PATHS, CH4),
    *ch4_human.targets(PATHS, CH4),
    *ch4_cases.targets(PATHS, CH4),
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


# One rule per fine-tuning corpus (`ch4_pool_<corpus>`): a pool's files are named by its
# languages, which a {corpus} wildcard alone cannot spell in an output pattern.
for _corpus in ch4_data.CORPORA:

    rule:
        """A fine-tuning corpus's pool (nested sizes are prefixes) and valid/test sets, in
        words; a pool with Japanese carries its bunsetsu spans."""
        name:
            f"ch4_pool_{_corpus}"
        input:
            # functions (the corpus bound now), so a pool no target asks for is never read
            unpack(
                lambda w, corpus=_corpus: ch4_data.pool_inputs(PRE, PATHS, CH4, corpus)
            ),
        output:
            ch4_data.pool_outputs(PATHS, _corpus, *ch4_data.pool_files(_corpus)),
        log:
            log_path(CH4_CHAPTER, "pool", _corpus),
        conda:
            MLREP_ENV
        threads: job_threads("cpu_light")
        resources:
            **job_resources("cpu_light"),
        params:
            code=code_version("data finetune-pool"),
            flags=lambda w, corpus=_corpus: ch4_data.pool_flags(PRE, PATHS, CH4, corpus),
            out=lambda w, output: os.path.dirname(output[0]),
            section=f"{CH4_CHAPTER}.data",
            scale=CFG["scale"],
        shell:
            "mlrep data finetune-pool {params.flags} --out {params.out} "
            "--section {params.section} --scale {params.scale} > {log} 2>&1"


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
        text="|".join(["mono", *(f"valid\\.{c}" for c in ch4_data.CORPORA)]),
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
        unpack(lambda w: ch4_data.subword_inputs(PATHS, w.corpus, w.split, w.lang)),
    output:
        text=CH4_SUBWORDS,
        meta=f"{CH4_SUBWORDS}.meta.json",
    log:
        log_path(CH4_CHAPTER, "subwords", "{corpus}.{split}.{lang}"),
    wildcard_constraints:
        corpus="|".join(ch4_data.CORPORA),
        split="|".join(ch4_data.SPLITS),
        lang="[a-z]{2}",


rule ch4_pretrain_data:
    """A pre-training's data-bin: its two sides' pairs and the pair's dictionary."""
    input:
        unpack(lambda w: ch4_training.pretrain_inputs(PATHS, w.run, CH4)),
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
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first. A rerun
    # resumes its own checkpoints; those of changed settings or data are replaced (--on-stale)
    shell:
        "exec mlrep nmt pair-train --section {params.section} --stage {params.stage} "
        "--data {input} --name {wildcards.run} --seed {wildcards.seed} --out {params.out} "
        "--on-stale restart "
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
        commands=" && ".join(
            ch4_human.aggregate_command(PATHS, CH4_HUMAN_RETURNED, e, CFG["scale"])
            for e in CH4_HUMAN
        ),
    shell:
        "({params.commands}) > {log} 2>&1"


rule ch4_jass_human:
    """Tables 4.8/4.9's human cells: every judged system's run (`ch4_human.targets`)."""
    input:
        ch4_human.targets(PATHS, CH4),


# ---- The optimised Transformer #0*'s own data (`training.OPTIMIZED`, Table B.1) ----
# Per fine-tuning sample (a corpus at a size, `ch4_jass.data.sample`): a joint BPE learned on
# the sample's training words alone with its size's merges (`ch4_jass.optimized.<size>`), and
# the pool's splits written in it; its fine-tuning jobs build their dictionary from the sample.
CH4_SAMPLE = "|".join(
    re.escape(ch4_data.sample(corpus, size))
    for corpus, c in ch4_runs.CORPORA.items()
    for size in c.sizes
)


rule ch4_optimized_bpe:
    """#0*'s joint BPE of one sample, on its first training lines of both languages."""
    input:
        lambda w: ch4_training.optimized_bpe_inputs(PATHS, w.sample),
    output:
        directory(ch4_data.optimized_bpe(PATHS, "{sample}")),
    log:
        log_path(CH4_CHAPTER, "optimized_bpe", "{sample}"),
    wildcard_constraints:
        sample=CH4_SAMPLE,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text train-subwords"),
        # the chapter's subword setting (subword_nmt), Table B.1's merges and the sample
        flags=lambda w: flags_from(
            {
                **preprocess_plan.pair_options(
                    PRE,
                    CH4_CHAPTER,
                    "-".join(sorted(ch4_training.optimized_pool(w.sample).split("-"))),
                ),
                **ch4_training.optimized_bpe_options(CH4, w.sample),
            }
        ),
        setting=CH4_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep text train-subwords --input {input} --out {output} --threads {threads} "
        "--setting {params.setting} --model {wildcards.sample} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


use rule encode_subwords as ch4_optimized_subwords with:
    input:
        unpack(
            lambda w: ch4_training.optimized_text_inputs(
                PATHS, w.sample, w.split, w.lang
            )
        ),
    output:
        text=ch4_data.optimized_subwords(PATHS, "{sample}", "{split}", "{lang}"),
        meta=f"{ch4_data.optimized_subwords(PATHS, '{sample}', '{split}', '{lang}')}.meta.json",
    log:
        log_path(CH4_CHAPTER, "optimized_subwords", "{sample}.{split}.{lang}"),
    wildcard_constraints:
        sample=CH4_SAMPLE,
        split="|".join(ch4_data.SPLITS),
        lang="[a-z]{2}",


# --- Table 4.7: reference-free adequacy (LASER; tiny: the packaged mUSE v3) ----------------
# One job per scale scores every Table 4.7 fine-tune's hypotheses and each corpus's references
# against the test source, the encoder loaded once (mlrep.chapters.ch4_jass.adequacy lists the
# systems; runs laser/<fine-tune> and laser/<corpus>.reference).


localrules:
    ch4_jass_adequacy,


rule ch4_adequacy:
    """Reference-free adequacy: cosine of source and output sentence embeddings, ×100."""
    input:
        files=ch4_adequacy.inputs(PATHS, CH4),
        encoder=ch4_adequacy.fetched(CH4, str(PATHS.resources)),
    output:
        ch4_adequacy.outputs(PATHS, CH4),
    log:
        log_path(CH4_CHAPTER, "adequacy"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("eval adequacy"),
        systems=ch4_adequacy.system_flags(PATHS, CH4),
        group=ch4_adequacy.GROUP,
        # the group's folder: <out>/<run>/seed<N>/metrics.json
        out=lambda w, output: str(Path(output[0]).parents[2]),
        flags=flags_from(CH4["adequacy"]),
        backend=PRE["tokenize"]["backend"],
        segmented=" ".join(PRE_SEGMENTED),
        section=CH4_CHAPTER,
        scale=CFG["scale"],
    shell:
        "mlrep eval adequacy --section {params.section} --run-group {params.group} "
        "--out {params.out} {params.systems} "
        "--backend {params.backend} --segmented {params.segmented} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch4_jass_adequacy:
    """Table 4.7: every planned fine-tune's adequacy and the Reference row."""
    input:
        ch4_adequacy.outputs(PATHS, CH4),


# --- Pre-training accuracy (Tables 4.12, 4.13) and the reordering statistic -----------------
# `ch4_token_accuracy` scores every planned pre-training at every seed in one process
# (`mlrep nmt token-accuracy`, fairseq imported once): each task of each side on that task's
# held-out pairs alone (the pool's valid words, `ch4_pretrain_pairs` with one task), and writes
# each pre-training's metrics.json beside its model, with the moved-word share of its
# reordering tasks' training pairs (`mlrep.chapters.ch4_jass.accuracy` says where everything is).
# `ch4_jass_token_accuracy` is its target.


rule ch4_token_accuracy:
    """Every planned pre-training's teacher-forced token accuracy, per language and task."""
    input:
        **ch4_accuracy.inputs(PATHS, CH4),
    output:
        ch4_accuracy.targets(PATHS, CH4),
    log:
        log_path(CH4_CHAPTER, "token_accuracy"),
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        section=CH4_CHAPTER,
        code=code_version("nmt token-accuracy"),
        scored=ch4_accuracy.arguments(PATHS, CH4),
        flags=flags_from(CH4["token_accuracy"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt token-accuracy --section {params.section} {params.scored} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch4_jass_token_accuracy:
    """Tables 4.12/4.13's metrics: every planned pre-training's, at every seed."""
    input:
        ch4_accuracy.targets(PATHS, CH4),


localrules:
    ch4_jass_token_accuracy,


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
