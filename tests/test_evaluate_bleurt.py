"""BLEURT through transformers, checked against bleurt-pytorch on a checkpoint it wrote.

tests/fixtures/bleurt-tiny is a random BLEURT-20-shaped model saved by bleurt-pytorch's
`BleurtForSequenceClassification` (the class of the hub's lucadiliello/BLEURT-* ports) with
the scores bleurt-pytorch's own tokenizer and model gave (tests/fixtures/make_bleurt_tiny.py).
"""

from __future__ import annotations

import json
import shutil

import pytest

from mlrep import cli
from mlrep.device import Devices
from mlrep.evaluate import bleurt
from mlrep.evaluate.bleurt import BleurtError
from tests.conftest import REPO
from tests.device_helpers import FakeCuda

CHECKPOINT = REPO / "tests/fixtures/bleurt-tiny"
EXPECTED = json.loads((CHECKPOINT / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scorer() -> bleurt.Bleurt:
    return bleurt.load(str(CHECKPOINT), device="cpu")


def test_scores_equal_bleurt_pytorch_on_its_own_checkpoint(scorer):
    references, candidates = EXPECTED["references"], EXPECTED["candidates"]
    for batch_size in (1, 2, 64):  # padding and length-sorted batches change nothing
        scores = scorer.score(references, candidates, batch_size)
        assert scores == pytest.approx(EXPECTED["scores"], abs=1e-5)
    assert len(set(EXPECTED["scores"])) == len(EXPECTED["scores"])  # a discriminating check


def test_the_model_and_its_batches_go_to_the_jobs_gpu(monkeypatch):
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(bleurt, "visible", lambda: Devices(1))
    scorer = bleurt.load(str(CHECKPOINT))
    assert scorer.device == "cuda" and gpu.modules == ["RemBertForSequenceClassification"]
    scores = scorer.score(EXPECTED["references"], EXPECTED["candidates"], 2)
    assert scores == pytest.approx(EXPECTED["scores"], abs=1e-5)
    batches = -(-len(EXPECTED["references"]) // 2)
    assert gpu.tensors == 3 * batches  # ids, segments and mask of every batch


def test_pairs_are_bleurts_segments_trimmed_longest_first(scorer):
    reference, candidate = (EXPECTED[k][3] for k in ("references", "candidates"))
    pieces = [len(scorer.pieces.encode(text)) for text in (reference, candidate)]
    assert pieces[0] == 12 and pieces[1] > 2 * pieces[0]
    ids, segments = scorer.encode(reference, candidate)
    assert len(ids) == scorer.max_length == 24
    assert ids[0] == scorer.cls and ids.count(scorer.sep) == 2 and ids[-1] == scorer.sep
    first = segments.index(1)
    assert ids[first - 1] == scorer.sep and set(segments[:first]) == {0}
    # the longer side loses pieces until both are even, then they alternate: 11 + 10 = 24 - 3
    assert (first - 2, len(ids) - first - 1) == (11, 10)


def test_a_hub_id_is_downloaded_then_loaded_the_same_way(monkeypatch):
    asked = {}

    def snapshot_download(repo_id, revision, allow_patterns):
        asked.update(repo_id=repo_id, revision=revision, patterns=allow_patterns)
        return str(CHECKPOINT)

    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    loaded = bleurt.load("lucadiliello/BLEURT-20", device="cpu")
    assert asked == {
        "repo_id": "lucadiliello/BLEURT-20",
        "revision": None,
        "patterns": list(bleurt.FILES),
    }
    assert loaded.score(["a cat"], ["a cat"]) == pytest.approx(
        bleurt.load(str(CHECKPOINT), device="cpu").score(["a cat"], ["a cat"])
    )


def test_checkpoints_outside_the_bleurt_20_family_are_refused(tmp_path):
    wordpiece = tmp_path / "bleurt-base-512"
    shutil.copytree(CHECKPOINT, wordpiece)
    (wordpiece / "spm.model").unlink()
    with pytest.raises(BleurtError, match="WordPiece BLEURT checkpoints"):
        bleurt.load(str(wordpiece), device="cpu")
    bert = tmp_path / "bert"
    shutil.copytree(CHECKPOINT, bert)
    config = json.loads((bert / "config.json").read_text()) | {"model_type": "bert"}
    (bert / "config.json").write_text(json.dumps(config))
    with pytest.raises(BleurtError, match="model_type 'bert'"):
        bleurt.load(str(bert), device="cpu")


def test_nmt_bleurt_scores_each_direction_and_reaches_metrics_json(tmp_path, scorer):
    """score → bleurt → metrics on hypotheses of a supervised and a zero-shot direction."""
    data, hyp = tmp_path / "data", tmp_path / "hyp"
    (data / "text").mkdir(parents=True)
    hyp.mkdir()
    stats = {"languages": ["de", "en", "fr"], "n_zero": 2, "n_supervised": 4, "s_train": 1}
    (data / "text/stats.json").write_text(json.dumps(stats))
    sides = {
        "en-de": (["the cat sat", "we meet"], ["der Hund schläft", "der Hund"]),
        "de-fr": (["der Hund", "der Hund schläft"], ["le chat dort", "le chat"]),
    }
    hypotheses = {"en-de": ["der Hund", "der Hund schläft"], "de-fr": ["le chat", "le canapé"]}
    for name, (src, tgt) in sides.items():
        a, b = name.split("-")
        (data / f"text/test.{name}.{a}").write_text("".join(x + "\n" for x in src))
        (data / f"text/test.{name}.{b}").write_text("".join(x + "\n" for x in tgt))
        (hyp / f"{name}.hyp").write_text("".join(x + "\n" for x in hypotheses[name]))
    common = [
        "--scale",
        "full",
        "--section",
        "ch8_layernorm",
        "--data",
        str(data),
        "--hyp",
        str(hyp),
    ]
    assert cli.main(["nmt", "score", *common, "--out", str(tmp_path / "scores.json")]) == 0
    args = ["nmt", "bleurt", *common, "--out", str(tmp_path / "bleurt.json")]
    assert cli.main([*args, "--checkpoint", str(CHECKPOINT), "--batch-size", "3"]) == 0
    result = json.loads((tmp_path / "bleurt.json").read_text())
    for name, (_, refs) in sides.items():
        expected = 100 * sum(scorer.score(refs, hypotheses[name])) / 2
        assert result["metrics"][f"bleurt_{name}"] == pytest.approx(expected, abs=1e-3)
    assert result["metrics"]["zst_bleurt"] == result["metrics"]["bleurt_de-fr"]
    assert result["metrics"]["sup_bleurt"] == result["metrics"]["bleurt_en-de"]
    out = tmp_path / "seed1/metrics.json"
    metrics = ["nmt", "metrics", "--scale", "full", "--section", "ch8_layernorm"]
    metrics += ["--scores", str(tmp_path / "scores.json")]
    metrics += ["--data", str(data), "--hyp", str(hyp), "--run", "opus/pivot", "--seed", "1"]
    metrics += ["--out", str(out)]
    assert cli.main([*metrics, "--bleurt", str(tmp_path / "bleurt.json")]) == 0
    written = json.loads(out.read_text())
    doc = written["metrics"]
    assert doc["zst_bleurt"] == result["metrics"]["zst_bleurt"] and "zst_bleu" in doc
    # each mean's sentences, direction by direction, for the claims ledger's bootstrap
    groups = {
        "sup_bleu": [["en-de", 2]],
        "from_en_bleu": [["en-de", 2]],
        "zst_bleu": [["de-fr", 2]],
    }
    groups["zst_off_target"] = [["de-fr", 2]]
    # the copy-the-source floors' sentences lie where the system's do
    assert written["groups"] == {**groups, **{f"floor_{k}": v for k, v in groups.items()}}
    empty = ["--checkpoint", "", "--batch-size", "3"]
    assert cli.main([*args, *empty]) == 2  # "" means BLEURT is not run at this scale
