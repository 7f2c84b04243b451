"""Training, decoding, scoring and states with real fairseq runs on a tiny real dataset:
learning, determinism per seed, resume after a preemption signal, the batch trap, pivot
decoding."""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch

from mlrep.device import Devices
from mlrep.evaluate.mt import sacrebleu_tokenizer
from mlrep.evaluate.states import open_states
from mlrep.io import read_lines
from mlrep.nmt import decode as decode_module
from mlrep.nmt import valid_log
from mlrep.nmt.data import directions
from mlrep.nmt.decode import DecodeError, Translator
from mlrep.nmt.score import score
from mlrep.nmt.states import write_all
from mlrep.nmt.train import BEST, LAST, SUMMARY
from mlrep.nmt.translate import translate
from mlrep.train.signals import EXIT_PREEMPTED
from tests.device_helpers import FakeCuda
from tests.learning import assert_improves, assert_loss_falls
from tests.nmt_helpers import (  # noqa: F401
    BEAM,
    ENV,
    LANGUAGES,
    ONE_BATCH_TOKENS,
    TEST_LINES,
    UPDATES,
    corpus,
    encoded,
    fairseq_losses,
    one_batch,
    prepared,
    run,
    settings,
    train_command,
)

pytestmark = [pytest.mark.network, pytest.mark.slow]  # pinned wheels; real fairseq training

LOG = "fairseq.log"  # a run's stderr, where fairseq logs its losses


@pytest.fixture(scope="module")
def runs(prepared, tmp_path_factory):  # noqa: F811
    """The same system and seed trained twice from scratch."""
    root = tmp_path_factory.mktemp("nmt-runs")
    out = []
    for name in ("a", "b"):
        result = run(train_command(prepared, root / name))
        assert result.returncode == 0, result.stderr[-3000:]
        (root / name / LOG).write_text(result.stderr)
        out.append(root / name)
    return out


def parameters(checkpoint: Path) -> dict[str, torch.Tensor]:
    return torch.load(checkpoint, map_location="cpu", weights_only=False)["model"]


def decode(prepared: Path, model: Path, out: Path, pivot: bool = False) -> Translator:  # noqa: F811
    translator = Translator(model / BEST, prepared / "s-enc-t-dec/bin", "s-enc-t-dec")
    translate(translator, prepared, out, BEAM, pivot=pivot)
    return translator


def test_training_overfits_a_fixed_batch(one_batch, tmp_path):  # noqa: F811
    s = settings(max_update=40, save_interval_updates=40)
    s = dataclasses.replace(s, lr=0.01, max_tokens=ONE_BATCH_TOKENS)  # an epoch: one update
    result = run(train_command(one_batch, tmp_path, s=s))
    assert result.returncode == 0, result.stderr[-3000:]
    losses = fairseq_losses(result.stderr, "train")
    assert len(losses) == 40  # one logged epoch per update
    # measured: first-5 mean 8.05, last-5 mean 3.03 (ratio 0.38); lr 0: flat
    assert_loss_falls(losses, window=5, below=0.6)


def test_validation_loss_falls_during_training(runs):
    # BLEU needs about 1,000 updates; the loss on the valid split moves within 16. fairseq
    # validates every save_interval_updates (4), so its first validation stands in for the
    # untrained model's. The run folder's validation log has every one, as fairseq logged it.
    rows = valid_log.read(runs[0] / valid_log.VALID_LOG)
    every = settings().save_interval_updates
    assert [(r["subset"], r["updates"]) for r in rows] == [
        ("valid", u) for u in range(every, UPDATES + 1, every)
    ]
    losses = [r["loss"] for r in rows]
    assert losses == fairseq_losses((runs[0] / LOG).read_text(), "valid")
    assert json.loads((runs[0] / SUMMARY).read_text())["best_valid_loss"] == min(losses)
    # measured: 9.66 after 4 updates, 8.79 after 16
    assert_improves(losses[-1], losses[0], by=0.4, higher_is_better=False, what="validation loss")


def test_same_seed_gives_identical_model_and_bleu(runs, prepared, tmp_path):  # noqa: F811
    a, b = runs
    summary = json.loads((a / SUMMARY).read_text())
    assert summary["updates"] == UPDATES
    # the CPU: one process, the batch of the one-device reference (tiny: gpus 1)
    assert summary["gpus_visible"] == 0
    assert summary["batch"] == {
        "reference_devices": 1,
        "reference_per_device": 512,
        "world_size": 1,
        "update_freq": 1,
        "per_device": 512,
        "reference": 512,
        "effective": 512,
    }
    pa, pb = parameters(a / LAST), parameters(b / LAST)
    assert pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)
    scores = []
    for run_dir in runs:
        decode(prepared, run_dir, tmp_path / run_dir.name)
        scores.append(score(tmp_path / run_dir.name, prepared / "text", directions(LANGUAGES)))
    assert scores[0]["metrics"] == scores[1]["metrics"]
    assert set(scores[0]["metrics"]) >= {"zst_bleu", "sup_bleu", "bleu_it-nl", "bleu_en-ro"}
    assert len(scores[0]["bleu_stats"]["zst_bleu"]) == 6 * TEST_LINES
    signature = scores[0]["directions"]["en-it"]["signature"]
    assert "tok:13a" in signature and sacrebleu_tokenizer("zh") == "zh"


