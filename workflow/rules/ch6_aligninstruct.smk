"""Chapter 6: AlignInstruct, LoRA-tuning BLOOMZ for unseen languages (thesis ch. 6, appendix D).

Per block of the grid (BLOOMZ+24, BLOOMZ+3: mlrep/chapters/ch6_aligninstruct/runs.py) its
preprocess dataset's pairs are word-aligned by the shared alignment layer (fast_align on the
`tok` sides, workflow/rules/align.smk), and each pair's instruction sets are built from those
tokens, links and the raw lines (`mlrep ch6 instructions`, one file per pair and objective).
The base of each size is a hub checkpoint at full and, at tiny, a stand-in pretrained here on
leak-free text of languages BLOOM has seen (`mlrep llm stand-in`). Per run: each stage of its
curriculum is a LoRA training on its objectives' sets (`mlrep llm lora-train`, stage k starts
from stage k-1's adapter) → every test direction decoded greedily in one job (`mlrep ch6
decode`; a prompt-ablation or pivot run decodes another run's adapter) → BLEU, chrF++ and
COMET (`mlrep ch6 score`) → metrics.json. The layer-wise cosine analyses (Figures 6.3, D.1)
run each compared model over the valid pairs and write their Δ per layer.

The chapter target `ch6_aligninstruct` builds every run params.yaml's grid asks for and the
report rendered from them (Tables 6.1-6.6, D.1-D.12, Figures 6.1, 6.3, D.1).
"""

import os

from mlrep.chapters.ch6_aligninstruct import plan as ch6_plan
from mlrep.chapters.ch6_aligninstruct import runs as ch6_runs
from mlrep.chapters.ch6_aligninstruct import training as ch6_training

CH6 = CFG["ch6_aligninstruct"]
CH6_CHAPTER = ch6_plan.CHAPTER
CH6_PLAN = ch6_plan.Plan(CH6, PRE, ALIGN, PATHS)
CH6_RUN_NAMES = "|".join(sorted({run.name for run in CH6_PLAN.runs.values()}))
CH6_WILDCARDS = {
    "block": "|".join(ch6_runs.SETTINGS),
    "run": CH6_RUN_NAMES,
    "model": CH6_RUN_NAMES,
    "seed": r"\d+",
    "stage": r"\d+",
    "size": "|".join(ch6_runs.SIZES),
    "lang": "[a-z]{2,3}",
    "objective": "|".join(ch6_runs.OBJECTIVES),
    "test": "opus|flores|cosine",
}
# the analyses' results: a run folder of their own (Figures 6.3, D.1)
CH6_ANALYSIS_WILDCARDS = {
    **CH6_WILDCARDS,
    "run": "|".join(sorted(a.name for a in CH6_PLAN.analyses.values())),
}

CHAPTER_DATA[CH6_CHAPTER] = CH6_PLAN.corpus_folders()
CHAPTER_TARGETS[CH6_CHAPTER] = CH6_PLAN.targets(CH6["seeds"])


localrules:
    ch6_aligninstruct,


