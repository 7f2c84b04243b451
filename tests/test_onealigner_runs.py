"""OneAligner's run names ↔ settings: every name parses to the pairs, budget and scoring the
paper describes, the scales plan the paper's runs (full: 12 unsupervised evaluations and 105
fine-tunings) and the report's Top1 maps name the runs params.yaml makes the Top1 models."""

from __future__ import annotations

import pytest
import yaml

from mlrep.chapters.onealigner import runs
from mlrep.config import load_yaml, resolve
from mlrep.embed.align_data import pair_sentences
from mlrep.embed.settings import AlignEvaluateSettings, scorer_grid
from tests.conftest import REPO


def load(scale: str) -> dict:
    return resolve(load_yaml(REPO / "params.yaml"), scale, ["full"])["onealigner"]


@pytest.fixture(scope="module", params=["tiny", "full"])
def section(request):
    return load(request.param)


@pytest.fixture(scope="module")
def full():
    return load("full")


def test_names_parse_to_their_kind_and_fixed_settings():
    assert runs.Run.parse("unsup-xlmr-large-bertscore-raw").fixed == {
        "encoder": "xlmr-large",
        "similarity": "bertscore",
        "norm": False,
    }
    assert runs.Run.parse("en-zh_Hant").fixed == {"pairs": ("en-zh_Hant",)}
    assert runs.Run.parse("ne-fr-es").fixed == {"pairs": ("fr-es",)}
    assert runs.Run.parse("top16").fixed == {"k": 16}
    assert runs.Run.parse("all-nobudget").kind == runs.Run.parse("all").kind == "all"
    for bad in ("unsup-xlmr-avg-raw", "top0", "ne-fr", "en-", "alls", "unsup-mbert-cls-norm"):
        with pytest.raises(runs.RunNameError, match="is not a onealigner run"):
            runs.Run.parse(bad)


def test_the_unsupervised_runs_are_table_1s_twelve_cells():
    names = runs.unsupervised()
    assert len(set(names)) == 12 and names[0] == "unsup-mbert-avg-raw"
    assert names[-1] == "unsup-xlmr-large-bertscore-norm"


def test_unsupervised_scoring_takes_the_encoders_layer_similarity_and_alpha(full):
    raw = runs.evaluate_values(full, "unsup-xlmr-large-avg-raw")
    normed = runs.evaluate_values(full, "unsup-mbert-bertscore-norm")
    assert (raw["layer"], raw["similarity"], raw["alpha"]) == (17, "avg", 0.0)
    assert (normed["layer"], normed["similarity"], normed["alpha"]) == (8, "bertscore", 0.75)
    tuned = runs.evaluate_values(full, "en-de")
    assert (tuned["layer"], tuned["similarity"], tuned["alpha"]) == (17, "bertscore", 0.75)


@pytest.mark.parametrize("name", runs.unsupervised())
def test_an_encoders_grid_scores_each_of_its_runs_as_the_run_alone(full, name):
    """`align-evaluate --grid` over `grid_values` writes, under `unsup_template`, each of the
    encoder's four runs with the settings `evaluate_values` gives it alone."""
    encoder = runs.Run.parse(name).fixed["encoder"]
    grid = scorer_grid(AlignEvaluateSettings(**runs.grid_values(full, encoder)))
    (scorer,) = [
        settings
        for (similarity, norm), settings in grid.items()
        if runs.unsup_template(encoder).format(similarity=similarity, norm=norm) == name
    ]
    assert scorer == AlignEvaluateSettings(**runs.evaluate_values(full, name))


def test_fine_tuning_settings_are_the_runs_pairs_and_budget(full):
    assert runs.finetune_values(full, "en-de")["pairs"] == ["en-de"]
    assert runs.finetune_values(full, "ne-de-fr")["pairs"] == ["deu-fra"]
    assert runs.data_key(full, "ne-de-fr") == "manual_tatoeba_challenge_v20210807"
    assert runs.data_key(full, "top4") == runs.data_key(full, "en-de") == "opus_opus100"
    top4 = runs.finetune_values(full, "top4")
    assert top4["pairs"] == ["en-es", "en-fr", "en-de", "en-pt"] and top4["budget"] == 1_000_000
    everything = runs.finetune_values(full, "all")
    # OPUS-100's 99 pairs but en-no (params.yaml: DVC would rewrite `no` as false)
    assert len(everything["pairs"]) == 98 and everything["budget"] == 1_000_000
    assert runs.finetune_values(full, "all-nobudget")["budget"] == 0
    assert (everything["layer"], everything["lr"], everything["epochs"]) == (17, 3e-6, 3)
    with pytest.raises(runs.SectionError, match="fewer than 64"):
        runs.pairs(full, "top64")
    with pytest.raises(runs.SectionError, match="not fine-tuned"):
        runs.finetune_values(full, "unsup-mbert-avg-raw")


def test_full_plans_the_papers_105_fine_tunings(full):
    tuned = runs.fine_tuned(full)
    assert len(tuned) == len(set(tuned)) == 2 + 82 + 16 + 5
    assert "top1" not in tuned and {"en-es", "ne-fr-es", "top32"} <= set(tuned)
    assert len(runs.planned_runs(full)) == 12 + 105
    assert runs.full_protocol(full) == {"en-es", "ne-fr-es"}


def test_full_non_english_pairs_are_found_under_the_tatoeba_challenges_names(full, tmp_path):
    """The Tatoeba Challenge reader names its sets in ISO 639-3 (``train.deu-fra.deu``);
    every Table 5 pair must reach its files under those names, in either order."""
    for pair in full["ne_pairs"]:
        (data_pair,) = runs.data_pairs(full, f"ne-{pair}")
        a, b = sorted(data_pair.split("-"))
        assert len(a) == len(b) == 3, pair
        for lang in (a, b):
            (tmp_path / f"train.{a}-{b}.{lang}").write_text(f"{lang} line\n", encoding="utf-8")
        examples = pair_sentences(tmp_path, "train", data_pair)
        assert examples.src == [f"{data_pair[:3]} line"], pair


def test_tiny_trims_the_lists_but_keeps_the_top1_models():
    tiny = load("tiny")
    tuned = runs.fine_tuned(tiny)
    assert {"all", "all-nobudget", "en-es", "ne-fr-es", "top2", "top4"} <= set(tuned)
    assert len(tuned) < 20
    for encoder in runs.ENCODERS:  # tiny: stand-ins, trained here
        assert tiny["encoders"][encoder]["encoder"] == ""


def test_the_reports_top1_rows_read_the_runs_params_makes_the_top1_models(section):
    """Tables 6, 7 and 8 name the Top1 models' runs; they must be what `aliases` derives."""
    definitions = yaml.safe_load((REPO / "mlrep/report/tables/onealigner.yaml").read_text())
    aliases = runs.aliases(section)
    for table in ("onealigner-table-6", "onealigner-table-7", "onealigner-table-8"):
        for name, run in definitions[table]["runs"].items():
            assert aliases[name] == run, (table, name)
            assert run in runs.fine_tuned(section)
