"""Zero-shot cross-lingual classification on frozen sentence embeddings (MLDoc, Amazon CLS).

The thesis trains an MLP on one language's embeddings, selects it on that language's dev
set and tests it on another language, reporting the mean accuracy of 5 runs; it does not
give the MLP. We follow LASER's MLDoc recipe (``tasks/mldoc/mldoc.sh`` driving
``source/sent_classif.py``): hidden layers 10 and 8 with tanh, dropout 0.2 before every
linear layer but the output, Adam (lr 1e-3, no weight decay), batch 12, 500 epochs, keeping
the epoch with the best dev accuracy (a later epoch wins a tie). Runs differ only in seed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from mlrep.evaluate import embeddings
from mlrep.evaluate.settings import ClassifySettings
from mlrep.io import read_lines


class LabelError(embeddings.EmbeddingError):
    """A label file that does not match its embeddings or the training labels."""


@dataclass(frozen=True)
class Labelled:
    """Embeddings with one class index per row."""

    x: np.ndarray
    y: np.ndarray


def _mlp(dim: int, classes: int, settings: ClassifySettings) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    width = dim
    for size in settings.hidden:
        layers += [
            torch.nn.Dropout(settings.dropout),
            torch.nn.Linear(width, size),
            torch.nn.Tanh(),
        ]
        width = size
    if settings.hidden:
        layers.append(torch.nn.Dropout(settings.dropout))
    layers.append(torch.nn.Linear(width, classes))
    return torch.nn.Sequential(*layers)


def _accuracy(model: torch.nn.Module, data: Labelled) -> float:
    model.eval()
    with torch.inference_mode():
        predicted = model(torch.from_numpy(np.array(data.x, np.float32))).argmax(dim=1)
    return 100.0 * float((predicted.numpy() == data.y).mean())


def train_and_test(
    train: Labelled,
    dev: Labelled,
    tests: dict[str, Labelled],
    classes: int,
    settings: ClassifySettings,
    seed: int,
) -> dict:
    """One run: train on `train`, keep the best-dev epoch, report dev and test accuracies."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = _mlp(train.x.shape[1], classes, settings)
    optimiser = torch.optim.Adam(
        model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    x = torch.from_numpy(np.array(train.x, np.float32))
    y = torch.from_numpy(train.y.astype(np.int64))
    loss_fn = torch.nn.CrossEntropyLoss()
    best_dev, best_state = -1.0, None
    for _ in range(settings.epochs):
        model.train()
        for batch in torch.randperm(len(y), generator=generator).split(settings.batch_size):
            optimiser.zero_grad()
            loss_fn(model(x[batch]), y[batch]).backward()
            optimiser.step()
        dev_accuracy = _accuracy(model, dev)
        if dev_accuracy >= best_dev:
            best_dev, best_state = dev_accuracy, copy.deepcopy(model.state_dict())
    assert best_state is not None
    model.load_state_dict(best_state)
    return {"dev": best_dev, "test": {name: _accuracy(model, data) for name, data in tests.items()}}


def zero_shot(
    train: Labelled,
    dev: Labelled,
    tests: dict[str, Labelled],
    classes: int,
    settings: ClassifySettings,
) -> dict:
    """Mean test (and dev) accuracy over `settings.runs` seeded runs, with every run kept."""
    for name, data in {"dev": dev, **tests}.items():
        embeddings.check_dimensions(train.x, data.x, "training embeddings", f"{name} embeddings")
    runs = [
        train_and_test(train, dev, tests, classes, settings, settings.seed + run)
        for run in range(settings.runs)
    ]
    return {
        "accuracy": {name: float(np.mean([r["test"][name] for r in runs])) for name in tests},
        "dev": float(np.mean([r["dev"] for r in runs])),
        "runs": runs,
        "seeds": [settings.seed + run for run in range(settings.runs)],
    }


def read_labels(path: Path, rows: int) -> list[str]:
    """One label per line, as many as the embedding rows."""
    labels = [line.strip() for line in read_lines(path, LabelError)]
    if len(labels) != rows:
        raise LabelError(
            f"{path}: {len(labels)} labels but the embeddings have {rows} rows; one label per "
            "embedded document, in the same order"
        )
    for number, label in enumerate(labels, start=1):
        if not label:
            raise LabelError(f"{path}:{number}: empty label")
    return labels


def load_labelled(emb: Path, labels: Path, classes: list[str] | None) -> tuple[Labelled, list[str]]:
    """Embeddings and labels from files; `classes` (from the training set) fixes the indices,
    so a test label never seen in training is an error rather than a silent mismatch."""
    x = embeddings.load(emb)
    names = read_labels(labels, x.shape[0])
    if classes is None:
        classes = sorted(set(names))
        if len(classes) < 2:
            raise LabelError(f"{labels}: one class only ({classes}); nothing to classify")
    index = {name: i for i, name in enumerate(classes)}
    unknown = sorted(set(names) - set(index))
    if unknown:
        raise LabelError(f"{labels}: labels {unknown} do not occur in the training labels")
    return Labelled(x, np.array([index[n] for n in names], dtype=np.int64)), classes
