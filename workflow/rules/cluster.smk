"""Cluster diagnostics: what a training job really gets (run before launching large grids)."""


rule cluster_probe:
    """Record host, SLURM allocation and visible GPUs of a job with training resources."""
    output:
        str(PATHS.cluster_probe),
    log:
        log_path("cluster", "probe"),
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("cluster probe"),
        scale=CFG["scale"],
    shell:
        "mlrep cluster probe --out {output} --scale {params.scale} > {log} 2>&1"
