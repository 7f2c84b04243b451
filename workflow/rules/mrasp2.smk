"""mRASP2 (Pan et al. 2021), landing: the data side of Aligned Augmentation (AA).

Where each file goes: mlrep/chapters/mrasp2/plan.py. Per en-xx dictionary pair (the
parallel pairs and those of the languages with monolingual text only): a dictionary, induced
from the alignment layer's symmetrized links of the pair's tokens (workflow/rules/align.smk;
tiny, standing in for MUSE) or MUSE's own file (full) → every pair's dictionary as one
multilingual synonym dictionary → each side of each parallel pair's training tokens
substituted (AA, p = 0.9): the sources of both directions. MC24: the chapter's leak-free
monolingual text (the `monolingual` rule, data.smk) in words, as the preprocessing makes each
language's → temperature-sampled (T = 5, the languages outside the parallel data whole) →
each language's mixed lines substituted: the sources of the self-parallel pairs, whose
targets are the mixed lines. `mrasp2_data` builds all of it.

Subwords, binarisation with the augmented sources and the self-parallel pairs, training (S1-S5,
mlrep/chapters/mrasp2/systems.py), decoding and scoring follow; so does the chapter target.
"""

import os

from mlrep.chapters.mrasp2 import plan as mrasp2_plan

MRASP2 = CFG["mrasp2"]
MRASP2_CHAPTER = mrasp2_plan.CHAPTER
MRASP2_PLAN = mrasp2_plan.Plan(MRASP2, ALIGN, PATHS, DATA_REGISTRY)
MRASP2_WILDCARDS = {
    "pair": "|".join(MRASP2_PLAN.pairs),
    "lang": "|".join(
        sorted({lang for pair in MRASP2_PLAN.pairs for lang in pair.split("-")})
    ),
}
MRASP2_DICTIONARY_PAIRS = "|".join(MRASP2_PLAN.dictionary_pairs)
MRASP2_MONO_LANGUAGES = "|".join(MRASP2_PLAN.mono_languages)
# the monolingual languages by the preprocessing step that makes their words ("-": none)
MRASP2_WORDS = {
    step: "|".join(langs) or "-"
    for step, langs in MRASP2_PLAN.mono_steps(PRE_SEGMENTED).items()
}
MRASP2_SYNONYMS = flags_from(MRASP2["synonyms"])


localrules:
    mrasp2_data,


rule mrasp2_data:
    """The data side: every pair's substituted sources and the substituted MC24 lines."""
    input:
        MRASP2_PLAN.data_files(),


if not MRASP2["dictionaries"]:

    rule mrasp2_dictionary:
        """A pair's en-xx dictionary induced from the 1-to-1 links of the alignment layer
        (p(t|s), counts and the most frequent translations kept): MUSE's stand-in.
        """
        input:
            unpack(lambda w: MRASP2_PLAN.pair_tokens(w.pair)),
        output:
            MRASP2_PLAN.induced,
        log:
            log_path(MRASP2_CHAPTER, "dictionary_{pair}"),
        wildcard_constraints:
            pair=MRASP2_DICTIONARY_PAIRS,
        conda:
            MLREP_ENV
        threads: job_threads("cpu_light")
        resources:
            **job_resources("cpu_light"),
        params:
            code=code_version("text induce-dictionary"),
            flags=flags_from(MRASP2["induce"]),
        shell:
            "mlrep text induce-dictionary --source {input.source} --target {input.target} "
            "--alignment {input.links} --output {output} {params.flags} > {log} 2>&1"


