"""Reports: every thesis table and figure (measured vs published) and the claims ledger."""

import glob
import os

from mlrep.report.figures import definitions as figure_definitions
from mlrep.report.metrics import existing_files as existing_metrics

FIGURES = figure_definitions()
REPORT_DEFINITIONS = sorted(
    glob.glob(str(Path(workflow.basedir) / "mlrep/report/**/*.yaml"), recursive=True)
)


rule report:
    """Rebuild reports/ (tables in md/tex/csv/html, figures, index.html) from existing results."""
    input:
        # every metrics.json there is (a new one changes the input set, so the report
        # reruns) and the runs of the chapters this invocation builds
        results=lambda wildcards: sorted(
            {*existing_metrics(PATHS.results), *report_waits_for(wildcards)}
        ),
        reference=sorted(glob.glob(str(PATHS.reference / "*"))),
        definitions=REPORT_DEFINITIONS,
    output:
        index=report(
            str(PATHS.report.index), caption="../report/index.rst", category="Report"
        ),
        claims=str(PATHS.report.claims),
        claims_markdown=str(PATHS.report.claims_markdown),
        tables=directory(str(PATHS.report.tables)),
        figures=[
            report(
                str(PATHS.report.figure(fig, "png")),
                caption="../report/figure.rst",
                category="Figures",
                subcategory=spec["chapter"],
                # one caption serves every figure and Snakemake renders it per job, not per
                # file: the labels say which figure an entry is
                labels={"figure": fig, "title": spec["title"]},
            )
            for fig, spec in FIGURES.items()
        ],
        pdfs=[str(PATHS.report.figure(fig, "pdf")) for fig in FIGURES],
    log:
        log_path("report", "build"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("report build"),
        results=str(PATHS.results),
        # a shipped folder, not a built one (a checkout without it still plans the DAG)
        reference=lambda wildcards: str(PATHS.reference),
        out=lambda wildcards, output: os.path.dirname(output.index),
        flags=flags_from(CFG["report"]),
        scale=CFG["scale"],
    shell:
        "mlrep report build --results {params.results} --reference {params.reference} "
        "--out {params.out} --scale {params.scale} {params.flags} > {log} 2>&1"
