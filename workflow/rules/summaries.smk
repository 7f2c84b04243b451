"""Chapter summaries: one JSON of headline numbers per chapter (its tables' averages, its
claims' sides and verdicts; mlrep/report/summary.py), the metrics of the chapter's DVC stage
(`dvc metrics show`, `dvc exp show`); the per-run metrics.json files keep every number and stay
the source of truth that the report reads."""


rule chapter_summary:
    """A chapter's headline numbers as the report computes them: DVC's metrics of its stage."""
    input:
        # a chapter whose rules have not landed yet has no runs: its claims read "not run"
        runs=lambda wildcards: CHAPTER_TARGETS.get(wildcards.chapter, []),
        reference=sorted(glob.glob(str(PATHS.reference / "*"))),
        definitions=REPORT_DEFINITIONS,
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
        reference=lambda wildcards: str(PATHS.reference),
        # the ledger's bootstrap: the summary's verdicts are the report's
        flags=flags_from(CFG["report"]),
        scale=CFG["scale"],
    shell:
        "mlrep report summary --chapter {wildcards.chapter} --results {params.results} "
        "--reference {params.reference} --out {output} --scale {params.scale} {params.flags} "
        "> {log} 2>&1"
