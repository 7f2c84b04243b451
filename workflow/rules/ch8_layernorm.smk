"""Chapter 8: LayerNorm placement and zero-shot NMT (thesis ch. 8 and appendix E).

Per dataset: cut + subwords + binarise (`mlrep nmt prepare`). Per run (dataset, system, seed):
train → translate every test direction in one process → score, per-layer states → probes and
SVCCA (`mlrep eval`, the analyses) → metrics.json. The pivot baseline (#0) decodes the zero-shot
directions through English with the `pivot` system's model. The grid is params.yaml data.
"""

import os

from mlrep.nmt import grid as ch8_grid
from mlrep.nmt import systems as ch8_systems

CH8 = CFG["ch8_layernorm"]
CH8_CHAPTER = "ch8_layernorm"
CH8_DATA = str(PATHS.chapter_dataset(CH8_CHAPTER, "{ch8_dataset}"))
CH8_RUN = PATHS.run(CH8_CHAPTER, "{ch8_dataset}/{ch8_system}", "{ch8_seed}")
CH8_MODEL = str(CH8_RUN / "model" / "train.json")
CH8_HYP = str(CH8_RUN / "hyp")
CH8_STATES = str(CH8_RUN / "states")
CH8_PROBE = str(CH8_RUN / "probe_{ch8_subset}.json")
CH8_SVCCA = str(CH8_RUN / "svcca.json")
CH8_SCORES = str(CH8_RUN / "scores.json")
CH8_BLEURT = str(CH8_RUN / "bleurt.json")
CH8_METRICS = str(CH8_RUN / "metrics.json")
CH8_SYSTEM = ch8_systems.PATTERN
CH8_WILDCARDS = {
    "ch8_dataset": "|".join(CH8["datasets"]),
    "ch8_system": CH8_SYSTEM,
    "ch8_seed": r"\d+",
}
# the scoring rules also serve the pivot baseline's run
CH8_ANY_WILDCARDS = {**CH8_WILDCARDS, "ch8_system": f"{CH8_SYSTEM}|pivot"}


CH8_ANALYSES = {
    "probe_sup": CH8_PROBE.replace("{ch8_subset}", "sup"),
    "probe_zst": CH8_PROBE.replace("{ch8_subset}", "zst"),
    "svcca": CH8_SVCCA,
}
# BLEURT (Table E.9) only where a checkpoint is configured (full: BLEURT-20 from the hub)
CH8_SCORERS = {"bleurt": CH8_BLEURT} if CH8["bleurt"]["checkpoint"] else {}
CHAPTER_DATA[CH8_CHAPTER] = [
    str(PATHS.dataset(key))
    for d in CH8["run_datasets"]
    for key in CH8["datasets"][d]["corpora"]
]
CHAPTER_TARGETS[CH8_CHAPTER] = [
    CH8_METRICS.format(ch8_dataset=d, ch8_system=s, ch8_seed=seed)
    for d, s, seed in ch8_grid.scored_runs(CH8)
]


localrules:
    ch8_layernorm,


rule ch8_prepare:
    """Cut an English-centric dataset from its corpora, train joint subwords, binarise both tag formats."""
    input:
        lambda w: [
            str(PATHS.dataset(key))
            for key in CH8["datasets"][w.ch8_dataset]["corpora"]
        ],
    output:
        directory(CH8_DATA),
    log:
        log_path(CH8_CHAPTER, "prepare_{ch8_dataset}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        dataset_flags=lambda w: flags_from(
            ch8_grid.subset(
                CH8["datasets"][w.ch8_dataset], ("languages", "splits", "vocab_size")
            )
        ),
        flags=flags_from({**CH8["data"], **CH8["subwords"]}),
        scale=CFG["scale"],
    shell:
        "mlrep nmt prepare --corpora {input} --dataset {wildcards.ch8_dataset} --out {output} "
        "--threads {threads} --scale {params.scale} {params.dataset_flags} {params.flags} "
        "> {log} 2>&1"


