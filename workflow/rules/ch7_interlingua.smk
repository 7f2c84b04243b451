"""Chapter 7: variable-length interlingua representations for zero-shot NMT (thesis ch. 7).

The same steps as Chapter 8 on the same datasets (workflow/rules/ch8_layernorm.smk), so each
rule here is Chapter 8's (`use rule … with:`) with this chapter's folders, settings and
wildcards: per dataset the shared preprocessing → cut + binarise (`mlrep nmt prepare`); per run
(dataset, system, seed) train (`--interlingua`) → translate every test direction → score →
metrics.json. The variable-length system also decodes the non-English→English directions with
the gold (English reference) interlingua length (Table 7.5); the pivot baseline decodes the
zero-shot directions through English with the `pivot` system's model (MNMT).

Snakemake's `use rule … with:` replaces input, output, log, wildcard_constraints and resources
as a whole and merges params by name, so each rule below restates the first group and only
the params whose values are Chapter 7's.
"""

from mlrep.chapters.ch7_interlingua import grid as ch7_grid
from mlrep.chapters.ch7_interlingua import systems as ch7_systems
from mlrep.nmt import settings as nmt_settings

CH7 = CFG["ch7_interlingua"]
CH7_CHAPTER = "ch7_interlingua"
CH7_DATA = str(PATHS.chapter_data(CH7_CHAPTER, "{dataset}"))
CH7_RUN = PATHS.run(CH7_CHAPTER, "{run}", "{seed}", dataset="{dataset}")
CH7_MODEL = str(
    PATHS.model(CH7_CHAPTER, "{run}", "{seed}", dataset="{dataset}") / "train.json"
)
CH7_HYP = str(CH7_RUN / "hyp")
CH7_HYP_GOLD = str(CH7_RUN / "hyp_gold")  # decoded with the gold interlingua length
CH7_SCORES = str(CH7_RUN / "scores.json")
CH7_SCORES_GOLD = str(CH7_RUN / "scores_gold.json")
CH7_METRICS = str(CH7_RUN / "metrics.json")
CH7_WILDCARDS = {
    "dataset": "|".join(CH7["datasets"]),
    "run": ch7_systems.PATTERN,
    "seed": r"\d+",
}
# the scoring rules also serve the pivot baseline's run
CH7_ANY_WILDCARDS = {
    **CH7_WILDCARDS,
    "run": f"{ch7_systems.PATTERN}|{ch7_systems.PIVOT_SYSTEM}",
}
# gold-length decoding: the systems that predict their interlingua's length
CH7_GOLD_WILDCARDS = {**CH7_WILDCARDS, "run": "|".join(ch7_systems.PREDICTED_LENGTH)}

# what a run's metrics step may read beside its scores (grid.metrics_inputs)
CH7_METRICS_INPUTS = {"model": CH7_MODEL, "gold_scores": CH7_SCORES_GOLD}

# the preprocess subword setting each dataset reads (its encoded files and their corpus lines)
CH7_SUBWORDS = {d: spec["subwords"] for d, spec in CH7["datasets"].items()}
CHAPTER_DATA[CH7_CHAPTER] = [
    folder
    for d in CH7["run_datasets"]
    for folder in preprocess_plan.corpus_folders(PRE, PATHS, CH7_SUBWORDS[d])
]
CHAPTER_TARGETS[CH7_CHAPTER] = [
    CH7_METRICS.format(dataset=d, run=s, seed=seed)
    for d, s, seed in ch7_grid.scored_runs(CH7)
]


localrules:
    ch7_interlingua,


use rule ch8_prepare as ch7_prepare with:
    input:
        corpora=lambda w: preprocess_plan.corpus_folders(
            PRE, PATHS, CH7_SUBWORDS[w.dataset]
        ),
        encoded=lambda w: [
            str(sub)
            for _, sub in preprocess_plan.encoded_files(
                PRE, PATHS, CH7_SUBWORDS[w.dataset]
            )
        ],
    output:
        directory(CH7_DATA),
    log:
        log_path(CH7_CHAPTER, "prepare_{dataset}"),
    wildcard_constraints:
        **CH7_WILDCARDS,
    params:
        section=CH7_CHAPTER,
        raw=lambda w: [
            str(raw)
            for raw, _ in preprocess_plan.encoded_files(
                PRE, PATHS, CH7_SUBWORDS[w.dataset]
            )
        ],
        detokenize=lambda w: flags_from(
            {
                "subword_method": preprocess_plan.subword_setting(
                    PRE, CH7_SUBWORDS[w.dataset]
                )["method"],
                "backend": PRE["tokenize"]["backend"],
                "segmented": PRE_SEGMENTED,
            }
        ),
        dataset_flags=lambda w: flags_from(
            nmt_settings.prepare_dataset_values(CH7["datasets"][w.dataset])
        ),
        flags=flags_from(CH7["data"]),


