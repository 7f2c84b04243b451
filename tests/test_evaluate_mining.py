"""BUCC mining against the naive bucc2018-style reference, a hand case, files and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mlrep.cli import main
from mlrep.evaluate import mining
from tests import evaluate_reference as ref
from tests.test_evaluate_retrieval import angle


def comparable(seed: int, n_src: int = 120, n_tgt: int = 140, parallel: int = 40, dim: int = 24):
    """Two 'comparable corpora': `parallel` noisy translation pairs hidden among unrelated rows."""
    rng = np.random.default_rng(seed)
    src = rng.normal(size=(n_src, dim)).astype(np.float32)
    tgt = rng.normal(size=(n_tgt, dim)).astype(np.float32)
    src_rows = rng.choice(n_src, parallel, replace=False)
    tgt_rows = rng.choice(n_tgt, parallel, replace=False)
    tgt[tgt_rows] = src[src_rows] + 0.9 * rng.normal(size=(parallel, dim))
    src_ids = [f"s{i:04d}" for i in range(n_src)]
    tgt_ids = [f"t{i:04d}" for i in range(n_tgt)]
    gold = {(src_ids[s], tgt_ids[t]) for s, t in zip(src_rows, tgt_rows, strict=True)}
    return mining.Split(src, tgt, src_ids, tgt_ids, gold), set(zip(src_rows, tgt_rows, strict=True))


@pytest.mark.parametrize("block", [16, 1000])
def test_mining_and_oracle_f1_match_the_naive_implementation(block):
    split, gold_rows = comparable(1)
    mined = mining.mine(split.src, split.tgt, k=4, block_size=block)
    want = ref.mine(split.src, split.tgt, 4)
    assert list(zip(mined.src.tolist(), mined.tgt.tolist(), strict=True)) == [
        (s, t) for s, t, _ in want
    ]
    np.testing.assert_allclose(mined.scores, [score for _, _, score in want], rtol=1e-5)
    threshold, scores = mining.best_threshold(mined, split)
    want_f1, want_threshold = ref.oracle_f1(want, {(int(s), int(t)) for s, t in gold_rows})
    assert scores["f1"] == pytest.approx(want_f1)
    assert threshold == pytest.approx(want_threshold, rel=1e-5)
    assert 20 < scores["f1"] < 100, "the data should make mining neither trivial nor hopeless"


def test_threshold_from_training_is_applied_unchanged_to_test():
    train, _ = comparable(2)
    test, test_rows = comparable(3)
    result = mining.evaluate(train, test, k=4)
    threshold = result["threshold"]
    kept = [(s, t) for s, t, score in ref.mine(test.src, test.tgt, 4) if score >= threshold]
    correct = len(set(kept) & {(int(s), int(t)) for s, t in test_rows})
    precision, recall = correct / len(kept), correct / len(test_rows)
    assert result["test"]["f1"] == pytest.approx(200 * precision * recall / (precision + recall))
    assert result["test"]["mined"] == len(kept)
    assert result["train"]["f1"] >= result["test"]["f1"] - 30  # same distribution, no oracle


def test_hand_computed_mining_case():
    # x0 at 0°, x1 at 90°, y0 at 45°, y1 at 0°, k = 2 (see test_evaluate_retrieval):
    # forward x0->y1 (8/(4+√2)), x1->y0 (4/3); backward y0->x1 (4/3), y1->x0 (8/(4+√2)).
    # Greedy keeps (x0, y1) then (x1, y0). Gold {(x0, y1)}: the best cut keeps one pair, F1 100.
    src = np.array([angle(0), angle(90)], dtype=np.float32)
    tgt = np.array([angle(45), angle(0)], dtype=np.float32)
    mined = mining.mine(src, tgt, k=2)
    assert list(zip(mined.src.tolist(), mined.tgt.tolist(), strict=True)) == [(0, 1), (1, 0)]
    np.testing.assert_allclose(mined.scores, [8 / (4 + math.sqrt(2)), 4 / 3], rtol=1e-6)
    split = mining.Split(src, tgt, ["x0", "x1"], ["y0", "y1"], {("x0", "y1")})
    threshold, scores = mining.best_threshold(mined, split)
    assert threshold == pytest.approx(8 / (4 + math.sqrt(2)))
    assert (scores["precision"], scores["recall"], scores["f1"]) == (100.0, 100.0, 100.0)
    low = mining.apply_threshold(mined, split, 1.0)
    assert low["precision"] == 50.0 and low["f1"] == pytest.approx(200 / 3)


def test_equal_scores_are_never_split_by_the_threshold():
    mined = mining.Mined(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([2.0, 1.5, 1.5]))
    ids = ["a", "b", "c"]
    split = mining.Split(np.zeros((3, 2)), np.zeros((3, 2)), ids, ids, {("a", "a"), ("b", "b")})
    threshold, scores = mining.best_threshold(mined, split)
    # Cutting between the two 1.5 pairs would give F1 100 but no threshold can do it; of the
    # real cuts, keeping all three (P 2/3, R 1, F1 0.8) beats keeping one (P 1, R 1/2).
    assert threshold == 1.5 and scores["f1"] == pytest.approx(80.0)


def write_split(folder, split, prefix):
    np.save(folder / f"{prefix}.src.npy", split.src)
    np.save(folder / f"{prefix}.tgt.npy", split.tgt)
    (folder / f"{prefix}.src").write_text("".join(f"{i}\tsentence {i}\n" for i in split.src_ids))
    (folder / f"{prefix}.tgt").write_text("".join(f"{i}\n" for i in split.tgt_ids))
    (folder / f"{prefix}.gold").write_text("".join(f"{s}\t{t}\n" for s, t in sorted(split.gold)))
    return [
        str(folder / f"{prefix}.src.npy"),
        str(folder / f"{prefix}.tgt.npy"),
        str(folder / f"{prefix}.src"),
        str(folder / f"{prefix}.tgt"),
        str(folder / f"{prefix}.gold"),
    ]


def flags(prefix, files):
    names = ("src-emb", "tgt-emb", "src-ids", "tgt-ids", "gold")
    return [
        arg for name, path in zip(names, files, strict=True) for arg in (f"--{prefix}{name}", path)
    ]


def test_cli_matches_the_library(tmp_path, capsys):
    train, _ = comparable(4)
    test, _ = comparable(5)
    argv = ["eval", "bucc", *flags("", write_split(tmp_path, train, "training"))]
    argv += [*flags("test-", write_split(tmp_path, test, "test")), "--out", str(tmp_path / "r")]
    assert main([*argv, "--pairs-out", str(tmp_path / "pairs.tsv")]) == 0
    printed = json.loads(capsys.readouterr().out)
    want = mining.evaluate(train, test)
    assert printed["threshold"] == pytest.approx(want["threshold"])
    assert printed["test"] == pytest.approx(want["test"])
    assert json.loads((tmp_path / "r").read_text()) == printed
    rows = [line.split("\t") for line in (tmp_path / "pairs.tsv").read_text().splitlines()]
    assert len(rows) == printed["test"]["mined"]
    assert sum(int(r[3]) for r in rows) == printed["test"]["correct"]
    assert all((r[0], r[1]) in test.gold for r in rows if r[3] == "1")


def test_bad_mining_files_name_file_and_line(tmp_path, capsys):
    train, _ = comparable(6, n_src=10, n_tgt=10, parallel=3)
    files = write_split(tmp_path, train, "training")
    gold = tmp_path / "training.gold"
    gold.write_text("s0001\tt0002\ns0001 t0003\n")
    assert main(["eval", "bucc", *flags("", files)]) == 2
    assert f"{gold}:2: expected 'source_id<TAB>target_id'" in capsys.readouterr().err
    gold.write_text("s0001\tt9999\n")
    assert main(["eval", "bucc", *flags("", files)]) == 2
    assert f"{gold}:1: pair 's0001'/'t9999' names an id absent" in capsys.readouterr().err
    ids = tmp_path / "training.src"
    ids.write_text("s1\ns2\n")
    assert main(["eval", "bucc", *flags("", files)]) == 2
    assert f"{ids}: 2 ids but the embeddings have 10 rows" in capsys.readouterr().err
    assert main(["eval", "bucc", *flags("", files), "--test-gold", str(gold)]) == 2
    assert "a test split needs all of" in capsys.readouterr().err
