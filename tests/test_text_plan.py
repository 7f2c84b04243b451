"""What `snakemake preprocess` asks for, where each dataset's files come from, and which
subword model each setting trains."""

import re
from pathlib import Path

import pytest

from mlrep import config as cfg
from mlrep.cliutil import option_names
from mlrep.data import registry
from mlrep.paths import Paths
from mlrep.text import plan
from mlrep.text.lookups import FileLookups
from mlrep.text.subwords import SubwordSettings
from tests.conftest import REPO

PATHS = Paths(Path("r"), Path("rep"), Path("res"))


def section(scale="tiny", **changes):
    params = cfg.load_yaml(REPO / "params.yaml")
    params["scale"] = scale
    return {**cfg.load(params)["preprocess"], **changes}


def one_dataset(pairs, corpora=None, steps=None, name="d"):
    """`preprocess.datasets` with one dataset reading the tiny corpus."""
    return {
        name: {
            "corpus": "tiny_corpus",
            "corpora": corpora or {},
            "pairs": pairs,
            "steps": steps or {},
        }
    }


def settings(**named):
    default = section()["subwords"]["default"]
    return {"default": default, "settings": {k: {"dataset": "d", **v} for k, v in named.items()}}


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
        datasets=one_dataset(["en-ja", "en-de"]),
        splits=["test"],
        segment={"languages": ["ja"]},
        parse={"pairs": ["en-ja"]},
        subwords=settings(ch4_jass={"pairs": ["en-ja"]}),
    )
    assert plan.targets(pre, PATHS, "d") == [
        "r/preprocess/d/tok/test.en-ja.en",
        "r/preprocess/d/tok/test.en-ja.ja",
        "r/preprocess/d/bunsetsu/test.en-ja.ja",
        "r/preprocess/d/hf/test.en-ja.en",
        "r/preprocess/d/tok/test.en-de.en",
        "r/preprocess/d/tok/test.en-de.de",
        "r/preprocess/d/sub/ch4_jass/test.en-ja.en",
        "r/preprocess/d/sub/ch4_jass/test.en-ja.ja",
    ]


def test_no_bunsetsu_when_moses_tokenizes_japanese():
    pre = section(
        datasets=one_dataset(["en-ja"]),
        splits=["train"],
        segment={"languages": []},
        parse={"pairs": []},
        subwords=settings(),
    )
    assert plan.targets(pre, PATHS, "d") == [
        "r/preprocess/d/tok/train.en-ja.en",
        "r/preprocess/d/tok/train.en-ja.ja",
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
    assert plan.subword_options(tiny, "iwslt", "all")["merges"] == 1000
    assert plan.subword_model_of(tiny, "opus", "en-zh") == "all"
    ch5 = plan.subword_options(tiny, "ch5_wordcl", "all")
    assert (ch5["method"], ch5["vocab_size"]) == ("sentencepiece", 3000)
    assert plan.subword_options(full, "ch5_wordcl", "all")["vocab_size"] == 250000
    assert set(option_names(SubwordSettings)) == set(ch5)
    for pre in (tiny, full):
        plan.check(pre)  # every setting's pairs are preprocessed


def test_two_settings_of_one_pair_get_their_own_paths():
    pre = section(
        datasets=one_dataset(["en-ja"]),
        subwords=settings(a={"pairs": ["en-ja"]}, b={"pairs": ["en-ja"], "joint": "all"}),
    )
    model_a = PATHS.subword_model("d", "a", plan.subword_model_of(pre, "a", "en-ja"))
    model_b = PATHS.subword_model("d", "b", plan.subword_model_of(pre, "b", "en-ja"))
    assert (str(model_a), str(model_b)) == (
        "r/preprocess/d/subwords/a/en-ja",
        "r/preprocess/d/subwords/b/all",
    )


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"x": {"pairs": ["en-xx"]}}, "settings.x: en-xx not in preprocess.datasets.d.pairs"),
        (
            {"x": {"pairs": ["en-ja"], "joint": "all", "per_pair": {"en-ja": {"merges": 9}}}},
            "en-ja is no model of this setting (joint: all; models: all)",
        ),
        ({"x": {"dataset": "e"}}, "preprocess.datasets has no 'e' (known: d)"),
    ],
)
def test_settings_that_cannot_be_built_are_clear_errors(named, message):
    pre = section(datasets=one_dataset(["en-ja"]), subwords=settings(**named))
    with pytest.raises(plan.PlanError, match=re.escape(message)):
        plan.targets(pre, PATHS, "d")


