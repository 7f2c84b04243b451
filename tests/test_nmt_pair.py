"""Pair-model data (`mlrep nmt pair-pretrain`, `pair-finetune`): one dictionary for the pair,
holding every token of the pre-training and fine-tuning text and every tag; fine-tuning data
binarised with it, tagged with the target language only; bad inputs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlrep import cli
from mlrep.io import read_lines
from mlrep.nmt import pair
from mlrep.nmt.prepare import dictionary_sha256
from mlrep.nmt.token_accuracy import TokenAccuracyError, moved_words
from mlrep.text.lines import meta_path
from mlrep.text.pretrain_tasks import MASK, TASK_TAGS
from tests.nmt_helpers import PAIR, pair_inputs


def pair_pretrain(files: dict[str, list[Path]], out: Path, languages=PAIR) -> int:
    argv = ["nmt", "pair-pretrain", "--languages", *languages, "--scale", "tiny"]
    for option in ("train_source", "train_target", "valid_source", "valid_target"):
        argv += [f"--{option.replace('_', '-')}", *map(str, files[option])]
    argv += ["--finetune-text", *map(str, files["bitext_train"]), "--out", str(out)]
    return cli.main(argv)


def pair_finetune(
    files: dict[str, list[Path]], dictionary: Path | None, direction: str, out: Path, *extra: str
):
    """`mlrep nmt pair-finetune` of the bitext in `direction` (en-it or it-en)."""
    order = slice(None) if direction == "en-it" else slice(None, None, -1)
    given = ["--dict", str(dictionary)] if dictionary else []  # none: the sample's own
    argv = ["nmt", "pair-finetune", *given, "--direction", direction]
    for split in ("train", "valid"):
        source, target = files[f"bitext_{split}"][order]
        argv += [f"--{split}-source", str(source), f"--{split}-target", str(target)]
    return cli.main([*argv, *extra, "--scale", "tiny", "--out", str(out)])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, list[Path]]:
    return pair_inputs(tmp_path_factory.mktemp("pair-inputs"))


@pytest.fixture(scope="module")
def pretrain_data(inputs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pair-data") / "pretrain"
    assert pair_pretrain(inputs, out) == 0
    return out


def test_the_dictionary_holds_both_texts_and_every_tag(inputs, pretrain_data):
    tokens = [line.split()[0] for line in read_lines(pretrain_data / pair.DICT, ValueError)]
    assert len(tokens) == len(set(tokens))
    text = {
        token
        for option in ("train_source", "train_target", "bitext_train")
        for path in inputs[option]
        for line in read_lines(path, ValueError)
        for token in line.split()
    }
    assert "itonly" in text and set(tokens) >= text  # fine-tuning's own words included
    # every tag, though these pairs hold no [BART] and no fine-tuning tag is in the text
    assert "[BART]" not in text
    assert set(tokens) >= {MASK, *TASK_TAGS.values(), "[En]", "[It]"}
    assert set(tokens) - text == {"[BART]"}
    # the data-bin's dictionary is that file, for both sides
    bin_dict = read_lines(pretrain_data / pair.BIN / "dict.src.txt", ValueError)
    assert [line.split()[0] for line in bin_dict] == tokens
    assert (pretrain_data / pair.BIN / "dict.tgt.txt").read_text() == "\n".join(bin_dict) + "\n"
    raw = read_lines(pretrain_data / pair.RAW / "train.src-tgt.src", ValueError)
    assert len(raw) == 2 * 2 * 8  # two languages × two tasks × 8 sentences


def test_finetuning_data_shares_the_dictionary_and_tags_the_target_only(
    inputs, pretrain_data, tmp_path
):
    for direction, tag in (("en-it", "[It]"), ("it-en", "[En]")):
        out = tmp_path / direction
        assert pair_finetune(inputs, pretrain_data / pair.DICT, direction, out) == 0
        assert dictionary_sha256(out / pair.BIN) == dictionary_sha256(pretrain_data / pair.BIN)
        src, tgt = (inputs["bitext_train"][i] for i in ((0, 1) if direction == "en-it" else (1, 0)))
        sources = read_lines(out / pair.RAW / "train.src-tgt.src", ValueError)
        assert sources == [f"{tag} {line}" for line in read_lines(src, ValueError)]
        targets = read_lines(out / pair.RAW / "train.src-tgt.tgt", ValueError)
        assert targets == read_lines(tgt, ValueError)
        assert (out / pair.BIN / "valid.src-tgt.src.bin").exists()


def test_a_target_file_given_as_source_is_named(inputs, tmp_path, capsys):
    swapped = dict(inputs, train_source=inputs["train_target"], train_target=inputs["train_source"])
    assert pair_pretrain(swapped, tmp_path / "out") == 2
    error = capsys.readouterr().err
    assert f"{inputs['train_target'][0]}:1: a pre-training source starts with a task tag" in error
    assert "pretrain-pairs" in error and not (tmp_path / "out").exists()


def test_pretraining_files_of_another_pair_are_named(inputs, tmp_path, capsys):
    assert pair_pretrain(inputs, tmp_path / "out", languages=("en", "ko")) == 2
    assert f"{inputs['train_source'][1]}:1:" in capsys.readouterr().err  # the Italian pairs


def test_unequal_source_and_target_files_are_named(inputs, tmp_path, capsys):
    short = tmp_path / "short.tgt"
    short.write_text("".join(read_lines(inputs["valid_target"][0], ValueError)[1:]))
    assert (
        pair_pretrain(
            dict(inputs, valid_target=[short, *inputs["valid_target"][1:]]), tmp_path / "out"
        )
        == 2
    )
    error = capsys.readouterr().err
    assert f"{inputs['valid_source'][0]} has 8 lines, {short}" in error


def test_another_pairs_dictionary_is_refused_for_finetuning(
    inputs, pretrain_data, tmp_path, capsys
):
    argv = [
        "nmt",
        "pair-finetune",
        "--dict",
        str(pretrain_data / pair.DICT),
        "--direction",
        "en-ko",
    ]
    for split in ("train", "valid"):
        source, target = inputs[f"bitext_{split}"]
        argv += [f"--{split}-source", str(source), f"--{split}-target", str(target)]
    assert cli.main([*argv, "--scale", "tiny", "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert f"{pretrain_data / pair.DICT} has no [Ko]" in error and "pair-pretrain" in error


def test_finetuning_trains_on_the_first_train_lines_only(inputs, pretrain_data, tmp_path, capsys):
    bitext = read_lines(inputs["bitext_train"][0], ValueError)
    out = tmp_path / "sample"
    assert pair_finetune(inputs, pretrain_data / pair.DICT, "en-it", out, "--train-lines", "3") == 0
    sources = read_lines(out / pair.RAW / "train.src-tgt.src", ValueError)
    assert sources == [f"[It] {line}" for line in bitext[:3]]
    targets = read_lines(out / pair.RAW / "train.src-tgt.tgt", ValueError)
    assert targets == read_lines(inputs["bitext_train"][1], ValueError)[:3]
    # valid is whole; a sample larger than the pool is named, not silently the pool
    assert len(read_lines(out / pair.RAW / "valid.src-tgt.src", ValueError)) == len(
        read_lines(inputs["bitext_valid"][0], ValueError)
    )
    big = str(len(bitext) + 1)
    assert (
        pair_finetune(
            inputs, pretrain_data / pair.DICT, "en-it", tmp_path / "x", "--train-lines", big
        )
        == 2
    )
    error = capsys.readouterr().err
    assert f"{len(bitext)} training pairs, fewer than the {big} asked for" in error


def test_without_a_dictionary_the_sample_is_its_own(inputs, tmp_path):
    """#0* (no pre-training, its own BPE): the dictionary counts the training sample's two
    sides only, plus the tags, and is the data-bin's."""
    out = tmp_path / "own"
    assert pair_finetune(inputs, None, "en-it", out, "--train-lines", "3") == 0
    sample = [
        token
        for path in inputs["bitext_train"]
        for line in read_lines(path, ValueError)[:3]
        for token in line.split()
    ]
    later = {
        token
        for path in inputs["bitext_train"]
        for line in read_lines(path, ValueError)[3:]
        for token in line.split()
    } - set(sample)
    entries = dict(line.split() for line in read_lines(out / pair.DICT, ValueError))
    assert later and not later & set(entries)  # a word only past the sample is not in it
    assert set(sample) <= set(entries) and entries["en1"] == str(sample.count("en1"))
    assert {"[It]", "[En]", MASK} <= set(entries)
    binarised = read_lines(out / pair.BIN / "dict.src.txt", ValueError)
    assert [line.split()[0] for line in binarised] == list(entries)