rule mrasp2_synonyms:
    """Every pair's dictionary as one multilingual synonym dictionary (mRASP's word graph)."""
    input:
        MRASP2_PLAN.dictionary_inputs(),
    output:
        MRASP2_PLAN.synonyms,
    log:
        log_path(MRASP2_CHAPTER, "synonyms"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("text synonym-graph"),
        dictionaries=MRASP2_PLAN.dictionaries(),
        flags=MRASP2_SYNONYMS,
    shell:
        "mlrep text synonym-graph --dictionary {params.dictionaries} --output {output} "
        "{params.flags} > {log} 2>&1"


rule mrasp2_augment:
    """AA of one side of a pair's training tokens: C(x), the source of the direction from
    that side's language; its target is the pair's other side, unchanged."""
    input:
        unpack(lambda w: MRASP2_PLAN.side_tokens(w.pair, w.lang)),
        synonyms=MRASP2_PLAN.synonyms,
    output:
        text=MRASP2_PLAN.augmented,
        meta=f"{MRASP2_PLAN.augmented}.meta.json",
    log:
        log_path(MRASP2_CHAPTER, "augment_{pair}_{lang}"),
    wildcard_constraints:
        **MRASP2_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("text augment"),
        flags=f"{flags_from(MRASP2['augment'])} {MRASP2_SYNONYMS}",
    shell:
        "mlrep text augment --input {input.source} --target {input.target} "
        "--output {output.text} --dictionary {input.synonyms} --format synonym "
        "--lang {wildcards.lang} {params.flags} > {log} 2>&1"


use rule tokenize_shard as mrasp2_tokenize with:
    input:
        MRASP2_PLAN.monolingual,
    output:
        text=MRASP2_PLAN.mono_words,
        meta=f"{MRASP2_PLAN.mono_words}.meta.json",
    log:
        log_path(MRASP2_CHAPTER, "tokenize", "mono.{lang}"),
    wildcard_constraints:
        lang=MRASP2_WORDS["tokenize"],
    params:
        source=lambda w, input: f"{input[0]}/{w.lang}.txt",
        steps="",
        flags=f"{PRE_TOKENIZE} {PRE_FLAGS} {PRE_CAP}",
        shard=0,
        shards=1,


use rule segment_shard as mrasp2_segment with:
    input:
        MRASP2_PLAN.monolingual,
    output:
        text=MRASP2_PLAN.mono_words,
        meta=f"{MRASP2_PLAN.mono_words}.meta.json",
    log:
        log_path(MRASP2_CHAPTER, "segment", "mono.{lang}"),
    wildcard_constraints:
        lang=MRASP2_WORDS["segment"],
    params:
        source=lambda w, input: f"{input[0]}/{w.lang}.txt",
        flags=f"{PRE_FLAGS} {PRE_CAP}",
        shard=0,
        shards=1,


use rule segment_ja_shard as mrasp2_segment_ja with:
    input:
        MRASP2_PLAN.monolingual,
    output:
        text=MRASP2_PLAN.mono_words,
        meta=f"{MRASP2_PLAN.mono_words}.meta.json",
        bunsetsu=MRASP2_PLAN.mono_bunsetsu,
        bunsetsu_meta=f"{MRASP2_PLAN.mono_bunsetsu}.meta.json",
    log:
        log_path(MRASP2_CHAPTER, "segment", "mono.{lang}"),
    wildcard_constraints:
        lang=MRASP2_WORDS["segment_ja"],
    params:
        source=lambda w, input: f"{input[0]}/{w.lang}.txt",
        external="",
        flags=f"{PRE_BUNSETSU} {PRE_FLAGS} {PRE_CAP}",
        shard=0,
        shards=1,


rule mrasp2_mono_mix:
    """MC24: each language's words temperature-sampled (T = 5); the languages outside the
    parallel data keep every line."""
    input:
        [
            MRASP2_PLAN.mono_words.format(lang=lang)
            for lang in MRASP2_PLAN.mono_languages
        ],
    output:
        directory(MRASP2_PLAN.mix),
    log:
        log_path(MRASP2_CHAPTER, "mono_mix"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("nmt mono-mix"),
        inputs=lambda wildcards, input: " ".join(
            f"{lang}={path}"
            for lang, path in zip(MRASP2_PLAN.mono_languages, input, strict=True)
        ),
        flags=flags_from(MRASP2["mix"]),
    shell:
        "mlrep nmt mono-mix --input {params.inputs} --out {output} {params.flags} "
        "> {log} 2>&1"


rule mrasp2_augment_mono:
    """AA of one language's mixed MC24 lines: C(x), the source of the self-parallel pair
    (C(x), x)."""
    input:
        synonyms=MRASP2_PLAN.synonyms,
        mix=MRASP2_PLAN.mix,
    output:
        text=MRASP2_PLAN.mono_augmented,
        meta=f"{MRASP2_PLAN.mono_augmented}.meta.json",
    log:
        log_path(MRASP2_CHAPTER, "augment_mono_{lang}"),
    wildcard_constraints:
        lang=MRASP2_MONO_LANGUAGES,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("text augment"),
        source=lambda w, input: os.path.join(
            input.mix, mrasp2_plan.MIX_TEXT.format(lang=w.lang)
        ),
        flags=f"{flags_from(MRASP2['augment'])} {MRASP2_SYNONYMS}",
    shell:
        "mlrep text augment --input {params.source} --output {output.text} "
        "--dictionary {input.synonyms} --format synonym --lang {wildcards.lang} "
        "{params.flags} > {log} 2>&1"
