"""Teacher-forced token accuracy (`mlrep nmt token-accuracy`) of tiny fairseq models trained
in-process on pre-training pairs of a small synthetic corpus: against a one-sentence-at-a-time
loop and fairseq's own accuracy, ``[M]`` excluded, the overall over tokens, learning, bad
input."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
import torch

from mlrep.cli import main
from mlrep.device import Devices
from mlrep.io import atomic_write_text
from mlrep.nmt import decode as decode_module
from mlrep.nmt.decode import DecodeError, load_model
from mlrep.nmt.prepare import fairseq_preprocess
from mlrep.nmt.token_accuracy import (
    OVERALL,
    Tally,
    TokenAccuracyError,
    accuracies,
    evaluate,
    read_pairs,
    tally,
)
from mlrep.nmt.train import BEST, encoder_layers, train
from mlrep.nmt.variant import Variant
from mlrep.text.pretrain_pairs import Sentence, make_pairs
from mlrep.text.pretrain_tasks import MASK, TASK_TAGS, TaskSettings, language_tag
from tests.device_helpers import FakeCuda
from tests.learning import assert_improves
from tests.nmt_helpers import settings

TASKS = ["mass", "deshuffle"]  # a masking task (targets with [M]) and one without
WORDS = [f"w{i}" for i in range(12)]
BATCH = 3  # not a divisor of the pair counts: the last batch is short


def _sentences(rng: random.Random, n: int) -> list[Sentence | None]:
    """Runs of consecutive words (w3 w4 w5 …, w11 w0 …): each word follows from the one
    before it, so a few updates teach the decoder something that held-out pairs reward."""
    out: list[Sentence | None] = []
    for _ in range(n):
        start, length = rng.randrange(len(WORDS)), rng.randint(4, 9)
        out.append(Sentence(tuple(WORDS[(start + i) % len(WORDS)] for i in range(length))))
    return out


def _write(path: Path, lines: list[str]) -> Path:
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return path


@dataclasses.dataclass
class Pretrained:
    data_bin: Path
    trained: Path  # checkpoint folders
    untrained: Path
    files: dict[str, tuple[Path, Path]]  # each task's dev pair files


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory) -> Pretrained:
    """MASS and Deshuffling pairs of 40 training and 12 dev sentences, binarised with one
    dictionary (the words, ``[M]`` and the tags; fairseq's valid subset is the dev Deshuffling
    pairs), and the tiny Transformer trained on them for 1 update at warm-up's starting
    learning rate (untrained) and for 40 updates."""
    root = tmp_path_factory.mktemp("token-accuracy")
    rng = random.Random(0)
    train_pairs, _ = make_pairs(_sentences(rng, 40), TASKS, "en", 1, TaskSettings())
    files = {}
    dev = _sentences(rng, 12)
    for task in TASKS:
        pairs, _ = make_pairs(dev, [task], "en", 2, TaskSettings())
        files[task] = tuple(
            _write(root / "dev" / f"{task}.{side}", [p[i] for p in pairs])
            for i, side in enumerate(("src", "tgt"))
        )
    raw = root / "raw"
    for split, pairs in (("train", train_pairs), ("valid", read_pairs(*files["deshuffle"]))):
        for i, side in enumerate(("src", "tgt")):
            _write(raw / f"{split}.src-tgt.{side}", [p[i] for p in pairs])
    symbols = [*WORDS, MASK, *sorted(set(TASK_TAGS.values())), language_tag("en")]
    dictionary = _write(root / "dict.txt", [f"{s} 1" for s in symbols])
    fairseq_preprocess(raw, root / "bin", dictionary)
    for name, updates in (("untrained", 1), ("trained", 40)):
        s = settings(max_update=updates, save_interval_updates=updates)
        s = dataclasses.replace(s, max_tokens=4096)  # one batch: every update on all pairs
        train(root / "bin", root / name, name, Variant.of(encoder_layers(s.arch)), s)
    return Pretrained(root / "bin", root / "trained", root / "untrained", files)


def _loop(checkpoint: Path, data_bin: Path, pairs: list[tuple[str, str]]) -> tuple[int, int]:
    """(correct, counted) the plain way: one sentence per forward pass, the decoder fed
    EOS + the gold target, masks found by the dictionary's symbol of each gold id."""
    model, task, device = load_model(checkpoint, data_bin)
    d = task.target_dictionary
    correct = counted = 0
    with torch.no_grad():
        for source, target in pairs:
            src = [d.index(w) for w in source.split()] + [d.eos()]
            gold = [d.index(w) for w in target.split()] + [d.eos()]
            logits, _ = model(
                torch.tensor([src], device=device),
                torch.tensor([len(src)], device=device),
                torch.tensor([[d.eos(), *gold[:-1]]], device=device),
            )
            for position, token in enumerate(gold):
                if d[token] != MASK:
                    counted += 1
                    correct += int(logits[0, position].argmax().item() == token)
    return correct, counted