def test_unknown_setting_or_pair_names_the_fix():
    pre = section()
    with pytest.raises(plan.PlanError, match="has no 'ch9'"):
        plan.subword_setting(pre, "ch9")
    with pytest.raises(plan.PlanError, match=r"does not list en-de, .* add it to its pairs"):
        plan.subword_model_of(pre, "ch4_jass", "en-de")


def test_each_pair_reads_its_corpora_at_full_scale_and_the_tiny_corpus_at_tiny():
    tiny, full = section(), section("full")
    assert plan.source(tiny, PATHS, "thesis", "test", "en-ro", "ro") == (
        Path("r/data/tiny_corpus"),
        Path("r/data/tiny_corpus/test.en-ro.ro"),
    )
    assert plan.source(full, PATHS, "thesis", "valid", "en-ro", "ro") == (
        Path("r/data/sacrebleu_wmt16_dev"),
        Path("r/data/sacrebleu_wmt16_dev/newsdev2016.en-ro.ro"),
    )
    assert plan.source(full, PATHS, "opus24", "train", "en-af", "af")[1] == Path(
        "r/data/opus_opus100/train.af-en.af"
    )
    assert plan.source(tiny, PATHS, "opus24", "train", "en-af", "af")[1] == Path(
        "r/data/tiny_corpus/train.en-af.af"
    )
    # Europarl has training data only: its pairs get no valid/test outputs
    assert plan.splits_of(full, "europarl", "en-es") == ["train"]
    targets = plan.targets(full, PATHS, "europarl")
    assert targets and not [t for t in targets if "/train." not in t]
    with pytest.raises(plan.PlanError, match=r"europarl\.corpora\.en-es has no valid set"):
        plan.source(full, PATHS, "europarl", "valid", "en-es", "es")


def test_one_pair_comes_from_each_datasets_own_corpus():
    """en-de is OPUS-100 for Chapter 8's OPUS (and Chapter 6's BLOOMZ+3), Europarl for Chapter
    8's Europarl; en-nl is IWSLT 2017 for Chapter 5 and Chapter 8's IWSLT; en-kk is WMT19 for
    Chapter 5 and OPUS-100 for Chapter 6's BLOOMZ+24 (its own dataset, opus24)."""
    full = section("full")
    de = {
        name: plan.source(full, PATHS, name, "train", "en-de", "de")[1].parent.name
        for name in ("opus", "europarl")
    }
    assert de == {"opus": "opus_opus100", "europarl": "statmt_europarl_v7"}
    kk = {
        name: plan.source(full, PATHS, name, "train", "en-kk", "kk")[1].parent.name
        for name in ("thesis", "opus24")
    }
    assert kk == {"thesis": "manual_wmt19_en_kk_train", "opus24": "opus_opus100"}
    assert plan.source(full, PATHS, "iwslt", "test", "en-nl", "nl")[1] == Path(
        "r/data/wit3_iwslt2017_multilingual/tst2010.en-nl.nl"
    )
    # OPUS-100's zero-shot test sets: encoded with the joint model, never trained on
    assert plan.source(full, PATHS, "opus", "test", "de-fr", "fr")[1] == Path(
        "r/data/opus_opus100_zeroshot/test.de-fr.fr"
    )
    assert plan.subword_model_of(full, "opus", "de-fr") == "all"
    assert "de-fr" not in plan.subword_models(full, "opus")["all"]
    assert len(plan.subword_models(full, "opus")["all"]) == 6
    # a setting without `pairs` encodes every pair of its dataset
    assert [raw.name for raw, _ in plan.encoded_files(section(), PATHS, "iwslt")][:2] == [
        "train.en-it.en",
        "train.en-it.it",
    ]
    files = plan.encoded_files(full, PATHS, "iwslt")
    assert len(files) == 3 * 3 * 2 + 3 * 2  # en-xx train/valid/test + the zero-shot test sets
    assert files[-1] == (
        Path("r/data/wit3_iwslt2017_multilingual/tst2010.nl-ro.ro"),
        Path("r/preprocess/iwslt/sub/iwslt/test.nl-ro.ro"),
    )