use rule ch8_train as ch7_train with:
    input:
        data=CH7_DATA,
    output:
        CH7_MODEL,
    log:
        log_path(CH7_CHAPTER, "train_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH7_WILDCARDS,
    resources:
        **job_resources("gpu_train", gpu=lambda w: CH7["datasets"][w.dataset]["gpus"]),
    params:
        section=CH7_CHAPTER,
        # the dataset's model and training values with the system's (grid.train_values), so
        # the fixed interlingua length reaches the fixed-length systems only
        system=lambda w: flags_from(ch7_grid.train_values(CH7, w.dataset, w.run)),
        dataset_flags="",
        flags=flags_from(CH7["train"]),


use rule ch8_translate as ch7_translate with:
    input:
        data=CH7_DATA,
        model=CH7_MODEL,
    output:
        directory(CH7_HYP),
    log:
        log_path(CH7_CHAPTER, "translate_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH7_WILDCARDS,
    params:
        section=CH7_CHAPTER,
        tag=ch7_systems.TAG,
        flags=flags_from(CH7["decode"]),


use rule ch7_translate as ch7_translate_gold with:
    output:
        directory(CH7_HYP_GOLD),
    log:
        log_path(CH7_CHAPTER, "translate_gold_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH7_GOLD_WILDCARDS,
    params:
        # the non-English→English directions, each with its English reference's length
        flags=flags_from({**CH7["decode"], "gold_length": True}),


use rule ch8_translate_pivot as ch7_translate_pivot with:
    input:
        data=CH7_DATA,
        model=CH7_MODEL.replace("{run}", CH7["pivot"] or "none"),
    output:
        directory(CH7_HYP.replace("{run}", ch7_systems.PIVOT_SYSTEM)),
    log:
        log_path(CH7_CHAPTER, "translate_{dataset}_pivot_seed{seed}"),
    wildcard_constraints:
        **CH7_WILDCARDS,
    params:
        section=CH7_CHAPTER,
        tag=ch7_systems.TAG,
        flags=flags_from(CH7["decode"]),


use rule ch8_score as ch7_score with:
    input:
        data=CH7_DATA,
        hyp=CH7_HYP,
    output:
        CH7_SCORES,
    log:
        log_path(CH7_CHAPTER, "score_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH7_ANY_WILDCARDS,
    params:
        section=CH7_CHAPTER,


use rule ch7_score as ch7_score_gold with:
    input:
        data=CH7_DATA,
        hyp=CH7_HYP_GOLD,
    output:
        CH7_SCORES_GOLD,
    log:
        log_path(CH7_CHAPTER, "score_gold_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH7_GOLD_WILDCARDS,


use rule ch8_metrics as ch7_metrics with:
    input:
        # a trained system's model (its validation log), var's gold-length scores
        unpack(
            lambda w: {
                k: CH7_METRICS_INPUTS[k] for k in ch7_grid.metrics_inputs(w.run)
            }
        ),
        scores=CH7_SCORES,
        hyp=CH7_HYP,
        # the test sources, for the off-target rate's copy-the-source floor
        data=CH7_DATA,
    output:
        CH7_METRICS,
    log:
        log_path(CH7_CHAPTER, "metrics_{dataset}_{run}_seed{seed}"),
    wildcard_constraints:
        **CH7_ANY_WILDCARDS,
    params:
        section=CH7_CHAPTER,
        analyses=lambda wildcards, input: ch7_grid.metrics_options(dict(input.items())),
        flags=flags_from({f"off_target_{k}": v for k, v in CH7["off_target"].items()}),


rule ch7_interlingua:
    """Chapter 7 target: every run's metrics.json and the report rendered from them."""
    input:
        CHAPTER_TARGETS[CH7_CHAPTER],
        str(PATHS.report.index),
