"""LEALLA's pieces by hand: the AMS/FD/LD objectives, the students' parameter counts and
pooling, the loss of each ablation, the teacher cache and the teacher loaded by name."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mlrep.embed import objectives, teacher
from mlrep.embed.distill import DistillModel
from mlrep.embed.settings import DistillConfig, EmsConfigError, StudentConfig
from mlrep.embed.student import Student, parameter_counts

torch.set_num_threads(1)


def small(pooling: str = "cls", **shape) -> StudentConfig:
    values = dict(vocab_size=50, max_tokens=8, layers=2, dim=16, ffn_dim=32, heads=2)
    return StudentConfig(**(values | shape), pooling=pooling)


def test_ams_is_the_margin_softmax_as_a_batch_mean_by_hand():
    eye = torch.eye(2)
    # positives (1 - 0.3) / 0.5 = 1.4, negatives 0: 2 rows + 2 columns, over N = 2
    got = objectives.ams(eye, eye, temperature=0.5, margin=0.3).item()
    assert got == pytest.approx(2 * math.log(1 + math.exp(-1.4)))


def test_feature_distillation_by_hand_and_zero_for_identical_vectors():
    teacher_vectors = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    assert objectives.feature_distillation(teacher_vectors, torch.zeros(2, 2)).item() == 2.5
    assert objectives.feature_distillation(teacher_vectors, teacher_vectors.clone()).item() == 0


def test_logit_distillation_by_hand_zero_when_similarities_match_and_not_a_kl():
    eye = torch.eye(2)
    ones = torch.ones(2, 2)  # every student cosine is 1: off-diagonal errors of 1
    # (1/N²) Σ ((φ_t − φ_s)/T)² = (0 + 1 + 1 + 0) / 4 / 0.5² = 2
    assert objectives.logit_distillation((eye, eye), (ones, ones), 0.5).item() == pytest.approx(2.0)
    # the student's own width and scale do not matter, only its cosine matrix
    rng = torch.Generator().manual_seed(0)
    x, y = torch.randn(5, 8, generator=rng), torch.randn(5, 8, generator=rng)
    rotation = torch.linalg.qr(torch.randn(8, 8, generator=rng))[0]
    same = objectives.logit_distillation((x, y), (3 * x @ rotation, y @ rotation), 100.0)
    assert same.item() == pytest.approx(0.0, abs=1e-9)
    # squared error is symmetric in teacher and student (a KL would not be)
    a = objectives.logit_distillation((x, y), (y, x), 2.0)
    assert a.item() > 0 and a.item() == objectives.logit_distillation((y, x), (x, y), 2.0).item()


def test_parameter_counts_by_hand_and_at_the_thesis_shapes():
    # embeddings (51 tokens incl. [CLS] + 9 positions + 2 types) × 16 + LayerNorm 32 = 1024;
    # a layer: attention 4 × (16·16 + 16) + LN 32 + FFN 16·32 + 32 + 32·16 + 16 + LN 32 = 2224
    layers, pooler = 2 * 2224, 16 * 16 + 16
    assert parameter_counts(Student(small()).bert) == {
        "parameters": 1024 + layers + pooler,
        "encoder_parameters": layers,
    }
    assert parameter_counts(Student(small("mean")).bert)["parameters"] == 1024 + layers
    # Table 3.1/A.3 rows (P, P_E in millions) with LaBSE's 501,153-token vocabulary
    rows = {(12, 768, 3072, 12): (471, 85), (6, 768, 3072, 12): (428, 42)}
    rows |= {(24, 128, 512, 8): (69, 5), (24, 256, 256, 4): (138, 10)}
    for (layers_, dim, ffn, heads), published in rows.items():
        shape = dict(layers=layers_, dim=dim, ffn_dim=ffn, heads=heads, max_tokens=511)
        with torch.device("meta"):  # LaBSE's 512 positions; its vocabulary holds [CLS]
            bert = Student(small(vocab_size=501_152, **shape)).bert
        counts = parameter_counts(bert)
        got = (round(counts["parameters"] / 1e6), round(counts["encoder_parameters"] / 1e6))
        assert got == pytest.approx(published, abs=1), (layers_, dim)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_padding_does_not_change_a_students_sentence_vector(pooling):
    torch.manual_seed(0)
    model = Student(small(pooling)).eval()
    tokens = torch.tensor([[5, 6, 7], [8, 9, 0]])
    padded = torch.cat([tokens, torch.zeros(2, 3, dtype=torch.long)], dim=1)
    with torch.no_grad():
        assert torch.allclose(model(tokens), model(padded), atol=1e-5)
        one = model(tokens[1:, :2])
    assert torch.allclose(model(tokens)[1], one[0], atol=1e-5)
    with torch.no_grad():
        other = Student(small("mean" if pooling == "cls" else "cls")).eval()(tokens)
    assert not torch.allclose(model(tokens).detach(), other, atol=1e-3)


def batch(seed: int = 0, dim: int = 6):
    rng = torch.Generator().manual_seed(seed)
    tokens = torch.randint(3, 50, (4, 5), generator=rng)
    return tokens, tokens.flip(1), torch.randn(4, dim, generator=rng), torch.randn(4, dim)


def test_the_combined_loss_weights_each_term_and_ablations_drop_terms():
    torch.manual_seed(0)
    config = DistillConfig(teacher_dim=6, alpha=2.0, beta=30.0, gamma=0.5, ld_temperature=4.0)
    model = DistillModel(small(), config).eval()
    terms = model.loss_terms(*batch())
    assert set(terms) == {"loss", "ams", "fd", "ld"}
    expected = 2.0 * terms["ams"] + 30.0 * terms["fd"] + 0.5 * terms["ld"]
    assert terms["loss"].item() == pytest.approx(expected.item(), rel=1e-6)
    for loss, kept in [("fd", {"fd"}), ("ld", {"ld"}), ("ams+ld", {"ams", "ld"})]:
        torch.manual_seed(0)
        ablated = DistillModel(small(), DistillConfig(teacher_dim=6, loss=loss)).eval()
        assert set(ablated.loss_terms(*batch())) == kept | {"loss"}
    assert DistillModel(small(), DistillConfig(teacher_dim=6, loss="ld")).fd is None


def test_fd_is_zero_when_the_projected_student_is_the_teacher():
    torch.manual_seed(0)
    model = DistillModel(small(), DistillConfig(teacher_dim=6, loss="fd")).eval()
    src, tgt, _, _ = batch()
    with torch.no_grad():
        target = model.fd(model.embed(src)), model.fd(model.embed(tgt))
        assert model.loss_terms(src, tgt, *target)["fd"].item() == pytest.approx(0, abs=1e-10)
        assert model.loss_terms(src, tgt, target[1], target[0])["fd"].item() > 0


def test_df_regresses_the_wide_vector_and_syn_a_frozen_projection():
    torch.manual_seed(0)
    df = DistillModel(small(), DistillConfig(teacher_dim=6, loss="ams+df")).eval()
    src, tgt, t_src, t_tgt = batch()
    with torch.no_grad():
        wide = df.widen(df.student(src)), df.widen(df.student(tgt))
        assert df.embed(src).shape == (4, 16)  # back to the student's width after D_t
        assert df.loss_terms(src, tgt, *wide)["df"].item() == pytest.approx(0, abs=1e-10)
    syn = DistillModel(small(), DistillConfig(teacher_dim=6, loss="ams+syn")).eval()
    assert "syn_weight" in syn.state_dict()
    assert all(p.shape != (16, 6) for p in syn.parameters())  # not trained
    with torch.no_grad():
        syn.syn_weight.copy_(torch.randn(16, 6))
        projected = t_src @ syn.syn_weight.T + syn.syn_bias
        by_hand = (projected - syn.embed(src)).pow(2).sum(1).mean()
        by_hand += (t_tgt @ syn.syn_weight.T - syn.embed(tgt)).pow(2).sum(1).mean()
        assert syn.loss_terms(src, tgt, t_src, t_tgt)["syn"].item() == pytest.approx(
            by_hand.item(), rel=1e-5
        )


def test_settings_refuse_unknown_choices_and_indivisible_heads():
    with pytest.raises(EmsConfigError, match="loss 'ams\\+kl'"):
        DistillConfig(teacher_dim=6, loss="ams+kl")
    with pytest.raises(EmsConfigError, match="pooling 'max'"):
        small("max")
    with pytest.raises(EmsConfigError, match="not a multiple of heads"):
        small(dim=10, heads=4)


def test_the_teacher_cache_is_computed_once_and_refuses_other_sentences(tmp_path):
    sentences = tmp_path / "train.src.txt"
    sentences.write_text("a\nb\nc\n")
    calls = []

    def encode(lines):
        calls.append(len(lines))
        return np.arange(len(lines) * 2, dtype=np.float64).reshape(-1, 2)

    out = tmp_path / "teacher" / "train.src.npy"
    first = teacher.cache(encode, sentences, out, "toy")
    again = teacher.cache(encode, sentences, out, "toy")
    assert calls == [3] and first.dtype == np.float32 and np.array_equal(first, again)
    sentences.write_text("a\nb\n")
    with pytest.raises(teacher.TeacherError, match=r"3 cached teacher embeddings .* has 2 lines"):
        teacher.load_cached(out, sentences)
    sentences.write_text("a\nb\nd\n")
    with pytest.raises(teacher.TeacherError, match="another version"):
        teacher.cache(encode, sentences, out, "toy")
    pairs = teacher.TeacherPairs(first, first)
    with pytest.raises(teacher.TeacherError, match="3 teacher embeddings for 4 pairs"):
        pairs.check(4, "distillation")


def test_a_teacher_is_a_loader_and_a_folder_or_a_cached_hub_id(tmp_path):
    from tests.test_embed_baselines import SENTENCES, bert_like

    folder = bert_like(tmp_path / "labse-like")
    encoder = teacher.load("sentence_transformers", str(folder), batch_size=2)
    vectors = encoder.encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 8)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    with pytest.raises(teacher.TeacherError, match="neither a folder nor a hub id"):
        teacher.load("sentence_transformers", "nobody/not-cached-model", batch_size=2)
