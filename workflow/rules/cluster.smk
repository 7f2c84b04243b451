"""Cluster diagnostics: what a training job really gets (run before launching large grids)."""


rule cluster_probe:
    """Record host, SLURM allocation and visible GPUs of a job with training resources."""
    output:
        str(PATHS.cluster_probe),
    params:
        scale=CFG["scale"],
    threads: job_threads("gpu_train")
    conda:
        MLREP_ENV
    resources:
        **job_resources("gpu_train"),
    log:
        log_path("cluster", "probe"),
    shell:
        "mlrep cluster probe --out {output} --scale {params.scale} > {log} 2>&1"
