"""COMET's regression estimator on a tiny checkpoint of COMET's own layout, made here.

The checkpoint is the product's random stand-in (`mlrep.evaluate.comet_stand_in`: its scores
mean nothing), shaped as ``Unbabel/wmt22-comet-da`` is: ``hparams.yaml``,
``checkpoints/model.ckpt`` (a Lightning ``state_dict`` with ``encoder.model.*``,
``layerwise_attention.*`` and ``estimator.ff.*``) and an XLM-R encoder folder named by
``pretrained_model``. The expected scores are computed sentence by sentence,
without padding, from the formula written out below, so batching, padding, pooling, the layer
mix and the order of the features are each checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from mlrep.evaluate import comet, comet_stand_in, mt
from mlrep.evaluate.comet import CometError
from mlrep.evaluate.mt import Protocol

SOURCES = ["the cat sat on the mat", "we meet tomorrow", "猫坐在垫子上。", "今日は良い天気です。"]
HYPOTHESES = ["die Katze saß", "wir treffen uns morgen im Park", "猫在垫子上。", "良い天気です。"]
REFERENCES = ["die Katze saß auf der Matte", "wir sehen uns morgen", "猫坐在门边。", "今日は晴れ。"]
TEXT = SOURCES + HYPOTHESES + REFERENCES


def make_checkpoint(folder: Path, transformation: str = "sparsemax") -> Path:
    """A random COMET-class checkpoint in COMET's layout (the product's stand-in)."""
    return comet_stand_in.write(folder, 0, transformation, TEXT)


def expected(folder: Path, weights: list[float]) -> list[float]:
    """COMET's score of each triple, one unpadded sentence at a time."""
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaModel

    encoder = folder / comet_stand_in.ENCODER
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = XLMRobertaModel(XLMRobertaConfig.from_pretrained(encoder), False).eval()
    state = torch.load(folder / "checkpoints/model.ckpt", weights_only=True)["state_dict"]
    model.load_state_dict(
        {k[len("encoder.model.") :]: v for k, v in state.items() if k.startswith("encoder.")}
    )
    gamma = float(state["layerwise_attention.gamma"])

    def embed(text: str) -> torch.Tensor:
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        layers = model(ids, output_hidden_states=True).hidden_states
        mixed = gamma * sum(w * h[0] for w, h in zip(weights, layers, strict=True))
        return mixed.mean(dim=0)

    def estimate(x: torch.Tensor) -> float:
        for index in (0, 3, 6):
            x = state[f"estimator.ff.{index}.weight"] @ x + state[f"estimator.ff.{index}.bias"]
            x = torch.tanh(x) if index != 6 else x
        return float(x[0])

    scores = []
    with torch.no_grad():
        for s, h, r in zip(SOURCES, HYPOTHESES, REFERENCES, strict=True):
            s, h, r = embed(s), embed(h), embed(r)
            scores.append(estimate(torch.cat((h, r, h * r, (h - r).abs(), h * s, (h - s).abs()))))
    return scores


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("comet-tiny"))


def test_sparsemax_projects_onto_the_simplex():
    out = comet.sparsemax(torch.tensor([0.9, -0.4, 0.5]))
    assert out.tolist() == pytest.approx([0.7, 0.0, 0.3])
    assert comet.sparsemax(torch.tensor([1.0, 1.0])).tolist() == pytest.approx([0.5, 0.5])


def test_scores_follow_comets_estimator(checkpoint):
    scorer = comet.load(str(checkpoint), device="cpu")
    want = expected(checkpoint, [0.7, 0.0, 0.3])
    assert len({round(v, 4) for v in want}) == len(want)  # a discriminating check
    for batch_size in (1, 3, 16):  # padded batches pool over the real tokens only
        got = scorer.score(SOURCES, HYPOTHESES, REFERENCES, batch_size)
        assert got == pytest.approx(want, abs=1e-5)
    swapped = scorer.score(SOURCES, REFERENCES, HYPOTHESES, 16)
    assert swapped != pytest.approx(want, abs=1e-3)


def test_softmax_layer_mix(tmp_path):
    folder = make_checkpoint(tmp_path, "softmax")
    weights = torch.softmax(torch.tensor([0.9, -0.4, 0.5]), dim=0).tolist()
    got = comet.load(str(folder), device="cpu").score(SOURCES, HYPOTHESES, REFERENCES, 16)
    assert got == pytest.approx(expected(folder, weights), abs=1e-5)


def test_protocol_scores_are_the_mean_of_sentence_scores_times_100(checkpoint):
    protocol = Protocol("comet", comet_checkpoint=str(checkpoint))
    scorer = protocol.comet(device="cpu")
    result = mt.score(protocol, HYPOTHESES, REFERENCES, "de", SOURCES, scorer)
    sentences = scorer.score(SOURCES, HYPOTHESES, REFERENCES)
    assert result.kind == "sentence_scores"
    assert result.stats == pytest.approx([100 * v for v in sentences])
    assert result.score == pytest.approx(100 * sum(sentences) / len(sentences))
    assert result.signature.startswith(f"comet:{checkpoint}|encoder:")


def test_a_hub_id_is_downloaded_at_its_pinned_revision(monkeypatch, checkpoint):
    """The same hub-id-or-folder path as BLEURT: the COMET files at the setting's revision."""
    asked = []

    def snapshot_download(repo_id, revision, allow_patterns):
        asked.append((repo_id, revision, allow_patterns))
        return str(checkpoint)

    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    protocol = Protocol("comet", comet_checkpoint="Unbabel/wmt22-comet-da", comet_revision="abc")
    scorer = protocol.comet(device="cpu")
    assert asked == [("Unbabel/wmt22-comet-da", "abc", list(comet.FILES))]
    assert scorer.signature.startswith("comet:Unbabel/wmt22-comet-da@abc|")
    assert scorer.score(SOURCES, HYPOTHESES, REFERENCES) == pytest.approx(
        comet.load(str(checkpoint), device="cpu").score(SOURCES, HYPOTHESES, REFERENCES)
    )


def test_checkpoints_it_cannot_read(tmp_path, checkpoint):
    with pytest.raises(CometError, match="needs hparams"):
        comet.load(str(tmp_path), device="cpu")
    other = tmp_path / "kiwi"
    other.mkdir()
    (other / "checkpoints").mkdir()
    (other / "checkpoints/model.ckpt").write_bytes(b"")
    (other / "hparams.yaml").write_text(
        "class_identifier: unified_metric\nencoder_model: XLM-RoBERTa\n", encoding="utf-8"
    )
    with pytest.raises(CometError, match="only reference-based XLM-R regression"):
        comet.load(str(other), device="cpu")
