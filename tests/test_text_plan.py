"""What `snakemake preprocess` asks for, and which subword model each setting trains."""

import re
from pathlib import Path

import pytest

from mlrep import config as cfg
from mlrep.data import registry
from mlrep.paths import Paths
from mlrep.text import plan
from tests.conftest import REPO

PATHS = Paths(Path("r"), Path("rep"), Path("res"))


def section(scale="tiny", **changes):
    params = cfg.load_yaml(REPO / "params.yaml")
    params["scale"] = scale
    return {**cfg.load(params)["preprocess"], **changes}


def settings(**named):
    default = section()["subwords"]["default"]
    return {"default": default, "settings": named}


def test_moses_takes_every_language_but_the_segmented_ones():
    pattern = re.compile(plan.moses_language_pattern(section(segment={"languages": ["ja", "zh"]})))
    assert [
        lang for lang in ("en", "ja", "zh", "ko", "zh_Hant", "jav") if pattern.fullmatch(lang)
    ] == [
        "en",
        "ko",
        "zh_Hant",
        "jav",
    ]
    assert re.fullmatch(plan.moses_language_pattern(section(segment={"languages": []})), "ja")


def test_targets_cover_tokens_bunsetsu_head_final_and_each_settings_subwords():
    pre = section(
        pairs=["en-ja", "en-de"],
        splits=["test"],
        segment={"languages": ["ja"]},
        parse={"pairs": ["en-ja"]},
        subwords=settings(ch4_jass={"pairs": ["en-ja"]}),
    )
    assert plan.targets(pre, PATHS) == [
        "r/preprocess/tiny_corpus/tok/test.en-ja.en",
        "r/preprocess/tiny_corpus/tok/test.en-ja.ja",
        "r/preprocess/tiny_corpus/bunsetsu/test.en-ja.ja",
        "r/preprocess/tiny_corpus/hf/test.en-ja.en",
        "r/preprocess/tiny_corpus/tok/test.en-de.en",
        "r/preprocess/tiny_corpus/tok/test.en-de.de",
        "r/preprocess/tiny_corpus/sub/ch4_jass/test.en-ja.en",
        "r/preprocess/tiny_corpus/sub/ch4_jass/test.en-ja.ja",
    ]


def test_no_bunsetsu_when_moses_tokenizes_japanese():
    pre = section(
        pairs=["en-ja"],
        splits=["train"],
        segment={"languages": []},
        parse={"pairs": []},
        subwords=settings(),
    )
    assert plan.targets(pre, PATHS) == [
        "r/preprocess/tiny_corpus/tok/train.en-ja.en",
        "r/preprocess/tiny_corpus/tok/train.en-ja.ja",
    ]


def test_chapter_settings_of_params_yaml_at_each_scale():
    tiny, full = section(), section("full")
    assert plan.subword_options(tiny, "ch4_jass", "en-ja")["merges"] == 500
    assert plan.subword_options(full, "ch4_jass", "en-ja")["merges"] == 40000
    assert plan.subword_options(full, "ch4_jass", "en-ko")["merges"] == 30000
    assert plan.subword_options(full, "ch4_jass", "en-ko")["method"] == "subword_nmt"
    assert plan.subword_models(tiny, "ch4_jass") == {"en-ja": ["en-ja"], "en-ko": ["en-ko"]}
    assert plan.subword_options(full, "opus", "all")["merges"] == 50000
    assert plan.subword_options(full, "iwslt", "all")["merges"] == 40000
    assert plan.subword_model_of(tiny, "opus", "en-zh") == "all"
    ch5 = plan.subword_options(tiny, "ch5_wordcl", "all")
    assert (ch5["method"], ch5["vocab_size"]) == ("sentencepiece", 8000)
    assert set(plan.SUBWORD_KEYS) == set(ch5)
    for pre in (tiny, full):
        plan.check(pre)  # every setting's pairs are preprocessed


