"""SVCCA (Raghu et al., 2017): how similar two sets of representations of the same sentences are.

Appendix E.1 compares, per encoder layer, the mean-pooled states of the same content fed in as
English (en→xx) and as language xx (xx→en): a language-agnostic encoder makes them similar.
SVCCA first drops each view's low-variance directions (SVD, keeping `variance` of it; noise
directions would otherwise be matched by chance), then runs CCA between the two reduced views and
averages the canonical correlations.

CCA over n sentences is only meaningful when n is well above the kept dimensions: with
k_a + k_b >= n - 1 the two subspaces of the (n - 1)-dimensional centred sample space must
intersect and correlations of 1 appear by construction. That case is an error, not a number.
"""

from __future__ import annotations

import numpy as np

from mlrep.errors import MlrepError
from mlrep.evaluate.states import States

DEFAULT_VARIANCE = 0.99
GROUPS = ("direction", "pooled")


class SvccaError(MlrepError):
    """The two views cannot be compared (different sentences, too few of them)."""


def mean_pool(states: np.ndarray, sentence_of_rows: np.ndarray, n_sentences: int) -> np.ndarray:
    """[n_sentences, d] means of each sentence's rows; a sentence without rows is an error."""
    counts = np.bincount(sentence_of_rows, minlength=n_sentences)
    if (counts == 0).any():
        raise SvccaError(
            f"sentence {int(np.flatnonzero(counts == 0)[0])} has no rows to pool "
            f"({int((counts == 0).sum())} sentences without any)"
        )
    sums = np.zeros((n_sentences, states.shape[1]), dtype=np.float64)
    np.add.at(sums, sentence_of_rows, states)
    return sums / counts[:, None]


def svd_reduce(view: np.ndarray, variance: float) -> np.ndarray:
    """The centred view projected on its fewest top singular directions holding `variance`."""
    centred = view - view.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    energy = s**2
    if energy.sum() == 0:
        raise SvccaError("a view is constant across sentences: SVCCA is undefined")
    keep = int(np.searchsorted(np.cumsum(energy) / energy.sum(), variance) + 1)
    keep = min(keep, int((s > s[0] * 1e-10).sum()))
    return u[:, :keep] * s[:keep]


def cca_correlations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Canonical correlations of two views [n, k_a], [n, k_b], largest first.

    The cosines of the principal angles between the column spaces of the centred views: the
    singular values of Q_a^T Q_b for orthonormal bases Q from a thin QR decomposition.
    """
    qa, _ = np.linalg.qr(a - a.mean(axis=0))
    qb, _ = np.linalg.qr(b - b.mean(axis=0))
    return np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0.0, 1.0)


def svcca(
    a: np.ndarray, b: np.ndarray, variance: float = DEFAULT_VARIANCE
) -> tuple[float, int, int]:
    """(mean canonical correlation, k_a, k_b) of two views of the same n sentences."""
    if a.shape[0] != b.shape[0]:
        raise SvccaError(f"the views have {a.shape[0]} and {b.shape[0]} sentences")
    reduced_a, reduced_b = svd_reduce(a, variance), svd_reduce(b, variance)
    k_a, k_b = reduced_a.shape[1], reduced_b.shape[1]
    if k_a + k_b >= a.shape[0] - 1:
        raise SvccaError(
            f"{a.shape[0]} sentences for {k_a} + {k_b} kept dimensions: CCA would find "
            f"correlations of 1 by construction; give at least {k_a + k_b + 2} sentences "
            "(many more for a stable estimate) or lower --variance"
        )
    return float(cca_correlations(reduced_a, reduced_b).mean()), k_a, k_b


def _directions(states: States) -> np.ndarray:
    return np.char.add(np.char.add(states.src_lang, "-"), states.tgt_lang)


def encoder_svcca(
    a: States, b: States, variance: float = DEFAULT_VARIANCE, groups: str = "direction"
) -> dict:
    """Per encoder layer SVCCA between `a` and `b`, averaged over the direction groups of `a`.

    Sentence i of `a` and of `b` must be the same content (e.g. a = en→xx, b = xx→en inputs).
    ``groups="direction"`` (the thesis: averaged over direction pairs) compares each direction
    of `a` on its own; ``"pooled"`` compares all sentences at once, for test sets too small per
    direction for the kept dimensions (the `tiny` scale). Returns ``{"svcca": [...],
    "pairs": {"en-de|de-en": [...]}, "dims": {...}, "n_sentences": {...}}``.
    """
    if groups not in GROUPS:
        raise SvccaError(f"--groups {groups!r}: choose one of {', '.join(GROUPS)}")
    if a.n_sentences != b.n_sentences:
        raise SvccaError(
            f"{a.path} has {a.n_sentences} sentences but {b.path} has {b.n_sentences}: "
            "row i of both must be the same sentence"
        )
    if a.n_encoder_layers != b.n_encoder_layers:
        raise SvccaError(
            f"{a.path} has {a.n_encoder_layers} encoder layers but {b.path} has "
            f"{b.n_encoder_layers}"
        )
    dir_a, dir_b = _directions(a), _directions(b)
    keys = dir_a if groups == "direction" else np.full(len(dir_a), "+".join(np.unique(dir_a)))
    members_of = {}
    for key in np.unique(keys):
        members = np.flatnonzero(keys == key)
        members_of[f"{key}|{'+'.join(np.unique(dir_b[members]))}"] = members
    pairs: dict[str, list[float]] = {name: [] for name in members_of}
    dims: dict[str, list[list[int]]] = {name: [] for name in members_of}
    for layer in range(1, a.n_encoder_layers + 1):
        try:
            pooled_a = mean_pool(a.layer(layer), a.sentence_of_rows(layer), a.n_sentences)
            pooled_b = mean_pool(b.layer(layer), b.sentence_of_rows(layer), b.n_sentences)
        except SvccaError as exc:
            raise SvccaError(f"{a.path} vs {b.path}, layer_{layer}: {exc}") from None
        for name, members in members_of.items():
            try:
                value, k_a, k_b = svcca(pooled_a[members], pooled_b[members], variance)
            except SvccaError as exc:
                raise SvccaError(f"{a.path} vs {b.path}, layer_{layer}, {name}: {exc}") from None
            pairs[name].append(value)
            dims[name].append([k_a, k_b])
    means = [float(np.mean([v[i] for v in pairs.values()])) for i in range(a.n_encoder_layers)]
    return {
        "svcca": means,
        "pairs": pairs,
        "dims": dims,
        "n_sentences": {name: len(members) for name, members in members_of.items()},
        "variance": variance,
        "groups": groups,
    }
