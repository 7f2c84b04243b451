"""Registry datasets (mlrep/data/registry.yaml): fetch with checksums, then validate and normalise;
or, for a benchmark of data.stand_ins, cut its stand-in from a local corpus (offline).

Chapters depend on ``PATHS.benchmark(key)``: ``results/data/<key>`` (aligned text +
metadata.json) or, where data.use_stand_ins selects it, ``results/data/stand_ins/<key>`` in
the same layout. Downloads count against the ``network`` resource: ``--resources network=2``
bounds concurrent downloads.
"""

import os

from mlrep.data import registry as data_registry
from mlrep.data.registry_cli import fetch_values, normalize_values, stand_in_values

DATA_REGISTRY = data_registry.load(CFG["data"]["registry"])
STAND_INS = CFG["data"]["stand_ins"]


localrules:
    dataset_fetch,


rule dataset_fetch:
    """Download a dataset (or verify hand-placed data); raw files persist between runs."""
    output:
        str(PATHS.dataset_fetched("{key}")),
    log:
        log_path("data", "fetch_{key}"),
    wildcard_constraints:
        key="|".join(DATA_REGISTRY),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
        network=1,
    params:
        code=code_version("data fetch"),
        dest=lambda wildcards: PATHS.dataset_raw(wildcards.key),
        flags=lambda wildcards: flags_from(fetch_values(CFG, wildcards.key)),
        scale=CFG["scale"],
    shell:
        "mlrep data fetch {wildcards.key} --dest {params.dest} --no-progress "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule dataset_normalize:
    """Validate the raw files and write aligned plain text plus metadata.json."""
    input:
        rules.dataset_fetch.output,
    output:
        directory(str(PATHS.dataset("{key}"))),
    log:
        log_path("data", "normalize_{key}"),
    wildcard_constraints:
        key="|".join(k for k, d in DATA_REGISTRY.items() if d.reader),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("data normalize"),
        raw=lambda wildcards, input: os.path.dirname(input[0]),
        flags=lambda wildcards: flags_from(normalize_values(CFG, wildcards.key)),
        scale=CFG["scale"],
    shell:
        "mlrep data normalize {wildcards.key} --raw {params.raw} --out {output} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule dataset_stand_in:
    """A benchmark's stand-in: the corpus's held-out pairs in the benchmark's layout."""
    input:
        lambda wildcards: str(PATHS.dataset(STAND_INS[wildcards.key]["corpus"])),
    output:
        directory(str(PATHS.stand_in("{key}"))),
    log:
        log_path("data", "stand_in_{key}"),
    wildcard_constraints:
        key="|".join(STAND_INS) or "(?!)",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("data stand-in"),
        flags=lambda wildcards: flags_from(stand_in_values(CFG, wildcards.key)),
        scale=CFG["scale"],
    shell:
        "mlrep data stand-in {wildcards.key} --corpus {input} --out {output} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"
