"""Chapter 5: word-level contrastive learning for many-to-many NMT (thesis ch. 5, appendix C).

Chapter 8's NMT steps (workflow/rules/ch8_layernorm.smk) on this chapter's systems: per system
(its languages, a `datasets` entry) the shared SentencePiece preprocessing → cut + binarise
(`mlrep nmt prepare`, temperature-sampled), and per kind of word links (w2w, FA: the shared
alignment layer, workflow/rules/align.smk) the same data binarised again with its subword
links (`mlrep nmt links`). Per run (system, method, seed): train on the data its method reads
(mlrep/chapters/ch5_wordcl/runs.py) → translate every test direction → tokenized BLEU →
sentence and word retrieval P@1 on the validation sets → metrics.json.

mBART FT (mlrep/chapters/ch5_wordcl/mbart.py): an mBART release (tiny: the stand-in,
denoising-pre-trained on the chapter's monolingual text with the systems' SentencePiece model;
full: mBART-25 from the data registry) → its init (`mlrep nmt mbart-init`); each system's data
is prepared and linked a second time with mBART's dictionary and language tokens, and the
mBART FT runs train on it from the init.

The chapter target `ch5_wordcl` builds every run params.yaml asks for, Table 5.1's rows and
the report rendered from them (Tables 5.1-5.3, C.1-C.9, Figures 5.1-5.3).
"""

import os

from mlrep.chapters.ch5_wordcl import corpora as ch5_corpora
from mlrep.chapters.ch5_wordcl import links as ch5_links
from mlrep.chapters.ch5_wordcl import mbart as ch5_mbart
from mlrep.chapters.ch5_wordcl import runs as ch5_runs
from mlrep.nmt import settings as nmt_settings
from mlrep.nmt.valid_log import VALID_LOG
from mlrep.report.metrics import UNTRAINED_SEED

CH5 = CFG["ch5_wordcl"]
CH5_CHAPTER = "ch5_wordcl"
# a system's data binarised with one dictionary (its own, or mBART's: runs.DICTIONARIES)
CH5_DATA = str(PATHS.chapter_data(CH5_CHAPTER, "{dictionary}/{dataset}"))
# the same binarised again with the subword links of one kind of word links
CH5_LINKED = str(
    PATHS.chapter_data(CH5_CHAPTER, "{dictionary}/links/{dataset}/{links}")
)
# mBART FT's release (the layout `mlrep nmt mbart-init` reads) and the init it writes
CH5_MBART = PATHS.run_group(CH5_CHAPTER, "mbart")
CH5_MBART_RELEASE = str(CH5_MBART / "release")
CH5_MBART_INIT = str(CH5_MBART / "init")
CH5_RUN = PATHS.run(CH5_CHAPTER, "{run}", "{seed}", dataset="{dataset}")
CH5_MODEL = str(
    PATHS.model(CH5_CHAPTER, "{run}", "{seed}", dataset="{dataset}") / "train.json"
)
CH5_HYP = str(CH5_RUN / "hyp")
CH5_SCORES = str(CH5_RUN / "scores.json")
CH5_RETRIEVAL = str(CH5_RUN / "retrieval.json")
CH5_METRICS = str(CH5_RUN / "metrics.json")
# Table 5.1's measured row of one pair (run corpora/<pair>, seed 0)
CH5_CORPUS = str(
    PATHS.run(CH5_CHAPTER, ch5_corpora.run_name("{pair}"), UNTRAINED_SEED)
    / "metrics.json"
)
CH5_WILDCARDS = {
    "dataset": "|".join(CH5["datasets"]),
    "run": "|".join(sorted({r.method.name for r in ch5_runs.runs()})),
    "seed": r"\d+",
    "links": "|".join(ch5_links.KINDS),
    "dictionary": "|".join(ch5_runs.DICTIONARIES),
}

