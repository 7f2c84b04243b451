"""Chapter 5's mBART FT as the rules see it, without Snakemake: which data a run reads (its
dictionary's), what its training is given (the init, mBART's size and PreNorm), and where the
stand-in and the release's files are."""

from __future__ import annotations

import copy

import pytest

from mlrep import config as cfg
from mlrep.chapters.ch5_wordcl import links, mbart, runs
from mlrep.paths import Paths
from tests.conftest import REPO

PARAMS = cfg.load_yaml(REPO / "params.yaml")
TINY = cfg.resolve(PARAMS, "tiny", ["tiny", "full"])
CH5 = TINY["ch5_wordcl"]
PLAIN = "data/{dictionary}/{dataset}"
LINKED = "data/{dictionary}/links/{dataset}/{links}"
INIT = "mbart/init/checkpoint.pt"


def _run(method: str, system: str = "222_en-ja") -> runs.Run:
    return runs.Run(system, runs.Method.parse(method))


def test_mbart_ft_reads_data_in_mbarts_dictionary_and_mlsc_in_its_own():
    assert runs.Method.parse("mbart-ft-w2w").dictionary == runs.MBART
    assert runs.Method.parse("mlsc-w2w").dictionary == runs.OWN
    assert links.training_data(PLAIN, LINKED, "222_en-ja", "mbart-ft") == "data/mbart/222_en-ja"
    assert links.training_data(PLAIN, LINKED, "222_en-ja", "mlsc") == "data/own/222_en-ja"
    assert (
        links.training_data(PLAIN, LINKED, "222_en-ja", "mbart-ft-fa")
        == "data/mbart/links/222_en-ja/fa"
    )
    # decoded on its dictionary's data, word retrieval on its dictionary's w2w links
    assert links.prepared(PLAIN, "222_en-ja", "mbart-ft-fa") == "data/mbart/222_en-ja"
    assert (
        links.linked_data(LINKED, "222_en-ja", "mbart-ft", links.RETRIEVAL)
        == "data/mbart/links/222_en-ja/w2w"
    )


def test_mbart_ft_trains_from_the_init_at_mbarts_size_with_prenorm_and_its_addition():
    own = runs.train_values(CH5, _run("mlsc-w2w"))
    tuned = runs.train_values(CH5, _run("mbart-ft-w2w"), INIT)
    assert tuned["init"] == INIT and "init" not in own
    assert tuned["arch"] == CH5["mbart_pretrain"]["arch"] == "mlrep_transformer_mbart_tiny"
    assert own["arch"] == CH5["datasets"]["222_en-ja"]["arch"]
    assert tuned["layernorm"] == "pre" and "layernorm" not in own
    # the rest is the system's and the addition's, as for MLSC
    assert {k: v for k, v in tuned.items() if k not in ("init", "layernorm")} == {
        **own,
        "arch": tuned["arch"],
    }
    assert tuned["word_weight"] == 0.1
    full = cfg.resolve(PARAMS, "full", ["tiny", "full"])["ch5_wordcl"]
    arch = runs.train_values(full, _run("mbart-ft"), INIT)["arch"]
    assert arch == "mlrep_transformer_mbart_large"


def test_an_init_is_given_to_mbart_ft_and_to_nothing_else():
    with pytest.raises(runs.Ch5RunError, match="222_en-ja/mbart-ft needs the init checkpoint"):
        runs.train_values(CH5, _run("mbart-ft"))
    with pytest.raises(runs.Ch5RunError, match="222_en-ja/mlsc trains from scratch"):
        runs.train_values(CH5, _run("mlsc"), INIT)


def test_the_stand_in_is_cut_with_the_one_joint_sentencepiece_model_of_the_systems():
    paths = Paths.from_config(TINY)
    folder = mbart.subword_model(CH5, TINY["preprocess"], paths)
    assert folder == paths.subword_model("thesis", "ch5_wordcl", "all")
    two = copy.deepcopy(CH5)
    two["datasets"]["222_en-ja"]["subwords"] = "ch8_layernorm"
    with pytest.raises(runs.Ch5RunError, match=r"give every system the same `subwords`"):
        mbart.subword_model(two, TINY["preprocess"], paths)
    pre = copy.deepcopy(TINY["preprocess"])
    pre["subwords"]["settings"]["ch5_wordcl"]["joint"] = "pair"
    with pytest.raises(runs.Ch5RunError, match=r"settings.ch5_wordcl: .*joint: all"):
        mbart.subword_model(CH5, pre, paths)


def test_the_release_is_the_stand_in_at_tiny_and_mbart25_at_full():
    assert mbart.release(CH5) == ""
    full = cfg.resolve(PARAMS, "full", ["tiny", "full"])["ch5_wordcl"]
    assert mbart.release(full) == "mbart_cc25"
    assert mbart.release_files("x/release", "mbart.cc25.v2.tar.gz") == "x/release/mbart.cc25.v2"
    with pytest.raises(runs.Ch5RunError, match=r"model.zip: not a .tar.gz archive"):
        mbart.release_files("x/release", "model.zip")
    assert mbart.init_input("mbart/init", True) == ["mbart/init"]
    assert mbart.init_input("mbart/init", False) == []


def test_the_file_names_are_those_the_verbs_write_and_read():
    """The rules read the names here; the verbs (which import fairseq) define them."""
    from mlrep.nmt import mbart_init, mbart_pretrain

    assert mbart.RELEASE_FILES == {
        "checkpoint": mbart_pretrain.MODEL,
        "dict": mbart_pretrain.DICT,
        "spm": mbart_pretrain.SPM,
    }
    assert (mbart.INIT_CHECKPOINT, mbart.INIT_DICT) == (mbart_init.CHECKPOINT, mbart_init.DICT)
