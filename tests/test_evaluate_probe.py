"""Layer-wise language recognition probes and the states file they read."""

import json

import numpy as np
import pytest

from mlrep.cli import main
from mlrep.device import Devices
from mlrep.evaluate import probe as probe_module
from mlrep.evaluate.probe import ProbeError, ProbeSettings, _batches, direction_accuracy, probe
from mlrep.evaluate.states import StatesFileError, open_states, write_states
from tests.device_helpers import FakeCuda
from tests.states_helpers import (
    carries_both,
    carries_src,
    carries_tgt,
    noise,
    write_synthetic,
)

ENCODER = [carries_src, noise]
DECODER = [carries_tgt, carries_both]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("states")
    train = write_synthetic(folder / "valid.npz", ENCODER, DECODER, per_direction=40, seed=1)
    test = write_synthetic(folder / "test.npz", ENCODER, DECODER, per_direction=15, seed=2)
    return train, test


def run(train, test, **settings):
    a, b = open_states(train), open_states(test)
    try:
        return probe(a, b, ProbeSettings(**settings))
    finally:
        a.close()
        b.close()


def test_probe_finds_the_layers_that_carry_each_language(files):
    result = run(*files, epochs=3, seed=1)
    src, tgt = result["src"], result["tgt"]
    assert len(src) == len(tgt) == 4
    # layer 1 (encoder): source language only; given the source, the target is one of two
    assert src[0] > 95 and tgt[0] < 65
    # layer 2: noise; chance is 1 in 3
    assert src[1] < 60 and tgt[1] < 60
    # layer 3 (decoder): target only; layer 4: both
    assert tgt[2] > 95 and src[2] < 65
    assert src[3] > 95 and tgt[3] > 95
    assert result["languages"] == {"src": ["de", "en", "fr"], "tgt": ["de", "en", "fr"]}
    assert sorted(result["directions"]) == ["de-en", "de-fr", "en-de", "en-fr", "fr-de", "fr-en"]
    # encoder and decoder layers have their own token counts
    assert result["n_test_tokens"][0] == result["n_test_tokens"][1] != result["n_test_tokens"][2]
    assert result["n_encoder_layers"] == 2  # layers 3-4 are the decoder's (metric names)


def test_probe_is_deterministic_per_seed(files):
    first = run(*files, epochs=1, seed=7)
    assert run(*files, epochs=1, seed=7) == first


def test_probes_train_and_predict_on_the_jobs_gpu(files, monkeypatch):
    on_cpu = run(*files, epochs=2)
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(probe_module, "visible", lambda: Devices(1))
    assert run(*files, epochs=2) == on_cpu
    # one classifier per layer and side; each moves its features, labels and batches
    assert gpu.modules == ["Linear"] * 4 * 2
    assert gpu.tensors > 4 * 2 * 3


def test_accuracy_is_the_mean_over_directions_not_over_tokens():
    correct = np.array([True, False, True, True])
    rows = np.array([0, 0, 1, 2])
    per = direction_accuracy(correct, rows, np.array(["a-b", "a-b", "b-a"]))
    assert per == {"a-b": pytest.approx(200 / 3), "b-a": 100.0}
    # the probe reports the mean of these (83.3), not the token mean (75)


def test_batches_hold_whole_sentences_and_cover_every_row():
    rows = np.array([2, 0, 1, 2, 0, 3, 3, 3, 1])
    batches = _batches(rows, 4, 3, np.random.default_rng(0))
    assert [len(np.unique(rows[b])) for b in batches] == [3, 1]
    assert sorted(np.concatenate(batches)) == list(range(len(rows)))


def test_unknown_test_language_is_an_error(tmp_path, files):
    odd = write_synthetic(
        tmp_path / "odd.npz", ENCODER, DECODER, 0, seed=3, src_lang=["ja"] * 5, tgt_lang=["en"] * 5
    )
    with pytest.raises(ProbeError, match=r"odd.npz: src_lang \['ja'\] never occur"):
        run(files[0], odd)


