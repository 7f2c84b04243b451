"""Data preparation, learning, determinism and bit-identical resume of EMS training (CPU)."""

import dataclasses
import json
import os
import random
import signal
import subprocess
import time

import numpy as np
import pytest
import torch

from mlrep.chapters.ch2_ems import cli as ch2_cli
from mlrep.data.tiny_corpus import IDS_SUFFIX
from mlrep.device import Devices
from mlrep.embed import data, evaluate, train
from mlrep.embed.model import EmsConfig, EmsModel
from mlrep.train.signals import EXIT_PREEMPTED
from tests.conftest import BIN
from tests.device_helpers import FakeCuda
from tests.learning import assert_improves, assert_loss_falls

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]


def write_corpus(folder, languages=("xx", "yy"), lines=120):
    """English-centric pairs whose other side is a per-language cipher of the English words."""
    rng = random.Random(5)
    folder.mkdir(parents=True, exist_ok=True)
    for split, count in (("train", lines), ("valid", 20), ("test", 20)):
        english = [" ".join(rng.choices(WORDS, k=rng.randint(3, 7))) for _ in range(count)]
        for lang in languages:
            stem = folder / f"{split}.en-{lang}"
            (stem.with_name(stem.name + ".en")).write_text("\n".join(english) + "\n")
            cipher = [" ".join(f"{w[::-1]}{lang}" for w in line.split()) for line in english]
            (stem.with_name(stem.name + f".{lang}")).write_text("\n".join(cipher) + "\n")
            # the tiny corpus writes segment ids beside the sides: not a language
            (stem.with_name(f"{stem.name}.{IDS_SUFFIX}")).write_text(
                "\n".join(map(str, range(count)))
            )
    return folder


SETTINGS = data.PrepareSettings(
    max_pairs=0, heldout_pairs=10, vocab_size=80, lowercase=True, max_tokens=12
)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("embed")
    out = root / "prepared"
    out.mkdir()
    info = data.prepare([write_corpus(root / "corpus")], out, SETTINGS)
    return out, info


def config(info) -> EmsConfig:
    return EmsConfig(
        vocab_size=info["vocab_size"],
        languages=len(info["languages"]),
        max_tokens=12,
        layers=1,
        heads=2,
        dim=16,
        ffn_dim=32,
        la_dim=4,
        cntrs_dim=8,
        generative="ugt",  # the variant with the most randomness: dropout, masks, batches
    )


def settings(steps: int, seed: int = 1, batch_size: int = 16, gpus: int = 1) -> train.TrainSettings:
    return train.TrainSettings(
        steps=steps,
        batch_size=batch_size,
        gpus=gpus,
        lr=1e-3,
        warmup=3,
        weight_decay=1e-5,
        checkpoint_every=4,
        seed=seed,
    )


def test_prepare_reads_english_centric_pairs_and_skips_segment_ids(prepared):
    out, info = prepared
    assert info["languages"] == ["en", "xx", "yy"]
    assert info["pairs"]["train"] == {"xx": 120, "yy": 120}
    assert info["pairs"]["test"] == {"xx": 10, "yy": 10}
    arrays = data.PairArrays.load(out / "train.npz")
    assert len(arrays) == 240 and set(arrays.tgt_lang.tolist()) == {1, 2}
    assert set(arrays.src_lang.tolist()) == {0}
    tokenizer = data.Tokenizer(out / "spm.model", True, 12)
    assert (
        arrays.src_tokens[: arrays.src_offsets[1]].tolist()
        == tokenizer.ids(
            [(out.parent / "corpus" / "train.en-xx.en").read_text().splitlines()[0].upper()]
        )[0]
    )