def test_every_test_line_gets_a_hypothesis_when_batches_do_not_divide(runs, prepared, tmp_path):  # noqa: F811
    decode(prepared, runs[0], tmp_path)
    for d in directions(LANGUAGES):
        assert len(read_lines(tmp_path / f"{d.name}.hyp", ValueError)) == TEST_LINES
        assert len(read_lines(tmp_path / f"{d.name}.sub", ValueError)) == TEST_LINES


def test_a_rerun_on_changed_settings_never_resumes_the_old_checkpoints(runs, prepared, tmp_path):  # noqa: F811
    out = tmp_path / "rerun"
    shutil.copytree(runs[0], out)
    changed = dataclasses.replace(settings(max_update=UPDATES), lr=0.001)
    refused = run(train_command(prepared, out, s=changed))  # by hand: refused, nothing lost
    assert refused.returncode != 0
    assert "its checkpoints were trained on other settings" in refused.stderr
    assert "--on-stale restart" in refused.stderr
    kept, old = parameters(out / LAST), parameters(runs[0] / LAST)
    assert all(torch.equal(kept[k], old[k]) for k in old)

    restarted = run([*train_command(prepared, out, s=changed), "--on-stale", "restart"])
    assert restarted.returncode == 0, restarted.stderr[-3000:]
    summary = json.loads((out / SUMMARY).read_text())
    assert not summary["resumed"] and summary["updates"] == UPDATES
    fresh = run(train_command(prepared, tmp_path / "fresh", s=changed))
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    trained, expected = parameters(out / LAST), parameters(tmp_path / "fresh" / LAST)
    assert all(torch.equal(trained[k], expected[k]) for k in expected)  # as if trained anew
    assert valid_log.read(out / valid_log.VALID_LOG) == valid_log.read(
        tmp_path / "fresh" / valid_log.VALID_LOG
    )
    # the same settings again: its own checkpoints, resumed
    again = run([*train_command(prepared, out, s=changed), "--on-stale", "restart"])
    assert again.returncode == 0 and json.loads((out / SUMMARY).read_text())["resumed"]


def test_preempted_run_resumes_to_the_uninterrupted_result(runs, prepared, tmp_path):  # noqa: F811
    out = tmp_path / "preempted"
    process = subprocess.Popen(
        train_command(prepared, out),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not (out / LAST).exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGUSR1)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == EXIT_PREEMPTED, stderr[-3000:]
    stopped = torch.load(out / LAST, map_location="cpu", weights_only=False)
    assert stopped["optimizer_history"][-1]["num_updates"] < UPDATES
    assert not (out / SUMMARY).exists()

    result = run(train_command(prepared, out))
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["resumed"] and summary["updates"] == UPDATES
    resumed, uninterrupted = parameters(out / LAST), parameters(runs[0] / LAST)
    assert all(torch.equal(resumed[k], uninterrupted[k]) for k in uninterrupted)
    # the validation log goes on across the stop: one row per validation (the stop's own
    # validation included), the uninterrupted run's values where both validated
    rows = valid_log.read(out / valid_log.VALID_LOG)
    updates = [r["updates"] for r in rows]
    assert updates == sorted(set(updates)) and updates[-1] == UPDATES
    reference = {r["updates"]: r["loss"] for r in valid_log.read(runs[0] / valid_log.VALID_LOG)}
    assert {r["updates"]: r["loss"] for r in rows if r["updates"] in reference} == reference


