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
builds the sides the chapter pre-trains on.
"""

import os
import re

from mlrep.text import pretrain_tasks

CH4_CHAPTER = "ch4_jass"
CH4 = CFG[CH4_CHAPTER]
CH4_DATASET = preprocess_plan.subword_setting(PRE, CH4_CHAPTER)["dataset"]
# pair model -> its fine-tuning pair (one pre-trained model and BPE per pair)
CH4_PAIRS = {"jaen": "ja-en", "jazh": "ja-zh", "enko": "en-ko"}
CH4_ROOT = PATHS.chapter_data(CH4_CHAPTER)
CH4_POOL = str(CH4_ROOT / "pools" / "{a}-{b}")
# the corpus whose segment ids the preprocessed words have (the dataset's, at every scale)
CH4_CORPUS = str(PATHS.dataset(preprocess_plan.dataset(PRE, CH4_DATASET)["corpus"]))
CH4_MONO = str(PATHS.chapter_data(CH4_CHAPTER, "monolingual"))
CH4_WORDS = str(CH4_ROOT / "words" / "mono.{lang}")
CH4_BUNSETSU = str(CH4_ROOT / "bunsetsu" / "mono.{lang}")
CH4_TREES = str(CH4_ROOT / "trees" / "{text}.en")
CH4_BPE = str(CH4_ROOT / "bpe" / "{model}")
CH4_PAIRS_OUT = str(
    CH4_ROOT / "pretrain" / "{model}" / "{lang}" / "{tasks}" / "{split}"
)
CH4_CAP = flags_from({"max_lines": CH4["data"]["max_monolingual"]})
CH4_TASKS = "|".join(
    re.escape(t) for t in [*pretrain_tasks.TASKS, *pretrain_tasks.COMPOSITES]
)
# the sides pre-trained at every scale for now, (pair model, language) -> task sets; the
# chapter's run inventory will name them
CH4_SIDES = {
    ("jaen", "ja"): ["mass", "bmass", "brss.f", "jass"],
    ("jaen", "en"): ["mass", "hfss", "enss"],
    ("jazh", "ja"): ["mass"],
    ("jazh", "zh"): ["mass"],
    ("enko", "en"): ["mass"],
    ("enko", "ko"): ["mass"],
}


def ch4_pool(pair):
    """The pool folder of a fine-tuning pair (a-b)."""
    a, b = pair.split("-")
    return CH4_POOL.format(a=a, b=b)


def ch4_pool_outputs(*suffixes):
    """A pool's files: each of `suffixes` (a language, ids, ja.bunsetsu) of every split."""
    return [
        f"{CH4_POOL}/{split}.{suffix}"
        for split in ("train", "valid", "test")
        for suffix in suffixes
    ]


def ch4_pool_words(a, b, stage):
    """The preprocessed files (stage tok or bunsetsu) a pool of a-b reads: each non-English
    language from its English-centric pair of the corpus, English from the pair itself.
    """
    names = [
        f"{{split}}.en-{lang}.{side}"
        for lang in (a, b)
        if lang != "en"
        for side in (lang, "en")
        if side == lang or "en" in (a, b)
    ]
    if stage == "bunsetsu":
        names = [name for name in names if name.endswith(".ja")]
    return [
        str(PATHS.preprocessed(CH4_DATASET, stage) / name.format(split=split))
        for split in ("train", "valid", "test")
        for name in names
    ]


def ch4_side(model, split, lang):
    """Where a side's words (and their bunsetsu spans and trees) are: the monolingual words
    for train, the valid set of the model's fine-tuning pool for valid."""
    pair = CH4_PAIRS[model]
    if lang not in pair.split("-"):
        raise WorkflowError(f"pair model {model} ({pair}) has no language {lang}")
    if split == "train":
        return {
            "words": CH4_WORDS.format(lang=lang),
            "bunsetsu": CH4_BUNSETSU.format(lang=lang),
            "trees": CH4_TREES.format(text="mono"),
        }
    pool = ch4_pool(pair)
    return {
        "words": f"{pool}/valid.{lang}",
        "bunsetsu": f"{pool}/valid.ja.bunsetsu",
        "trees": CH4_TREES.format(text=f"valid.{pair}"),
    }


