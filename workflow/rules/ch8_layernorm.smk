"""Chapter 8: LayerNorm placement and zero-shot NMT (thesis ch. 8 and appendix E).

Per dataset: the shared preprocessing (workflow/rules/preprocess.smk: Moses/jieba, the
dataset's joint BPE setting) → cut + binarise (`mlrep nmt prepare`). Per run (dataset, system,
seed): train → translate every test direction in one process → score, per-layer states →
probes and SVCCA (`mlrep eval`, the analyses) → metrics.json. The pivot baseline (#0) decodes the zero-shot
directions through English with the `pivot` system's model. The grid is params.yaml data.
"""

import os

from mlrep.chapters.ch8_layernorm import grid as ch8_grid
from mlrep.chapters.ch8_layernorm import systems as ch8_systems
from mlrep.nmt import settings as nmt_settings

CH8 = CFG["ch8_layernorm"]
CH8_CHAPTER = "ch8_layernorm"
CH8_DATA = str(PATHS.chapter_data(CH8_CHAPTER, "{dataset}"))
CH8_RUN = PATHS.run(CH8_CHAPTER, "{run}", "{seed}", dataset="{dataset}")
CH8_MODEL = str(
    PATHS.model(CH8_CHAPTER, "{run}", "{seed}", dataset="{dataset}") / "train.json"
)
CH8_HYP = str(CH8_RUN / "hyp")
CH8_STATES = str(CH8_RUN / "states")
CH8_PROBE = str(CH8_RUN / "probe_{subset}.json")
CH8_SVCCA = str(CH8_RUN / "svcca.json")
CH8_SCORES = str(CH8_RUN / "scores.json")
CH8_BLEURT = str(CH8_RUN / "bleurt.json")
CH8_METRICS = str(CH8_RUN / "metrics.json")
CH8_SYSTEM = ch8_systems.PATTERN
CH8_WILDCARDS = {
    "dataset": "|".join(CH8["datasets"]),
    "run": CH8_SYSTEM,
    "seed": r"\d+",
}
# the scoring rules also serve the pivot baseline's run
CH8_ANY_WILDCARDS = {**CH8_WILDCARDS, "run": f"{CH8_SYSTEM}|{ch8_systems.PIVOT_SYSTEM}"}


CH8_ANALYSES = {
    "probe_sup": CH8_PROBE.replace("{subset}", "sup"),
    "probe_zst": CH8_PROBE.replace("{subset}", "zst"),
    "svcca": CH8_SVCCA,
}
# BLEURT (Table E.9) only where a checkpoint is configured (full: BLEURT-20 from the hub)
CH8_SCORERS = {"bleurt": CH8_BLEURT} if CH8["bleurt"]["checkpoint"] else {}

# the preprocess subword setting each dataset reads (its encoded files and their corpus lines)
CH8_SUBWORDS = {d: spec["subwords"] for d, spec in CH8["datasets"].items()}
CHAPTER_DATA[CH8_CHAPTER] = [
    folder
    for d in CH8["run_datasets"]
    for folder in preprocess_plan.corpus_folders(PRE, PATHS, CH8_SUBWORDS[d])
]
CHAPTER_TARGETS[CH8_CHAPTER] = [
    CH8_METRICS.format(dataset=d, run=s, seed=seed)
    for d, s, seed in ch8_grid.scored_runs(CH8)
]


localrules:
    ch8_layernorm,


