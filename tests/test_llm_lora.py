"""``mlrep llm lora-train``: the adapter learns the output tokens alone, drops and counts
over-length examples, resumes a preempted run bit-for-bit, and refuses another base's adapter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from mlrep.cli import main
from mlrep.llm import adapter, examples, generate, lora
from mlrep.llm.adapter import AdapterError
from mlrep.llm.base import load_base
from mlrep.llm.batches import mean_loss
from mlrep.llm.examples import ExampleError
from mlrep.llm.settings import LoraSettings
from mlrep.train.checkpoint import Preempted
from mlrep.train.signals import EXIT_PREEMPTED
from tests.conftest import REPO
from tests.learning import assert_improves, assert_loss_falls
from tests.llm_helpers import build_stand_in, flags, object_examples, write_jsonl, write_text

QUICK = {"batch_size": 4, "epochs": 1, "lr": 1e-3, "precision": "fp32"}


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """(a stand-in pretrained long enough that its words differ, another stand-in)."""
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("lora")
    text = write_text(root / "text")
    return build_stand_in(text, root / "base", steps=150), build_stand_in(
        text, root / "other", seed=2, steps=5
    )


@pytest.fixture(scope="module")
def trained(bases, tmp_path_factory):
    """The learning run: 8 examples, one batch, 60 updates, through the verb."""
    root = tmp_path_factory.mktemp("trained")
    data = write_jsonl(root / "train.jsonl", object_examples(8, seed=5))
    settings = {"epochs": 60, "batch_size": 8, "lr": 1e-2, "checkpoint_every": 1000}
    args = ["llm", "lora-train", "--scale", "tiny", "--base", str(bases[0]), "--train", str(data)]
    args += ["--out", str(root / "run"), "--seed", "1", *flags(settings | {"precision": "fp32"})]
    assert main(args) == 0
    return root / "run"


def test_lora_overfits_a_fixed_batch_and_lowers_held_out_loss(bases, trained):
    """Training loss falls (measured: last/first 10 of 60 updates 0.44; 1.00 without the
    optimiser step or with lr 0) and the held-out output loss beats the base's (measured: 2.93
    -> 0.80; 2.93 -> 2.93 without the step or with lr 0). The record has LoRA's size: 2 layers
    × r 8 × (64 in + 192 out) of query_key_value."""
    summary = json.loads((trained / lora.SUMMARY_FILE).read_text())
    assert_loss_falls(summary["losses"], window=10, below=0.75, what="LoRA training loss")
    assert summary["updates"] == 60 == len(summary["losses"]) and summary["warmup_updates"] == 2
    assert summary["parameters"]["trainable"] == 2 * 8 * (64 + 192)
    assert 0 < summary["parameters"]["trainable_percent"] < 5
    assert summary["base"] == load_base(bases[0]).identity
    assert summary["settings"]["r"] == 8 and summary["settings"]["alpha"] == 32
    assert (trained / "provenance.json").exists()

    heldout = write_jsonl(trained.parent / "heldout.jsonl", object_examples(32, seed=9))
    base = load_base(bases[0])
    rows, _ = examples.load(base.tokenizer, [heldout], 64, 64)
    untrained = mean_loss(base.model, rows, base.pad_id, 16)
    tuned = generate.system(bases[0], trained / lora.ADAPTER_DIR, "fp32")
    after = mean_loss(tuned.model, rows, base.pad_id, 16)
    assert_improves(after, untrained, by=1.0, higher_is_better=False, what="held-out loss")


def test_the_loss_is_the_output_tokens_alone(bases, tmp_path):
    """The first update's loss equals the base's mean negative log-likelihood of the output
    tokens and </s> given the prompt, computed here token by token (LoRA's B starts at 0, so
    the adapter changes nothing before the first step); a prompt token in the loss would move
    it (measured: 4.81 with the prompt unmasked against 2.96)."""
    records = object_examples(4, seed=3)
    data = write_jsonl(tmp_path / "train.jsonl", records)
    summary = lora.run(bases[0], [data], LoraSettings(**QUICK), tmp_path / "run", 1, 1)
    base = load_base(bases[0])
    total, count = 0.0, 0
    with torch.no_grad():
        for record in records:
            prompt = base.tokenizer(record["input"], add_special_tokens=False)["input_ids"]
            output = base.tokenizer(record["output"], add_special_tokens=False)["input_ids"]
            ids = torch.tensor([[*prompt, *output, base.tokenizer.eos_token_id]])
            logits = base.model(input_ids=ids).logits[0].log_softmax(-1)
            for position in range(len(prompt), ids.shape[1]):
                total -= float(logits[position - 1, ids[0, position]])
                count += 1
    assert summary["losses"][0] == pytest.approx(total / count, rel=1e-5)


def test_over_length_examples_are_dropped_and_counted_per_file(bases, tmp_path):
    long_word = " ".join(["kato"] * 30)
    short = write_jsonl(tmp_path / "short.jsonl", object_examples(6, seed=1))
    mixed = [
        *object_examples(4, seed=2),
        {"input": long_word, "output": " libron"},  # input too long
        {"input": "kato =", "output": " " + long_word},  # output too long
        {"input": long_word, "output": " " + long_word},  # both
    ]
    mixed_file = write_jsonl(tmp_path / "mixed.jsonl", mixed)
    settings = LoraSettings(**QUICK, max_input_tokens=12, max_output_tokens=8)
    summary = lora.run(bases[0], [short, mixed_file], settings, tmp_path / "run", 1, 1)
    files = summary["examples"]["files"]
    assert files[str(short)] == {
        "read": 6, "kept": 6, "input_too_long": 0, "output_too_long": 0, "dropped": 0
    }  # fmt: skip
    assert files[str(mixed_file)] == {
        "read": 7, "kept": 4, "input_too_long": 2, "output_too_long": 2, "dropped": 3
    }  # fmt: skip
    assert summary["examples"]["kept"] == 10 and summary["updates"] == 3  # ceil(10 / 4)
    tokenizer = load_base(bases[0]).tokenizer
    with pytest.raises(ExampleError, match="no example to train on"):
        examples.load(tokenizer, [mixed_file], 1, 8)
    # the limits are inclusive: an example exactly as long as both is kept
    one = write_jsonl(tmp_path / "one.jsonl", object_examples(1, seed=1))
    prompt, output = examples.encode(tokenizer, examples.read_jsonl(one)[0])
    for limits, kept in (((0, 0), 1), ((-1, 0), 0), ((0, -1), 0)):
        sizes = (len(prompt) + limits[0], len(output) + limits[1])
        if kept:
            assert examples.load(tokenizer, [one], *sizes)[1][str(one)]["kept"] == 1
        else:
            with pytest.raises(ExampleError, match="no example to train on"):
                examples.load(tokenizer, [one], *sizes)


def test_a_preempted_run_resumes_to_the_uninterrupted_adapter(bases, tmp_path):
    """SIGUSR1 during update 5 (raised from the contract's log line of step 4): the run saves
    step 5 and exits `EXIT_PREEMPTED`; the rerun resumes there, and its adapter and per-update
    losses equal those of a run never stopped (LoRA dropout on: the RNG state matters)."""
    data = write_jsonl(tmp_path / "train.jsonl", object_examples(16, seed=4))
    settings = LoraSettings(**(QUICK | {"epochs": 2, "lr": 1e-2}), checkpoint_every=2)
    whole = lora.run(bases[0], [data], settings, tmp_path / "whole", 7, 1, log=lambda _: None)

    def stop_at_step_4(message: str) -> None:
        if message.startswith("step 4 "):
            signal.raise_signal(signal.SIGUSR1)

    with pytest.raises(Preempted) as stopped:
        lora.run(bases[0], [data], settings, tmp_path / "job", 7, 1, log=stop_at_step_4)
    assert stopped.value.code == EXIT_PREEMPTED and stopped.value.step == 5
    assert not (tmp_path / "job" / lora.SUMMARY_FILE).exists()
    logged: list[str] = []
    resumed = lora.run(bases[0], [data], settings, tmp_path / "job", 7, 1, log=logged.append)
    assert logged[0].startswith("resumed from step 5")
    assert resumed["losses"] == whole["losses"] and len(whole["losses"]) == 8
    weights = [
        load_file(tmp_path / run / lora.ADAPTER_DIR / adapter.WEIGHTS) for run in ("whole", "job")
    ]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert not all(torch.equal(w, torch.zeros_like(w)) for w in weights[0].values())
    # the same folder with other settings: its checkpoints are refused, not continued
    other = LoraSettings(**(QUICK | {"epochs": 2, "lr": 2e-2}), checkpoint_every=2)
    with pytest.raises(
        lora.CheckpointMismatchError, match=r"checkpoints belong to a run with other settings"
    ):
        lora.run(bases[0], [data], other, tmp_path / "job", 7, 1)
    # the workflow's rerun (`--on-stale restart`) drops them and trains anew: as from scratch
    fresh = lora.run(bases[0], [data], other, tmp_path / "fresh", 7, 1, log=lambda _: None)
    anew = lora.run(
        bases[0], [data], other, tmp_path / "job", 7, 1, log=logged.append, on_stale="restart"
    )
    assert anew["losses"] == fresh["losses"] != whole["losses"]


def test_sigterm_to_the_verb_saves_and_exits_75(bases, tmp_path):
    """The contract end to end: ``mlrep llm lora-train`` in its own process, SIGTERM once a
    checkpoint exists, a checkpoint at the stop and exit status `EXIT_PREEMPTED`."""
    data = write_jsonl(tmp_path / "train.jsonl", object_examples(16, seed=4))
    out = tmp_path / "run"
    settings = QUICK | {"epochs": 5000, "checkpoint_every": 5}
    command = [sys.executable, "-m", "mlrep.cli", "llm", "lora-train", "--scale", "tiny"]
    command += ["--base", str(bases[0]), "--train", str(data), "--out", str(out)]
    command += ["--seed", "1", *flags(settings)]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    job = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.time() + 120
    while not list((out / lora.CHECKPOINT_DIR).glob("step-*.pt")) and time.time() < deadline:
        time.sleep(0.2)
    job.send_signal(signal.SIGTERM)
    output, _ = job.communicate(timeout=120)
    assert job.returncode == EXIT_PREEMPTED, output
    assert "SIGTERM at step" in output and not (out / lora.SUMMARY_FILE).exists()
    assert list((out / lora.CHECKPOINT_DIR).glob("step-*.pt"))


def test_an_adapter_of_another_base_is_refused(bases, trained, tmp_path, capsys):
    folder = trained / lora.ADAPTER_DIR
    with pytest.raises(AdapterError, match=rf"{folder}: this adapter was trained on base .*--base"):
        generate.system(bases[1], folder, "fp32")
    data = write_jsonl(tmp_path / "train.jsonl", object_examples(4, seed=1))
    args = ["llm", "lora-train", "--scale", "tiny", "--base", str(bases[1]), "--train", str(data)]
    args += ["--init-adapter", str(folder), "--out", str(tmp_path / "run"), "--seed", "1"]
    assert main([*args, *flags(QUICK)]) == 2
    assert f"{folder}: this adapter was trained on base {bases[0]}" in capsys.readouterr().err
    with pytest.raises(AdapterError, match=r"no adapter_config\.json"):
        generate.system(bases[0], tmp_path, "fp32")
    # an adapter made elsewhere (no base.json) is checked by PEFT's recorded base name
    (folder.parent / "foreign").mkdir()
    (folder.parent / "foreign" / adapter.PEFT_CONFIG).write_text(
        json.dumps({"base_model_name_or_path": "bigscience/bloomz-560m"})
    )
    with pytest.raises(AdapterError, match="trained on base bigscience/bloomz-560m"):
        adapter.check(folder.parent / "foreign", load_base(bases[0]))


def test_a_curriculum_stage_starts_from_the_previous_adapter(bases, trained, tmp_path):
    """Stage 2 is its own run from stage 1's adapter: its first loss on stage 1's data is
    stage 1's trained loss, not the base's."""
    data = write_jsonl(tmp_path / "stage2.jsonl", object_examples(8, seed=5))
    stage1 = json.loads((trained / lora.SUMMARY_FILE).read_text())
    settings = LoraSettings(**(QUICK | {"batch_size": 8}))
    stage2 = lora.run(
        bases[0], [data], settings, tmp_path / "run", 1, 1, init_adapter=trained / "adapter"
    )
    assert stage2["init_adapter"] == str(trained / "adapter")
    assert stage2["losses"][0] < 0.5 * stage1["losses"][0]


def test_malformed_examples_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "a", "output": "b"}\n\n{"input": "a" "output": "b"}\n')
    with pytest.raises(ExampleError, match=rf"{bad}:3: not JSON"):
        examples.read_jsonl(bad)
    bad.write_text('{"input": "a"}\n')
    with pytest.raises(ExampleError, match=rf"{bad}:1: not an object with string fields input"):
        examples.read_jsonl(bad)
    assert examples.read_jsonl(bad, ("input",)) == [{"input": "a"}]
    with pytest.raises(ExampleError, match=r"absent\.jsonl: file not found"):
        examples.read_jsonl(tmp_path / "absent.jsonl")
