"""Chapter summaries: one flat JSON of seed-averaged metrics per chapter, the metrics of the
chapter's DVC stage (`dvc metrics show`, `dvc exp show`); the per-run metrics.json files stay
the source of truth that the report reads."""


rule chapter_summary:
    """A chapter's metrics averaged over seeds, one flat JSON: DVC's metrics of its stage."""
    input:
        # a chapter whose rules have not landed yet has no runs: its summary is empty
        lambda wildcards: CHAPTER_TARGETS.get(wildcards.chapter, []),
    output:
        str(PATHS.chapter_summary("{chapter}")),
    log:
        log_path("report", "summary_{chapter}"),
    wildcard_constraints:
        chapter="|".join(mlrep_chapters.ids()),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("report summary"),
        # the folder the chapter's runs live in (a function: a folder, not a file input)
        results=lambda wildcards: str(PATHS.results),
        scale=CFG["scale"],
    shell:
        "mlrep report summary --chapter {wildcards.chapter} --results {params.results} "
        "--out {output} --scale {params.scale} > {log} 2>&1"