def test_batched_accuracy_is_the_one_sentence_loops(pretrained):
    result = evaluate(pretrained.trained / BEST, pretrained.data_bin, pretrained.files, BATCH)
    correct = counted = 0
    for task, paths in pretrained.files.items():
        c, n = _loop(pretrained.trained / BEST, pretrained.data_bin, read_pairs(*paths))
        assert (result["correct"][task], result["tokens"][task]) == (c, n)
        assert result["accuracy"][task] == pytest.approx(100 * c / n)
        correct, counted = correct + c, counted + n
    assert result["accuracy"][OVERALL] == pytest.approx(100 * correct / counted)
    assert 0 < correct < counted  # neither nothing nor everything: the comparison means a thing


def test_without_masks_it_is_fairseqs_own_accuracy(pretrained):
    """fairseq's label-smoothed criterion reports the accuracy of every non-padding target
    position (the end of sentence included) of its binarised valid subset: the Deshuffling
    dev pairs, which hold no [M]."""
    from fairseq.criterions.label_smoothed_cross_entropy import (
        LabelSmoothedCrossEntropyCriterion,
    )

    model, task, device = load_model(pretrained.trained / BEST, pretrained.data_bin)
    task.load_dataset("valid")
    dataset = task.dataset("valid")
    sample = dataset.collater([dataset[i] for i in range(len(dataset))])
    criterion = LabelSmoothedCrossEntropyCriterion(task, False, 0.0, report_accuracy=True)
    with torch.no_grad():
        _, _, log = criterion(model, sample)
    ours = tally(model, task, device, read_pairs(*pretrained.files["deshuffle"]), BATCH)
    assert (ours.correct, ours.tokens) == (log["n_correct"], log["total"])


def test_mask_positions_are_not_counted(pretrained):
    pairs = read_pairs(*pretrained.files["mass"])
    pieces = [t.split() for _, t in pairs]
    assert sum(p.count(MASK) for p in pieces) > len(pairs)  # there are masks to leave out
    expected = sum(len(p) - p.count(MASK) + 1 for p in pieces)  # + 1: the end of sentence
    model, task, device = load_model(pretrained.trained / BEST, pretrained.data_bin)
    assert tally(model, task, device, pairs, BATCH).tokens == expected


def test_the_overall_is_over_tokens_not_the_mean_of_the_tasks(pretrained):
    by_hand = accuracies({"mass": Tally(2, 10, 9), "deshuffle": Tally(2, 30, 15)})
    assert by_hand["accuracy"] == {"mass": 90.0, "deshuffle": 50.0, OVERALL: 60.0}  # mean: 70
    assert by_hand["tokens"][OVERALL] == 40 and by_hand["pairs"][OVERALL] == 4
    result = evaluate(pretrained.trained / BEST, pretrained.data_bin, pretrained.files, BATCH)
    tokens, accuracy = result["tokens"], result["accuracy"]
    assert tokens["mass"] < tokens["deshuffle"]  # MASS targets are half [M]
    weighted = sum(accuracy[t] * tokens[t] for t in TASKS) / sum(tokens[t] for t in TASKS)
    assert accuracy[OVERALL] == pytest.approx(weighted)
    assert accuracy[OVERALL] != pytest.approx(sum(accuracy[t] for t in TASKS) / len(TASKS))


