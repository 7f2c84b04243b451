"""Layer-wise language recognition (LLR): how much each layer's states say about the language.

Chapter 8 (§8.4.2) trains, for every layer, two token-level linear classifiers (d → #languages)
on the states of the supervised validation sets: one predicts the sentence's source language,
one its target language. They are tested on supervised and on zero-shot test states; a layer
whose states still carry the source language in zero-shot directions is what the thesis blames
for off-target output. The thesis gives 3 epochs, lr 1e-3 and batches of 64 sentences; Adam is
our assumption (the optimizer is not stated). Each layer's states go to the job's device
(`mlrep.device`) once: at full scale a layer holds hundreds of thousands of token rows.

Token accuracy is averaged over the test file's directions (each direction weighs the same, as
the thesis averages over directions), so a large direction cannot hide a small one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlrep.device import visible
from mlrep.errors import MlrepError
from mlrep.evaluate.states import States

SIDES = ("src", "tgt")


class ProbeError(MlrepError):
    """Train and test states cannot be probed together (layers, width or languages differ)."""


@dataclass(frozen=True)
class ProbeSettings:
    epochs: int = 3
    lr: float = 1e-3
    batch_sentences: int = 64
    seed: int = 1


def _languages(states: States, side: str) -> np.ndarray:
    return states.src_lang if side == "src" else states.tgt_lang


def _batches(sentence_of_rows: np.ndarray, n_sentences: int, size: int, rng) -> list[np.ndarray]:
    """Row indices of each batch of `size` sentences, in a seeded random sentence order."""
    order = np.argsort(sentence_of_rows, kind="stable")
    bounds = np.searchsorted(sentence_of_rows[order], np.arange(n_sentences + 1))
    rows_of = [order[bounds[i] : bounds[i + 1]] for i in range(n_sentences)]
    sentences = rng.permutation(n_sentences)
    return [
        np.concatenate([rows_of[s] for s in sentences[i : i + size]])
        for i in range(0, n_sentences, size)
    ]


def train_classifier(
    features: np.ndarray,
    labels: np.ndarray,
    sentence_of_rows: np.ndarray,
    n_classes: int,
    settings: ProbeSettings,
) -> Callable[[np.ndarray], np.ndarray]:
    """A linear softmax classifier trained with Adam; returns a function rows → predicted class.

    Weights start at zero and the batch order is drawn from `settings.seed` alone, so the same
    inputs give the same classifier whatever was trained before it in the process.
    """
    import torch

    device = visible().device
    model = torch.nn.Linear(features.shape[1], n_classes)
    with torch.no_grad():  # the loss is convex: start from zero, not from a random guess
        model.weight.zero_()
        model.bias.zero_()
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(device)
    y = torch.from_numpy(labels.astype(np.int64)).to(device)
    rng = np.random.default_rng(settings.seed)
    n_sentences = int(sentence_of_rows.max()) + 1
    for _ in range(settings.epochs):
        for rows in _batches(sentence_of_rows, n_sentences, settings.batch_sentences, rng):
            if not len(rows):  # sentences whose hypotheses were empty: nothing to learn from
                continue
            index = torch.from_numpy(rows).to(device)
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[index]), y[index])
            loss.backward()
            optimizer.step()

    def predict(rows: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32)).to(device)
            return model(x).argmax(dim=1).cpu().numpy()

    return predict


def direction_accuracy(
    correct: np.ndarray, sentence_of_rows: np.ndarray, directions: np.ndarray
) -> dict[str, float]:
    """Token accuracy (%) per direction label, from per-row correctness."""
    row_direction = directions[sentence_of_rows]
    return {
        str(d): 100.0 * float(correct[row_direction == d].mean()) for d in np.unique(row_direction)
    }


def _check_pair(train: States, test: States) -> None:
    if train.n_layers != test.n_layers or train.n_encoder_layers != test.n_encoder_layers:
        raise ProbeError(
            f"{train.path} has {train.n_layers} layers ({train.n_encoder_layers} encoder) but "
            f"{test.path} has {test.n_layers} ({test.n_encoder_layers}): states of one model"
        )
    for side in SIDES:
        unknown = sorted(map(str, set(_languages(test, side)) - set(_languages(train, side))))
        if unknown:
            raise ProbeError(
                f"{test.path}: {side}_lang {unknown} never occur in {train.path}'s {side}_lang: "
                "a classifier cannot predict a language it was not trained on"
            )


def probe(train: States, test: States, settings: ProbeSettings) -> dict:
    """Per-layer source/target language accuracy (%) on `test` of probes trained on `train`.

    Returns ``{"src": [...], "tgt": [...], "directions": {dir: {"src": [...], "tgt": [...]}},
    "languages": {...}, "n_train_tokens": [...], "n_test_tokens": [...],
    "n_encoder_layers": E}``; lists run over layers 1..K, the encoder's E first. A sentence
    without rows (an empty hypothesis, at decoder layers) adds no tokens; a direction without
    tokens at a layer is None there and left out of that layer's mean; a layer without tokens
    in either file (an untrained model whose outputs are all empty) is None, not a failure of
    the whole run.
    """
    _check_pair(train, test)
    directions = np.char.add(np.char.add(test.src_lang, "-"), test.tgt_lang)
    out: dict = {side: [] for side in SIDES}
    per_direction: dict[str, dict[str, list[float | None]]] = {
        str(d): {side: [] for side in SIDES} for d in np.unique(directions)
    }
    n_train, n_test = [], []
    for layer in range(1, train.n_layers + 1):
        x_train, x_test = train.layer(layer), test.layer(layer)
        if x_train.shape[1] != x_test.shape[1]:
            raise ProbeError(
                f"layer_{layer} is {x_train.shape[1]}-d in {train.path} but "
                f"{x_test.shape[1]}-d in {test.path}"
            )
        train_rows, test_rows = train.sentence_of_rows(layer), test.sentence_of_rows(layer)
        n_train.append(len(x_train))
        n_test.append(len(x_test))
        if not (len(x_train) and len(x_test)):  # every hypothesis empty: nothing to probe
            for side in SIDES:
                out[side].append(None)
                for values in per_direction.values():
                    values[side].append(None)
            continue
        for side in SIDES:
            names = sorted(set(_languages(train, side)))
            code = {name: i for i, name in enumerate(names)}
            sentence_labels = np.array([code[n] for n in _languages(train, side)])
            predict = train_classifier(
                x_train, sentence_labels[train_rows], train_rows, len(names), settings
            )
            truth = np.array([code[n] for n in _languages(test, side)])[test_rows]
            accuracy = direction_accuracy(predict(x_test) == truth, test_rows, directions)
            out[side].append(float(np.mean(list(accuracy.values()))))
            for direction, values in per_direction.items():
                values[side].append(accuracy.get(direction))
    out["directions"] = per_direction
    out["languages"] = {side: sorted(set(_languages(train, side))) for side in SIDES}
    out["n_train_tokens"], out["n_test_tokens"] = n_train, n_test
    out["n_encoder_layers"] = train.n_encoder_layers
    return out
