"""Preprocessing of a dataset's aligned files: tokenize or segment, parse, subwords.

Files are keyed by dataset, split, pair and language ({split}.{pair}.{lang}, as in the
corpus), so the same rules serve every dataset of `preprocess.datasets` (the word alignment and
the chapters ask for the files they read); which corpus file each one reads (the dataset's
corpus, or the registry corpora it names for a pair) is decided by mlrep/text/plan.py
`source`. Each tool runs on `preprocess.shards` contiguous shards in parallel jobs (scatter)
over the first `preprocess.max_lines` lines; with more than one shard, `gather_text` joins them
in order with their counts (*.meta.json). Subword models are named settings
(mlrep/text/plan.py). `snakemake preprocess` builds every dataset the section lists and records
each one's provenance. With `segment.source: knp` or `parse.source: enju` the Japanese and
English steps take the user's own KNP / Enju output of each file (PATHS.external_analysis)
instead of running GiNZA / spaCy.
"""

from mlrep.text import plan as preprocess_plan
from mlrep.text.lookups import FileLookups

PRE = CFG["preprocess"]
PRE_SHARDS = PRE["shards"]
PRE_SEGMENTED = PRE["segment"]["languages"]
# what the shard jobs of a corpus file read: looked up once for its (at full scale 64) jobs
PRE_FILES = FileLookups(PRE, PATHS)
PRE_FLAGS = flags_from({"max_chars": PRE["max_chars"]})
PRE_TOKENIZE = flags_from(PRE["tokenize"])
# The user's own KNP / Enju output replaces GiNZA / spaCy when the section says so.
PRE_EXTERNAL = {lang: preprocess_plan.external_tool(PRE, lang) for lang in ("ja", "en")}
PRE_CAP = flags_from({"max_lines": PRE["max_lines"]})  # steps that read the corpus
PRE_BUNSETSU = flags_from(
    {"knp_rules": PRE["segment"]["knp_rules"]}
)  # GiNZA's, toward KNP's
PRE_NAME = "{split}.{pair}.{lang}"
# One shard is the output itself: no gather job per file.
PRE_SHARD = {
    stage: str(
        PATHS.preprocess_shard("{dataset}", stage, PRE_NAME, "{shard}", PRE_SHARDS)
        if PRE_SHARDS > 1
        else PATHS.preprocessed("{dataset}", stage) / PRE_NAME
    )
    for stage in ("tok", "bunsetsu", "parse")
}
PRE_SHARD_LOG = f"{PRE_NAME}.{{shard}}" if PRE_SHARDS > 1 else PRE_NAME
# A job's shard: the wildcard, a pattern rather than a function (Snakemake inspects a
# function's signature again for each of the ~30k shard jobs of a full-scale plan).
PRE_SHARD_PARAM = "{shard}" if PRE_SHARDS > 1 else 0
PRE_OUT = {
    stage: str(PATHS.preprocessed("{dataset}", stage) / PRE_NAME)
    for stage in ("tok", "parse", "hf")
}
PRE_OUT["gather"] = str(PATHS.preprocessed("{dataset}", "{stage}") / "{name}")
PRE_OUT["subwords"] = str(PATHS.subword_model("{dataset}", "{setting}", "{model}"))
PRE_OUT["sub"] = str(PATHS.subword_encoded("{dataset}", "{setting}", PRE_NAME))
# Per rule, not global: other rule files use {dataset} and {lang} for their own files.
PRE_WILDCARDS = {
    "dataset": r"[a-z0-9_]+",
    "setting": r"[a-z][a-z0-9_]*",
    "model": rf"{preprocess_plan.LANGUAGE}-{preprocess_plan.LANGUAGE}|{preprocess_plan.JOINT_MODEL}",
}


wildcard_constraints:
    split="train|valid|test",
    pair=r"[a-z]{2,3}(_[A-Z][a-z]{3})?-[a-z]{2,3}(_[A-Z][a-z]{3})?",
    shard=r"\d+",
    stage="tok|bunsetsu|parse",
    name=r"[^/]+",


localrules:
    preprocess,
    preprocess_dataset,


# Japanese goes to GiNZA only when segment.languages lists it; otherwise to Moses.
ruleorder: tokenize_shard > segment_ja_shard