# the preprocess subword setting each system reads (its encoded files and their corpus lines)
CH5_SUBWORDS = {d: spec["subwords"] for d, spec in CH5["datasets"].items()}
CHAPTER_DATA[CH5_CHAPTER] = [
    folder
    for system in ch5_runs.systems(CH5)
    for folder in preprocess_plan.corpus_folders(PRE, PATHS, CH5_SUBWORDS[system])
]
CHAPTER_TARGETS[CH5_CHAPTER] = [
    *(
        CH5_METRICS.format(dataset=run.system, run=run.method.name, seed=seed)
        for run in ch5_runs.trained(CH5)
        for seed in CH5["seeds"]
    ),
    *(CH5_CORPUS.format(pair=pair) for pair in ch5_corpora.run_pairs(CH5)),
]


localrules:
    ch5_wordcl,


use rule ch8_prepare as ch5_prepare with:
    input:
        corpora=lambda w: preprocess_plan.corpus_folders(
            PRE, PATHS, CH5_SUBWORDS[w.dataset]
        ),
        encoded=lambda w: [
            str(sub)
            for _, sub in preprocess_plan.encoded_files(
                PRE, PATHS, CH5_SUBWORDS[w.dataset]
            )
        ],
        init=lambda w: ch5_mbart.init_input(
            CH5_MBART_INIT, w.dictionary == ch5_runs.MBART
        ),
    output:
        directory(CH5_DATA),
    log:
        log_path(CH5_CHAPTER, "prepare_{dictionary}_{dataset}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    params:
        section=CH5_CHAPTER,
        raw=lambda w: [
            str(raw)
            for raw, _ in preprocess_plan.encoded_files(
                PRE, PATHS, CH5_SUBWORDS[w.dataset]
            )
        ],
        detokenize=lambda w: flags_from(
            {
                "subword_method": preprocess_plan.subword_setting(
                    PRE, CH5_SUBWORDS[w.dataset]
                )["method"],
                "backend": PRE["tokenize"]["backend"],
                "segmented": PRE_SEGMENTED,
            }
        ),
        dataset_flags=lambda w: flags_from(
            nmt_settings.prepare_dataset_values(CH5["datasets"][w.dataset])
        ),
        flags=flags_from(CH5["data"]),
        dictionary=lambda wildcards, input: flags_from(
            {"dictionary": [os.path.join(i, ch5_mbart.INIT_DICT) for i in input.init]}
        ),


rule ch5_links:
    """A system's data binarised again with one kind of word links as subword links."""
    input:
        data=CH5_DATA,
        links=lambda w: list(
            ch5_links.link_files(CH5, ALIGN, PATHS, w.dataset, w.links).values()
        ),
        encoded=lambda w: [
            str(sub)
            for _, sub in preprocess_plan.encoded_files(
                PRE, PATHS, CH5_SUBWORDS[w.dataset]
            )
        ],
        tokens=lambda w: [
            str(tok)
            for pair in ch5_links.pairs(CH5, w.dataset)
            for split in ("train", "valid")
            for tok in PATHS.pair_tokens(ALIGN["dataset"], split, pair)
        ],
    output:
        directory(CH5_LINKED),
    log:
        log_path(CH5_CHAPTER, "links_{dictionary}_{dataset}_{links}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("nmt links"),
        links=lambda w: " ".join(
            f"{key}={path}"
            for key, path in ch5_links.link_files(
                CH5, ALIGN, PATHS, w.dataset, w.links
            ).items()
        ),
        tag=ch5_runs.TAG_FORMAT,
        scale=CFG["scale"],
    shell:
        "mlrep nmt links --data {input.data} --encoded {input.encoded} "
        "--tokens {input.tokens} --links {params.links} --tag-formats {params.tag} "
        "--out {output} --scale {params.scale} > {log} 2>&1"


if ch5_mbart.release(CH5):
    CH5_MBART_ARCHIVE = DATA_REGISTRY[ch5_mbart.release(CH5)].files[0].path
    # the release's files: the folder its archive holds
    CH5_MBART_FILES = ch5_mbart.release_files(CH5_MBART_RELEASE, CH5_MBART_ARCHIVE)

    rule ch5_mbart_release:
        """The mBART release (full: mBART-25), fetched from the data registry and extracted."""
        input:
            str(PATHS.dataset_fetched(ch5_mbart.release(CH5))),
        output:
            directory(CH5_MBART_RELEASE),
        log:
            log_path(CH5_CHAPTER, "mbart", "release"),
        conda:
            MLREP_ENV
        threads: job_threads("default")
        resources:
            **job_resources("default"),
        params:
            code=code_version("data extract"),
            archive=lambda wildcards, input: os.path.join(
                os.path.dirname(input[0]), CH5_MBART_ARCHIVE
            ),
        shell:
            "mlrep data extract {params.archive} --out {output} > {log} 2>&1"

else:
    CH5_MBART_FILES = CH5_MBART_RELEASE

    rule ch5_mbart_pretrain:
        """The tiny mBART stand-in, denoising-pre-trained on the chapter's monolingual text
        with the systems' SentencePiece model, in the layout of an mBART release."""
        input:
            text=str(PATHS.chapter_data(CH5_CHAPTER, "monolingual")),
            subwords=str(ch5_mbart.subword_model(CH5, PRE, PATHS)),
        output:
            directory(CH5_MBART_RELEASE),
        log:
            log_path(CH5_CHAPTER, "mbart", "pretrain"),
        conda:
            MLREP_ENV
        threads: job_threads("gpu_train")
        resources:
            **job_resources("gpu_train", gpu=1),
        params:
            code=code_version("nmt mbart-pretrain"),
            spm=lambda wildcards, input: os.path.join(
                input.subwords, ch5_mbart.SPM_MODEL
            ),
            languages=" ".join(CH5["monolingual"]["languages"]),
            flags=flags_from(CH5["mbart_pretrain"]),
            scale=CFG["scale"],
        shell:
            "mlrep nmt mbart-pretrain --section ch5_wordcl --text {input.text} "
            "--languages {params.languages} --spm {params.spm} --out {output} "
            "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch5_mbart_init:
    """The mBART release checked against its dictionary and SentencePiece model and written
    as the init of every mBART FT run (its dict.txt: the mBART data's dictionary)."""
    input:
        CH5_MBART_RELEASE,
    output:
        directory(CH5_MBART_INIT),
    log:
        log_path(CH5_CHAPTER, "mbart", "init"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("nmt mbart-init"),
        files=" ".join(
            f"--{option} {os.path.join(CH5_MBART_FILES, name)}"
            for option, name in ch5_mbart.RELEASE_FILES.items()
        ),
        arch=CH5["mbart_pretrain"]["arch"],
        scale=CFG["scale"],
    shell:
        "mlrep nmt mbart-init {params.files} --arch {params.arch} --out {output} "
        "--scale {params.scale} > {log} 2>&1"


use rule ch8_train as ch5_train with:
    input:
        data=lambda w: ch5_links.training_data(CH5_DATA, CH5_LINKED, w.dataset, w.run),
        init=lambda w: ch5_mbart.init_input(
            CH5_MBART_INIT, ch5_runs.Method.parse(w.run).pretrained
        ),
    output:
        CH5_MODEL,
    log:
        log_path(CH5_CHAPTER, "train_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    resources:
        **job_resources("gpu_train", gpu=lambda w: CH5["datasets"][w.dataset]["gpus"]),
    params:
        section=CH5_CHAPTER,
        # the system's model and training values, the tag format, mBART FT's init and
        # architecture, and the method's settings (of the wildcards alone, not of `input`:
        # Snakemake records only such params, so a changed setting reruns the training)
        system=lambda w: flags_from(
            ch5_runs.train_values(
                CH5,
                ch5_runs.Run(w.dataset, ch5_runs.Method.parse(w.run)),
                "".join(
                    os.path.join(i, ch5_mbart.INIT_CHECKPOINT)
                    for i in ch5_mbart.init_input(
                        CH5_MBART_INIT, ch5_runs.Method.parse(w.run).pretrained
                    )
                ),
            )
        ),
        dataset_flags="",
        flags=flags_from(CH5["train"]),


use rule ch8_translate as ch5_translate with:
    input:
        data=lambda w: ch5_links.prepared(CH5_DATA, w.dataset, w.run),
        model=CH5_MODEL,
    output:
        directory(CH5_HYP),
    log:
        log_path(CH5_CHAPTER, "translate_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    params:
        section=CH5_CHAPTER,
        tag=ch5_runs.TAG_FORMAT,
        # the chapter evaluates the English-centric directions only (no zero-shot)
        flags=f"--supervised {flags_from(CH5['decode'])}",


rule ch5_score:
    """Tokenized BLEU per direction (the chapter's scoring protocol), with the per-sentence
    statistics of the paired bootstrap and each metric's copy-the-source floor."""
    input:
        data=lambda w: ch5_links.prepared(CH5_DATA, w.dataset, w.run),
        hyp=CH5_HYP,
    output:
        CH5_SCORES,
    log:
        log_path(CH5_CHAPTER, "score_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("nmt score"),
        protocol=CH5["scoring"]["name"],
    shell:
        "mlrep nmt score --section ch5_wordcl --data {input.data} --hyp {input.hyp} "
        "--protocol {params.protocol} --out {output} > {log} 2>&1"


rule ch5_retrieval:
    """Sentence retrieval P@1 (whole validation set) and word retrieval P@1 (in-batch, over
    the validation lines' w2w links) with the run's encoder."""
    input:
        data=lambda w: ch5_links.linked_data(
            CH5_LINKED, w.dataset, w.run, ch5_links.RETRIEVAL
        ),
        prepared=lambda w: ch5_links.prepared(CH5_DATA, w.dataset, w.run),
        model=CH5_MODEL,
    output:
        CH5_RETRIEVAL,
    log:
        log_path(CH5_CHAPTER, "retrieval_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_decode")
    resources:
        **job_resources("gpu_decode"),
    params:
        code=code_version("nmt retrieval"),
        model=lambda wildcards, input: os.path.dirname(input.model),
        tag=ch5_runs.TAG_FORMAT,
        flags=flags_from(CH5["retrieval"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt retrieval --section ch5_wordcl --data {input.data} "
        "--prepared {input.prepared} --model {params.model} "
        "--tag-format {params.tag} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch5_metrics:
    """metrics.json of one run: BLEU per direction and its mean, the retrieval P@1s and the
    validation log's curves (mlrep/report/metrics.py)."""
    input:
        scores=CH5_SCORES,
        retrieval=CH5_RETRIEVAL,
        hyp=CH5_HYP,
        data=lambda w: ch5_links.prepared(CH5_DATA, w.dataset, w.run),
        model=CH5_MODEL,
    output:
        CH5_METRICS,
    log:
        log_path(CH5_CHAPTER, "metrics_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH5_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("nmt metrics"),
        valid_log=lambda wildcards, input: os.path.join(
            os.path.dirname(input.model), VALID_LOG
        ),
        scale=CFG["scale"],
    shell:
        "mlrep nmt metrics --section ch5_wordcl --scores {input.scores} --hyp {input.hyp} "
        "--data {input.data} --retrieval {input.retrieval} --valid-log {params.valid_log} "
        "--run {wildcards.dataset}/{wildcards.run} --seed {wildcards.seed} "
        "--out {output} --scale {params.scale} > {log} 2>&1"


rule ch5_wordcl:
    """Chapter 5 target: every run's metrics.json and the report rendered from them."""
    input:
        CHAPTER_TARGETS[CH5_CHAPTER],
        str(PATHS.report.index),


rule ch5_corpus:
    """Table 5.1's row of one pair: training and OD sizes, and the units of the w2w and the
    1-to-1 FA links over the training lines, read from the alignment layer's counts."""
    input:
        unpack(lambda w: ch5_corpora.stats_files(ALIGN, PATHS, w.pair)),
    output:
        CH5_CORPUS,
    log:
        log_path(CH5_CHAPTER, "corpus_{pair}"),
    wildcard_constraints:
        pair="|".join(ch5_corpora.all_pairs(CH5)),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("ch5 corpora"),
        scale=CFG["scale"],
    shell:
        "mlrep ch5 corpora --pair {wildcards.pair} --w2w {input.w2w} "
        "--fa-run {input.fa_run} --fa {input.fa} --out {output} "
        "--scale {params.scale} > {log} 2>&1"
