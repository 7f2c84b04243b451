"""Where Chapter 4's data files are (`mlrep.chapters.ch4_jass.data`): which words, analyses and
BPE each pre-training side reads, and which preprocessed files each pool is cut from."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.paths import Paths

PATHS = Paths(results=Path("r"), reports=Path("p"), resources=Path("s"))
DATA = "r/ch4_jass/data"


def test_a_side_reads_the_analyses_its_tasks_need():
    jass = ch4_data.pretrain_inputs(PATHS, "jaen", "train", "ja", "jass")
    assert jass == {
        "words": f"{DATA}/words/mono.ja",
        "bpe": f"{DATA}/bpe/jaen",
        "bunsetsu": f"{DATA}/bunsetsu/mono.ja",
    }
    enss = ch4_data.pretrain_inputs(PATHS, "jaen", "valid", "en", "mass+hfss")
    assert enss == {
        "words": f"{DATA}/pools/ja-en/valid.en",
        "bpe": f"{DATA}/bpe/jaen",
        "trees": f"{DATA}/trees/valid.ja-en.en",
    }
    assert ch4_data.parsed_words(PATHS, "valid.ja-en") == enss["words"]
    assert ch4_data.parsed_words(PATHS, "mono") == f"{DATA}/words/mono.en"
    assert set(ch4_data.pretrain_inputs(PATHS, "jazh", "valid", "zh", "mass")) == {"words", "bpe"}


def test_a_language_outside_the_pair_model_is_refused():
    with pytest.raises(ch4_data.Ch4DataError, match="enko"):
        ch4_data.pretrain_inputs(PATHS, "enko", "train", "ja", "mass")
    with pytest.raises(ch4_data.Ch4DataError, match="jaen, jazh, enko"):
        ch4_data.languages("koen")


def test_pools_read_each_language_from_its_english_centric_pair():
    tok = ch4_data.pool_sources(PATHS, "thesis", "ja-zh", "tok")
    assert [Path(p).name for p in tok[:2]] == ["train.en-ja.ja", "train.en-zh.zh"]
    assert len(tok) == 6 and all("/preprocess/thesis/tok/" in p for p in tok)
    ja_en = ch4_data.pool_sources(PATHS, "thesis", "ja-en", "tok")
    assert [Path(p).name for p in ja_en[:2]] == ["train.en-ja.ja", "train.en-ja.en"]
    assert [Path(p).name for p in ch4_data.pool_sources(PATHS, "thesis", "en-ko", "tok")][:2] == [
        "train.en-ko.ko",
        "train.en-ko.en",
    ]
    spans = ch4_data.pool_sources(PATHS, "thesis", "ja-zh", "bunsetsu")
    assert [Path(p).name for p in spans] == [f"{s}.en-ja.ja" for s in ch4_data.SPLITS]
    assert ch4_data.exclude_ids(PATHS) == [
        f"{DATA}/pools/{pair}/train.ids" for pair in ("ja-en", "ja-zh", "en-ko")
    ]