rule ch8_train:
    """Train one system (resumes from checkpoint_last.pt; exit 75 on SIGUSR1/SIGTERM)."""
    input:
        CH8_DATA,
    output:
        CH8_MODEL,
    log:
        log_path(CH8_CHAPTER, "train_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        out=lambda wildcards, output: os.path.dirname(output[0]),
        dataset_flags=lambda w: flags_from(
            ch8_grid.subset(
                CH8["datasets"][w.ch8_dataset], ("arch", "dropout", "lr", "max_epoch")
            )
        ),
        flags=flags_from(CH8["train"]),
        scale=CFG["scale"],
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first and no
    # shell dies of them before the checkpoint is saved (mlrep/train/checkpoint.py)
    shell:
        "exec mlrep nmt train --data {input} --dataset {wildcards.ch8_dataset} "
        "--system {wildcards.ch8_system} --seed {wildcards.ch8_seed} --out {params.out} "
        "--threads {threads} --scale {params.scale} {params.dataset_flags} {params.flags} "
        "> {log} 2>&1"


rule ch8_translate:
    """Decode every test direction (supervised and zero-shot) in one process."""
    input:
        data=CH8_DATA,
        model=CH8_MODEL,
    output:
        directory(CH8_HYP),
    log:
        log_path(CH8_CHAPTER, "translate_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        model=lambda wildcards, input: os.path.dirname(input.model),
        flags=flags_from(CH8["decode"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt translate --data {input.data} --model {params.model} "
        "--system {wildcards.ch8_system} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_translate_pivot:
    """#0: every zero-shot direction X→Y as X→en→Y with the pivot system's model."""
    input:
        data=CH8_DATA,
        model=CH8_MODEL.replace("{ch8_system}", CH8["pivot"] or "none"),
    output:
        directory(CH8_HYP.replace("{ch8_system}", "pivot")),
    log:
        log_path(CH8_CHAPTER, "translate_{ch8_dataset}_pivot_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        model=lambda wildcards, input: os.path.dirname(input.model),
        system=CH8["pivot"],
        flags=flags_from(CH8["decode"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt translate --pivot --data {input.data} --model {params.model} "
        "--system {params.system} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_states:
    """Per-layer token states (encoder: source; decoder: free decoding) for probes and SVCCA."""
    input:
        data=CH8_DATA,
        model=CH8_MODEL,
        hyp=CH8_HYP,
    output:
        directory(CH8_STATES),
    log:
        log_path(CH8_CHAPTER, "states_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        model=lambda wildcards, input: os.path.dirname(input.model),
        flags=flags_from({**CH8["decode"], **CH8["states"]}),
        scale=CFG["scale"],
    shell:
        "mlrep nmt states --data {input.data} --model {params.model} --hyp {input.hyp} "
        "--system {wildcards.ch8_system} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_probe:
    """Layer-wise language recognition: train on valid states, test on sup or zst states."""
    input:
        CH8_STATES,
    output:
        CH8_PROBE,
    log:
        log_path(
            CH8_CHAPTER, "probe_{ch8_dataset}_{ch8_system}_seed{ch8_seed}_{ch8_subset}"
        ),
    wildcard_constraints:
        **CH8_WILDCARDS,
        ch8_subset="sup|zst",
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        flags=flags_from(CH8["probe"]),
    shell:
        "mlrep eval probe --train {input}/train.npz --test {input}/{wildcards.ch8_subset}.npz "
        "--seed {wildcards.ch8_seed} --out {output} {params.flags} > {log} 2>&1"


rule ch8_svcca:
    """Encoder layer-wise SVCCA between the en and xx sides of the same test sentences."""
    input:
        CH8_STATES,
    output:
        CH8_SVCCA,
    log:
        log_path(CH8_CHAPTER, "svcca_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        flags=flags_from(CH8["svcca"]),
    shell:
        "mlrep eval svcca --a {input}/svcca_a.npz --b {input}/svcca_b.npz --out {output} "
        "{params.flags} > {log} 2>&1"


rule ch8_score:
    """sacreBLEU per direction (zh tokenizer for Chinese targets) and per-sentence statistics."""
    input:
        data=CH8_DATA,
        hyp=CH8_HYP,
    output:
        CH8_SCORES,
    log:
        log_path(CH8_CHAPTER, "score_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_ANY_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    shell:
        "mlrep nmt score --data {input.data} --hyp {input.hyp} --out {output} > {log} 2>&1"


rule ch8_bleurt:
    """BLEURT ×100 per test direction with the configured checkpoint (Table E.9)."""
    input:
        data=CH8_DATA,
        hyp=CH8_HYP,
    output:
        CH8_BLEURT,
    log:
        log_path(CH8_CHAPTER, "bleurt_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_ANY_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        flags=flags_from(CH8["bleurt"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt bleurt --data {input.data} --hyp {input.hyp} --out {output} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_metrics:
    """metrics.json of one run: BLEU, off-target rate, probes, SVCCA, BLEURT (mlrep/report/metrics.py)."""
    input:
        # the probes and SVCCA of a trained system (the pivot baseline has none), BLEURT
        unpack(
            lambda w: CH8_SCORERS | ({} if w.ch8_system == "pivot" else CH8_ANALYSES)
        ),
        scores=CH8_SCORES,
        hyp=CH8_HYP,
    output:
        CH8_METRICS,
    log:
        log_path(CH8_CHAPTER, "metrics_{ch8_dataset}_{ch8_system}_seed{ch8_seed}"),
    wildcard_constraints:
        **CH8_ANY_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        analyses=lambda wildcards, input: " ".join(
            f"--{name.replace('_', '-')} {input[name]}"
            for name in CH8_ANALYSES | CH8_SCORERS
            if name in input.keys()
        ),
        flags=flags_from({f"off_target_{k}": v for k, v in CH8["off_target"].items()}),
        scale=CFG["scale"],
    shell:
        "mlrep nmt metrics --scores {input.scores} --hyp {input.hyp} "
        "--run {wildcards.ch8_dataset}/{wildcards.ch8_system} --seed {wildcards.ch8_seed} "
        "--out {output} --scale {params.scale} {params.analyses} {params.flags} > {log} 2>&1"


rule ch8_layernorm:
    """Chapter 8 target: every run's metrics.json and the report rendered from them."""
    input:
        CHAPTER_TARGETS[CH8_CHAPTER],
        str(PATHS.report.index),
