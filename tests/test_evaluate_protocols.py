"""Tatoeba (on a look-alike in LASER's layout), Flores many-to-many and pooled retrieval."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from mlrep.cli import main
from mlrep.evaluate import protocols, retrieval
from tests.evaluate_reference import best, cosine


def trigram_encoder(sentences: list[str]) -> np.ndarray:
    """A real (if weak) encoder: hashed character-trigram counts. Names, numbers and cognates
    give translations shared trigrams, so retrieval is far above chance but not perfect."""
    out = np.zeros((len(sentences), 1024), dtype=np.float32)
    for row, sentence in enumerate(sentences):
        text = f"  {sentence.lower()} "
        for i in range(len(text) - 2):
            out[row, zlib.crc32(text[i : i + 3].encode()) % 1024] += 1
    return out


def write_tatoeba(folder, lang, xx_lines, eng_lines):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"test.{lang}-eng.{lang}").write_text("\n".join(xx_lines) + "\n")
    (folder / f"test.{lang}-eng.eng").write_text("\n".join(eng_lines) + "\n")


def test_tatoeba_languages_are_scored_both_ways_and_averaged(tmp_path, tatoeba_raw):
    folder = tmp_path / "laser_tatoeba_v1"
    for lang in ("deu", "nld"):
        raw = {side: tatoeba_raw / f"tatoeba.{lang}-eng.{side}" for side in (lang, "eng")}
        write_tatoeba(
            folder,
            lang,
            raw[lang].read_text("utf-8").splitlines(),
            raw["eng"].read_text("utf-8").splitlines(),
        )
    result = protocols.tatoeba(trigram_encoder, folder)
    assert sorted(result["languages"]) == ["deu", "nld"] and result["n_languages"] == 2
    for lang, scores in result["languages"].items():
        lines = (folder / f"test.{lang}-eng.{lang}").read_text("utf-8").splitlines()
        eng = (folder / f"test.{lang}-eng.eng").read_text("utf-8").splitlines()
        want = retrieval.evaluate(trigram_encoder(lines), trigram_encoder(eng))
        assert scores == want
        assert scores["n"] == 1000 and 5 < scores["p_at_1"] < 95  # chance: 0.1
    mean = np.mean([r["p_at_1"] for r in result["languages"].values()])
    assert result["average"] == pytest.approx(mean)


def test_identical_sides_retrieve_perfectly_and_bad_folders_are_named(tmp_path):
    lines = [f"sentence number {i} about {w}" for i, w in enumerate("abcdefghij" * 3)]
    write_tatoeba(tmp_path, "xxx", lines, lines)
    result = protocols.tatoeba(trigram_encoder, tmp_path)
    assert result["languages"]["xxx"]["p_at_1"] == 100.0
    assert protocols.tatoeba(trigram_encoder, tmp_path, limit=7)["languages"]["xxx"]["n"] == 7
    with pytest.raises(protocols.BenchmarkError, match=r"test.yyy-eng.yyy: not found"):
        protocols.tatoeba(trigram_encoder, tmp_path, ["yyy"])
    with pytest.raises(protocols.BenchmarkError, match="one row per sentence"):
        protocols.tatoeba(lambda s: np.zeros((1, 4), np.float32), tmp_path)
    with pytest.raises(protocols.BenchmarkError, match=r"no test.<xx>-eng.eng files"):
        protocols.tatoeba(trigram_encoder, tmp_path / "missing")
    (tmp_path / "test.xxx-eng.eng").write_text("")
    with pytest.raises(protocols.BenchmarkError, match=r"test.xxx-eng.eng: empty file"):
        protocols.tatoeba(trigram_encoder, tmp_path)


def test_flores_many_to_many_scores_every_ordered_pair(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(60, 16))
    vectors = {
        lang: (base + noise * rng.normal(size=base.shape)).astype(np.float32)
        for lang, noise in (("afr", 0.5), ("gug", 1.0), ("hye", 1.5))
    }
    result = protocols.many_to_many(vectors)
    assert result["n_pairs"] == 6
    for pair, value in result["pairs"].items():
        a, b = pair.split("-")
        picks, _ = best(cosine(vectors[a], vectors[b]), None, 4)
        assert value == pytest.approx(100 * np.mean(picks == np.arange(60))), pair
    assert result["average"] == pytest.approx(np.mean(list(result["pairs"].values())))
    assert result["pairs"]["afr-gug"] > result["pairs"]["gug-hye"]  # less noise, easier

    lines = [f"line {i} {'xyz' * (i % 5)}" for i in range(20)]
    for lang in ("afr", "gug"):
        (tmp_path / f"devtest.multiway.{lang}").write_text("\n".join(lines) + "\n")
    flores = protocols.flores(trigram_encoder, tmp_path, ["afr", "gug"])
    assert flores["pairs"] == {"afr-gug": 100.0, "gug-afr": 100.0}
    with pytest.raises(protocols.BenchmarkError, match=r"devtest.multiway.hye: not found"):
        protocols.flores(trigram_encoder, tmp_path, ["afr", "hye"])


def test_pool_puts_each_gold_among_distractors_and_scores_with_the_margin(tmp_path, capsys):
    rng = np.random.default_rng(1)
    tgt = rng.normal(size=(400, 16)).astype(np.float32)
    src = (tgt + 1.3 * rng.normal(size=tgt.shape)).astype(np.float32)
    result = protocols.pool(src, tgt, queries=50, candidates=300, seed=3, margin="ratio", k=4)
    # The same draw by hand, scored by the naive reference.
    draw = np.random.default_rng(3)
    rows = draw.permutation(400)[:300]
    position = draw.permutation(300)
    pool_rows = np.empty(300, dtype=np.int64)
    pool_rows[position] = rows
    picks, _ = best(cosine(src[rows[:50]], tgt[pool_rows]), "ratio", 4)
    assert result["p_at_1"] == pytest.approx(100 * np.mean(picks == position[:50]))
    assert 10 < result["p_at_1"] < 95
    with pytest.raises(protocols.BenchmarkError, match="candidates \\(500\\) <= aligned pairs"):
        protocols.pool(src, tgt, queries=50, candidates=500, seed=3)

    np.save(tmp_path / "x.npy", src)
    np.save(tmp_path / "en.npy", tgt)
    argv = ["eval", "paracrawl", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb"]
    argv += [str(tmp_path / "en.npy"), "--queries", "50", "--candidates", "300", "--seed", "3"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["p_at_1"] == result["p_at_1"] and printed["margin"] == "ratio"
