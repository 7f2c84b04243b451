"""Pre-train → fine-tune of a pair model with real fairseq runs (`mlrep nmt pair-train`):
pre-training learns its pairs, fine-tuning starts from the pre-trained weights with a fresh
optimiser, a rerun resumes the fine-tuning run itself, and a checkpoint of another
dictionary is refused before any training; a fine-tune that learns decodes its test set
(`mlrep nmt pair-translate`) into target-language words."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
import torch
import yaml

from mlrep import cli
from mlrep.io import read_lines
from mlrep.nmt import pair
from mlrep.nmt.model import ArchitectureMismatch
from mlrep.nmt.train import BEST, LAST, SUMMARY, DictionaryMismatch, _check_init
from mlrep.nmt.valid_log import VALID_LOG, read
from tests.conftest import REPO
from tests.learning import assert_improves, assert_loss_falls
from tests.nmt_helpers import fairseq_losses, pair_inputs, run, settings, training_flags
from tests.test_nmt_pair import pair_finetune, pair_pretrain

pytestmark = pytest.mark.slow  # real fairseq training

PRETRAIN = dataclasses.replace(
    settings(max_update=30, save_interval_updates=10), lr=0.01, max_tokens=1024
)  # 32 pairs of at most 11 tokens: one batch, so an epoch is one update
# fine-tuning at a learning rate of about 1e-7 (the warm-up's start): two updates move no
# weight by more than ~1e-6, so the fine-tuned weights are the weights it started from
FINETUNE = dataclasses.replace(
    settings(max_update=2, save_interval_updates=2), lr=1e-9, max_tokens=1024
)


# a fine-tune that learns the word-for-word en→it bitext (8 pairs, one batch per update)
TRANSLATE = dataclasses.replace(
    settings(max_update=40, save_interval_updates=40), lr=0.01, max_tokens=1024
)


def pair_train(data: dict, folder: str, out: Path, s, init: Path | None = None) -> list[str]:
    """The `mlrep nmt pair-train` command line of `data`'s `folder`, as a rule spells it
    (every setting a flag; the omissible ones are read from `data`'s params file)."""
    argv = [sys.executable, "-m", "mlrep.cli", "nmt", "pair-train", "--data", str(data[folder])]
    argv += ["--section", "ch4_jass", "--stage", "pretrain", "--params", str(data["params"])]
    argv += ["--name", "jaen", "--seed", "1", "--out", str(out), *training_flags(s)]
    return argv + (["--init", str(init)] if init else [])


def parameters(checkpoint: Path) -> dict[str, torch.Tensor]:
    return torch.load(checkpoint, map_location="cpu", weights_only=False)["model"]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict:
    """The pair's pre-training data, its en→it fine-tuning data, their inputs, and a params
    file (the repository's: the schema requires a whole ``ch4_jass.pretrain``, which every
    run here overrides flag by flag)."""
    root = tmp_path_factory.mktemp("pair")
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    inputs = pair_inputs(root / "inputs")
    assert pair_pretrain(inputs, root / "pretrain") == 0
    assert pair_finetune(inputs, root / "pretrain" / pair.DICT, "en-it", root / "en-it") == 0
    return {
        "pretrain": root / "pretrain",
        "finetune": root / "en-it",
        "inputs": inputs,
        "params": root / "params.yaml",
    }


@pytest.fixture(scope="module")
def pretrained(data, tmp_path_factory) -> tuple[Path, str]:
    """A pre-trained pair model and its fairseq log."""
    out = tmp_path_factory.mktemp("pretrained")
    result = run(pair_train(data, "pretrain", out, PRETRAIN))
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stderr


@pytest.fixture(scope="module")
def finetuned(data, pretrained, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("finetuned")
    result = run(pair_train(data, "finetune", out, FINETUNE, init=pretrained[0] / LAST))
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stderr


def test_pretraining_learns_its_pairs(pretrained):
    out, log = pretrained
    losses = fairseq_losses(log, "train")
    assert len(losses) == PRETRAIN.max_update  # one logged epoch per update: one batch
    # measured: first-5 mean 5.54, last-5 mean 3.09 (ratio 0.56); lr 0: flat
    print("MEASURED", sum(losses[:5]) / 5, sum(losses[-5:]) / 5)
    assert_loss_falls(losses, window=5, below=0.75)
    # the held-out pairs (valid), validated at every epoch's end: the first validation, after
    # one update, stands in for the untrained model's; measured 6.62 → 4.80 (best 4.45)
    valid = [row["loss"] for row in read(out / VALID_LOG)]
    assert len(valid) == PRETRAIN.max_update
    print("VALID", valid[0], valid[-1], min(valid))
    assert_improves(valid[-1], valid[0], by=1.0, higher_is_better=False, what="valid loss")


def test_finetuning_starts_from_the_pretrained_weights(pretrained, finetuned):
    out, _ = finetuned
    before, after = parameters(pretrained[0] / LAST), parameters(out / LAST)
    assert before.keys() == after.keys()
    for name in before:
        assert torch.allclose(after[name], before[name], atol=1e-5), name
    summary = json.loads((out / SUMMARY).read_text())
    # a fresh optimiser and iterator: the pre-training's 30 updates are not counted on
    assert summary["updates"] == FINETUNE.max_update and summary["epochs"] == 3
    assert summary["init"] == str(pretrained[0] / LAST) and not summary["resumed"]
    assert summary["dictionary"] == json.loads((pretrained[0] / SUMMARY).read_text())["dictionary"]


def test_a_rerun_resumes_the_finetuning_run_not_the_pretrained_model(data, pretrained, finetuned):
    out, _ = finetuned
    longer = dataclasses.replace(FINETUNE, max_update=4)
    result = run(pair_train(data, "finetune", out, longer, init=pretrained[0] / LAST))
    assert result.returncode == 0, result.stderr[-3000:]
    # only the two updates after the run's own checkpoint are trained (a restart from the
    # pre-trained model would train all four)
    assert len(fairseq_losses(result.stderr, "train")) == 2
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["resumed"] and summary["updates"] == 4
    # one validation per update (an epoch), the first run's kept: [1, 2] then [3, 4]
    assert [row["updates"] for row in read(out / VALID_LOG)] == [1, 2, 3, 4]


def test_a_checkpoint_of_another_dictionary_is_refused(data, pretrained, tmp_path):
    """Same size, another order: fairseq would load it without a word."""
    dictionary = (data["pretrain"] / pair.DICT).read_text().splitlines(keepends=True)
    dictionary[0], dictionary[1] = dictionary[1], dictionary[0]
    (tmp_path / "dict.txt").write_text("".join(dictionary))
    assert pair_finetune(data["inputs"], tmp_path / "dict.txt", "en-it", tmp_path / "en-it") == 0
    out = tmp_path / "run"
    mismatched = dict(data, finetune=tmp_path / "en-it")
    result = run(pair_train(mismatched, "finetune", out, FINETUNE, init=pretrained[0] / LAST))
    assert result.returncode == 2
    assert f"{pretrained[0] / LAST} was trained with another dictionary than" in result.stderr
    assert str(tmp_path / "en-it" / pair.BIN / "dict.src.txt") in result.stderr
    assert "pair-finetune --dict" in result.stderr and not (out / LAST).exists()


def test_a_checkpoint_of_another_dictionary_size_is_refused(pretrained, tmp_path):
    bin_dict = tmp_path / "bin" / "dict.src.txt"
    bin_dict.parent.mkdir()
    bin_dict.write_text("a 1\nb 1\n")
    with pytest.raises(DictionaryMismatch, match=r"embeds \d+ tokens, the dictionary .* has 6"):
        _check_init(pretrained[0] / LAST, tmp_path / "bin", [f"--arch={PRETRAIN.arch}"])


def test_a_checkpoint_of_another_arch_is_refused(data, pretrained):
    with pytest.raises(ArchitectureMismatch, match="fine-tune with the arch it was pre-trained"):
        _check_init(
            pretrained[0] / LAST, data["finetune"] / pair.BIN, ["--arch=mlrep_transformer_base"]
        )


@pytest.fixture(scope="module")
def translating(data, pretrained, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("translating")
    result = run(pair_train(data, "finetune", out, TRANSLATE, init=pretrained[0] / LAST))
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def pair_translate(data: dict, model: Path, source: Path, out: Path) -> int:
    """`mlrep nmt pair-translate` of en→it, 3 lines a batch (the valid set's 4: 3 + 1)."""
    argv = ["nmt", "pair-translate", "--section", "ch4_jass", "--params", str(data["params"])]
    argv += ["--model", str(model), "--data-bin", str(data["finetune"] / pair.BIN)]
    argv += ["--direction", "en-it", "--source", str(source), "--out", str(out)]
    return cli.main([*argv, "--beam", "2", "--batch-size", "3"])


def test_a_finetuned_pair_model_translates_into_target_words(data, translating, tmp_path):
    source = data["inputs"]["bitext_valid"][0]  # English
    out = tmp_path / "valid.hyp"
    assert (translating / BEST).exists()
    assert pair_translate(data, translating, source, out) == 0
    hypotheses = read_lines(out, ValueError)
    assert len(hypotheses) == len(read_lines(source, ValueError)) == 4
    italian = {
        w
        for line in read_lines(data["inputs"]["bitext_train"][1], ValueError)
        for w in line.split()
    }
    words = [w for line in hypotheses for w in line.split()]
    # Italian words only: no tag, no [M], no <unk> of a forced prefix, no BPE joiner
    assert words and set(words) <= italian, hypotheses


def test_pair_runs_trains_each_step_as_its_own_process_would(data, pretrained, tmp_path):
    """A fine-tune that learns, then a worse one, then a decoding, in one process (`mlrep nmt
    pair-runs`): the second fine-tune inherits nothing of the first (fairseq keeps its best
    validation loss on module functions: inherited, the second run would report the first's
    loss and keep no best checkpoint of its own), and the job's --params reach every step."""
    outs = [tmp_path / "learns", tmp_path / "barely"]
    init = pretrained[0] / LAST
    steps = [
        pair_train(data, "finetune", out, s, init=init)[4:]
        for out, s in zip(outs, (TRANSLATE, FINETUNE), strict=True)
    ]
    steps = [[a for a in step if a not in ("--params", str(data["params"]))] for step in steps]
    hyp = tmp_path / "valid.hyp"
    decode = ["pair-translate", "--section", "ch4_jass", "--model", str(outs[1])]
    decode += ["--data-bin", str(data["finetune"] / pair.BIN), "--direction", "en-it"]
    decode += ["--source", str(data["inputs"]["bitext_valid"][0]), "--out", str(hyp)]
    argv = ["nmt", "pair-runs", "--params", str(data["params"]), "--threads", "1"]
    assert cli.main([*argv, *steps[0], "::", *steps[1], "::", *decode]) == 0
    learns, barely = (json.loads((out / SUMMARY).read_text(encoding="utf-8")) for out in outs)
    assert (learns["updates"], barely["updates"]) == (40, 2)
    assert barely["best_valid_loss"] > learns["best_valid_loss"] + 0.5
    assert all((out / BEST).exists() for out in outs)
    assert len(read_lines(hyp, ValueError)) == 4


def test_pair_runs_stops_at_the_first_failing_step(data, tmp_path, capsys):
    missing = tmp_path / "absent"
    decode = ["pair-translate", "--section", "ch4_jass", "--model", str(missing)]
    decode += ["--data-bin", str(data["finetune"] / pair.BIN), "--direction", "en-it"]
    decode += ["--source", str(data["inputs"]["bitext_valid"][0])]
    first, second = tmp_path / "one.hyp", tmp_path / "two.hyp"
    argv = ["nmt", "pair-runs", "--params", str(data["params"])]
    assert cli.main([*argv, *decode, "--out", str(first), "::", *decode, "--out", str(second)])
    assert not first.exists() and not second.exists()
    assert str(missing) in capsys.readouterr().err


@pytest.mark.parametrize(
    "steps", [[], ["::", "pair-score"], ["pair-runs", "--threads", "1"]], ids=str
)
def test_pair_runs_refuses_an_empty_or_nested_step(steps, capsys):
    assert cli.main(["nmt", "pair-runs", *steps]) == 2
    assert "give pair verbs separated by '::'" in capsys.readouterr().err


SHAPE = ["--layers", "1", "--heads", "2", "--embed-dim", "32", "--ffn-dim", "48"]


def test_a_shaped_model_learns_from_scratch_on_its_own_dictionary(data, tmp_path):
    """Chapter 4's #0*: no pre-training, the sample's own dictionary (`pair-finetune`
    without ``--dict``) and a model shape of its own (Table B.1) on top of the arch."""
    own = tmp_path / "own"
    assert pair_finetune(data["inputs"], None, "en-it", own) == 0
    out = tmp_path / "model"
    result = run([*pair_train({"own": own, **data}, "own", out, TRANSLATE), *SHAPE])
    assert result.returncode == 0, result.stderr[-3000:]
    weights = parameters(out / BEST)
    assert weights["encoder.layers.0.fc1.weight"].shape == (48, 32)
    assert not any(name.startswith("encoder.layers.1.") for name in weights)
    losses = fairseq_losses(result.stderr, "train")
    assert len(losses) == TRANSLATE.max_update
    # measured: first-5 mean 5.84, last-5 mean 2.99 (ratio 0.51)
    assert_loss_falls(losses, window=5, below=0.75)
    # the first validation (after one update) stands in for the untrained model's; measured
    # 6.96 → 5.83 (best 4.98)
    valid = [row["loss"] for row in read(out / VALID_LOG)]
    assert_improves(valid[-1], valid[0], by=0.5, higher_is_better=False, what="valid loss")
