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
from mlrep.nmt.pair import BIN
from mlrep.nmt.pair import SUMMARY as PAIR_SUMMARY
from mlrep.nmt.prepare import fairseq_preprocess
from mlrep.nmt.token_accuracy import (
    OVERALL,
    Tally,
    TokenAccuracyError,
    accuracies,
    evaluate,
    read_pairs,
    read_sides,
    tally,
)
from mlrep.nmt.train import BEST, encoder_layers, train
from mlrep.nmt.variant import Variant
from mlrep.report.metrics import read as read_metrics
from mlrep.text.lines import meta_path
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


def _evaluate(pretrained: Pretrained, folder: Path, files: dict, batch: int = BATCH) -> dict:
    """`evaluate` of one checkpoint folder on English pairs: that language's accuracies."""
    return evaluate(folder / BEST, pretrained.data_bin, read_sides({"en": files}), batch)["en"]


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
    result = _evaluate(pretrained, pretrained.trained, pretrained.files)
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
    result = _evaluate(pretrained, pretrained.trained, pretrained.files)
    tokens, accuracy = result["tokens"], result["accuracy"]
    assert tokens["mass"] < tokens["deshuffle"]  # MASS targets are half [M]
    weighted = sum(accuracy[t] * tokens[t] for t in TASKS) / sum(tokens[t] for t in TASKS)
    assert accuracy[OVERALL] == pytest.approx(weighted)
    assert accuracy[OVERALL] != pytest.approx(sum(accuracy[t] for t in TASKS) / len(TASKS))