rule ch8_prepare:
    """Cut an English-centric dataset from the shared preprocessing's subword files (and their
    raw corpus lines, the references), build the dictionary, binarise both tag formats.
    """
    input:
        corpora=lambda w: preprocess_plan.corpus_folders(
            PRE, PATHS, CH8_SUBWORDS[w.dataset]
        ),
        encoded=lambda w: [
            str(sub)
            for _, sub in preprocess_plan.encoded_files(
                PRE, PATHS, CH8_SUBWORDS[w.dataset]
            )
        ],
    output:
        directory(CH8_DATA),
    log:
        log_path(CH8_CHAPTER, "prepare_{dataset}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        section=CH8_CHAPTER,
        code=code_version("nmt prepare"),
        raw=lambda w: [
            str(raw)
            for raw, _ in preprocess_plan.encoded_files(
                PRE, PATHS, CH8_SUBWORDS[w.dataset]
            )
        ],
        # how the subwords were made, so decoding can undo it
        detokenize=lambda w: flags_from(
            {
                "subword_method": preprocess_plan.subword_setting(
                    PRE, CH8_SUBWORDS[w.dataset]
                )["method"],
                "backend": PRE["tokenize"]["backend"],
                "segmented": PRE_SEGMENTED,
            }
        ),
        dataset_flags=lambda w: flags_from(
            nmt_settings.prepare_dataset_values(CH8["datasets"][w.dataset])
        ),
        flags=flags_from(CH8["data"]),
        # `--dictionary <dict.txt>` where a chapter binarises with a pre-trained model's
        dictionary="",
        scale=CFG["scale"],
    shell:
        "mlrep nmt prepare --section {params.section} --encoded {input.encoded} "
        "--raw {params.raw} --dataset {wildcards.dataset} --out {output} "
        "--threads {threads} --scale {params.scale} {params.detokenize} "
        "{params.dataset_flags} {params.flags} {params.dictionary} > {log} 2>&1"


rule ch8_train:
    """Train one system (resumes from checkpoint_last.pt; exit 75 on SIGUSR1/SIGTERM)."""
    input:
        data=CH8_DATA,
    output:
        CH8_MODEL,
    log:
        log_path(CH8_CHAPTER, "train_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train", gpu=lambda w: CH8["datasets"][w.dataset]["gpus"]),
    params:
        section=CH8_CHAPTER,
        code=code_version("nmt train"),
        out=lambda wildcards, output: os.path.dirname(output[0]),
        system=lambda w: flags_from(ch8_systems.System.parse(w.run).settings()),
        dataset_flags=lambda w: flags_from(
            nmt_settings.train_dataset_values(CH8["datasets"][w.dataset])
        ),
        flags=flags_from(CH8["train"]),
        scale=CFG["scale"],
    # exec: the trainer is the job step's task, so SLURM's USR1/TERM reach it first and no
    # shell dies of them before the checkpoint is saved (mlrep/train/checkpoint.py). A rerun
    # resumes its own checkpoints; those of changed settings or data are replaced (--on-stale)
    shell:
        "exec mlrep nmt train --section {params.section} --data {input.data} --dataset {wildcards.dataset} "
        "--name {wildcards.run} {params.system} --seed {wildcards.seed} --out {params.out} "
        "--on-stale restart "
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
        log_path(CH8_CHAPTER, "translate_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_decode")
    resources:
        **job_resources("gpu_decode"),
    params:
        section=CH8_CHAPTER,
        code=code_version("nmt translate"),
        model=lambda wildcards, input: os.path.dirname(input.model),
        tag=lambda w: ch8_systems.System.parse(w.run).tag,
        flags=flags_from(CH8["decode"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt translate --section {params.section} --data {input.data} --model {params.model} "
        "--tag-format {params.tag} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_translate_pivot:
    """#0: every zero-shot direction X→Y as X→en→Y with the pivot system's model."""
    input:
        data=CH8_DATA,
        model=CH8_MODEL.replace("{run}", CH8["pivot"] or "none"),
    output:
        directory(CH8_HYP.replace("{run}", ch8_systems.PIVOT_SYSTEM)),
    log:
        log_path(CH8_CHAPTER, "translate_{dataset}_pivot_seed{seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_decode")
    resources:
        **job_resources("gpu_decode"),
    params:
        section=CH8_CHAPTER,
        code=code_version("nmt translate"),
        model=lambda wildcards, input: os.path.dirname(input.model),
        tag=lambda w: ch8_systems.System.parse(CH8["pivot"]).tag,
        flags=flags_from(CH8["decode"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt translate --section {params.section} --pivot --data {input.data} "
        "--model {params.model} "
        "--tag-format {params.tag} --out {output} --threads {threads} "
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
        log_path(CH8_CHAPTER, "states_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_decode")
    resources:
        **job_resources("gpu_decode"),
    params:
        code=code_version("nmt states"),
        model=lambda wildcards, input: os.path.dirname(input.model),
        tag=lambda w: ch8_systems.System.parse(w.run).tag,
        flags=flags_from({**CH8["decode"], **CH8["states"]}),
        scale=CFG["scale"],
    shell:
        "mlrep nmt states --section ch8_layernorm --data {input.data} --model {params.model} "
        "--hyp {input.hyp} "
        "--tag-format {params.tag} --out {output} --threads {threads} "
        "--scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_probe:
    """Layer-wise language recognition: train on valid states, test on sup or zst states."""
    input:
        CH8_STATES,
    output:
        CH8_PROBE,
    log:
        log_path(CH8_CHAPTER, "probe_{dataset}_{run}_seed{seed}_{subset}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
        subset="sup|zst",
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("eval probe"),
        flags=flags_from(CH8["probe"]),
    shell:
        "mlrep eval probe --train {input}/train.npz --test {input}/{wildcards.subset}.npz "
        "--seed {wildcards.seed} --out {output} {params.flags} > {log} 2>&1"


rule ch8_svcca:
    """Encoder layer-wise SVCCA between the en and xx sides of the same test sentences."""
    input:
        CH8_STATES,
    output:
        CH8_SVCCA,
    log:
        log_path(CH8_CHAPTER, "svcca_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("default")
    resources:
        **job_resources("default"),
    params:
        code=code_version("eval svcca"),
        flags=flags_from(CH8["svcca"]),
    shell:
        "mlrep eval svcca --a {input}/svcca_a.npz --b {input}/svcca_b.npz --out {output} "
        "{params.flags} > {log} 2>&1"


rule ch8_score:
    """sacreBLEU per direction (zh tokenizer for Chinese targets) and per-sentence statistics,
    with each metric's copy-the-source floor."""
    input:
        data=CH8_DATA,
        hyp=CH8_HYP,
    output:
        CH8_SCORES,
    log:
        log_path(CH8_CHAPTER, "score_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_ANY_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        section=CH8_CHAPTER,
        code=code_version("nmt score"),
    shell:
        "mlrep nmt score --section {params.section} --data {input.data} --hyp {input.hyp} "
        "--out {output} > {log} 2>&1"


rule ch8_bleurt:
    """BLEURT ×100 per test direction with the configured checkpoint (Table E.9)."""
    input:
        data=CH8_DATA,
        hyp=CH8_HYP,
    output:
        CH8_BLEURT,
    log:
        log_path(CH8_CHAPTER, "bleurt_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_ANY_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("nmt bleurt"),
        flags=flags_from(CH8["bleurt"]),
        scale=CFG["scale"],
    shell:
        "mlrep nmt bleurt --section ch8_layernorm --data {input.data} --hyp {input.hyp} "
        "--out {output} "
        "--threads {threads} --scale {params.scale} {params.flags} > {log} 2>&1"


rule ch8_metrics:
    """metrics.json of one run: BLEU, off-target rate, probes, SVCCA, BLEURT (mlrep/report/metrics.py)."""
    input:
        # the probes and SVCCA of a trained system (the pivot baseline has none), BLEURT
        unpack(
            lambda w: CH8_SCORERS
            | ({} if w.run == ch8_systems.PIVOT_SYSTEM else CH8_ANALYSES)
        ),
        scores=CH8_SCORES,
        hyp=CH8_HYP,
        # the test sources, for the off-target rate's copy-the-source floor
        data=CH8_DATA,
    output:
        CH8_METRICS,
    log:
        log_path(CH8_CHAPTER, "metrics_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH8_ANY_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        section=CH8_CHAPTER,
        code=code_version("nmt metrics"),
        analyses=lambda wildcards, input: " ".join(
            f"--{name.replace('_', '-')} {input[name]}"
            for name in CH8_ANALYSES | CH8_SCORERS
            if name in input.keys()
        ),
        flags=flags_from({f"off_target_{k}": v for k, v in CH8["off_target"].items()}),
        scale=CFG["scale"],
    shell:
        "mlrep nmt metrics --section {params.section} --scores {input.scores} --hyp {input.hyp} "
        "--data {input.data} "
        "--run {wildcards.dataset}/{wildcards.run} --seed {wildcards.seed} "
        "--out {output} --scale {params.scale} {params.analyses} {params.flags} > {log} 2>&1"


rule ch8_layernorm:
    """Chapter 8 target: every run's metrics.json and the report rendered from them."""
    input:
        CHAPTER_TARGETS[CH8_CHAPTER],
        str(PATHS.report.index),