def test_two_settings_of_one_pair_get_their_own_paths():
    pre = section(subwords=settings(a={"pairs": ["en-ja"]}, b={"pairs": ["en-ja"], "joint": "all"}))
    model_a = PATHS.subword_model("d", "a", plan.subword_model_of(pre, "a", "en-ja"))
    model_b = PATHS.subword_model("d", "b", plan.subword_model_of(pre, "b", "en-ja"))
    assert (str(model_a), str(model_b)) == (
        "r/preprocess/d/subwords/a/en-ja",
        "r/preprocess/d/subwords/b/all",
    )


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"x": {"pairs": ["en-xx"]}}, "settings.x: en-xx not in preprocess.pairs"),
        (
            {"x": {"pairs": ["en-ja"], "joint": "all", "per_pair": {"en-ja": {"merges": 9}}}},
            "en-ja is no model of this setting (joint: all; models: all)",
        ),
    ],
)
def test_settings_that_cannot_be_built_are_clear_errors(named, message):
    pre = section(subwords=settings(**named))
    with pytest.raises(plan.PlanError, match=re.escape(message)):
        plan.targets(pre, PATHS)


def test_unknown_setting_or_pair_names_the_fix():
    pre = section()
    with pytest.raises(plan.PlanError, match="has no 'ch9'"):
        plan.subword_setting(pre, "ch9")
    with pytest.raises(plan.PlanError, match="does not list en-de; add it to its pairs"):
        plan.subword_model_of(pre, "ch4_jass", "en-de")


def test_each_pair_reads_its_corpora_at_full_scale_and_the_tiny_corpus_at_tiny():
    tiny, full = section(), section("full")
    assert plan.source(tiny, PATHS, "tiny_corpus", "test", "en-ro", "ro") == (
        Path("r/data/tiny_corpus"),
        Path("r/data/tiny_corpus/test.en-ro.ro"),
    )
    assert plan.source(full, PATHS, "thesis", "valid", "en-ro", "ro") == (
        Path("r/data/sacrebleu_wmt16_dev"),
        Path("r/data/sacrebleu_wmt16_dev/newsdev2016.en-ro.ro"),
    )
    assert plan.source(full, PATHS, "thesis", "train", "en-af", "af")[1] == Path(
        "r/data/opus_opus100/train.af-en.af"
    )
    # Europarl has training data only: en-es gets no valid/test outputs
    assert plan.splits_of(full, "en-es") == ["train"]
    assert not [t for t in plan.targets(full, PATHS) if ".en-es." in t and "/train." not in t]
    with pytest.raises(plan.PlanError, match="has no valid set"):
        plan.source(full, PATHS, "thesis", "valid", "en-es", "es")


def test_full_scale_corpora_cover_every_pair_with_registry_datasets():
    full = section("full")
    assert set(full["pairs"]) <= set(full["corpora"])
    # the six Chapter 6 languages the tiny corpus lacks come with OPUS-100
    assert {f"en-{x}" for x in ("am", "ha", "li", "oc", "si", "yi")} <= set(full["pairs"])
    keys = {spec.split("/")[0] for sets in full["corpora"].values() for spec in sets.values()}
    assert keys <= set(registry.load())


def test_the_users_knp_and_enju_output_are_inputs_of_the_analysing_jobs_only():
    pre = section(segment={"languages": ["ja"], "source": "knp"})
    pre["parse"] = {"pairs": ["en-ja"], "source": "enju"}
    name = ("tiny_corpus", "train", "en-ja")
    assert plan.inputs(pre, PATHS, *name, "ja", analysed=True) == {
        "corpus": "r/data/tiny_corpus",
        "knp": "res/parses/tiny_corpus/knp/train.en-ja.ja.knp",
    }
    assert plan.inputs(pre, PATHS, *name, "en", analysed=True)["enju"] == (
        "res/parses/tiny_corpus/enju/train.en-ja.en.xml"
    )
    # Moses still tokenizes the English side from the corpus; GiNZA/spaCy by default
    assert plan.inputs(pre, PATHS, *name, "en") == {"corpus": "r/data/tiny_corpus"}
    assert plan.inputs(section(), PATHS, *name, "ja", analysed=True) == {
        "corpus": "r/data/tiny_corpus"
    }