def test_training_on_the_pairs_raises_the_accuracy(pretrained):
    """Measured: 0.7 untrained (1 update at lr 1e-7), 60.4 after 40 updates."""
    scores = {
        name: _evaluate(pretrained, folder, pretrained.files)["accuracy"]
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
    on_cpu = _evaluate(pretrained, pretrained.trained, pretrained.files)
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(decode_module, "visible", lambda: Devices(1))
    on_gpu = _evaluate(pretrained, pretrained.trained, pretrained.files)
    assert gpu.modules == ["VariantTransformer"] and on_gpu == on_cpu
    batches = sum(-(-on_cpu["pairs"][task] // BATCH) for task in TASKS)
    assert gpu.tensors == 3 * batches  # source tokens, source lengths, decoder input


def _pair_data(pretrained: Pretrained, folder: Path) -> Path:
    """A `mlrep nmt pair-pretrain`-shaped folder around the fixture's data-bin: ``bin/`` and a
    ``pair.json`` whose train sources are real `mlrep text pretrain-pairs` files (MASS and
    Deshuffling of the dev words), so their metadata hold the moved-word share."""
    folder.mkdir()
    (folder / BIN).symlink_to(pretrained.data_bin)
    words = _write(folder / "words.en", [" ".join(["w1", "w2", "w3", "w4", "w5"] * 2)] * 6)
    source, target = folder / "train.src", folder / "train.tgt"
    argv = ["text", "pretrain-pairs", "--input", str(words), "--lang", "en", "--seed", "1"]
    argv += ["--tasks", *TASKS, "--source", str(source), "--target", str(target)]
    assert main(argv) == 0
    sources = {"train": [[str(source), str(target)]], "valid": []}
    _write(folder / PAIR_SUMMARY, [json.dumps({"sources": sources})])
    return folder


def test_the_verb_scores_several_models_in_one_process(pretrained, tmp_path, capsys):
    data = _pair_data(pretrained, tmp_path / "data")
    argv = ["nmt", "token-accuracy", "--section", "ch4_jass", "--scale", "tiny"]
    argv += ["--batch-size", str(BATCH)]
    for task, (source, target) in pretrained.files.items():
        argv += ["--pairs", "dev", "en", task, str(source), str(target)]
    outs = {name: tmp_path / name / "seed1" / "metrics.json" for name in ("trained", "untrained")}
    scored = {"trained": "dev:en:mass,dev:en:deshuffle", "untrained": "dev:en:mass"}
    for name, out in outs.items():
        folder = str(getattr(pretrained, name))
        argv += ["--model", f"pretrain/{name}", "1", folder, str(data), str(out), scored[name]]
    assert main(argv) == 0
    moved = json.loads(meta_path(data / "train.src").read_text(encoding="utf-8"))["extra"]
    for name, out in outs.items():
        written = read_metrics(out)  # the report's reader: a valid metrics file
        assert (written.run, written.seed, written.scale) == (f"pretrain/{name}", 1, "tiny")
        files = {t: pretrained.files[t] for t in ("mass", "deshuffle") if t in scored[name]}
        expected = _evaluate(pretrained, getattr(pretrained, name), files)
        accuracy = {f"token_accuracy_en_{t}": v for t, v in expected["accuracy"].items()}
        # the moved-word share of the data's Deshuffling pairs, in percent
        share = 100 * moved["moved_word_ratio"]["deshuffle"]
        assert written.metrics == accuracy | {"moved_words_en_deshuffle": round(share, 2)}
    assert 50 < share <= 100  # a shuffle of ten words moves most of them
    assert (
        read_metrics(outs["untrained"]).metrics["token_accuracy_en_overall"]
        == (read_metrics(outs["untrained"]).metrics["token_accuracy_en_mass"])
    )


def test_the_verb_refuses_pairs_it_cannot_match_and_writes_nothing(pretrained, tmp_path, capsys):
    data = _pair_data(pretrained, tmp_path / "data")
    source, target = pretrained.files["mass"]
    out = tmp_path / "m" / "metrics.json"
    argv = ["nmt", "token-accuracy", "--section", "ch4_jass", "--scale", "tiny"]
    argv += ["--batch-size", str(BATCH), "--pairs", "dev", "en", "mass", str(source), str(target)]
    model = ["--model", "pretrain/m", "1", str(pretrained.trained), str(data), str(out)]
    assert main([*argv, *argv[-6:], *model, "dev:en:mass"]) == 2
    assert "--pairs dev en mass is given twice" in capsys.readouterr().err
    assert main([*argv, *model, "dev:en:deshuffle"]) == 2
    assert "'dev:en:deshuffle' names no --pairs" in capsys.readouterr().err
    # a second model that cannot load: neither model's metrics are written
    missing = ["--model", "pretrain/x", "1", str(tmp_path / "none"), str(data)]
    extra = [*missing, str(tmp_path / "x.json"), "dev:en:mass"]
    assert main([*argv, *model, "dev:en:mass", *extra]) == 2
    assert f"{tmp_path / 'none' / BEST}: no checkpoint" in capsys.readouterr().err
    assert not out.exists()


def test_pair_files_of_different_lengths_are_refused(pretrained, tmp_path):
    source, target = pretrained.files["mass"]
    short = _write(tmp_path / "short.tgt", target.read_text(encoding="utf-8").splitlines()[:-1])
    with pytest.raises(TokenAccuracyError) as error:
        read_sides({"en": {"mass": (source, short)}})
    assert str(source) in str(error.value) and str(short) in str(error.value)
    assert "12 lines" in str(error.value) and "11" in str(error.value)
    assert "mlrep text pretrain-pairs" in str(error.value)
    empty = (_write(tmp_path / "e.src", []), _write(tmp_path / "e.tgt", []))
    with pytest.raises(TokenAccuracyError, match=f"{empty[0]}: no pairs"):
        read_sides({"en": {"mass": empty}})


def test_an_unknown_task_name_is_refused(pretrained):
    files = {"jass": pretrained.files["mass"]}
    with pytest.raises(TokenAccuracyError, match="unknown pre-training task jass"):
        read_sides({"en": files})


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
    result = _evaluate(pretrained, pretrained.trained, {"deshuffle": (source, target)}, 2)
    assert result["tokens"]["deshuffle"] == 5 and result["unknown"]["deshuffle"] == 2
