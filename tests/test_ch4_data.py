"""Where Chapter 4's data files are (`mlrep.chapters.ch4_jass.data`): which words, analyses and
BPE each pre-training side reads, and which preprocessed files each pool is cut from."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.data import download, registry
from mlrep.paths import Paths
from tests.conftest import REPO

PATHS = Paths(results=Path("r"), reports=Path("p"), resources=Path("s"))
DATA = "r/ch4_jass/data"


def resolved(scale: str) -> dict:
    return cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": scale})


TINY, TINY_PRE = resolved("tiny")["ch4_jass"], resolved("tiny")["preprocess"]
FULL, FULL_PRE = resolved("full")["ch4_jass"], resolved("full")["preprocess"]


def test_a_side_reads_the_analyses_its_tasks_need():
    jass = ch4_data.pretrain_inputs(PATHS, "jaen", "train", "ja", "jass")
    assert jass == {
        "words": f"{DATA}/words/mono.ja",
        "bpe": f"{DATA}/bpe/jaen",
        "bunsetsu": f"{DATA}/bunsetsu/mono.ja",
    }
    enss = ch4_data.pretrain_inputs(PATHS, "jaen", "valid", "en", "mass+hfss")
    assert enss == {
        "words": f"{DATA}/pools/aspec_je/valid.en",
        "bpe": f"{DATA}/bpe/jaen",
        "trees": f"{DATA}/trees/valid.aspec_je.en",
    }
    assert ch4_data.parsed_words(PATHS, "valid.aspec_je") == enss["words"]
    assert ch4_data.parsed_words(PATHS, "mono") == f"{DATA}/words/mono.en"
    assert set(ch4_data.pretrain_inputs(PATHS, "jazh", "valid", "zh", "mass")) == {"words", "bpe"}


def test_a_language_outside_the_pair_model_is_refused():
    with pytest.raises(ch4_data.Ch4DataError, match="enko"):
        ch4_data.pretrain_inputs(PATHS, "enko", "train", "ja", "mass")
    with pytest.raises(ch4_data.Ch4DataError, match="jaen, jazh, enko"):
        ch4_data.languages("koen")


def test_pools_read_each_language_from_its_english_centric_pair():
    """Tiny: every corpus from the embedded corpus's ``thesis`` words, ja-zh joined on the
    segment ids of its en-ja and en-zh files."""
    tok = ch4_data.pool_sources(TINY_PRE, PATHS, "thesis", "aspec_jc", "tok")
    assert [Path(p).name for p in tok[:2]] == ["train.en-ja.ja", "train.en-zh.zh"]
    assert len(tok) == 6 and all("/preprocess/thesis/tok/" in p for p in tok)
    ja_en = ch4_data.pool_sources(TINY_PRE, PATHS, "thesis", "aspec_je", "tok")
    assert [Path(p).name for p in ja_en[:2]] == ["train.en-ja.en", "train.en-ja.ja"]
    news = ch4_data.pool_sources(TINY_PRE, PATHS, "thesis", "news_ek", "tok")
    assert [Path(p).name for p in news][:2] == ["train.en-ko.en", "train.en-ko.ko"]
    spans = ch4_data.pool_sources(TINY_PRE, PATHS, "thesis", "aspec_jc", "bunsetsu")
    assert [Path(p).name for p in spans] == [f"{s}.en-ja.ja" for s in ch4_data.SPLITS]
    assert ch4_data.pool_ids(TINY_PRE, PATHS, "thesis", "aspec_jc") == "r/data/tiny_corpus"
    assert ch4_data.exclude_ids(PATHS, TINY) == [
        f"{DATA}/pools/{corpus}/train.ids" for corpus in ("aspec_je", "aspec_jc", "news_ek")
    ]


def test_full_pools_are_one_per_corpus_each_from_its_own_download():
    """Full: Wikipedia Ja-Zh is its own pool, cut from its own preprocessed download, never
    from ASPEC-JC's lines; a download has no segment ids, so the pool numbers its lines."""
    assert ch4_data.pools(FULL) == ["aspec_je", "aspec_jc", "news_ek", "wiki_jc"]
    assert ch4_data.pool_of("wiki_jc") == "wiki_jc" != ch4_data.pool_of("aspec_jc")
    sources = {
        corpus: ch4_data.pool_sources(FULL_PRE, PATHS, FULL["corpora"][corpus], corpus, "tok")
        for corpus in ch4_data.CORPORA
    }
    assert sources["wiki_jc"][:2] == [
        f"r/preprocess/wiki_jc/tok/train.ja-zh.{lang}" for lang in ("ja", "zh")
    ]
    assert sources["aspec_jc"][0] == "r/preprocess/aspec_jc/tok/train.ja-zh.ja"
    assert len({tuple(files) for files in sources.values()}) == 4
    for corpus in ch4_data.CORPORA:
        flags = ch4_data.pool_flags(FULL_PRE, PATHS, FULL, corpus)
        assert f"--words r/preprocess/{corpus}/tok" in flags and "--ids" not in flags
    assert ch4_data.pool_flags(FULL_PRE, PATHS, FULL, "news_ek").startswith("--pair en-ko ")
    with pytest.raises(ch4_data.Ch4DataError, match="neither ja-zh nor en-ja, en-zh"):
        ch4_data.pool_sources(FULL_PRE, PATHS, "news_ek", "wiki_jc", "tok")


def test_the_aspec_fetch_says_what_to_place_where_without_the_network(tmp_path, monkeypatch):
    """ASPEC is licence-gated: `mlrep data fetch` tries no download and names the release
    folder to copy, each missing file and the folder they go in (full's Chapter 4 pools)."""
    monkeypatch.setattr(download, "_attempt", lambda *a: pytest.fail(f"network: {a[0]}"))
    dest = tmp_path / "resources/datasets/manual_aspec_je"
    with pytest.raises(download.DownloadError) as info:
        download.fetch(registry.get("manual_aspec_je"), dest, lock=registry.Lock(tmp_path / "l"))
    message = str(info.value)
    assert "jipsti.jst.go.jp/aspec" in message and "copy the folder ASPEC/ASPEC-JE" in message
    assert f"Download folder: {dest}." in message
    assert "Missing: ASPEC-JE/train/train-1.txt, ASPEC-JE/train/train-2.txt" in message
    assert not list(dest.rglob("*.txt"))