def test_cli_writes_the_contract_json(tmp_path, files, capsys):
    out = tmp_path / "llr.json"
    args = ["eval", "probe", "--train", str(files[0]), "--test", str(files[1])]
    assert main([*args, "--epochs", "1", "--seed", "3", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"src": written["src"], "tgt": written["tgt"]}
    assert all(0 <= v <= 100 for v in written["src"] + written["tgt"])
    assert written["settings"]["batch_sentences"] == 64


def _arrays(**override):
    base = {
        "layer_1": np.zeros((3, 2), np.float32),
        "layer_2": np.zeros((2, 2), np.float32),
        "n_encoder_layers": np.int64(1),
        "sentence": np.array([0, 0, 1]),
        "decoder_sentence": np.array([0, 1]),
        "src_lang": np.array(["de", "en"]),
        "tgt_lang": np.array(["en", "de"]),
    }
    base.update(override)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"src_lang": None}, "missing key src_lang"),
        (
            {"layer_3": np.zeros((2, 2), np.float32), "layer_2": None},
            r"without gaps, found \[1, 3\]",
        ),
        ({"decoder_sentence": None}, "missing key decoder_sentence"),
        ({"sentence": np.array([0, 5, 1])}, "outside 0..1"),
        ({"n_encoder_layers": np.int64(4)}, "n_encoder_layers is 4 but the file has 2 layers"),
        ({"tgt_lang": np.array([1, 2])}, "tgt_lang must be a 1-d unicode array"),
    ],
)
def test_states_file_errors_name_file_and_key(tmp_path, override, message):
    path = tmp_path / "bad.npz"
    np.savez(path, **_arrays(**override))
    with pytest.raises(StatesFileError, match=f"bad.npz: .*{message}|bad.npz: {message}"):
        open_states(path)


def test_layer_rows_must_match_their_sentence_index(tmp_path):
    path = tmp_path / "rows.npz"
    np.savez(path, **_arrays(layer_2=np.zeros((5, 2), np.float32)))
    states = open_states(path)
    assert states.layer(1).shape == (3, 2)
    with pytest.raises(StatesFileError, match="layer_2 has 5 rows but decoder_sentence has 2"):
        states.layer(2)
    states.close()


def test_an_empty_hypothesis_adds_no_tokens_and_its_direction_may_be_missing(tmp_path, files):
    path = tmp_path / "empty.npz"
    rng = np.random.default_rng(0)
    layers = [rng.normal(size=(4, 16)), rng.normal(size=(1, 16))]
    # sentence 1 (fr-de) has source tokens but an empty hypothesis: no decoder rows
    write_states(path, layers, 1, np.array([0, 0, 1, 1]), ["de", "fr"], ["en", "de"], np.array([0]))
    train = write_synthetic(tmp_path / "train.npz", [noise], [noise], 5, seed=1)
    result = run(train, path, epochs=1)
    assert result["directions"]["fr-de"]["src"][1] is None
    assert result["src"][1] == result["directions"]["de-en"]["src"][1]
    # no hypothesis at all: the decoder layer has no value, the encoder layer still has one
    write_states(
        path,
        [layers[0], layers[1][:0]],
        1,
        np.array([0, 0, 1, 1]),
        ["de", "fr"],
        ["en", "de"],
        np.array([], dtype=np.int64),
    )
    result = run(train, path, epochs=1)
    assert result["src"][1] is None and result["tgt"][1] is None
    assert result["src"][0] is not None and result["n_test_tokens"] == [4, 0]


def test_write_states_round_trips(tmp_path):
    path = tmp_path / "s.npz"
    write_states(path, [np.ones((2, 3))], 1, np.array([0, 1]), ["en", "de"], ["de", "en"])
    states = open_states(path)
    assert states.n_layers == states.n_encoder_layers == 1 and states.n_sentences == 2
    assert states.layer(1).dtype == np.float32 and list(states.tgt_lang) == ["de", "en"]
    states.close()


@pytest.mark.parametrize("command", [[], ["off-target"], ["probe"], ["svcca"]])
def test_help_renders(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["eval", *command, "--help"])
    assert exit_.value.code == 0 and "usage: mlrep eval" in capsys.readouterr().out