rule ch6_stand_in:
    """A tiny BLOOM-class base of one size, causal-LM pretrained on the leak-free text of
    the languages BLOOM has seen (no held-out segment, no unseen language)."""
    input:
        str(PATHS.chapter_data(CH6_CHAPTER, "monolingual")),
    output:
        directory(CH6_PLAN.base_folder),
    log:
        log_path(CH6_CHAPTER, "stand_in_{size}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("llm stand-in"),
        text=lambda w, input: [
            os.path.join(input[0], f"{lang}.txt")
            for lang in CH6["monolingual"]["languages"]
        ],
        layers=lambda w: CH6["bases"][w.size]["layers"],
        flags=flags_from(CH6["stand_in"]),
        seed=CH6["seeds"][0],
        scale=CFG["scale"],
    shell:
        "mlrep llm stand-in --text {params.text} --layers {params.layers} {params.flags} "
        "--seed {params.seed} --threads {threads} --out {output} --scale {params.scale} "
        "> {log} 2>&1"


rule ch6_instructions:
    """One pair's instruction set of one objective, from the alignment layer's links over the
    pair's tokens, the prompts showing its raw lines."""
    input:
        corpus=lambda w: sorted({f for f, _ in CH6_PLAN.pair_raw(w.block, w.lang)}),
        tokens=lambda w: CH6_PLAN.pair_tokens(w.block, w.lang),
    output:
        CH6_PLAN.instructions,
    log:
        log_path(CH6_CHAPTER, "instructions_{block}_en-{lang}_{objective}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("ch6 instructions"),
        raw=lambda w: [path for _, path in CH6_PLAN.pair_raw(w.block, w.lang)],
        max_pairs=lambda w: flags_from(
            {"max_pairs": n} if (n := CH6["blocks"][w.block]["max_pairs"]) else {}
        ),
        flags=flags_from(CH6["instruct"]),
        seed=CH6["seeds"][0],
    shell:
        "mlrep ch6 instructions --types {wildcards.objective} --source en "
        "--target {wildcards.lang} --source-text {params.raw[0]} --target-text {params.raw[1]} "
        "--source-tokens {input.tokens[0]} --target-tokens {input.tokens[1]} "
        "--links {input.tokens[2]} "
        "--seed {params.seed} {params.max_pairs} {params.flags} --out {output} > {log} 2>&1"


rule ch6_tests:
    """A block's test set (its directions' source and reference lines) or its valid pairs
    for the cosine analyses."""
    input:
        lambda w: sorted({f for f, _ in CH6_PLAN.test_raw(w.block, w.test)}),
    output:
        directory(CH6_PLAN.tests),
    log:
        log_path(CH6_CHAPTER, "tests_{block}_{test}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("ch6 tests"),
        raw=lambda w: [path for _, path in CH6_PLAN.test_raw(w.block, w.test)],
        split=lambda w: CH6["tests"][w.test]["split"],
        languages=lambda w: " ".join(CH6_PLAN.languages(w.block)),
        max_test=lambda w: CH6["data"][
            "max_cosine" if w.test == "cosine" else "max_test"
        ],
    shell:
        "mlrep ch6 tests --setting {wildcards.block} --split {params.split} --raw {params.raw} "
        "--languages {params.languages} --max-test {params.max_test} --out {output} "
        "> {log} 2>&1"


rule ch6_train:
    """One stage of a run's curriculum: LoRA on its objectives' sets, from the previous
    stage's adapter (resumes its checkpoints, those of changed settings or data are replaced;
    exit 75 on SIGUSR1/SIGTERM)."""
    input:
        train=lambda w: CH6_PLAN.stage_inputs(w.block, w.run, int(w.stage)),
        base=lambda w: CH6_PLAN.base_input(CH6_PLAN.run(w.block, w.run).size),
        previous=lambda w: CH6_PLAN.previous_stage(w.block, w.run, w.seed, int(w.stage)),
    output:
        CH6_PLAN.stage,
    log:
        log_path(CH6_CHAPTER, "train_{block}_{run}_seed{seed}_stage{stage}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_train")
    resources:
        **job_resources("gpu_train"),
    params:
        code=code_version("llm lora-train"),
        base=lambda w: CH6_PLAN.base(CH6_PLAN.run(w.block, w.run).size),
        out=lambda wildcards, output: os.path.dirname(output[0]),
        init=lambda wildcards, input: (
            f"--init-adapter {os.path.join(os.path.dirname(input.previous[0]), 'adapter')}"
            if input.previous
            else ""
        ),
        epochs=lambda w: ch6_training.stage(
            CH6_PLAN.run(w.block, w.run), int(w.stage)
        ).epochs,
        flags=flags_from(CH6["lora"]),
        scale=CFG["scale"],
    shell:
        "exec mlrep llm lora-train --base {params.base} --train {input.train} {params.init} "
        "--epochs {params.epochs} {params.flags} --seed {wildcards.seed} --out {params.out} "
        "--on-stale restart --threads {threads} --scale {params.scale} > {log} 2>&1"


rule ch6_decode:
    """Every test direction of a run, greedy, in one job (a pivot run's two passes)."""
    input:
        tests=lambda w: list(CH6_PLAN.tests_of(w.block, w.run).values()),
        base=lambda w: CH6_PLAN.base_input(CH6_PLAN.run(w.block, w.run).size),
        model=lambda w: CH6_PLAN.adapter_of(w.block, w.run, w.seed),
    output:
        directory(CH6_PLAN.hyp),
    log:
        log_path(CH6_CHAPTER, "decode_{block}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_decode")
    resources:
        **job_resources("gpu_decode"),
    params:
        code=code_version("ch6 decode"),
        run=lambda w: f"{w.block}/{w.run}",
        tests=lambda w: " ".join(
            f"{t}={f}" for t, f in CH6_PLAN.tests_of(w.block, w.run).items()
        ),
        base=lambda w: CH6_PLAN.base(CH6_PLAN.run(w.block, w.run).size),
        adapter=lambda wildcards, input: (
            f"--adapter {os.path.join(os.path.dirname(input.model[0]), 'adapter')}"
            if input.model
            else ""
        ),
        languages=lambda w: " ".join(CH6_PLAN.languages(w.block)),
        flags=flags_from(CH6["generate"]),
    shell:
        "mlrep ch6 decode --run {params.run} --tests {params.tests} "
        "--languages {params.languages} --base {params.base} {params.adapter} {params.flags} "
        "--out {output} > {log} 2>&1"


rule ch6_comet_stand_in:
    """Tiny: a random checkpoint of COMET's layout, so COMET's code path runs (its cells
    read "not run at this scale")."""
    output:
        directory(CH6_PLAN.comet),
    log:
        log_path(CH6_CHAPTER, "comet_stand_in"),
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("eval comet-stand-in"),
        seed=CH6["seeds"][0],
    shell:
        "mlrep eval comet-stand-in --seed {params.seed} --out {output} > {log} 2>&1"


rule ch6_score:
    """BLEU, chrF++ and COMET of every test direction of a run."""
    input:
        tests=lambda w: list(CH6_PLAN.tests_of(w.block, w.run).values()),
        hyp=CH6_PLAN.hyp,
        comet=[] if CH6["comet"]["checkpoint"] else [CH6_PLAN.comet],
    output:
        CH6_PLAN.scores,
    log:
        log_path(CH6_CHAPTER, "score_{block}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("ch6 score"),
        run=lambda w: f"{w.block}/{w.run}",
        tests=lambda w: " ".join(
            f"{t}={f}" for t, f in CH6_PLAN.tests_of(w.block, w.run).items()
        ),
        languages=lambda w: " ".join(CH6_PLAN.languages(w.block)),
        checkpoint=lambda w, input: (
            input.comet[0] if input.comet else CH6["comet"]["checkpoint"]
        ),
        revision=flags_from({"comet_revision": CH6["comet"]["revision"] or None}),
        batch=CH6["comet"]["batch_size"],
    shell:
        "mlrep ch6 score --run {params.run} --tests {params.tests} --hyp {input.hyp} "
        "--languages {params.languages} --comet-checkpoint {params.checkpoint} "
        "{params.revision} --batch-size {params.batch} --out {output} > {log} 2>&1"


rule ch6_metrics:
    """A run's metrics.json: per-direction scores, the tables' averages and groups."""
    input:
        CH6_PLAN.scores,
    output:
        CH6_PLAN.metrics,
    log:
        log_path(CH6_CHAPTER, "metrics_{block}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH6_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("ch6 metrics"),
        run=lambda w: f"{w.block}/{w.run}",
        scale=CFG["scale"],
    shell:
        "mlrep ch6 metrics --run {params.run} --seed {wildcards.seed} --scores {input} "
        "--scale {params.scale} --out {output} > {log} 2>&1"


rule ch6_cosine:
    """One compared model's layer-wise cosine of an analysis's valid pairs (Figures 6.3,
    D.1): mean-pooled states of each side, per layer."""
    input:
        tests=CH6_PLAN.tests.replace("{test}", ch6_plan.COSINE),
        base=lambda w: CH6_PLAN.base_input(CH6_PLAN.run(w.block, w.model).size),
        model=lambda w: CH6_PLAN.adapter_of(w.block, w.model, w.seed),
    output:
        CH6_PLAN.cosine,
    log:
        log_path(CH6_CHAPTER, "cosine_{block}_{run}_{model}_seed{seed}"),
    wildcard_constraints:
        **CH6_ANALYSIS_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("gpu_eval")
    resources:
        **job_resources("gpu_eval"),
    params:
        code=code_version("llm cosine"),
        base=lambda w: CH6_PLAN.base(CH6_PLAN.run(w.block, w.model).size),
        adapter=lambda wildcards, input: (
            f"--adapter {os.path.join(os.path.dirname(input.model[0]), 'adapter')}"
            if input.model
            else ""
        ),
        src=lambda w: CH6_PLAN.cosine_pairs(w.block, w.run)["src"],
        tgt=lambda w: CH6_PLAN.cosine_pairs(w.block, w.run)["tgt"],
        flags=flags_from(CH6["cosine"]),
    shell:
        "mlrep llm cosine --base {params.base} {params.adapter} "
        "--src {params.src} --tgt {params.tgt} {params.flags} --out {output} "
        "> {log} 2>&1"


rule ch6_cosine_metrics:
    """An analysis's Δ1 (MTInstruct − no FT) and Δ2 (MT+Align − MTInstruct) per layer."""
    input:
        unpack(lambda w: CH6_PLAN.cosine_inputs(w.block, w.run, w.seed)),
    output:
        CH6_PLAN.metrics,
    log:
        log_path(CH6_CHAPTER, "cosine_{block}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH6_ANALYSIS_WILDCARDS,
    conda:
        MLREP_ENV
    threads: job_threads("cpu_light")
    resources:
        **job_resources("cpu_light"),
    params:
        code=code_version("ch6 cosine"),
        analysis=lambda w: f"{w.block}/{w.run}",
        scale=CFG["scale"],
    shell:
        "mlrep ch6 cosine --analysis {params.analysis} --noft {input.noft} --mt {input.mt} "
        "--mt-align {input.mt_align} --seed {wildcards.seed} --scale {params.scale} --out {output} "
        "> {log} 2>&1"


rule ch6_aligninstruct:
    """Target: every run and analysis params.yaml asks for, then the report."""
    input:
        CHAPTER_TARGETS[CH6_CHAPTER],
        str(PATHS.report.index),