def test_misaligned_sides_are_named_with_both_line_counts(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    (corpus / "train.en-yy.yy").write_text("only one line\n")
    with pytest.raises(data.EmbedDataError, match=r"train.en-yy.yy: 1 lines but .* has 120"):
        data.prepare([corpus], tmp_path, SETTINGS)


def state(folder):
    return torch.load(folder / train.MODEL_FILE, weights_only=True)["state"]


def same(a, b) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def subset(arrays: data.PairArrays, rows) -> data.PairArrays:
    def sides(tokens, offsets):
        return [tokens[offsets[r] : offsets[r + 1]].tolist() for r in rows]

    return data.PairArrays.build(
        sides(arrays.src_tokens, arrays.src_offsets),
        sides(arrays.tgt_tokens, arrays.tgt_offsets),
        arrays.src_lang[rows],
        arrays.tgt_lang[rows],
    )


def losses(folder) -> list[float]:
    """The joint training loss of every update, from the run's ``loss.tsv``."""
    lines = (folder / train.CURVE_FILE).read_text().splitlines()[1:]
    return [float(line.split("\t")[1]) for line in lines]


def test_training_overfits_a_fixed_batch(prepared, tmp_path):
    out, info = prepared
    pairs = data.PairArrays.load(out / "train.npz")
    batch = subset(pairs, np.arange(0, len(pairs), 15))  # 16 pairs, both languages: one batch
    fast = dataclasses.replace(settings(40, batch_size=len(batch)), lr=1e-2)
    train.run(config(info), fast, batch, None, tmp_path, log=str)
    # measured (seeds 1-3): last-5 mean 0.41-0.42 of the first-5 mean; no update: about 1
    assert_loss_falls(losses(tmp_path), window=5, below=0.6)


def test_training_beats_the_untrained_encoder_on_held_out_retrieval(prepared, tmp_path):
    out, info = prepared
    pairs = data.PairArrays.load(out / "train.npz")
    test = data.PairArrays.load(out / "test.npz")  # 10 pairs per language: chance is 10
    train.seed_everything(1, 1, "cpu")  # as the run does before building its model
    untrained = evaluate.heldout(EmsModel(config(info)), test, info["languages"], 8).metrics
    train.run(config(info), dataclasses.replace(settings(200), lr=1e-2), pairs, None, tmp_path)
    model = train.load_model(tmp_path / train.MODEL_FILE)
    trained = evaluate.heldout(model, test, info["languages"], 8).metrics
    # measured (seeds 1-4): untrained 2.5-17.5, trained 55-70 (seed 1: 12.5 -> 70)
    assert_improves(
        trained["heldout_avg"],
        untrained["heldout_avg"],
        by=25,
        higher_is_better=True,
        what="held-out P@1",
    )


def test_training_is_deterministic_per_seed_and_resume_is_bit_identical(prepared, tmp_path):
    out, info = prepared
    pairs = data.PairArrays.load(out / "train.npz")
    valid = data.PairArrays.load(out / "valid.npz")
    whole = train.run(config(info), settings(10), pairs, valid, tmp_path / "whole", log=str)
    again = train.run(config(info), settings(10), pairs, valid, tmp_path / "again", log=str)
    other = train.run(config(info), settings(10, seed=2), pairs, valid, tmp_path / "seed2", log=str)
    assert same(state(tmp_path / "whole"), state(tmp_path / "again"))
    assert not same(state(tmp_path / "whole"), state(tmp_path / "seed2"))
    assert whole["valid_loss"] == again["valid_loss"] != other["valid_loss"]
    # stop after 6 updates (a checkpoint at 4 and at the last step), then continue to 10
    train.run(config(info), settings(6), pairs, valid, tmp_path / "resumed", log=str)
    resumed = train.run(config(info), settings(10), pairs, valid, tmp_path / "resumed", log=str)
    assert same(state(tmp_path / "whole"), state(tmp_path / "resumed"))
    assert resumed["final_loss"] == whole["final_loss"]
    curve = (tmp_path / "whole" / train.CURVE_FILE).read_text()
    assert (tmp_path / "resumed" / train.CURVE_FILE).read_text() == curve
    assert len(curve.splitlines()) == 11 and whole["sec_per_1k_steps"] > 0


def test_an_update_averages_one_batch_per_thesis_gpu(prepared, tmp_path):
    out, info = prepared
    pairs = data.PairArrays.load(out / "train.npz")
    summary = train.run(config(info), settings(2, batch_size=8, gpus=2), pairs, None, tmp_path)
    assert summary["batch"] == {
        "reference_devices": 2,
        "reference_per_device": 8,
        "world_size": 1,
        "update_freq": 2,
        "per_device": 8,
        "reference": 16,
        "effective": 16,
    }
    # update 1 by hand: 16 pairs of the schedule, two batches of 8, each its own negatives
    train.seed_everything(1, 1, "cpu")
    model = EmsModel(config(info)).train()
    rows = train.Schedule(len(pairs), 16, 1).rows(1)
    generator = train._step_generator(1, 1)
    halves = [model.loss_terms(pairs.batch(rows[i : i + 8]), generator) for i in (0, 8)]
    expected = (halves[0]["loss"].item() + halves[1]["loss"].item()) / 2
    one_batch = model.loss_terms(pairs.batch(rows), train._step_generator(1, 1))["loss"].item()
    logged = float((tmp_path / train.CURVE_FILE).read_text().splitlines()[1].split("\t")[1])
    assert logged == pytest.approx(expected, abs=1e-5)
    assert logged != pytest.approx(one_batch, abs=1e-3)  # not one batch of 16 negatives


def test_training_and_evaluation_put_the_model_and_batches_on_the_jobs_gpu(
    prepared, tmp_path, monkeypatch
):
    out, info = prepared
    pairs = data.PairArrays.load(out / "train.npz")
    train.run(config(info), settings(3), pairs, None, tmp_path / "cpu", log=str)
    gpu = FakeCuda(monkeypatch)
    for module in (train, ch2_cli):
        monkeypatch.setattr(module, "visible", lambda: Devices(1))
    train.run(config(info), settings(3), pairs, None, tmp_path / "gpu", log=str)
    assert gpu.modules == ["EmsModel"]
    assert gpu.tensors == 3 * 4  # src, tgt and both languages of every update's batch
    assert same(state(tmp_path / "cpu"), state(tmp_path / "gpu"))
    from mlrep.cli import main

    args = ["ch2", "evaluate", "--model", str(tmp_path / "gpu" / "model.pt"), "--data"]
    args += [str(out), "--out", str(tmp_path / "metrics.json"), "--run", "ems", "--seed", "1"]
    args += ["--scale", "tiny", "--encode-batch-size", "8", "--tatoeba-pairs", "0"]
    assert main([*args, "--no-benchmarks"]) == 0
    assert gpu.modules == ["EmsModel", "EmsModel"]


def _train_command(prepared_dir, out, steps):
    flags = dict(
        layers=1, heads=2, dim=16, ffn_dim=32, la_dim=4, cntrs_dim=8, dropout=0.1,
        attention_dropout=0.1, generative="xtr", contrastive=True, projection=True,
        language_embedding=True, share_embeddings=False, margin=0.0, temperature=0.1,
        steps=steps, batch_size=16, lr=1e-3, warmup=3, weight_decay=1e-5, checkpoint_every=50,
    )  # fmt: skip
    command = [str(BIN / "mlrep"), "ch2", "train", "--data", str(prepared_dir), "--out", str(out)]
    command += ["--run", "ems", "--seed", "1", "--scale", "tiny"]
    for key, value in flags.items():
        command += ["--" + key.replace("_", "-"), str(value)]
    return command


def test_sigusr1_saves_exits_75_and_the_rerun_finishes_bit_identical(prepared, tmp_path):
    out, _ = prepared
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    steps = 2000  # long enough to be interrupted well before the end
    job = subprocess.Popen(
        _train_command(out, tmp_path / "job", steps), env=env, stdout=subprocess.PIPE, text=True
    )
    curve = tmp_path / "job" / train.CURVE_FILE
    deadline = time.time() + 120
    while (
        not curve.exists() or len(curve.read_text().splitlines()) < 20
    ) and time.time() < deadline:
        time.sleep(0.2)
    job.send_signal(signal.SIGUSR1)
    output, _ = job.communicate(timeout=120)
    assert job.returncode == EXIT_PREEMPTED, output
    stopped = int(curve.read_text().splitlines()[-1].split("\t")[0])
    assert 20 <= stopped < steps and "SIGUSR1" in output
    # the rerun resumes and finishes; the same run in one go gives the same weights
    short = _train_command(out, tmp_path / "job", stopped + 5)
    assert subprocess.run(short, env=env, capture_output=True, check=False).returncode == 0
    whole = _train_command(out, tmp_path / "whole", stopped + 5)
    assert subprocess.run(whole, env=env, capture_output=True, check=False).returncode == 0
    assert same(state(tmp_path / "job"), state(tmp_path / "whole"))
    summary = json.loads((tmp_path / "job" / train.SUMMARY_FILE).read_text())
    assert summary["steps"] == stopped + 5
    assert np.isfinite(summary["final_loss"])


def test_missing_inputs_name_the_step_that_makes_them(tmp_path, capsys):
    from mlrep.cli import main

    args = ["ch2", "evaluate", "--model", str(tmp_path / "model.pt"), "--data", str(tmp_path)]
    args += ["--out", str(tmp_path / "metrics.json"), "--run", "ems", "--seed", "1"]
    args += ["--scale", "tiny", "--encode-batch-size", "8", "--tatoeba-pairs", "0"]
    assert main(args) == 2
    assert "model.pt not found: run `mlrep ch2 train` first" in capsys.readouterr().err
    with pytest.raises(data.EmbedDataError, match="no English-centric train pairs"):
        data.prepare([tmp_path], tmp_path / "out", SETTINGS)