rule tokenize_shard:
    """Moses normalisation + tokenization of one shard (languages not segmented)."""
    input:
        unpack(lambda w: PRE_FILES.inputs(w.dataset, w.split, w.pair, w.lang)),
    output:
        text=PRE_SHARD["tok"],
        meta=f"{PRE_SHARD['tok']}.meta.json",
    log:
        log_path("preprocess", "{dataset}", "tokenize", PRE_SHARD_LOG),
    wildcard_constraints:
        **PRE_WILDCARDS,
        lang=preprocess_plan.moses_language_pattern(PRE),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text tokenize"),
        source=lambda w: PRE_FILES.source(w.dataset, w.split, w.pair, w.lang)[1],
        steps=lambda w: flags_from({"steps": PRE_FILES.steps(w.dataset, w.lang)}),
        flags=f"{PRE_TOKENIZE} {PRE_FLAGS} {PRE_CAP}",
        shard=PRE_SHARD_PARAM,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text tokenize --lang {wildcards.lang} --input {params.source} "
        "--output {output.text} --shard {params.shard} --shards {params.shards} "
        "--scale {params.scale} {params.steps} {params.flags} > {log} 2>&1"


rule segment_shard:
    """Word segmentation of one shard: zh (jieba), ko (kiwi), my and km (rules)."""
    input:
        unpack(lambda w: PRE_FILES.inputs(w.dataset, w.split, w.pair, w.lang)),
    output:
        text=PRE_SHARD["tok"],
        meta=f"{PRE_SHARD['tok']}.meta.json",
    log:
        log_path("preprocess", "{dataset}", "segment", PRE_SHARD_LOG),
    wildcard_constraints:
        **PRE_WILDCARDS,
        lang="|".join([lang for lang in PRE_SEGMENTED if lang != "ja"] or ["-"]),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text segment"),
        source=lambda w: PRE_FILES.source(w.dataset, w.split, w.pair, w.lang)[1],
        flags=f"{PRE_FLAGS} {PRE_CAP}",
        shard=PRE_SHARD_PARAM,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text segment --lang {wildcards.lang} --input {params.source} "
        "--output {output.text} --shard {params.shard} --shards {params.shards} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule segment_ja_shard:
    """Japanese words and bunsetsu spans of one shard (GiNZA, or the user's KNP output)."""
    input:
        unpack(
            lambda w: PRE_FILES.inputs(
                w.dataset, w.split, w.pair, w.lang, analysed=True
            )
        ),
    output:
        text=PRE_SHARD["tok"],
        meta=f"{PRE_SHARD['tok']}.meta.json",
        bunsetsu=PRE_SHARD["bunsetsu"],
        bunsetsu_meta=f"{PRE_SHARD['bunsetsu']}.meta.json",
    log:
        log_path("preprocess", "{dataset}", "segment", PRE_SHARD_LOG),
    wildcard_constraints:
        **PRE_WILDCARDS,
        lang="ja",
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text segment"),
        source=lambda w: PRE_FILES.source(w.dataset, w.split, w.pair, w.lang)[1],
        external=lambda w, input: (f"--knp {input.knp}" if PRE_EXTERNAL["ja"] else ""),
        flags=f"{PRE_BUNSETSU} {PRE_FLAGS} {PRE_CAP}",
        shard=PRE_SHARD_PARAM,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text segment --lang ja --input {params.source} --output {output.text} "
        "--bunsetsu {output.bunsetsu} --shard {params.shard} --shards {params.shards} "
        "--scale {params.scale} {params.external} {params.flags} > {log} 2>&1"


rule parse_shard:
    """English trees of one shard (spaCy dependencies made Enju-shaped, or the user's Enju
    output) as JSON lines, with the verb arguments head finalization may mark."""
    input:
        unpack(
            lambda w: PRE_FILES.inputs(
                w.dataset, w.split, w.pair, w.lang, analysed=True
            )
        ),
    output:
        text=PRE_SHARD["parse"],
        meta=f"{PRE_SHARD['parse']}.meta.json",
    log:
        log_path("preprocess", "{dataset}", "parse", PRE_SHARD_LOG),
    wildcard_constraints:
        **PRE_WILDCARDS,
        lang="en",
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text parse"),
        source=lambda w: PRE_FILES.source(w.dataset, w.split, w.pair, w.lang)[1],
        external=lambda w, input: (f"--enju {input.enju}" if PRE_EXTERNAL["en"] else ""),
        flags=f"{PRE_FLAGS} {PRE_CAP}",
        shard=PRE_SHARD_PARAM,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text parse --input {params.source} --output {output.text} "
        "--shard {params.shard} --shards {params.shards} "
        "--scale {params.scale} {params.external} {params.flags} > {log} 2>&1"