def test_training_on_the_pairs_raises_the_accuracy(pretrained):
    """Measured: 0.7 untrained (1 update at lr 1e-7), 60.4 after 40 updates."""
    scores = {
        name: evaluate(folder / BEST, pretrained.data_bin, pretrained.files, BATCH)["accuracy"]
        for name, folder in (("untrained", pretrained.untrained), ("trained", pretrained.trained))
    }
    assert_improves(
        scores["trained"][OVERALL],
        scores["untrained"][OVERALL],
        by=30,
        higher_is_better=True,
        what="dev token accuracy",
    )


def test_it_runs_on_the_jobs_gpu(pretrained, monkeypatch):
    on_cpu = evaluate(pretrained.trained / BEST, pretrained.data_bin, pretrained.files, BATCH)
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(decode_module, "visible", lambda: Devices(1))
    on_gpu = evaluate(pretrained.trained / BEST, pretrained.data_bin, pretrained.files, BATCH)
    assert gpu.modules == ["VariantTransformer"] and on_gpu == on_cpu
    batches = sum(-(-on_cpu["pairs"][task] // BATCH) for task in TASKS)
    assert gpu.tensors == 3 * batches  # source tokens, source lengths, decoder input


def test_the_verb_writes_the_metrics(pretrained, tmp_path, capsys):
    out = tmp_path / "accuracy.json"
    argv = ["nmt", "token-accuracy", "--section", "ch4_jass", "--scale", "tiny"]
    argv += ["--model", str(pretrained.trained), "--data-bin", str(pretrained.data_bin)]
    argv += ["--batch-size", str(BATCH), "--out", str(out)]
    for task, (source, target) in pretrained.files.items():
        argv += ["--pairs", task, str(source), str(target)]
    assert main(argv) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    expected = evaluate(pretrained.trained / BEST, pretrained.data_bin, pretrained.files, BATCH)
    assert written == {**expected, "scale": "tiny"}
    out.unlink()
    source, target = pretrained.files["mass"]
    assert main([*argv, "--pairs", "mass", str(source), str(target)]) == 2
    assert "--pairs mass is given twice" in capsys.readouterr().err
    assert not out.exists()


def test_pair_files_of_different_lengths_are_refused(pretrained, tmp_path):
    source, target = pretrained.files["mass"]
    short = _write(tmp_path / "short.tgt", target.read_text(encoding="utf-8").splitlines()[:-1])
    with pytest.raises(TokenAccuracyError) as error:
        evaluate(pretrained.trained / BEST, pretrained.data_bin, {"mass": (source, short)}, 2)
    assert str(source) in str(error.value) and str(short) in str(error.value)
    assert "12 lines" in str(error.value) and "11" in str(error.value)
    assert "mlrep text pretrain-pairs" in str(error.value)
    empty = (_write(tmp_path / "e.src", []), _write(tmp_path / "e.tgt", []))
    with pytest.raises(TokenAccuracyError, match=f"{empty[0]}: no pairs"):
        evaluate(pretrained.trained / BEST, pretrained.data_bin, {"mass": empty}, 2)


def test_an_unknown_task_name_is_refused(pretrained):
    files = {"jass": pretrained.files["mass"]}
    with pytest.raises(TokenAccuracyError, match="unknown pre-training task jass"):
        evaluate(pretrained.trained / BEST, pretrained.data_bin, files, 2)


def test_a_dictionary_of_another_size_is_refused(pretrained, tmp_path):
    other = tmp_path / "bin"
    other.mkdir()
    for path in pretrained.data_bin.iterdir():
        text = path.read_bytes()
        if path.name.startswith("dict."):
            text += b"w99 1\n"
        (other / path.name).write_bytes(text)
    with pytest.raises(DecodeError) as error:
        load_model(pretrained.trained / BEST, other)
    message = str(error.value)
    assert str(pretrained.trained / BEST) in message and str(other) in message
    assert "do not fit the dictionaries" in message
    assert "data-bin the model was trained on" in message


def test_unknown_pieces_read_as_unk_and_are_counted(pretrained, tmp_path):
    source = _write(tmp_path / "x.src", ["[BRSS] [En] zz w1 yy w2"])
    target = _write(tmp_path / "x.tgt", ["w1 zz yy w2"])
    result = evaluate(
        pretrained.trained / BEST, pretrained.data_bin, {"deshuffle": (source, target)}, 2
    )
    assert result["tokens"]["deshuffle"] == 5 and result["unknown"]["deshuffle"] == 2
