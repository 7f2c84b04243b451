"""Zero-shot classification on frozen embeddings: learning, seeds, the 5-run mean, files."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from mlrep.cli import main
from mlrep.evaluate import classify
from mlrep.evaluate.embeddings import EmbeddingError
from mlrep.evaluate.settings import ClassifySettings

FAST = ClassifySettings(epochs=15, runs=3, batch_size=16)


def language(seed: int, n: int, shift: float, classes: int = 3, dim: int = 12):
    """Documents of `classes` topics: class centroids shared by all 'languages' (the
    multilingual space), plus a language-specific offset `shift` and noise."""
    rng = np.random.default_rng(seed)
    centroids = np.random.default_rng(0).normal(size=(classes, dim)) * 2
    y = rng.integers(0, classes, n)
    x = centroids[y] + shift + rng.normal(size=(n, dim))
    return classify.Labelled(x.astype(np.float32), y)


def test_classifier_transfers_across_languages_and_runs_are_averaged():
    train, dev = language(1, 300, 0.0), language(2, 100, 0.0)
    tests = {"near": language(3, 200, 0.3), "noise": language(4, 200, 0.0)}
    tests["noise"] = classify.Labelled(
        tests["noise"].x, np.random.default_rng(5).permutation(tests["noise"].y)
    )
    result = classify.zero_shot(train, dev, tests, 3, FAST)
    assert result["accuracy"]["near"] > 85
    assert result["accuracy"]["noise"] < 50  # labels shuffled: chance is 33
    assert result["seeds"] == [1, 2, 3]
    runs = [r["test"]["near"] for r in result["runs"]]
    assert result["accuracy"]["near"] == pytest.approx(np.mean(runs))


def test_a_run_is_reproducible_from_its_seed():
    train, dev = language(1, 200, 0.0), language(2, 80, 0.0)
    tests = {"x": language(3, 80, 0.5)}
    first = classify.train_and_test(train, dev, tests, 3, FAST, seed=7)
    assert first == classify.train_and_test(train, dev, tests, 3, FAST, seed=7)


def noisy(seed: int, n: int) -> classify.Labelled:
    """`language` with more noise, so that dev accuracy goes up and down between epochs."""
    data = language(seed, n, 0.0)
    noise = np.random.default_rng(seed + 100).normal(size=data.x.shape) * 2
    return classify.Labelled((data.x + noise).astype(np.float32), data.y)


def test_a_run_returns_the_model_of_its_best_dev_epoch_the_later_of_ties():
    train, dev = noisy(1, 100), noisy(2, 40)
    tests = {"dev": dev, "x": noisy(3, 80)}  # the dev set as a test: the returned model's score
    settings = dataclasses.replace(FAST, lr=0.05, epochs=10)
    # every epoch ties on three identical documents of three classes (33.3%), so the run keeps
    # its last epoch: epoch k's own scores, without relying on the restore under test
    tie = classify.Labelled(np.zeros((3, 12), np.float32), np.arange(3))
    epochs = [
        classify.train_and_test(train, tie, tests, 3, dataclasses.replace(settings, epochs=k), 7)
        for k in range(1, settings.epochs + 1)
    ]
    dev_by_epoch = [e["test"]["dev"] for e in epochs]
    best = max(range(len(epochs)), key=lambda k: (dev_by_epoch[k], k))
    # measured: 67.5 85 92.5 90 87.5 87.5 92.5 92.5 90 87.5: the best is epoch 8 of 10
    assert dev_by_epoch[-1] < dev_by_epoch[best] and dev_by_epoch[best] in dev_by_epoch[:best]
    result = classify.train_and_test(train, dev, tests, 3, settings, 7)
    assert result["dev"] == dev_by_epoch[best]
    assert result["test"] == epochs[best]["test"]


def test_cli_runs_the_protocol_from_files(tmp_path, capsys):
    names = np.array(["ECAT", "GCAT", "MCAT"])
    files = {}
    for split, (seed, n, shift) in {
        "train": (1, 200, 0.0),
        "dev": (2, 60, 0.0),
        "de": (3, 80, 0.4),
    }.items():
        data = language(seed, n, shift)
        np.save(tmp_path / f"{split}.npy", data.x)
        (tmp_path / f"{split}.lbl").write_text("\n".join(names[data.y]) + "\n")
        files[split] = (str(tmp_path / f"{split}.npy"), str(tmp_path / f"{split}.lbl"))
    argv = ["eval", "classify", "--train-emb", files["train"][0]]
    argv += ["--train-labels", files["train"][1], "--dev-emb", files["dev"][0]]
    argv += ["--dev-labels", files["dev"][1], "--test-emb", files["de"][0]]
    argv += ["--test-labels", files["de"][1], "--epochs", "10", "--runs", "2"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["classes"] == ["ECAT", "GCAT", "MCAT"]
    assert result["accuracy"][files["de"][0]] > 80 and len(result["runs"]) == 2

    (tmp_path / "de.lbl").write_text("\n".join(["ECAT"] * 79 + ["CCAT"]) + "\n")
    assert main(argv) == 2
    assert "labels ['CCAT'] do not occur in the training labels" in capsys.readouterr().err
    (tmp_path / "de.lbl").write_text("ECAT\n")
    assert main(argv) == 2
    assert "de.lbl: 1 labels but the embeddings have 80 rows" in capsys.readouterr().err
    assert main([*argv, "--test-emb", files["de"][0], files["dev"][0]]) == 2
    assert "one label file per test embedding file" in capsys.readouterr().err


def test_dimension_mismatch_between_languages_is_an_error():
    train, dev = language(1, 50, 0.0), language(2, 20, 0.0, dim=8)
    with pytest.raises(EmbeddingError, match="dev embeddings has 8"):
        classify.zero_shot(train, dev, {}, 3, FAST)
