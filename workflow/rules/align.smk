"""Word alignment: join a pair's tokens, align each shard in both directions, symmetrize, gather.

Keyed by dataset and language pair. The tokens are the preprocessing rules' `tok` outputs
(Moses, GiNZA words for ja, jieba for zh, rules for my and km: one tokenization for alignment,
subwords and chapters). Each shard trains its own model (fast_align and eflomal have no shared-model
mode), so shards trade alignment quality for parallel jobs. Each aligner + symmetrization is
a run folder with its links, counts and provenance. Chapter 5's two variants come from the
same layer: w2w links of a word2word lexicon learnt from the aligned split, per split, and the
1-to-1 links of a symmetrized run trained on the in-domain split plus the pair's out-of-domain
corpora (alignment dataset `<dataset>+od`, mlrep/align/od.py): the same rules align the
in-domain lines followed by the OD lines, and the gathered links are those of the in-domain lines.
"""

import re

from mlrep.align import od
from mlrep.align.backends import BACKENDS
from mlrep.align.symmetrize import METHODS

ALIGN = CFG["align"]
ALIGN_SHARDS = range(ALIGN["shards"])
ALIGN_DIR = str(PATHS.alignments("{align_dataset}", "{pair}"))
ALIGN_RUN = str(
    PATHS.alignment_run("{align_dataset}", "{pair}", "{backend}", "{method}")
)
ALIGN_LEXICON = ALIGN["lexicon"]
W2W_LEXICON = str(PATHS.w2w_lexicon("{align_dataset}", "{pair}"))
W2W_RUN = str(PATHS.w2w_run("{align_dataset}", "{pair}", "{split}"))
ONE_TO_ONE_RUN = str(
    PATHS.one_to_one_run("{align_dataset}", "{pair}", "{backend}", "{method}")
)

# Per rule, not global: other rule files use wildcards of the same names.
ALIGN_WILDCARDS = {
    "align_dataset": rf"[a-z0-9_]+({re.escape(od.OD_SUFFIX)})?",
    "pair": r"[a-z]{2,3}(_[A-Z][a-z]{3})?-[a-z]{2,3}(_[A-Z][a-z]{3})?",
    "shard": r"\d+",
    "split": "train|valid|test",
    "direction": "fwd|rev",
    "backend": "|".join(BACKENDS),
    "method": "|".join(METHODS),
}


localrules:
    alignments,
    wcl_alignments,


rule align_bitext:
    """Join the tokenized sides of the pair's split, then of its OD corpora in a `+od` run,
    into fast_align input, one file per shard."""
    input:
        source=lambda w: od.in_domain_tokens(CFG, PATHS, w.align_dataset, w.pair)[0],
        target=lambda w: od.in_domain_tokens(CFG, PATHS, w.align_dataset, w.pair)[1],
        od_tokens=lambda w: od.od_tokens(CFG, PATHS, w.align_dataset, w.pair),
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
        code=code_version("align bitext"),
    shell:
        "mlrep align bitext --source {input.source} --target {input.target} "
        "--od-tokens {input.od_tokens} --out {output} > {log} 2>&1"


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
        code=code_version("align"),
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
    params:
        code=code_version("align symmetrize"),
    shell:
        "mlrep align symmetrize --method {wildcards.method} {input.forward} {input.backward} "
        "--out {output} > {log} 2>&1"


