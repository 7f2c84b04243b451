"""Word links become the data-bin's subword links: through fairseq-preprocess, fairseq's own
dataset loading and collater, every unit the contrastive criterion groups must hold exactly
the subwords of its words, in both tag formats and both directions of a pair."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import pytest
from fairseq.tasks.translation import TranslationTask

from mlrep.io import atomic_write_text
from mlrep.nmt import prepare
from mlrep.nmt.alignments import AlignmentDataError, check_lines, format_lines, subword_links
from mlrep.nmt.contrastive import units
from mlrep.nmt.data import TAGS

# two en-ja training pairs as words, their word links (unit "New York" ↔ "ニューヨーク" is a
# phrase: the cross product of its words), and their SentencePiece pieces
WORDS = [
    (
        ["I", "like", "New", "York"],
        ["私", "は", "ニューヨーク", "が", "好き"],
        [(0, 0), (1, 4), (2, 2), (3, 2)],
    ),
    (["cats", "sleep"], ["猫", "が", "眠る"], [(0, 0), (1, 2)]),
]
PIECES = [
    (["▁I", "▁li", "ke", "▁New", "▁York"], ["▁私", "▁は", "▁ニュー", "ヨーク", "▁が", "▁好", "き"]),
    (["▁cat", "s", "▁sleep"], ["▁猫", "▁が", "▁眠", "る"]),
]
# per pair, its units as (English pieces, Japanese pieces)
UNITS = [
    {
        (("▁I",), ("▁私",)),
        (("▁li", "ke"), ("▁好", "き")),
        (("▁New", "▁York"), ("▁ニュー", "ヨーク")),
    },
    {(("▁cat", "s"), ("▁猫",)), (("▁sleep",), ("▁眠", "る"))},
]
VALID = ("▁I ▁sleep", "▁私 ▁は ▁眠 る")


def cut_dataset(root: Path) -> Path:
    """A cut en-ja dataset (`mlrep.nmt.data.cut`'s layout) with its training links."""
    out = root / "cut"
    sub = out / "sub"
    atomic_write_text(sub / "train.en-ja.en", "".join(" ".join(e) + "\n" for e, _ in PIECES))
    atomic_write_text(sub / "train.en-ja.ja", "".join(" ".join(j) + "\n" for _, j in PIECES))
    for d, (src, tgt) in (("en-ja", VALID), ("ja-en", VALID[::-1])):
        s, t = d.split("-")
        atomic_write_text(sub / f"valid.{d}.{s}", src + "\n")
        atomic_write_text(sub / f"valid.{d}.{t}", tgt + "\n")
    links = [
        subword_links(ew, jw, wl, ep, jp)
        for (ew, jw, wl), (ep, jp) in zip(WORDS, PIECES, strict=True)
    ]
    atomic_write_text(out / "align" / "train.en-ja", format_lines(links))
    prepare._write_dictionary(out, ["en", "ja"])
    return out


def collated_units(data_bin: Path) -> list[set[tuple[tuple[str, ...], tuple[str, ...]]]]:
    """Per training line of the data-bin, in file order, its units as (source pieces, target
    pieces), read back through fairseq's task, dataset and collater."""
    args = Namespace(
        data=str(data_bin), source_lang="src", target_lang="tgt", load_alignments=True,
        left_pad_source=True, left_pad_target=False, max_source_positions=64,
        max_target_positions=64, upsample_primary=1, truncate_source=False,
        num_batch_buckets=0, train_subset="train", dataset_impl=None,
        required_seq_len_multiple=1, eval_bleu=False,
    )  # fmt: skip
    task = TranslationTask.setup_task(args)
    task.load_dataset("train")
    dataset = task.datasets["train"]
    batch = dataset.collater([dataset[i] for i in range(len(dataset))])
    found = units(batch["alignments"], batch["target"].size(1))
    d = task.source_dictionary
    per_row: dict[int, dict[int, tuple[list[str], list[str]]]] = {}
    for side, members, unit in (
        (0, found.source, found.source_unit),
        (1, found.target, found.target_unit),
    ):
        table = batch["net_input"]["src_tokens"] if side == 0 else batch["target"]
        for (row, position), u in zip(members.tolist(), unit.tolist(), strict=True):
            per_row.setdefault(row, {}).setdefault(u, ([], []))[side].append(
                d[table[row, position]]
            )
    ids = batch["id"].tolist()
    return [
        {(tuple(s), tuple(t)) for s, t in per_row[ids.index(line)].values()}
        for line in range(len(dataset))
    ]


@pytest.mark.parametrize("tag_format", TAGS)
def test_each_unit_holds_its_words_subwords_after_tagging(tmp_path, tag_format):
    out = cut_dataset(tmp_path)
    dest = tmp_path / tag_format
    prepare.binarise(out, ["en", "ja"], tag_format, dest, links=out / "align")
    lines = (dest / "raw" / "train.src-tgt.src").read_text(encoding="utf-8").splitlines()
    assert lines[0].split()[0] == ("__en__" if tag_format == "s-enc-t-dec" else "__ja__")
    read = collated_units(dest / "bin")
    # lines 0-1: en→ja; 2-3: the same pairs reversed, ja→en
    assert read[:2] == UNITS
    assert read[2:] == [{(j, e) for e, j in units_} for units_ in UNITS]
    # validation has no links in the folder: it is binarised without
    assert not (dest / "bin" / "valid.align.src-tgt.bin").exists()
    assert (dest / "bin" / "train.align.src-tgt.bin").exists()


def test_links_that_do_not_fit_their_lines_are_refused_with_file_and_line(tmp_path):
    path = tmp_path / "train.en-ja"
    atomic_write_text(path, "0-0\n")
    with pytest.raises(AlignmentDataError, match="1 lines of links for 2 subword lines"):
        check_lines(path, ["a b", "c"], ["x", "y"])
    atomic_write_text(path, "0-0\n1-1\n")
    with pytest.raises(AlignmentDataError, match=r"train.en-ja:2: link 1-1 outside"):
        check_lines(path, ["a b", "c"], ["x", "y z"])
    atomic_write_text(path, "0-0\nzero\n")
    with pytest.raises(AlignmentDataError, match=r"train.en-ja:2"):
        check_lines(path, ["a b", "c"], ["x", "y"])


def test_pieces_are_placed_when_sentencepiece_keeps_marks_in_their_typed_order():
    """Burmese ``ကြင့်`` typed with the asat (U+103A) before the dot below (U+1037): NFKC puts
    the dot first, SentencePiece keeps the typed order and may end a piece between the two.
    Full-width Japanese digits come out half-width from SentencePiece (NFKC)."""
    word = "\u1000\u103c\u1004\u103a\u1037"  # as typed: asat, then dot below
    pieces = ["▁\u1000\u103c\u1004\u103a", "\u1037", "▁", "၁"]
    links = subword_links(["１２", "x"], [word, "၁"], {(0, 0), (1, 1)}, ["▁12", "▁x"], pieces)
    assert links == {(0, 0), (0, 1), (1, 2), (1, 3)}
    # a piece that spells no word is still refused
    with pytest.raises(Exception, match="does not continue word"):
        subword_links(["a"], [word], {(0, 0)}, ["▁a"], ["▁\u1000\u1004"])
