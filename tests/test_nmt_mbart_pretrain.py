"""`mlrep nmt mbart-pretrain` (`mlrep.nmt.mbart_pretrain`): a tiny mBART stand-in, denoising-
pre-trained on the tiny corpus's monolingual text, that `mbart-init` converts as it converts the
release; its noise and its language tokens are mBART's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sentencepiece
import torch
from fairseq import options, tasks
from fairseq.data import Dictionary

from mlrep import cli
from mlrep.nmt import valid_log
from mlrep.nmt.data import MBART25_LANGUAGES
from mlrep.nmt.mbart_init import CHECKPOINT, DICT, MASK, convert, finetuning_dictionary
from mlrep.nmt.mbart_pretrain import (
    BIN,
    MODEL,
    SPM,
    SUMMARY,
    binarise,
    fairseq_args,
)
from mlrep.nmt.settings import MbartPretrainSettings
from tests.mbart_helpers import MONO_LANGUAGES, monolingual, pretrain_argv
from tests.nmt_helpers import corpus  # noqa: F401

ARCH = "mlrep_transformer_mbart_tiny"


@pytest.fixture(scope="module")
def text(corpus, tmp_path_factory) -> Path:  # noqa: F811
    return monolingual(corpus, tmp_path_factory.mktemp("mbart-text"))


@pytest.fixture(scope="module")
def stand_in(text, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mbart-pretrain") / "stand-in"
    assert cli.main(pretrain_argv(text, out, lr=0.005)) == 0
    return out


def _curve(out: Path) -> list[float]:
    return [row["loss"] for row in valid_log.read(out / valid_log.VALID_LOG)]


def test_the_denoising_loss_falls_and_stays_at_learning_rate_0(stand_in, text, tmp_path):
    """Learning, not only a run: the held-out denoising loss falls over the updates (past
    the pieces' unigram level it reaches first), and the same run with a learning rate of 0
    (same data, noise and seed) ends where it began, at the random model's loss."""
    curve = _curve(stand_in)
    assert len(curve) == 6 and curve[-1] < curve[0] - 0.2
    summary = json.loads((stand_in / SUMMARY).read_text(encoding="utf-8"))
    assert summary["updates"] == 60 and summary["last_valid_loss"] == curve[-1]
    assert cli.main(pretrain_argv(text, tmp_path / "frozen", lr=0.0)) == 0
    frozen = _curve(tmp_path / "frozen")
    assert frozen[-1] == pytest.approx(frozen[0], abs=1e-3)
    assert frozen[-1] > curve[-1] + 1


def test_the_output_is_a_release_that_mbart_init_converts(stand_in, text, tmp_path):
    """model.pt, dict.txt (the SentencePiece pieces, none of its control pieces) and
    sentence.bpe.model, converted by mbart-init with no complaint into weights equal to the
    stand-in's, the 25 language tokens last before <mask> in mBART's order."""
    assert (stand_in / SPM).read_bytes() == (text / "spm.model").read_bytes()
    spm = sentencepiece.SentencePieceProcessor(model_file=str(stand_in / SPM))
    pieces = Dictionary.load(str(stand_in / DICT)).symbols[4:]
    assert "<unk>" not in pieces and "<s>" not in pieces
    assert len(pieces) == spm.get_piece_size() - 3
    written = convert(stand_in / MODEL, stand_in / DICT, stand_in / SPM, tmp_path / "init", ARCH)
    assert written == tmp_path / "init" / CHECKPOINT
    symbols = Dictionary.load(str(tmp_path / "init" / DICT)).symbols
    assert symbols[-26:] == [f"[{x}]" for x in MBART25_LANGUAGES] + [MASK]
    converted = torch.load(written, weights_only=False)["model"]
    trained = torch.load(stand_in / MODEL, weights_only=False)["model"]
    for key, value in converted.items():
        torch.testing.assert_close(value, trained[key], rtol=0, atol=0)


def _task(text: Path, work: Path, mask: float = 0.35):
    """The pre-training's fairseq task, its data binarised as `pretrain` binarises it."""
    s = MbartPretrainSettings(
        arch=ARCH, updates=1, lr=0.001, warmup_updates=1, max_tokens=1024, tokens_per_sample=64,
        valid_lines=20, validate_interval_updates=1, seed=1, mask=mask,
    )  # fmt: skip
    binarise(text / "text", MONO_LANGUAGES, text / "spm.model", work, work / "t", s.valid_lines)
    codes = ["en_XX", "it_IT", "nl_XX", "ro_RO"]
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, fairseq_args(work / "t" / BIN, work, codes, s))
    task = tasks.setup_task(args)
    task.load_dataset("valid")
    return task


def test_instances_are_noised_as_mbarts_and_end_with_their_language_token(text, tmp_path):
    """The task's dictionary is the fine-tuning dictionary of mbart-init (the 25 tokens in
    mBART's order); an instance's target is whole sentences ending with its language's token,
    its source the same with about 35% of the pieces masked in spans and the sentences
    permuted."""
    task = _task(text, tmp_path)
    expected = finetuning_dictionary(tmp_path / DICT, MBART25_LANGUAGES)
    assert task.source_dictionary.symbols == expected.symbols
    mask = task.source_dictionary.index(MASK)
    ends = {
        task.source_dictionary.index(f"[{code}]") for code in ("en_XX", "it_IT", "nl_XX", "ro_RO")
    }
    dataset = task.dataset("valid")
    masked = total = 0
    for i in range(len(dataset)):
        item = dataset[i]
        source, target = item["source"], item["target"]
        assert int(target[-1]) in ends and int(source[-1]) == int(target[-1])
        masked += int((source == mask).sum())
        total += len(target) - 2
    # one <mask> per span of mean length 3.5 over 35% of the pieces: about 10% of them
    assert 0.05 < masked / total < 0.2


def _sentences(tokens: torch.Tensor, eos: int) -> list[tuple[int, ...]]:
    """An instance's sentences (between <s> and its language token), each up to its </s>."""
    sentences, current = [], []
    for token in tokens[1:-1].tolist():
        current.append(token)
        if token == eos:
            sentences.append(tuple(current))
            current = []
    return sentences + ([tuple(current)] if current else [])


def test_sentences_are_permuted_within_an_instance(text, tmp_path):
    """Without masks, a source is its target's sentences in another order (mBART's sentence
    permutation), for some instance of several sentences."""
    task = _task(text, tmp_path, mask=0.0)
    eos = task.source_dictionary.eos()
    dataset = task.dataset("valid")
    reordered = 0
    for i in range(len(dataset)):
        source = _sentences(dataset[i]["source"], eos)
        target = _sentences(dataset[i]["target"], eos)
        assert sorted(source) == sorted(target)
        reordered += source != target
    assert reordered > len(dataset) / 4


def test_a_language_without_an_mbart_token_is_refused(text, tmp_path, capsys):
    argv = pretrain_argv(text, tmp_path / "out", lr=0.003)
    at = argv.index("--languages")
    argv[at + 1] = "xh"
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert "'xh' has no mBART-25 language token" in error and "drop xh" in error
    assert not (tmp_path / "out").exists()