def test_romanian_steps_are_the_datasets_own():
    """Chapter 5 removes Romanian diacritics (mBART's WMT16 practice); Chapter 8 does not."""
    tiny = section()
    assert plan.steps(tiny, "thesis", "ro") == ["normalise_romanian", "remove_diacritics"]
    assert plan.steps(tiny, "iwslt", "ro") == []
    assert plan.steps(tiny, "thesis", "de") == []


def test_full_scale_corpora_cover_every_pair_with_registry_datasets():
    full = section("full")
    for name, dataset in full["datasets"].items():
        assert set(dataset["pairs"]) <= set(dataset["corpora"]), name
        keys = {s.split("/")[0] for sets in dataset["corpora"].values() for s in sets.values()}
        assert keys <= set(registry.load()), name
    # the six Chapter 6 languages the tiny corpus lacks come with OPUS-100: all 24 at full
    pairs = full["datasets"]["opus24"]["pairs"]
    assert {f"en-{x}" for x in ("am", "ha", "li", "oc", "si", "yi")} <= set(pairs)
    assert len(pairs) == 24


def test_the_users_knp_and_enju_output_are_inputs_of_the_analysing_jobs_only():
    pre = section(segment={"languages": ["ja"], "source": "knp"})
    pre["parse"] = {"pairs": ["en-ja"], "source": "enju"}
    name = ("thesis", "train", "en-ja")
    assert plan.inputs(pre, PATHS, *name, "ja", analysed=True) == {
        "corpus": "r/data/tiny_corpus",
        "knp": "res/parses/thesis/knp/train.en-ja.ja.knp",
    }
    assert plan.inputs(pre, PATHS, *name, "en", analysed=True)["enju"] == (
        "res/parses/thesis/enju/train.en-ja.en.xml"
    )
    # Moses still tokenizes the English side from the corpus; GiNZA/spaCy by default
    assert plan.inputs(pre, PATHS, *name, "en") == {"corpus": "r/data/tiny_corpus"}
    assert plan.inputs(section(), PATHS, *name, "ja", analysed=True) == {
        "corpus": "r/data/tiny_corpus"
    }


def test_file_lookups_answer_as_the_functions_do_for_the_config_they_were_made_for():
    """The shard rules' lookups keep each file's answer: the same as `inputs`, `source` and
    `steps` give, and those of the section they were made for, not of an earlier one."""
    tiny, full = section(), section("full")
    lookups = {name: FileLookups(pre, PATHS) for name, pre in (("tiny", tiny), ("full", full))}
    file = ("thesis", "valid", "en-ro", "ro")
    for name, pre in (("tiny", tiny), ("full", full)):
        for _ in range(2):  # the second answer comes from the cache
            assert lookups[name].source(*file) == plan.source(pre, PATHS, *file)
            assert lookups[name].inputs(*file) == plan.inputs(pre, PATHS, *file)
            assert lookups[name].steps("thesis", "ro") == plan.steps(pre, "thesis", "ro")
    assert lookups["tiny"].source(*file) != lookups["full"].source(*file)
    no_steps = {
        **tiny,
        "datasets": {**tiny["datasets"], "thesis": {**tiny["datasets"]["thesis"], "steps": {}}},
    }
    assert FileLookups(no_steps, PATHS).steps("thesis", "ro") == []
    assert lookups["tiny"].steps("thesis", "ro") == ["normalise_romanian", "remove_diacritics"]
    knp = section(segment={**tiny["segment"], "source": "knp"})
    analysed = ("thesis", "train", "en-ja", "ja")
    assert "knp" in FileLookups(knp, PATHS).inputs(*analysed, analysed=True)
    assert "knp" not in lookups["tiny"].inputs(*analysed, analysed=True)