def test_pivot_decodes_zero_shot_through_english_with_the_same_model(runs, prepared, tmp_path):  # noqa: F811
    translator = decode(prepared, runs[0], tmp_path / "pivot", pivot=True)
    names = sorted(p.stem for p in (tmp_path / "pivot").glob("*.hyp"))
    assert names == sorted(d.name for d in directions(LANGUAGES) if d.zero_shot)
    # the same two passes by hand: it→en, then en→nl on the English hypotheses
    from mlrep.nmt.data import Direction
    from mlrep.nmt.prepare import read_detokenize, read_subwords
    from mlrep.text.detokenize import detokenize

    source = read_subwords(prepared, "test", Direction("it", "nl"))[0]
    english = translator.generate(source, [Direction("it", "en")] * len(source), BEAM)
    dutch = translator.generate(
        [" ".join(h) for h in english], [Direction("en", "nl")] * len(source), BEAM
    )
    expected = detokenize([" ".join(h) for h in dutch], "nl", **read_detokenize(prepared))
    assert read_lines(tmp_path / "pivot/it-nl.hyp", ValueError) == expected
    summary = json.loads((tmp_path / "pivot/translate.json").read_text())
    assert summary["pivot"] == "en" and summary["lines"]["it-nl"] == TEST_LINES


def test_supervised_decoding_translates_the_english_centric_directions_as_a_full_pass(
    runs,
    prepared,  # noqa: F811
    tmp_path,
):
    decode(prepared, runs[0], tmp_path / "all")
    translator = Translator(runs[0] / BEST, prepared / "s-enc-t-dec/bin", "s-enc-t-dec")
    translate(translator, prepared, tmp_path / "sup", BEAM, supervised=True)
    names = sorted(p.name for p in (tmp_path / "sup").glob("*.hyp"))
    assert names == sorted(f"{d.name}.hyp" for d in directions(LANGUAGES) if not d.zero_shot)
    for name in names:  # the same hypotheses as decoding every direction gives them
        assert (tmp_path / "sup" / name).read_text() == (tmp_path / "all" / name).read_text()
    assert json.loads((tmp_path / "sup/translate.json").read_text())["supervised"] is True
    with pytest.raises(DecodeError, match="choose one"):
        translate(translator, prepared, tmp_path / "x", BEAM, pivot=True, supervised=True)


def test_states_follow_the_analyses_contract(runs, prepared, tmp_path):  # noqa: F811
    translator = decode(prepared, runs[0], tmp_path / "hyp")
    sizes = write_all(translator, prepared, tmp_path / "hyp", tmp_path / "states", 5, BEAM)
    assert sizes == {
        "train": 30,
        "sup": 30,
        "zst": 30,
        "svcca_a": 3 * TEST_LINES,
        "svcca_b": 3 * TEST_LINES,
    }
    zst = open_states(tmp_path / "states/zst.npz")
    try:
        assert zst.n_layers == 4 and zst.n_encoder_layers == 2
        hyp_tokens = sum(
            len(line.split())
            for d in directions(LANGUAGES)
            if d.zero_shot
            for line in read_lines(tmp_path / f"hyp/{d.name}.sub", ValueError)[:5]
        )
        assert zst.layer(3).shape == (hyp_tokens, 64)
        assert set(zst.src_lang) == {"it", "nl", "ro"}
        assert zst.layer(1).shape[0] > 0
    finally:
        zst.close()
    a, b = (
        open_states(tmp_path / "states/svcca_a.npz"),
        open_states(tmp_path / "states/svcca_b.npz"),
    )
    try:
        assert set(a.src_lang) == {"en"} and list(a.tgt_lang) == list(b.src_lang)
        assert a.n_layers == a.n_encoder_layers == 2
    finally:
        a.close()
        b.close()


def test_decoding_and_states_run_on_the_jobs_gpu(runs, prepared, tmp_path, monkeypatch):  # noqa: F811
    on_cpu = decode(prepared, runs[0], tmp_path / "cpu")
    assert on_cpu.device == "cpu"
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(decode_module, "visible", lambda: Devices(1))
    translator = decode(prepared, runs[0], tmp_path / "gpu")
    assert translator.device == "cuda" and gpu.modules == ["VariantTransformer"]
    # every batch went to the device: ids, source tokens and lengths, the forced target tag
    batches = -(-len(directions(LANGUAGES)) * TEST_LINES // BEAM.batch_size)
    assert gpu.tensors >= 4 * batches
    for d in directions(LANGUAGES):
        assert (tmp_path / f"gpu/{d.name}.hyp").read_text() == (
            tmp_path / f"cpu/{d.name}.hyp"
        ).read_text()
    moved = gpu.tensors
    write_all(translator, prepared, tmp_path / "gpu", tmp_path / "states", 5, BEAM)
    # decoding the probes' training set (30 lines), then per batch of collected states the
    # encoder's tokens and lengths and the decoder's tokens: train, sup, zst (30 lines each),
    # and the two SVCCA sets (39 lines each, encoder only)
    probe_batches, svcca_batches = -(-30 // BEAM.batch_size), -(-39 // BEAM.batch_size)
    assert gpu.tensors - moved >= 4 * probe_batches + 3 * 3 * probe_batches + 2 * 2 * svcca_batches
