"""Chapter 7's vocabulary: a system name stands for the generic interlingua options, and a
run's training values give the fixed interlingua length to the fixed-length systems only."""

from __future__ import annotations

import pytest

from mlrep.chapters.ch7_interlingua import grid, systems

DATASET = {
    "subwords": "opus",
    "splits": ["train", "valid", "test"],
    "languages": ["ar", "en"],
    "arch": "mlrep_transformer_tiny",
    "gpus": 4,
    "dropout": 0.1,
    "lr": 0.0005,
    "max_epoch": 500,
    "interlingua_length": 17,
}
SECTION = {
    "seeds": [1],
    "datasets": {"opus": DATASET, "iwslt": {**DATASET, "interlingua_length": 21}},
    "run_datasets": ["opus", "iwslt"],
    "systems": ["mnmt", "fixuni", "fixls", "var"],
    "pivot": "mnmt",
}


def test_each_system_names_its_interlingua_and_only_fixed_ones_a_length():
    assert systems.settings("mnmt", DATASET) == {"tag_format": "s-enc-t-dec", "interlingua": "none"}
    assert systems.settings("var", DATASET)["interlingua"] == "var"
    assert "interlingua_length" not in systems.settings("var", DATASET)
    assert systems.settings("fixuni", DATASET) == {
        "tag_format": "s-enc-t-dec",
        "interlingua": "uni",
        "interlingua_length": 17,
    }
    assert systems.settings("fixls", DATASET)["interlingua"] == "ls"
    with pytest.raises(systems.SystemNameError, match=r"ch7_interlingua\.systems"):
        systems.settings("fixed", DATASET)


def test_train_values_take_the_dataset_then_the_system():
    fixed = grid.train_values(SECTION, "iwslt", "fixls")
    assert fixed["interlingua_length"] == 21 and fixed["gpus"] == 4 and fixed["lr"] == 0.0005
    assert fixed["arch"] == "mlrep_transformer_tiny" and fixed["interlingua"] == "ls"
    # a dataset's fixed length is no setting of the other systems
    for system in ("mnmt", "var"):
        assert "interlingua_length" not in grid.train_values(SECTION, "opus", system)
    # the data keys are `nmt prepare`'s, not the trainer's
    assert "subwords" not in fixed and "languages" not in fixed


def test_the_grid_trains_every_system_per_dataset_and_scores_the_pivot():
    assert len(grid.runs(SECTION)) == 8
    assert grid.scored_runs(SECTION)[-2:] == [("opus", "pivot", 1), ("iwslt", "pivot", 1)]
    assert "pivot" not in {s for _, s, _ in grid.scored_runs({**SECTION, "pivot": ""})}


def test_metrics_read_the_validation_log_and_the_gold_scores_where_a_run_has_them():
    assert grid.metrics_inputs("pivot") == ()
    assert grid.metrics_inputs("mnmt") == grid.metrics_inputs("fixuni") == ("model",)
    assert grid.metrics_inputs("var") == ("model", "gold_scores")
    inputs = {"model": "RUN/model/train.json", "gold_scores": "RUN/scores_gold.json"}
    assert grid.metrics_options(inputs) == (
        "--gold-scores RUN/scores_gold.json --valid-log RUN/model/valid.jsonl"
    )
    assert grid.metrics_options({"scores": "RUN/scores.json"}) == ""
