"""Retrieval P@1 / xSIM / margin scores against the naive reference and hand-computed cases,
plus the `mlrep eval retrieval` command and its errors on bad embedding files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mlrep.cli import main
from mlrep.evaluate import embeddings, retrieval, search
from tests import evaluate_reference as ref
from tests.test_evaluate_search import tied_vectors

KEYS = ("p_at_1_src2tgt", "p_at_1_tgt2src", "p_at_1", "xsim_error")


def noisy_pairs(seed: int, n: int = 150, dim: int = 32, noise: float = 1.6):
    rng = np.random.default_rng(seed)
    src = rng.normal(size=(n, dim)).astype(np.float32)
    return src, (src + noise * rng.normal(size=(n, dim))).astype(np.float32)


@pytest.mark.parametrize("margin", [None, "absolute", "ratio", "distance"])
def test_random_data_agrees_with_the_naive_implementation(margin):
    src, tgt = noisy_pairs(1)
    got = retrieval.evaluate(src, tgt, margin, k=4, block_size=37)
    want = ref.retrieval(src, tgt, margin, 4)
    for key in KEYS:
        assert got[key] == pytest.approx(want[key]), key
    assert 5 < got["p_at_1"] < 95, "the data should make retrieval neither trivial nor hopeless"
    assert got["n"] == 150 and got["margin"] == (margin or "absolute")


@pytest.mark.parametrize("margin", ["absolute", "ratio", "distance"])
def test_exact_ties_are_resolved_like_the_naive_implementation(margin):
    rng = np.random.default_rng(7)
    src = tied_vectors(rng, 60)
    tgt = src.copy()
    tgt[::3] = tied_vectors(rng, 20)  # every third target is unrelated; many equal scores
    got = retrieval.evaluate(src, tgt, margin, k=4, block_size=16)
    want = ref.retrieval(src, tgt, margin, 4)
    for key in KEYS:
        assert got[key] == pytest.approx(want[key]), key


def test_hand_computed_cosine_case():
    # src x0=(1,0) x1=(0,1) x2=(1,1); tgt y0=(1,0) y1=(1,1) y2=(0,1).
    # x0 -> y0 (cos 1, right); x1 -> y2 (cos 1, wrong); x2 -> y1 (cos 1, wrong): 1/3.
    # y0 -> x0 (right); y1 -> x2 (wrong); y2 -> x1 (wrong): 1/3.
    src = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    tgt = np.array([[1, 0], [1, 1], [0, 1]], dtype=np.float32)
    got = retrieval.evaluate(src, tgt)
    assert got["p_at_1_src2tgt"] == pytest.approx(100 / 3)
    assert got["p_at_1_tgt2src"] == pytest.approx(100 / 3)
    assert got["xsim_error"] == pytest.approx(200 / 3)


def angle(degrees: float) -> list[float]:
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees))]


def test_hand_computed_margin_scores():
    # x0 at 0°, x1 at 90°; y0 at 45°, y1 at 0°; k = 2 (every candidate).
    # cos: x0y0 = √2/2, x0y1 = 1, x1y0 = √2/2, x1y1 = 0.
    # mean x0 = (√2/2 + 1)/2, mean x1 = √2/4, mean y0 = √2/2, mean y1 = 1/2.
    # ratio x0y1 = 1 / ((√2/2 + 1)/2 + 1/2)/2 = 8 / (4 + √2); x0y0 = (√2/2) / m(x0, y0) < that.
    # ratio x1y0 = (√2/2) / ((√2/4 + √2/2)/2) = 4/3;  distance x1y0 = √2/2 - 3√2/8 = √2/8.
    src = np.array([angle(0), angle(90)], dtype=np.float32)
    tgt = np.array([angle(45), angle(0)], dtype=np.float32)
    forward, backward = search.mutual_knn(src, tgt, 2)
    picks, scores = retrieval.best_candidates(forward, backward, "ratio")
    assert picks.tolist() == [1, 0]
    np.testing.assert_allclose(scores, [8 / (4 + math.sqrt(2)), 4 / 3], rtol=1e-6)
    picks, scores = retrieval.best_candidates(forward, backward, "distance")
    np.testing.assert_allclose(scores, [1 - (2 + math.sqrt(2) / 2) / 4, math.sqrt(2) / 8], 1e-6)
    assert retrieval.evaluate(src, tgt, "ratio", k=2)["xsim_error"] == 100.0


def test_textual_xsim_forgives_identical_duplicates(tmp_path, capsys):
    # Targets 0 and 2 are the same sentence with the same embedding; source 2 retrieves
    # target 0 (lower index): an index error, but not a textual one.
    src = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0]], dtype=np.float32)
    tgt = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0]], dtype=np.float32)
    text = ["Tom left.", "Who knows?", "Tom left."]
    assert retrieval.evaluate(src, tgt)["xsim_error"] == pytest.approx(100 / 3)
    textual = retrieval.evaluate(src, tgt, tgt_text=text)
    assert textual["xsim_error"] == 0.0 and textual["xsim_textual"] is True
    assert textual["p_at_1_src2tgt"] == pytest.approx(200 / 3)
    with pytest.raises(embeddings.EmbeddingError, match="2 target sentences for 3"):
        retrieval.evaluate(src, tgt, tgt_text=text[:2])
    a, b = save(tmp_path / "a.npy", src), save(tmp_path / "b.npy", tgt)
    (tmp_path / "b.txt").write_text("\n".join(text) + "\n")
    argv = ["eval", "retrieval", "--src-emb", str(a), "--tgt-emb", str(b)]
    assert main([*argv, "--tgt-text", str(tmp_path / "b.txt")]) == 0
    assert json.loads(capsys.readouterr().out)["xsim_error"] == 0.0


def test_margin_names_are_checked():
    with pytest.raises(embeddings.EmbeddingError, match="unknown margin 'cosine'"):
        retrieval.check_margin("cosine")


def save(path, array):
    np.save(path, array)
    return path


def test_cli_prints_and_writes_the_json(tmp_path, capsys):
    src, tgt = noisy_pairs(2, n=40)
    a, b = save(tmp_path / "a.npy", src), save(tmp_path / "b.npy", tgt.astype(np.float16))
    out = tmp_path / "out" / "retrieval.json"
    argv = ["eval", "retrieval", "--src-emb", str(a), "--tgt-emb", str(b)]
    argv += ["--margin", "ratio", "--k", "4", "--block-size", "16", "--out", str(out)]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    want = ref.retrieval(src, tgt.astype(np.float16).astype(np.float32), "ratio", 4)
    for key in KEYS:
        assert printed[key] == pytest.approx(want[key])
    assert printed["n"] == 40


def test_cli_reads_missing_options_from_the_params_file(tmp_path, capsys):
    src, tgt = noisy_pairs(3, n=30)
    a, b = save(tmp_path / "a.npy", src), save(tmp_path / "b.npy", tgt)
    assert main(["eval", "retrieval", "--src-emb", str(a), "--tgt-emb", str(b)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["margin"] == "absolute" and printed["k"] == 4


@pytest.mark.parametrize(
    ("name", "array", "message"),
    [
        ("nan.npy", np.array([[0.0, 1.0], [np.nan, 1.0]], np.float32), r"row 1 .*NaN"),
        ("empty.npy", np.zeros((0, 4), np.float32), "empty embedding matrix"),
        ("flat.npy", np.zeros(4, np.float32), "expected a 2-D matrix"),
        ("ints.npy", np.zeros((2, 2), np.int64), "dtype int64"),
    ],
)
def test_bad_embedding_files_are_named_in_the_error(tmp_path, capsys, name, array, message):
    good = save(tmp_path / "good.npy", np.ones((2, 2), np.float32))
    bad = save(tmp_path / name, array)
    with pytest.raises(embeddings.EmbeddingError, match=message) as info:
        embeddings.load(bad)
    assert str(bad) in str(info.value)
    assert main(["eval", "retrieval", "--src-emb", str(bad), "--tgt-emb", str(good)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_other_formats_empty_files_and_mismatches_are_clear_errors(tmp_path, capsys):
    text = tmp_path / "vectors.txt"
    text.write_text("0.1 0.2\n")
    with pytest.raises(embeddings.EmbeddingError, match=r"vectors.txt: .*must be a .npy file"):
        embeddings.load(text)
    zero = tmp_path / "zero.npy"
    zero.write_bytes(b"")
    with pytest.raises(embeddings.EmbeddingError, match=r"zero.npy: not a readable .npy"):
        embeddings.load(zero)
    a = save(tmp_path / "a.npy", np.ones((3, 4), np.float32))
    b = save(tmp_path / "b.npy", np.ones((3, 5), np.float32))
    c = save(tmp_path / "c.npy", np.ones((2, 4), np.float32))
    assert main(["eval", "retrieval", "--src-emb", str(a), "--tgt-emb", str(b)]) == 2
    assert "a.npy has dimension 4 but" in capsys.readouterr().err
    assert main(["eval", "retrieval", "--src-emb", str(a), "--tgt-emb", str(c)]) == 2
    assert "has 3 rows but" in capsys.readouterr().err


def test_chance_is_one_over_the_candidates_and_hits_are_each_querys():
    """The floor of a P@1: a random pick among n candidates; the hits, src->tgt queries then
    tgt->src, are the naive argmax's, and their mean is the P@1."""
    src, tgt = noisy_pairs(3, n=40)
    got = retrieval.evaluate(src, tgt)
    assert got["chance"] == pytest.approx(100 / 40) == retrieval.chance(40)
    sim = ref.cosine(src, tgt)
    naive = [int(np.argmax(row) == i) for i, row in enumerate(sim)]
    naive += [int(np.argmax(column) == j) for j, column in enumerate(sim.T)]
    assert got["hits"] == naive and 0 < sum(naive) < 80
    assert 100 * np.mean(got["hits"]) == pytest.approx(got["p_at_1"])
    with pytest.raises(embeddings.EmbeddingError, match="at least one candidate"):
        retrieval.chance(0)
