"""Training with the contrastive criterion through `mlrep nmt train`: the flags reach fairseq,
the model learns, the validation log gets the retrieval columns, and the word-level loss
refuses a data-bin without alignments instead of training on nothing."""

from __future__ import annotations

import dataclasses
import re

from mlrep.nmt import prepare, valid_log
from tests.learning import assert_loss_falls
from tests.nmt_helpers import (  # noqa: F401
    ONE_BATCH_TOKENS,
    corpus,
    encoded,
    fairseq_losses,
    one_batch,
    run,
    settings,
    train_command,
)
from tests.test_nmt_alignments import cut_dataset

TRAIN_SENT_LOSS = r"\btrain\W+epoch \d+ \|.*?\| sent_loss ([-+.\deE]+) \|"
CONTRASTIVE = ["--contrastive", "true", "--sentence-weight", "1.0"]


def test_sentence_contrastive_training_learns_and_logs_retrieval(one_batch, tmp_path):  # noqa: F811
    s = settings(max_update=40, save_interval_updates=10)
    s = dataclasses.replace(s, lr=0.01, max_tokens=ONE_BATCH_TOKENS)  # an epoch: one update
    result = run(train_command(one_batch, tmp_path, s=s) + CONTRASTIVE)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "criterion=ContrastiveCriterion" in result.stderr or "mlrep_contrastive" in result.stderr
    losses = fairseq_losses(result.stderr, "train")
    assert len(losses) == 40
    # measured: first-5 mean 12.59, last-5 mean 8.06 (ratio 0.64): the total holds the
    # sentence term, which falls more slowly than the NMT loss on 24 pairs
    assert_loss_falls(losses, window=5, below=0.76)
    rows = valid_log.read(tmp_path / valid_log.VALID_LOG)
    assert [r["updates"] for r in rows] == list(range(1, 41))  # every epoch validates
    assert all({"nmt_loss", "sent_loss", "sent_p_at_1"} <= set(r) for r in rows)
    # the sentence term itself is learnt on the fixed batch (fairseq's epoch lines log it).
    # measured: first-5 mean 3.11, last-5 mean 1.65 (ratio 0.53); with the term's weight
    # dropped from the training loss: 3.31 → 3.29 (ratio 0.99)
    sentence = [float(x) for x in re.findall(TRAIN_SENT_LOSS, result.stderr)]
    assert len(sentence) == 40
    assert_loss_falls(sentence, window=5, below=0.7, what="training sentence loss")


def test_the_word_level_loss_refuses_a_data_bin_without_alignments(one_batch, tmp_path):  # noqa: F811
    s = settings(max_update=2, save_interval_updates=2)
    argv = [*train_command(one_batch, tmp_path, s=s), *CONTRASTIVE, "--word-weight", "0.1"]
    result = run(argv)
    assert result.returncode != 0
    assert "no train.align.src-tgt.bin, but word-weight is 0.1" in result.stderr
    assert not (tmp_path / "checkpoint_last.pt").exists()


TRAIN_WORD_LOSS = r"\btrain\W+epoch \d+ \|.*?\| word_loss ([-+.\deE]+) \|"


def test_word_contrastive_training_learns_its_units(tmp_path):
    """The word-level term through `mlrep nmt train` on a data-bin binarised with its links
    (`tests.test_nmt_alignments`'s two en-ja pairs, both directions: one batch of 10 units)."""
    out = cut_dataset(tmp_path)
    prepare.binarise(out, ["en", "ja"], "s-enc-t-dec", out / "s-enc-t-dec", links=out / "align")
    s = dataclasses.replace(settings(max_update=30, save_interval_updates=30), lr=0.01)
    argv = [*train_command(out, tmp_path / "run", s=s), "--contrastive", "true"]
    result = run([*argv, "--word-weight", "0.1", "--word-projection", "16"])
    assert result.returncode == 0, result.stderr[-3000:]
    word = [float(x) for x in re.findall(TRAIN_WORD_LOSS, result.stderr)]
    assert len(word) == 30
    # measured: first-5 mean 2.18, last-5 mean 0.93 (ratio 0.43); with the term's weight
    # dropped from the training loss: 2.36 → 2.57 (ratio 1.09)
    assert_loss_falls(word, window=5, below=0.62, what="training word loss")