def test_the_moved_word_share_is_read_from_the_training_pairs(inputs, pretrain_data, tmp_path):
    """The reordering statistic: each train source's Deshuffling share (its metadata, a
    fraction) in percent per language; valid pairs do not count; a file without metadata is
    named with the fix."""
    expected = {}
    for source, lang in zip(inputs["train_source"], PAIR, strict=True):
        extra = json.loads(meta_path(source).read_text(encoding="utf-8"))["extra"]
        expected[f"moved_words_{lang}_deshuffle"] = round(
            100 * extra["moved_word_ratio"]["deshuffle"], 2
        )
    assert moved_words(pretrain_data) == expected
    assert all(50 < share <= 100 for share in expected.values())  # a shuffle moves most words
    valid = json.loads(meta_path(inputs["valid_source"][0]).read_text(encoding="utf-8"))["extra"]
    assert (
        valid["moved_word_ratio"]["deshuffle"] * 100 != expected[f"moved_words_{PAIR[0]}_deshuffle"]
    )
    copied = tmp_path / "data"
    copied.mkdir()
    bare = tmp_path / "bare.src"
    bare.write_text(inputs["train_source"][0].read_text(encoding="utf-8"), encoding="utf-8")
    summary = {"sources": {"train": [[str(bare), str(inputs["train_target"][0])]]}}
    (copied / pair.SUMMARY).write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(TokenAccuracyError, match="moved words are unknown") as error:
        moved_words(copied)
    assert str(meta_path(bare)) in str(error.value) and "pretrain-pairs" in str(error.value)
    with pytest.raises(TokenAccuracyError, match="pair-pretrain"):
        moved_words(tmp_path)
