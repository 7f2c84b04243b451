"""What `snakemake preprocess` asks for, and which subword model each setting trains."""

import re
from pathlib import Path

import pytest

from mlrep import config as cfg
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
