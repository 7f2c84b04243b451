"""Preprocessing of a dataset's aligned files: tokenize or segment, parse, subwords.

Files are keyed by dataset, split, pair and language ({split}.{pair}.{lang}, as in the
corpus). Each tool runs on `preprocess.shards` contiguous shards in parallel jobs (scatter);
`gather_text` joins them in order with their counts (*.meta.json). `snakemake preprocess`
builds everything the section lists (mlrep/text/plan.py).
"""

from mlrep.text import plan as preprocess_plan

PRE = CFG["preprocess"]
PRE_DATASET = PRE["dataset"]
PRE_CORPUS = str(PATHS.dataset(PRE_DATASET))
PRE_SHARDS = PRE["shards"]
PRE_SEGMENTED = PRE["segment"]["languages"]
PRE_FLAGS = flags_from({"max_chars": PRE["max_chars"]})
PRE_NAME = "{split}.{pair}.{lang}"
PRE_SHARD = {
    key: str(PATHS.preprocess_shard(PRE_DATASET, stage, name, "{shard}", PRE_SHARDS))
    for key, stage, name in [
        ("tok", "tok", PRE_NAME),
        ("ja", "tok", "{split}.{pair}.ja"),
        ("bunsetsu", "bunsetsu", "{split}.{pair}.ja"),
        ("parse", "parse", "{split}.{pair}.en"),
    ]
}
PRE_OUT = {
    stage: str(PATHS.preprocessed(PRE_DATASET, stage) / PRE_NAME)
    for stage in ("tok", "sub")
}
PRE_OUT["parse"] = str(PATHS.preprocessed(PRE_DATASET, "parse") / "{split}.{pair}.en")
PRE_OUT["hf"] = str(PATHS.preprocessed(PRE_DATASET, "hf") / "{split}.{pair}.en")
PRE_OUT["subwords"] = str(PATHS.preprocessed(PRE_DATASET, "subwords") / "{pair}")
PRE_OUT["gather"] = str(PATHS.preprocessed(PRE_DATASET, "{stage}") / "{name}")


wildcard_constraints:
    split="train|valid|test",
    pair=r"[a-z]{2,3}(_[A-Z][a-z]{3})?-[a-z]{2,3}(_[A-Z][a-z]{3})?",
    shard=r"\d+",
    stage="tok|bunsetsu|parse",
    name=r"[^/]+",


# Japanese goes to GiNZA only when segment.languages lists it; otherwise to Moses.
ruleorder: tokenize_shard > segment_ja_shard


