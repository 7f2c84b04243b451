"""A released mBART checkpoint becomes a fine-tuning init (`mlrep.nmt.mbart_init`), tested on
a tiny mBART-class ``bart`` checkpoint saved as fairseq saves one, with its own SentencePiece
model and ``dict.txt`` made as mBART's are."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest
import sentencepiece
import torch
from fairseq import checkpoint_utils
from fairseq.data import Dictionary

from mlrep import cli
from mlrep.io import atomic_write_text, sha256_file
from mlrep.nmt.mbart_init import CHECKPOINT, DICT, MBART25_LANGUAGES, convert
from mlrep.nmt.model import MODEL, ArchitectureMismatch
from mlrep.nmt.prepare import fairseq_preprocess
from mlrep.nmt.train import LAST, SUMMARY, DictionaryMismatch, train
from mlrep.nmt.variant import Variant
from tests.mbart_helpers import TINY, bart, ours
from tests.nmt_helpers import settings

TEXT = [
    "the cat sat on the mat and looked at the dog",
    "a dog and a cat are friends in the house",
    "de kat zat op de mat en keek naar de hond",
    "il gatto sedeva sul tappeto e guardava il cane",
    "pisica stătea pe covor și se uita la câine",
] * 20
ARCH = f"{MODEL}_mbart_tiny"


def release(folder: Path, extra_symbols: int = 0, dropped_symbols: int = 0) -> dict[str, Path]:
    """A tiny mBART release in `folder`: ``sentence.bpe.model``, ``dict.txt`` (the pieces less
    SentencePiece's control and unknown pieces, `extra_symbols` pieces of no model added,
    `dropped_symbols` left out after the checkpoint was made) and ``model.pt``, a ``bart``
    model (with a classification head) on the fine-tuning dictionary: fairseq's specials,
    ``dict.txt``, the 25 language tokens, ``<mask>``."""
    folder.mkdir(parents=True, exist_ok=True)
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(TEXT),
        model_prefix=str(folder / "sentence.bpe"),
        vocab_size=50,
        minloglevel=2,
    )
    spm = sentencepiece.SentencePieceProcessor(model_file=str(folder / "sentence.bpe.model"))
    pieces = [
        spm.id_to_piece(i)
        for i in range(spm.get_piece_size())
        if not (spm.is_control(i) or spm.is_unknown(i))
    ]
    pieces += [f"notapiece{i}" for i in range(extra_symbols)]
    words = Dictionary()
    for piece in pieces:
        words.add_symbol(piece)
    for language in MBART25_LANGUAGES:
        words.add_symbol(f"[{language}]")
    words.add_symbol("<mask>")
    torch.manual_seed(0)
    model = bart(words, TINY)
    model.register_classification_head("mnli", num_classes=3)
    state = {
        "args": argparse.Namespace(arch="mbart_large", task="multilingual_denoising"),
        "model": model.state_dict(),
        "optimizer_history": [{"num_updates": 10, "optimizer_name": "FairseqAdam"}],
        "extra_state": {"train_iterator": {"epoch": 3}},
        "last_optimizer_state": None,
    }
    # as an older fairseq saved it: the output projection is the embedding, not stored
    del state["model"]["decoder.output_projection.weight"]
    checkpoint_utils.torch_persistent_save(state, str(folder / "model.pt"))
    kept = pieces[: len(pieces) - dropped_symbols]
    (folder / "dict.txt").write_text("".join(f"{p} 1\n" for p in kept), encoding="utf-8")
    return {
        "checkpoint": folder / "model.pt",
        "dict_txt": folder / "dict.txt",
        "spm_model": folder / "sentence.bpe.model",
    }


def test_the_converted_checkpoint_loads_into_our_model_with_barts_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # as `mlrep nmt train` sets it
    files = release(tmp_path / "release")
    written = convert(**files, out=tmp_path / "init", arch=ARCH)
    assert written == tmp_path / "init" / CHECKPOINT
    # read as --finetune-from-model reads it, into our model on the written dictionary
    state = checkpoint_utils.load_checkpoint_to_cpu(str(written))
    assert state["cfg"]["model"].arch == ARCH
    dictionary = Dictionary.load(str(tmp_path / "init" / DICT))
    model = ours(ARCH, dictionary)
    model.load_state_dict(state["model"], strict=True)
    released = torch.load(files["checkpoint"], weights_only=False)["model"]
    assert any(k.startswith("classification_heads.") for k in released)
    mine = model.state_dict()
    released["decoder.output_projection.weight"] = released["decoder.embed_tokens.weight"]
    assert set(mine) == {k for k in released if not k.startswith("classification_heads.")}
    for key, value in mine.items():
        torch.testing.assert_close(value, released[key], rtol=0, atol=0)
    assert dictionary.symbols[-26:] == [f"[{x}]" for x in MBART25_LANGUAGES] + ["<mask>"]
    summary = json.loads((tmp_path / "init" / SUMMARY).read_text(encoding="utf-8"))
    assert summary["dictionary"] == sha256_file(tmp_path / "init" / DICT)


def test_a_dictionary_not_of_the_sentencepiece_model_is_refused(tmp_path):
    files = release(tmp_path / "release", extra_symbols=2)
    with pytest.raises(DictionaryMismatch) as error:
        convert(**files, out=tmp_path / "init", arch=ARCH)
    message = str(error.value)
    for part in (
        str(files["dict_txt"]),
        str(files["spm_model"]),
        "notapiece0",
        "one mBART release",
    ):
        assert part in message
    assert not (tmp_path / "init").exists()


def test_the_verb_converts_and_refuses_in_one_line(tmp_path, capsys):
    files = release(tmp_path / "release")
    argv = ["nmt", "mbart-init", "--checkpoint", str(files["checkpoint"]), "--dict"]
    argv += [str(files["dict_txt"]), "--spm", str(files["spm_model"]), "--arch", ARCH]
    assert cli.main([*argv, "--out", str(tmp_path / "init")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "init" / CHECKPOINT)
    assert cli.main([*argv[:-1], "mlrep_transformer_mbart_huge", "--out", str(tmp_path / "x")]) == 2
    assert "choose one of mlrep_transformer_mbart_tiny" in capsys.readouterr().err


def test_a_checkpoint_of_another_dictionary_size_is_refused(tmp_path):
    files = release(tmp_path / "release", dropped_symbols=3)
    rows = torch.load(files["checkpoint"], weights_only=False)["model"][
        "encoder.embed_tokens.weight"
    ].shape[0]
    with pytest.raises(DictionaryMismatch) as error:
        convert(**files, out=tmp_path / "init", arch=ARCH)
    message = str(error.value)
    for part in (str(files["checkpoint"]), str(files["dict_txt"]), f"embeds {rows} tokens"):
        assert part in message
    assert f"makes {rows - 3}" in message and "one mBART release" in message
    assert not (tmp_path / "init").exists()


def test_a_checkpoint_of_another_shape_is_refused(tmp_path):
    """The tiny release converted as mBART-25's large shape: refused before anything is written."""
    files = release(tmp_path / "release")
    with pytest.raises(ArchitectureMismatch, match="is not a mlrep_transformer_mbart_large model"):
        convert(**files, out=tmp_path / "init", arch=f"{MODEL}_mbart_large")
    assert not (tmp_path / "init").exists()


