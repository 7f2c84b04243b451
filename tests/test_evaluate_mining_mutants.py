"""Mining details the main tests leave open, each against the naive bucc2018-style reference, a
hand count or the documented rule: the mutants of `mlrep.evaluate.mining` that
benchmarks/mutation.py found surviving.

Defaults (ratio margin, k = 4), ties in the greedy selection, the scores of empty and
pair-less selections, thresholds that keep the pairs scoring exactly at them, the BUCC-style
split of a parallel corpus, and file errors that name file, line and fix.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlrep.evaluate import embeddings, mining
from tests import evaluate_reference as ref
from tests.test_evaluate_mining import comparable


def _pairs(mined: mining.Mined) -> list[tuple[int, int]]:
    return list(zip(mined.src.tolist(), mined.tgt.tolist(), strict=True))


def test_the_defaults_are_the_ratio_margin_over_four_neighbours():
    split, gold_rows = comparable(11)
    want = ref.mine(split.src, split.tgt, 4)
    assert [(s, t) for s, t, _ in want] != [(s, t) for s, t, _ in ref.mine(split.src, split.tgt, 5)]
    assert _pairs(mining.mine(split.src, split.tgt)) == [(s, t) for s, t, _ in want]
    result = mining.evaluate(split)
    want_f1, want_threshold = ref.oracle_f1(want, {(int(s), int(t)) for s, t in gold_rows})
    assert (result["margin"], result["k"]) == ("ratio", 4)
    assert result["train"]["f1"] == pytest.approx(want_f1)
    assert result["threshold"] == pytest.approx(want_threshold, rel=1e-5)
    # without a test split, the pairs listed are the training pairs kept at the threshold
    kept = [(split.src_ids[s], split.tgt_ids[t]) for s, t, score in want if score >= want_threshold]
    assert [(s, t) for s, t, _, _ in result["pairs"]] == kept


def test_equal_scores_keep_forward_proposals_first():
    # few distinct scores among many proposals: only a stable sort keeps the documented order
    rng = np.random.default_rng(0)
    n = 40
    fwd_tgt, bwd_src = rng.permutation(n), rng.permutation(n)
    fwd_score = rng.integers(0, 3, n).astype(float)
    bwd_score = rng.integers(0, 3, n).astype(float)
    mined = mining.select(fwd_tgt, fwd_score, bwd_src, bwd_score)
    want = ref.greedy(fwd_tgt, fwd_score, bwd_src, bwd_score)
    assert _pairs(mined) == [(s, t) for s, t, _ in want]
    np.testing.assert_array_equal(mined.scores, [score for _, _, score in want])


def test_nothing_to_mine_scores_zero_with_an_unreachable_threshold():
    empty = np.array([], dtype=np.int64)
    mined = mining.select(empty, np.array([]), empty, np.array([]))
    assert len(mined.src) == len(mined.tgt) == len(mined.scores) == 0
    split = mining.Split(np.zeros((0, 2)), np.zeros((0, 2)), [], [], {("a", "b"), ("c", "d")})
    threshold, scores = mining.best_threshold(mined, split)
    assert threshold == float("inf")
    assert scores == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "mined": 0,
        "correct": 0,
        "gold": 2,
    }


def _split(gold: set[tuple[str, str]]) -> mining.Split:
    ids = ["a", "b", "c"]
    return mining.Split(np.zeros((3, 2)), np.zeros((3, 2)), ids, ids, gold)


MINED = mining.Mined(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([3.0, 2.0, 1.0]))


def test_one_mined_pair_sets_the_threshold_at_its_score():
    one = mining.Mined(np.array([0]), np.array([0]), np.array([0.7]))
    threshold, scores = mining.best_threshold(one, _split({("a", "a"), ("b", "b")}))
    assert threshold == 0.7
    assert (scores["precision"], scores["recall"]) == (100.0, 50.0)
    assert scores["f1"] == pytest.approx(200 / 3)


def test_scores_by_hand_when_some_kept_pairs_are_wrong():
    # gold a-a and c-b: keeping all three pairs finds one of two (P 1/3, R 1/2, F1 0.4)
    split = _split({("a", "a"), ("c", "b")})
    scores = mining.apply_threshold(MINED, split, 1.0)
    assert scores["precision"] == pytest.approx(100 / 3)
    assert scores["recall"] == 50.0 and scores["f1"] == pytest.approx(40.0)
    assert (scores["mined"], scores["correct"], scores["gold"]) == (3, 1, 2)


def test_no_pair_kept_or_none_right_scores_zero():
    split = _split({("a", "b")})
    nothing = mining.apply_threshold(MINED, split, 5.0)
    assert (nothing["precision"], nothing["recall"], nothing["f1"], nothing["mined"]) == (
        0,
        0,
        0,
        0,
    )
    wrong = mining.apply_threshold(MINED, split, 1.0)
    assert (wrong["precision"], wrong["f1"], wrong["mined"]) == (0.0, 0.0, 3)


def test_the_best_threshold_keeps_the_pair_scoring_exactly_at_it():
    split, _ = comparable(12)
    mined = mining.mine(split.src, split.tgt)
    threshold, best = mining.best_threshold(mined, split)
    assert mining.apply_threshold(mined, split, threshold) == best
    pairs = mining.kept_pairs(mined, split, threshold)
    assert len(pairs) == best["mined"] and pairs[-1][2] == pytest.approx(threshold)
    assert sum(hit for *_, hit in pairs) == best["correct"]


def test_mining_names_the_side_with_the_wrong_dimension():
    with pytest.raises(
        embeddings.EmbeddingError, match="source embeddings has dimension 3 but target embeddings"
    ):
        mining.mine(np.ones((2, 3), dtype=np.float32), np.ones((2, 4), dtype=np.float32))


def test_load_split_names_the_files_with_the_wrong_dimension(tmp_path):
    src, tgt = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(src, np.ones((2, 3), dtype=np.float32))
    np.save(tgt, np.ones((2, 4), dtype=np.float32))
    ids = tmp_path / "ids"
    ids.write_text("x\ny\n")
    with pytest.raises(embeddings.EmbeddingError, match=f"{src} has dimension 3 but {tgt} has 4"):
        mining.load_split(src, tgt, ids, ids, tmp_path / "gold")


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 1.5])
def test_hide_gold_needs_a_fraction_strictly_inside_zero_and_one(fraction):
    with pytest.raises(mining.MiningError, match=f"strictly between 0 and 1, got {fraction}"):
        mining.hide_gold(10, fraction, seed=1)


@pytest.mark.parametrize(("rows", "fraction", "gold"), [(10, 0.3, 3), (10, 0.01, 1), (7, 0.5, 4)])
def test_hide_gold_splits_every_row_into_gold_or_one_side(rows, fraction, gold):
    src, tgt = mining.hide_gold(rows, fraction, seed=5)
    assert len(np.intersect1d(src, tgt)) == gold  # at least one gold pair, however small
    assert sorted(set(src) | set(tgt)) == list(range(rows))
    assert len(src) - len(tgt) in (0, 1)  # the others alternate, the source side first
    assert list(src) == sorted(src) and list(tgt) == sorted(tgt)


def test_hide_gold_is_reproducible_by_its_seed():
    draws = [mining.hide_gold(50, 0.2, seed=7) for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(*draws, strict=True))
    others = {tuple(mining.hide_gold(50, 0.2, seed=s)[0]) for s in range(3)}
    assert len(others) == 3


def test_ids_are_the_text_before_the_first_tab(tmp_path):
    path = tmp_path / "ids"
    path.write_text("doc 1\tfirst sentence\ns2\tsecond\twith a tab\ns3\n")
    assert mining.read_ids(path, 3) == ["doc 1", "s2", "s3"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s1\ns2\ns1\n", ":3: duplicate id 's1'; every sentence needs its own id"),
        ("s1\n\tno id\ns3\n", ":2: empty id; every sentence needs its own id"),
    ],
)
def test_bad_ids_name_file_line_and_problem(tmp_path, text, message):
    path = tmp_path / "ids"
    path.write_text(text)
    with pytest.raises(mining.MiningError, match=f"{path}{message}"):
        mining.read_ids(path, 3)


def test_an_id_count_that_is_not_the_row_count_says_what_to_embed(tmp_path):
    path = tmp_path / "ids"
    path.write_text("s1\ns2\n")
    with pytest.raises(
        mining.MiningError,
        match="2 ids but the embeddings have 3 rows; embed exactly the sentences of this "
        "file, in its order",
    ):
        mining.read_ids(path, 3)


def test_invalid_utf8_in_ids_or_gold_is_a_mining_error(tmp_path):
    path = tmp_path / "bad"
    path.write_bytes(b"s1\n\xff\n")
    with pytest.raises(mining.MiningError, match=f"{path}:2"):
        mining.read_ids(path, 2)
    with pytest.raises(mining.MiningError, match=f"{path}:2"):
        mining.read_gold(path, ["s1"], ["t1"])


def test_gold_pairs_after_a_blank_line_count(tmp_path):
    path = tmp_path / "gold"
    path.write_text("s1\tt1\n\ns2\tt2\n")
    assert mining.read_gold(path, ["s1", "s2"], ["t1", "t2"]) == {("s1", "t1"), ("s2", "t2")}


def test_gold_errors_say_how_to_fix_them(tmp_path):
    path = tmp_path / "gold"
    path.write_text("s1\tt9\n")
    with pytest.raises(
        mining.MiningError,
        match="names an id absent from the sentence files; use the gold file of the same "
        "split and language pair",
    ):
        mining.read_gold(path, ["s1"], ["t1"])
    path.write_text("\n")
    with pytest.raises(
        mining.MiningError, match=f"{path}: no gold pairs; recall is undefined without them"
    ):
        mining.read_gold(path, ["s1"], ["t1"])
