"""Building the mBART-class models of the tests: ours (`mlrep.nmt.mbart`) and fairseq's own
``bart`` under ``mbart_large``, as mBART was trained (PreNorm: ``--encoder-normalize-before
--decoder-normalize-before``), each from its parser's options as fairseq-train fills them in."""

from __future__ import annotations

import argparse
from pathlib import Path
from unittest import mock

import torch
from fairseq.data import Dictionary
from fairseq.models import ARCH_CONFIG_REGISTRY
from fairseq.models.bart import BARTModel
from fairseq.models.bart import model as bart_model

from mlrep.nmt.model import VariantTransformer

# the tiny shape's fairseq options, to size fairseq's mbart_large down like ours
TINY = [
    "--encoder-embed-dim=64",
    "--encoder-ffn-embed-dim=128",
    "--encoder-attention-heads=2",
    "--encoder-layers=2",
    "--decoder-embed-dim=64",
    "--decoder-ffn-embed-dim=128",
    "--decoder-attention-heads=2",
    "--decoder-layers=2",
]


class Task:
    def __init__(self, dictionary: Dictionary) -> None:
        self.source_dictionary = self.target_dictionary = dictionary


def _args(model: type, arch: str, flags: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    model.add_args(parser)
    args = parser.parse_args(flags)
    ARCH_CONFIG_REGISTRY[arch](args)
    return args


def ours(arch: str, dictionary: Dictionary) -> VariantTransformer:
    return VariantTransformer.build_model(_args(VariantTransformer, arch, []), Task(dictionary))


def bart(dictionary: Dictionary, flags: list[str]) -> BARTModel:
    flags = ["--encoder-normalize-before", "--decoder-normalize-before", *flags]
    return BARTModel.build_model(_args(BARTModel, "mbart_large", flags), Task(dictionary))


def vocabulary(size: int) -> Dictionary:
    """A dictionary of `size` rows, fairseq's 4 special symbols included."""
    words = Dictionary()
    for i in range(size - len(words)):
        words.add_symbol(f"w{i}")
    return words


def meta(build, *args):
    """A model of full size built without memory or time: shapes, no values (fairseq's BERT
    initialisation of ``bart`` draws on the CPU and copies, which a meta tensor cannot take)."""
    with torch.device("meta"), mock.patch.object(bart_model, "init_bert_params", lambda _: None):
        return build(*args)


# the tiny corpus's languages, as monolingual text for a stand-in's denoising pre-training
MONO_LANGUAGES = ["en", "it", "nl", "ro"]
MONO_LINES = 300


def monolingual(corpus: Path, out: Path) -> Path:
    """``<lang>.txt`` of each of `MONO_LANGUAGES` in `out` (as `mlrep data monolingual` writes
    them: one sentence a line), from the training side of the tiny corpus in `corpus`, and
    ``spm.model``, a SentencePiece model of all of it."""
    import sentencepiece

    lines = []
    for lang in MONO_LANGUAGES:
        pair = "en-it" if lang == "en" else f"en-{lang}"
        text = (corpus / f"train.{pair}.{lang}").read_text(encoding="utf-8").splitlines()
        text = text[:MONO_LINES]
        (out / "text").mkdir(parents=True, exist_ok=True)
        (out / "text" / f"{lang}.txt").write_text("".join(t + "\n" for t in text), "utf-8")
        lines += text
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=str(out / "spm"), vocab_size=400, minloglevel=2
    )
    return out


def pretrain_argv(text: Path, out: Path, lr: float, updates: int = 60) -> list[str]:
    """`mlrep nmt mbart-pretrain` of the stand-in on `monolingual`'s folder `text`: every
    option given (no params file is read), one thread."""
    return [
        "nmt", "mbart-pretrain", "--section", "ch5_wordcl", "--scale", "tiny",
        "--text", str(text / "text"), "--languages", *MONO_LANGUAGES,
        "--spm", str(text / "spm.model"), "--out", str(out),
        "--arch", "mlrep_transformer_mbart_tiny", "--updates", str(updates), "--lr", str(lr),
        "--warmup-updates", "5", "--max-tokens", "1024", "--tokens-per-sample", "64",
        "--valid-lines", "20", "--validate-interval-updates", "10", "--seed", "1",
        "--mask", "0.35", "--poisson-lambda", "3.5", "--threads", "1",
    ]  # fmt: skip
