"""Chapter 2's evaluation of a trained encoder against a naive reference: every sentence encoded
alone (no length sorting, no padding, no batches) and P@1 by full cosine matrices, so a row
that lands in another sentence's place, a wrong metric name or a mixed-up direction shows."""

import dataclasses

import numpy as np
import pytest
import torch

from mlrep.embed import data, evaluate, train
from tests import evaluate_reference
from tests.test_embed_train import config, prepared, settings  # noqa: F401

BATCH_SIZES = (1, 3, 8, 64)  # one sentence, batches that do not divide the set, one batch


@pytest.fixture(scope="module")
def model(prepared, tmp_path_factory):  # noqa: F811
    """An encoder trained far enough that retrieval is neither at chance nor perfect."""
    out, info = prepared
    pairs = data.PairArrays.load(out / "train.npz")
    folder = tmp_path_factory.mktemp("encoder")
    train.run(config(info), dataclasses.replace(settings(100), lr=1e-2), pairs, None, folder)
    return train.load_model(folder / train.MODEL_FILE)


def one_by_one(model, ids: list[list[int]]) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return np.stack([model.embed(torch.tensor([row]))[0].numpy() for row in ids])


def sentences(prepared, lang: str) -> tuple[list[str], list[str]]:  # noqa: F811
    """The raw test sentences of en-`lang`: (English, the other side)."""
    corpus = prepared[0].parent / "corpus"
    sides = [(corpus / f"test.en-{lang}.{side}").read_text().splitlines() for side in ("en", lang)]
    return sides[0], sides[1]


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_batched_encoding_gives_each_sentence_its_own_embedding(prepared, model, batch_size):  # noqa: F811
    out, _ = prepared
    tokenizer = data.Tokenizer(out / "spm.model", True, 12)
    english, other = sentences(prepared, "xx")
    text = english + other
    lengths = [len(ids) for ids in tokenizer.ids(text)]
    assert lengths != sorted(lengths)  # length sorting moves rows: they must come back
    model.train()  # as a model fresh from training: encoding must turn dropout off
    batched = evaluate.encoder(model, tokenizer, batch_size)(text)
    assert batched.dtype == np.float32 and batched.shape == (len(text), model.config.dim)
    np.testing.assert_allclose(batched, one_by_one(model, tokenizer.ids(text)), atol=1e-5)


def test_held_out_p_at_1_is_the_naive_retrieval_of_each_language(prepared, model):  # noqa: F811
    out, info = prepared
    test = data.PairArrays.load(out / "test.npz")
    found = evaluate.heldout(model, test, info["languages"], 3)
    scores = {k: v for k, v in found.metrics.items() if not k.startswith("floor_")}
    assert set(scores) == {"heldout_xx", "heldout_yy", "heldout_avg"}
    chance = {}
    for index, lang in enumerate(info["languages"]):
        rows = np.flatnonzero(test.tgt_lang == index)
        if not len(rows):
            continue
        src = [test.src_tokens[test.src_offsets[r] : test.src_offsets[r + 1]] for r in rows]
        tgt = [test.tgt_tokens[test.tgt_offsets[r] : test.tgt_offsets[r + 1]] for r in rows]
        expected = evaluate_reference.retrieval(
            one_by_one(model, [t.tolist() for t in tgt]),
            one_by_one(model, [s.tolist() for s in src]),
            None,
            1,
        )["p_at_1"]
        assert scores[f"heldout_{lang}"] == pytest.approx(expected)
        # the floor: a random pick among this language's candidates, each query's hit
        name, chance[lang] = f"heldout_{lang}", 100 / len(rows)
        assert found.metrics[f"floor_{name}"] == pytest.approx(chance[lang])
        hits = found.sentence_scores[name]
        assert len(hits) == 2 * len(rows) and set(hits) <= {0.0, 100.0}
        assert np.mean(hits) == pytest.approx(expected)
        assert found.sentence_scores[f"floor_{name}"] == [pytest.approx(chance[lang])] * len(hits)
    assert 10 < scores["heldout_avg"] < 100  # neither chance nor perfect: order matters
    assert scores["heldout_avg"] == pytest.approx((scores["heldout_xx"] + scores["heldout_yy"]) / 2)
    assert found.metrics["floor_heldout_avg"] == pytest.approx(np.mean(list(chance.values())))
    assert found.groups["heldout_avg"] == [(f"heldout_{k}", 2 * 100 / v) for k, v in chance.items()]


def test_tatoeba_names_each_language_and_scores_it_as_the_reference(prepared, model, tmp_path):  # noqa: F811
    out, _ = prepared
    tokenizer = data.Tokenizer(out / "spm.model", True, 12)
    expected = {}
    for lang in ("xx", "yy"):
        english, other = sentences(prepared, lang)
        (tmp_path / f"test.{lang}-eng.{lang}").write_text("\n".join(other) + "\n")
        (tmp_path / f"test.{lang}-eng.eng").write_text("\n".join(english) + "\n")
        src = one_by_one(model, tokenizer.ids(other[:15]))
        tgt = one_by_one(model, tokenizer.ids(english[:15]))
        expected[f"tatoeba_{lang}"] = evaluate_reference.retrieval(src, tgt, None, 1)["p_at_1"]
    scores = evaluate.tatoeba(evaluate.encoder(model, tokenizer, 4), tmp_path, limit=15)
    floors = {f"floor_{name}": 100 / 15 for name in expected}  # chance: 1 of 15 candidates
    assert scores.metrics == pytest.approx(expected | floors)