def ch4_pretrain_inputs(wildcards):
    """The words of a side, and the analyses and BPE model its tasks need."""
    side = ch4_side(wildcards.model, wildcards.split, wildcards.lang)
    tasks = pretrain_tasks.expand_tasks(wildcards.tasks.split("+"))
    found = {"words": side["words"], "bpe": CH4_BPE.format(model=wildcards.model)}
    if pretrain_tasks.BUNSETSU_TASKS.intersection(tasks):
        found["bunsetsu"] = side["bunsetsu"]
    if pretrain_tasks.TREE_TASKS.intersection(tasks):
        found["trees"] = side["trees"]
    return found


def ch4_parsed_words(wildcards):
    """The English words file a trees file parses."""
    if wildcards.text == "mono":
        return CH4_WORDS.format(lang="en")
    return f"{ch4_pool(wildcards.text.split('.', 1)[1])}/valid.en"


# the monolingual text leaves every pool's training ids out (data.smk)
MONOLINGUAL_EXCLUDE[CH4_CHAPTER] = [
    f"{ch4_pool(pair)}/train.ids" for pair in CH4_PAIRS.values()
]


localrules:
    ch4_jass_pretrain_data,


# The Japanese side of a pool also carries its bunsetsu spans.
ruleorder: ch4_pool_ja > ch4_pool


rule ch4_pool:
    """A fine-tuning pair's pool (nested sizes are prefixes) and valid/test sets, in words."""
    input:
        words=lambda w: ch4_pool_words(w.a, w.b, "tok"),
        corpus=CH4_CORPUS,
    output:
        ch4_pool_outputs("{a}", "{b}", "ids"),
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
        ids=CH4_CORPUS,
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
        words=lambda w: ch4_pool_words(w.a, w.b, "tok"),
        corpus=CH4_CORPUS,
        bunsetsu=lambda w: ch4_pool_words("ja", w.b, "bunsetsu"),
    output:
        ch4_pool_outputs("{a}", "{b}", "ids", "ja.bunsetsu"),
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
        ch4_parsed_words,
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
        lambda w: [
            CH4_WORDS.format(lang=lang) for lang in CH4_PAIRS[w.model].split("-")
        ],
    output:
        directory(CH4_BPE),
    log:
        log_path(CH4_CHAPTER, "bpe", "{model}"),
    wildcard_constraints:
        model="|".join(CH4_PAIRS),
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
                PRE, CH4_CHAPTER, "-".join(sorted(CH4_PAIRS[w.model].split("-")))
            )
        ),
        scale=CFG["scale"],
    shell:
        "mlrep text train-subwords --input {input} --out {output} --threads {threads} "
        "--setting " + CH4_CHAPTER + " --model {wildcards.model} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch4_pretrain_pairs:
    """Static pre-training pairs of one side: a task set on a language of a pair model, in
    the pair's BPE with task and language tags."""
    input:
        unpack(ch4_pretrain_inputs),
    output:
        source=f"{CH4_PAIRS_OUT}.src",
        target=f"{CH4_PAIRS_OUT}.tgt",
    log:
        log_path(CH4_CHAPTER, "pretrain_pairs", "{model}.{lang}.{tasks}.{split}"),
    wildcard_constraints:
        model="|".join(CH4_PAIRS),
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
            for name, path in ch4_pretrain_inputs(w).items()
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
        [
            f"{CH4_PAIRS_OUT.format(model=model, lang=lang, tasks=tasks, split=split)}.src"
            for (model, lang), task_sets in CH4_SIDES.items()
            for tasks in task_sets
            for split in ("train", "valid")
        ],
