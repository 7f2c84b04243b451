"""Retrieval details the main tests leave open, each against the naive reference or a hand
count: the mutants of `mlrep.evaluate.retrieval` that benchmarks/mutation.py found surviving.

Plain cosine scores, LASER's default k = 4, textual xSIM as a percentage, and errors that
name the side at fault.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlrep.evaluate import embeddings, retrieval, search
from tests import evaluate_reference as ref
from tests.test_evaluate_retrieval import KEYS, noisy_pairs


def test_absolute_scores_are_the_plain_cosine():
    src, tgt = noisy_pairs(2, n=40)
    forward, backward = search.mutual_knn(src, tgt, 4)
    picks, scores = retrieval.best_candidates(forward, backward, "absolute")
    want_picks, want_scores = ref.best(ref.cosine(src, tgt), None, 4)
    assert picks.tolist() == want_picks.tolist()
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5)


def test_margin_scores_without_the_backward_neighbours_are_refused():
    src, tgt = noisy_pairs(2, n=10)
    forward, _ = search.mutual_knn(src, tgt, 4, backward=False)
    with pytest.raises(AssertionError, match=r"^margin scores need the backward neighbours$"):
        retrieval.best_candidates(forward, None, "ratio")


@pytest.mark.parametrize("margin", ["ratio", "distance"])
def test_the_default_k_is_lasers_four(margin):
    src, tgt = noisy_pairs(3)
    want = ref.retrieval(src, tgt, margin, 4)
    other = ref.retrieval(src, tgt, margin, 5)
    assert any(want[key] != other[key] for key in KEYS), "k should matter on this data"
    got = retrieval.evaluate(src, tgt, margin)
    for key in KEYS:
        assert got[key] == pytest.approx(want[key]), key
    assert got["k"] == 4
    sim = ref.cosine(src, tgt)
    src2tgt, tgt2src = retrieval.predict(src, tgt, margin)
    assert src2tgt.tolist() == ref.best(sim, margin, 4)[0].tolist()
    assert tgt2src.tolist() == ref.best(sim.T, margin, 4)[0].tolist()


def test_textual_xsim_of_distinct_sentences_is_the_index_error_in_percent():
    src, tgt = noisy_pairs(4, n=60)
    text = [f"sentence {i}" for i in range(60)]  # no duplicates: every index error counts
    got = retrieval.evaluate(src, tgt, tgt_text=text)
    want = ref.retrieval(src, tgt, None, 4)["xsim_error"]
    assert 5 < want < 95
    assert got["xsim_error"] == pytest.approx(want)


def test_misaligned_embeddings_name_both_sides():
    with pytest.raises(
        embeddings.EmbeddingError, match="source embeddings has 3 rows but target embeddings has 2"
    ):
        retrieval.evaluate(np.eye(3, 4, dtype=np.float32), np.eye(2, 4, dtype=np.float32))


def test_target_sentences_are_counted_against_target_rows():
    # three rows of eight dimensions: the sentence count is compared with the rows
    src = tgt = np.eye(3, 8, dtype=np.float32)
    text = ["a", "b", "c"]
    assert retrieval.evaluate(src, tgt, tgt_text=text)["xsim_error"] == 0.0
    with pytest.raises(
        embeddings.EmbeddingError,
        match="2 target sentences for 3 target embeddings; give the sentences that were "
        "embedded, in order",
    ):
        retrieval.evaluate(src, tgt, tgt_text=text[:2])