rule tokenize_shard:
    """Moses normalisation + tokenization of one shard (languages not segmented)."""
    input:
        corpus=PRE_CORPUS,
    output:
        text=PRE_SHARD["tok"],
        meta=f"{PRE_SHARD['tok']}.meta.json",
    log:
        log_path("preprocess", "tokenize", "{split}.{pair}.{lang}.{shard}"),
    wildcard_constraints:
        lang="|".join(preprocess_plan.tokenized_languages(PRE) or ["-"]),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        source=lambda w, input: f"{input.corpus}/{w.split}.{w.pair}.{w.lang}",
        flags=f"{flags_from(PRE['tokenize'])} {PRE_FLAGS}",
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text tokenize --lang {wildcards.lang} --input {params.source} "
        "--output {output.text} --shard {wildcards.shard} --shards {params.shards} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule segment_shard:
    """Word segmentation (jieba, kiwi) of one shard of a Chinese or Korean file."""
    input:
        corpus=PRE_CORPUS,
    output:
        text=PRE_SHARD["tok"],
        meta=f"{PRE_SHARD['tok']}.meta.json",
    log:
        log_path("preprocess", "segment", "{split}.{pair}.{lang}.{shard}"),
    wildcard_constraints:
        lang="|".join([lang for lang in PRE_SEGMENTED if lang != "ja"] or ["-"]),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        source=lambda w, input: f"{input.corpus}/{w.split}.{w.pair}.{w.lang}",
        flags=PRE_FLAGS,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text segment --lang {wildcards.lang} --input {params.source} "
        "--output {output.text} --shard {wildcards.shard} --shards {params.shards} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule segment_ja_shard:
    """Japanese words and bunsetsu spans (GiNZA) of one shard."""
    input:
        corpus=PRE_CORPUS,
    output:
        text=PRE_SHARD["ja"],
        meta=f"{PRE_SHARD['ja']}.meta.json",
        bunsetsu=PRE_SHARD["bunsetsu"],
        bunsetsu_meta=f"{PRE_SHARD['bunsetsu']}.meta.json",
    log:
        log_path("preprocess", "segment", "{split}.{pair}.ja.{shard}"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        source=lambda w, input: f"{input.corpus}/{w.split}.{w.pair}.ja",
        flags=PRE_FLAGS,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text segment --lang ja --input {params.source} --output {output.text} "
        "--bunsetsu {output.bunsetsu} --shard {wildcards.shard} --shards {params.shards} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule parse_shard:
    """English dependency parse of one shard as Enju-shaped binary trees (JSON lines)."""
    input:
        corpus=PRE_CORPUS,
    output:
        text=PRE_SHARD["parse"],
        meta=f"{PRE_SHARD['parse']}.meta.json",
    log:
        log_path("preprocess", "parse", "{split}.{pair}.en.{shard}"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        source=lambda w, input: f"{input.corpus}/{w.split}.{w.pair}.en",
        flags=PRE_FLAGS,
        shards=PRE_SHARDS,
        scale=CFG["scale"],
    shell:
        "mlrep text parse --input {params.source} --output {output.text} "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule gather_text:
    """Join the shards of one preprocessing output in order, summing their counts."""
    input:
        lambda w: [
            str(PATHS.preprocess_shard(PRE_DATASET, w.stage, w.name, i, PRE_SHARDS))
            for i in range(PRE_SHARDS)
        ],
    output:
        text=PRE_OUT["gather"],
        meta=f"{PRE_OUT['gather']}.meta.json",
    log:
        log_path("preprocess", "gather", "{stage}", "{name}"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    shell:
        "mlrep text gather --output {output.text} {input} > {log} 2>&1"


rule head_final:
    """Head-finalized English (HFSS sources) from the parse trees, words kept 1:1."""
    input:
        PRE_OUT["parse"],
    output:
        text=PRE_OUT["hf"],
        meta=f"{PRE_OUT['hf']}.meta.json",
    log:
        log_path("preprocess", "head_final", "{split}.{pair}.en"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    shell:
        "mlrep text head-final --input {input} --output {output.text} > {log} 2>&1"


rule train_subwords:
    """One joint subword model per pair on the tokenized training text of both sides."""
    input:
        lambda w: [
            PRE_OUT["tok"].format(split="train", pair=w.pair, lang=lang)
            for lang in w.pair.split("-")
        ],
    output:
        directory(PRE_OUT["subwords"]),
    log:
        log_path("preprocess", "train_subwords", "{pair}"),
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        flags=flags_from(PRE["subwords"]),
        scale=CFG["scale"],
    shell:
        "mlrep text train-subwords --input {input} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule encode_subwords:
    """A tokenized file in its pair's subword model."""
    input:
        text=PRE_OUT["tok"],
        model=PRE_OUT["subwords"],
    output:
        text=PRE_OUT["sub"],
        meta=f"{PRE_OUT['sub']}.meta.json",
    log:
        log_path("preprocess", "encode_subwords", "{split}.{pair}.{lang}"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        flags=PRE_FLAGS,
        scale=CFG["scale"],
    shell:
        "mlrep text encode-subwords --input {input.text} --model {input.model} "
        "--output {output.text} --scale {params.scale} {params.flags} > {log} 2>&1"


rule preprocess:
    """Everything `preprocess` in params.yaml asks for."""
    input:
        preprocess_plan.targets(PRE, PATHS),