rule align_gather:
    """One run: the symmetrized shards in input order, cut to the in-domain lines (checked
    against the token files), their counts and provenance."""
    input:
        links=[f"{ALIGN_DIR}/{{backend}}.{{method}}.{k}.txt" for k in ALIGN_SHARDS],
        stats=[
            f"{ALIGN_DIR}/{{backend}}.{direction}.{k}.json"
            for direction in ("fwd", "rev")
            for k in ALIGN_SHARDS
        ],
        tokens=lambda w: od.in_domain_tokens(CFG, PATHS, w.align_dataset, w.pair),
        od_tokens=lambda w: od.od_tokens(CFG, PATHS, w.align_dataset, w.pair),
    output:
        links=f"{ALIGN_RUN}/links.txt",
        stats=f"{ALIGN_RUN}/stats.json",
        config=f"{ALIGN_RUN}/config.yaml",
        provenance=f"{ALIGN_RUN}/provenance.json",
    log:
        log_path("align", "{align_dataset}", "{pair}", "{backend}.{method}"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("align gather"),
        scale=CFG["scale"],
    shell:
        "mlrep align gather {input.links} --out {output.links} --record "
        "--method {wildcards.method} --stats {input.stats} --tokens {input.tokens} "
        "--od-tokens {input.od_tokens} --scale {params.scale} > {log} 2>&1"


rule alignments:
    """Target: the configured run of every pair in params.yaml `align.pairs`."""
    input:
        [
            str(
                PATHS.alignment_run(
                    ALIGN["dataset"],
                    pair,
                    ALIGN["aligner"]["backend"],
                    ALIGN["symmetrize"],
                )
                / "links.txt"
            )
            for pair in ALIGN["pairs"]
        ],


rule align_lexicon:
    """The pair's word2word lexicon (CPE), learnt from the split the aligners train on."""
    input:
        source=lambda w: PATHS.pair_tokens(w.align_dataset, ALIGN["split"], w.pair)[0],
        target=lambda w: PATHS.pair_tokens(w.align_dataset, ALIGN["split"], w.pair)[1],
    output:
        lexicon=f"{W2W_LEXICON}/lexicon.tsv",
        stats=f"{W2W_LEXICON}/stats.json",
        config=f"{W2W_LEXICON}/config.yaml",
        provenance=f"{W2W_LEXICON}/provenance.json",
    log:
        log_path("align", "{align_dataset}", "{pair}", "w2w.lexicon"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("align lexicon"),
        flags=flags_from(ALIGN_LEXICON["build"]),
        scale=CFG["scale"],
    shell:
        "mlrep align lexicon --source {input.source} --target {input.target} {params.flags} "
        "--out {output.lexicon} --record --scale {params.scale} > {log} 2>&1"


rule align_w2w:
    """The lexicon's links in one split of the pair (disjoint, phrases merged)."""
    input:
        lexicon=f"{W2W_LEXICON}/lexicon.tsv",
        config=f"{W2W_LEXICON}/config.yaml",
        source=lambda w: PATHS.pair_tokens(w.align_dataset, w.split, w.pair)[0],
        target=lambda w: PATHS.pair_tokens(w.align_dataset, w.split, w.pair)[1],
    output:
        links=f"{W2W_RUN}/links.txt",
        stats=f"{W2W_RUN}/stats.json",
        config=f"{W2W_RUN}/config.yaml",
        provenance=f"{W2W_RUN}/provenance.json",
    log:
        log_path("align", "{align_dataset}", "{pair}", "w2w.{split}"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("align extract"),
        scale=CFG["scale"],
    shell:
        "mlrep align extract --lexicon {input.lexicon} --source {input.source} "
        "--target {input.target} --out {output.links} --record --scale {params.scale} "
        "> {log} 2>&1"


rule align_one_to_one:
    """A symmetrized run's 1-to-1 links (Chapter 5's "FA, 1-to-1 only", of its `+od` run)."""
    input:
        links=f"{ALIGN_RUN}/links.txt",
        config=f"{ALIGN_RUN}/config.yaml",
    output:
        links=f"{ONE_TO_ONE_RUN}/links.txt",
        stats=f"{ONE_TO_ONE_RUN}/stats.json",
        config=f"{ONE_TO_ONE_RUN}/config.yaml",
        provenance=f"{ONE_TO_ONE_RUN}/provenance.json",
    log:
        log_path("align", "{align_dataset}", "{pair}", "{backend}.{method}.one-to-one"),
    wildcard_constraints:
        **ALIGN_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("align one-to-one"),
        scale=CFG["scale"],
    shell:
        "mlrep align one-to-one {input.links} --out {output.links} --record "
        "--scale {params.scale} > {log} 2>&1"


rule wcl_alignments:
    """Target: Chapter 5's alignments of every `align.lexicon.pairs` pair: w2w links of each
    `align.lexicon.splits` split, and the 1-to-1 links of the configured run trained with the
    pair's `align.od_corpora`."""
    input:
        [
            str(PATHS.w2w_run(ALIGN["dataset"], pair, split) / "links.txt")
            for pair in ALIGN_LEXICON["pairs"]
            for split in ALIGN_LEXICON["splits"]
        ],
        [
            str(
                PATHS.one_to_one_run(
                    od.with_od(ALIGN["dataset"]),
                    pair,
                    ALIGN["aligner"]["backend"],
                    ALIGN["symmetrize"],
                )
                / "links.txt"
            )
            for pair in ALIGN_LEXICON["pairs"]
        ],