def test_fine_tuning_starts_from_the_converted_checkpoint(tmp_path):
    """Two updates of `mlrep nmt train`'s training from the converted init, on data binarised
    with the written dictionary: fairseq loads it (its learned 1024 positions included), and at
    a learning rate too small to move them the weights stay the release's."""
    files = release(tmp_path / "release")
    init = convert(**files, out=tmp_path / "init", arch=ARCH)
    spm = sentencepiece.SentencePieceProcessor(model_file=str(files["spm_model"]))
    raw = tmp_path / "raw"
    for split in ("train", "valid"):
        for side, lines in (("src", TEXT[:5]), ("tgt", TEXT[1:6])):
            text = "".join(" ".join(spm.encode(line, out_type=str)) + "\n" for line in lines)
            atomic_write_text(raw / f"{split}.src-tgt.{side}", text)
    fairseq_preprocess(raw, tmp_path / "bin", tmp_path / "init" / DICT)
    s = dataclasses.replace(settings(max_update=2, save_interval_updates=2), arch=ARCH, lr=1e-9)
    summary = train(tmp_path / "bin", tmp_path / "ft", "mbart", Variant("pre"), s, init)
    assert summary["updates"] == 2 and summary["init"] == str(init)
    tuned = torch.load(tmp_path / "ft" / LAST, weights_only=False)["model"]
    released = torch.load(files["checkpoint"], weights_only=False)["model"]
    for key in ("encoder.embed_tokens.weight", "encoder.embed_positions.weight"):
        torch.testing.assert_close(tuned[key], released[key], rtol=0, atol=1e-5)


def test_mbart25_has_25_language_tokens_chapter_5s_languages_among_them():
    assert len(set(MBART25_LANGUAGES)) == 25 and sorted(MBART25_LANGUAGES) == MBART25_LANGUAGES
    codes = {code.split("_")[0] for code in MBART25_LANGUAGES}
    assert {"en", "et", "it", "ja", "kk", "my", "nl", "ro", "tr", "vi"} <= codes
