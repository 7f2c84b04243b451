"""Word alignment: tokenize a pair, align each shard in both directions, symmetrize, gather.

Keyed by dataset and language pair; each shard trains its own model (fast_align and eflomal
have no shared-model mode), so shards trade alignment quality for parallel jobs.
"""

from mlrep.align.backends import BACKENDS
from mlrep.align.symmetrize import METHODS

ALIGN = CFG["align"]
ALIGN_SHARDS = range(ALIGN["shards"])
ALIGN_NAME = (
    f"{ALIGN['aligner']['backend']}.{ALIGN['symmetrize']}.txt"  # what chapters read
)
ALIGN_DIR = str(PATHS.alignments("{align_dataset}", "{pair}"))
# Per rule, not global: other rule files use wildcards of the same names.
ALIGN_WILDCARDS = {
    "align_dataset": r"[a-z0-9_]+",
    "pair": r"[a-z]{2,3}(_[A-Z][a-z]{3})?-[a-z]{2,3}(_[A-Z][a-z]{3})?",
    "shard": r"\d+",
    "direction": "fwd|rev",
    "backend": "|".join(BACKENDS),
    "method": "|".join(METHODS),
}


localrules:
    alignments,


rule align_bitext:
    """Tokenize both sides of the pair's split into fast_align input, one file per shard."""
    input:
        corpus=str(PATHS.dataset("{align_dataset}")),
    output:
        [f"{ALIGN_DIR}/bitext.{k}.txt" for k in ALIGN_SHARDS],
    log:
        log_path("align", "{align_dataset}", "{pair}", "bitext"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        prefix=lambda wildcards, input: f"{input.corpus}/{ALIGN['split']}.{wildcards.pair}",
        langs=lambda wildcards: wildcards.pair.split("-"),
        flags=flags_from({"tokenize": ALIGN["tokenize"]}),
    shell:
        "mlrep align bitext --source {params.prefix}.{params.langs[0]} "
        "--target {params.prefix}.{params.langs[1]} --source-lang {params.langs[0]} "
        "--target-lang {params.langs[1]} {params.flags} --out {output} > {log} 2>&1"


rule align_direction:
    """One direction of one shard, fast_align semantics (-r for the reverse direction)."""
    input:
        f"{ALIGN_DIR}/bitext.{{shard}}.txt",
    output:
        links=f"{ALIGN_DIR}/{{backend}}.{{direction}}.{{shard}}.txt",
        stats=f"{ALIGN_DIR}/{{backend}}.{{direction}}.{{shard}}.json",
    log:
        log_path("align", "{align_dataset}", "{pair}", "{backend}.{direction}.{shard}"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        direction=lambda wildcards: "-r" if wildcards.direction == "rev" else "",
        flags=lambda wildcards: flags_from(
            {**ALIGN["aligner"], "backend": wildcards.backend}
        ),
    shell:
        "mlrep align -i {input} {params.direction} {params.flags} --out {output.links} "
        "--stats {output.stats} > {log} 2>&1"


rule align_symmetrize:
    """Combine the two directions of one shard (atools semantics)."""
    input:
        forward=f"{ALIGN_DIR}/{{backend}}.fwd.{{shard}}.txt",
        backward=f"{ALIGN_DIR}/{{backend}}.rev.{{shard}}.txt",
    output:
        f"{ALIGN_DIR}/{{backend}}.{{method}}.{{shard}}.txt",
    log:
        log_path("align", "{align_dataset}", "{pair}", "{backend}.{method}.{shard}"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    shell:
        "mlrep align symmetrize --method {wildcards.method} {input.forward} {input.backward} "
        "--out {output} > {log} 2>&1"


rule align_gather:
    """The pair's symmetrized alignments, shards concatenated in input order."""
    input:
        [f"{ALIGN_DIR}/{{backend}}.{{method}}.{k}.txt" for k in ALIGN_SHARDS],
    output:
        f"{ALIGN_DIR}/{{backend}}.{{method}}.txt",
    log:
        log_path("align", "{align_dataset}", "{pair}", "{backend}.{method}"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    shell:
        "mlrep align gather {input} --out {output} > {log} 2>&1"


rule alignments:
    """Target: the symmetrized alignments of every pair in params.yaml `align.pairs`."""
    input:
        [
            str(PATHS.alignments(ALIGN["dataset"], pair) / ALIGN_NAME)
            for pair in ALIGN["pairs"]
        ],