if PRE_SHARDS > 1:

    rule gather_text:
        """Join the shards of one preprocessing output in order, summing their counts."""
        input:
            # patterns, not a function of the wildcards: one call less per job to plan
            [
                str(
                    PATHS.preprocess_shard(
                        "{dataset}", "{stage}", "{name}", i, PRE_SHARDS
                    )
                )
                for i in range(PRE_SHARDS)
            ],
        output:
            text=PRE_OUT["gather"],
            meta=f"{PRE_OUT['gather']}.meta.json",
        log:
            log_path("preprocess", "{dataset}", "gather", "{stage}", "{name}"),
        wildcard_constraints:
            **PRE_WILDCARDS,
        conda:
            MLREP_ENV
        threads: job_threads("cpu_light")
        resources:
            **job_resources("cpu_light"),
        params:
            code=code_version("text gather"),
        shell:
            "mlrep text gather --output {output.text} {input} > {log} 2>&1"


rule head_final:
    """Head-finalized English (HFSS sources) from the parse trees: words kept 1:1 unless
    `head_final` asks for Isozaki's article dropping or pseudo-particles."""
    input:
        PRE_OUT["parse"],
    output:
        text=PRE_OUT["hf"],
        meta=f"{PRE_OUT['hf']}.meta.json",
    log:
        log_path("preprocess", "{dataset}", "head_final", "{split}.{pair}.{lang}"),
    wildcard_constraints:
        **PRE_WILDCARDS,
        lang="en",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("text head-final"),
        flags=flags_from(PRE["head_final"]),
        scale=CFG["scale"],
    shell:
        "mlrep text head-final --input {input} --output {output.text} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule train_subwords:
    """One subword model of a setting, on the tokenized training text of its pairs."""
    input:
        lambda w: [
            PRE_OUT["tok"].format(
                dataset=w.dataset, split="train", pair=pair, lang=lang
            )
            for pair in preprocess_plan.subword_models(PRE, w.setting)[w.model]
            for lang in pair.split("-")
        ],
    output:
        directory(PRE_OUT["subwords"]),
    log:
        log_path("preprocess", "{dataset}", "train_subwords", "{setting}.{model}"),
    wildcard_constraints:
        **PRE_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("text train-subwords"),
        flags=lambda w: flags_from(
            preprocess_plan.subword_options(PRE, w.setting, w.model)
        ),
        scale=CFG["scale"],
    shell:
        "mlrep text train-subwords --input {input} --out {output} --threads {threads} "
        "--setting {wildcards.setting} --model {wildcards.model} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule encode_subwords:
    """A tokenized file in its model of one subword setting."""
    input:
        text=PRE_OUT["tok"],
        model=lambda w: PRE_OUT["subwords"].format(
            dataset=w.dataset,
            setting=w.setting,
            model=preprocess_plan.subword_model_of(PRE, w.setting, w.pair),
        ),
    output:
        text=PRE_OUT["sub"],
        meta=f"{PRE_OUT['sub']}.meta.json",
    log:
        log_path(
            "preprocess",
            "{dataset}",
            "encode_subwords",
            "{setting}.{split}.{pair}.{lang}",
        ),
    wildcard_constraints:
        **PRE_WILDCARDS,
        lang=preprocess_plan.LANGUAGE,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("text encode-subwords"),
        flags=PRE_FLAGS,
        scale=CFG["scale"],
    shell:
        "mlrep text encode-subwords --input {input.text} --model {input.model} "
        "--output {output.text} --scale {params.scale} {params.flags} > {log} 2>&1"


rule preprocess_dataset:
    """Everything `preprocess.datasets.<dataset>` asks for, and the provenance of what ran."""
    input:
        lambda w: preprocess_plan.targets(PRE, PATHS, w.dataset),
    output:
        config=str(PATHS.preprocessed_root("{dataset}") / "config.yaml"),
        provenance=str(PATHS.preprocessed_root("{dataset}") / "provenance.json"),
    log:
        log_path("preprocess", "{dataset}", "record"),
    wildcard_constraints:
        dataset="|".join(PRE["datasets"]),
    conda:
        MLREP_ENV
    params:
        code=code_version("text record"),
        out=lambda w, output: Path(output.config).parent,
        scale=CFG["scale"],
    shell:
        "mlrep text record --out {params.out} --scale {params.scale} {input} > {log} 2>&1"


rule preprocess:
    """Every dataset of `preprocess.datasets` (the chapters' rules ask for what they read)."""
    input:
        [
            str(PATHS.preprocessed_root(dataset) / "provenance.json")
            for dataset in PRE["datasets"]
        ],
