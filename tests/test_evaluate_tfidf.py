"""The character n-gram TF-IDF baseline against a naive scikit-learn cosine argmax, through
the Tatoeba protocol every trained encoder goes through."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from mlrep.evaluate import embeddings, protocols, retrieval
from mlrep.evaluate.tfidf import CharTfidf

PAIRS = 200


def naive_p_at_1(xx: list[str], eng: list[str]) -> float:
    """TF-IDF fitted on both sides, full cosine matrix, argmax both ways (first index on ties)."""
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3)).fit(xx + eng)
    a, b = vectorizer.transform(xx).toarray(), vectorizer.transform(eng).toarray()
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    sim = a @ b.T
    forward = np.mean(sim.argmax(axis=1) == np.arange(len(xx)))
    backward = np.mean(sim.argmax(axis=0) == np.arange(len(eng)))
    return 100 * (forward + backward) / 2


@pytest.mark.parametrize("lang", ["deu", "nld"])
def test_tatoeba_p_at_1_is_the_naive_tfidf_retrieval(tatoeba_raw, tmp_path, lang):
    raw = {side: tatoeba_raw / f"tatoeba.{lang}-eng.{side}" for side in (lang, "eng")}
    lines = {side: path.read_text("utf-8").splitlines()[:PAIRS] for side, path in raw.items()}
    (tmp_path / f"test.{lang}-eng.{lang}").write_text("\n".join(lines[lang]) + "\n", "utf-8")
    (tmp_path / f"test.{lang}-eng.eng").write_text("\n".join(lines["eng"]) + "\n", "utf-8")
    result = protocols.tatoeba(CharTfidf(), tmp_path)["languages"][lang]
    expected = naive_p_at_1(lines[lang], lines["eng"])
    assert result["p_at_1"] == pytest.approx(expected)
    # far above chance (0.5), far from perfect: string overlap, not translation
    assert result["chance"] == retrieval.chance(PAIRS) and 10 < result["p_at_1"] < 90


def test_vectors_are_unit_length_in_one_space_for_both_sides():
    encode = CharTfidf()
    xx, eng = ["Tom kaufte 3 Äpfel.", "Maria sah das Haus."], ["Tom bought 3 apples.", "Mary"]
    protocols.fit(encode, [xx, eng])
    a, b = encode(xx), encode(eng)
    assert a.dtype == np.float32 and a.shape[1] == b.shape[1]
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    assert float(a[0] @ b[0]) > float(a[0] @ b[1])  # the shared name and number


def test_encoding_before_fitting_is_an_error():
    with pytest.raises(embeddings.EmbeddingError, match="fit it"):
        CharTfidf()(["a sentence"])


def test_chapter_2_scores_the_baseline_as_a_run_with_its_floors(tatoeba_raw, tmp_path, capsys):
    """`mlrep ch2 tfidf`: the protocol's numbers under the run char-tfidf, chance beside them."""
    import json

    from mlrep.cli import main

    lines = {
        side: (tatoeba_raw / f"tatoeba.deu-eng.{side}").read_text("utf-8").splitlines()[:50]
        for side in ("deu", "eng")
    }
    folder = tmp_path / "tatoeba"
    folder.mkdir()
    for side, found in lines.items():
        (folder / f"test.deu-eng.{side}").write_text("\n".join(found) + "\n", "utf-8")
    settings = json.dumps(
        {"benchmarks": {}, "evaluate": {"tfidf": {"ngram_min": 1, "ngram_max": 3}}}
    )
    out = tmp_path / "char-tfidf" / "seed0" / "metrics.json"
    args = ["ch2", "tfidf", "--tatoeba", str(folder), "--settings", settings, "--no-benchmarks"]
    args += ["--data-root", str(tmp_path), "--out", str(out), "--scale", "tiny"]
    assert main([*args, "--encode-batch-size", "8", "--tatoeba-pairs", "0"]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert (doc["run"], doc["seed"], doc["retriever"]["ngram_max"]) == ("char-tfidf", 0, 3)
    assert doc["metrics"]["tatoeba_deu"] == pytest.approx(naive_p_at_1(lines["deu"], lines["eng"]))
    assert doc["metrics"]["floor_tatoeba_deu"] == pytest.approx(100 / 50)
    assert len(doc["sentence_scores"]["tatoeba_deu"]) == 100
