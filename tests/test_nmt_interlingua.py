"""The Chapter 7 interlingua on hand-sized tensors: its length, its queries, its first layer's
missing residual, its losses and its refusals; then its settings, metrics and registration."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from fairseq.data import Dictionary
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

from mlrep.cliutil import UsageError, fill, omissible_names, option_names
from mlrep.device import BatchPlan
from mlrep.nmt.data import Direction, NmtDataError
from mlrep.nmt.interlingua import (
    ARCHITECTURES,
    INTERLINGUA,
    InterlinguaCriterion,
    InterlinguaError,
    InterlinguaTransformer,
    cosine_alignment,
    interlingua_arch,
    teacher_lengths,
)
from mlrep.nmt.metrics import gold_metrics, length_metrics
from mlrep.nmt.model import MODEL, ArchitectureMismatch, VariantTransformer
from mlrep.nmt.train import TrainSettings, fairseq_args
from mlrep.nmt.variant import Variant
from tests.nmt_helpers import StubTask, settings, word_dictionary

torch.set_num_threads(1)
K = 8  # --max-interlingua-length of the hand-sized models
WORDS = ["__en__", "__it__", "__nl__", "a", "b", "c", "d", "e"]


def dictionary() -> Dictionary:
    return word_dictionary(WORDS)


def build(query: str = "var", length: int = 0, model=InterlinguaTransformer):
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    model.add_args(parser)
    flags = [f"--interlingua-query={query}", f"--max-interlingua-length={K}"]
    flags += [f"--interlingua-length={length}"] if length else []
    args = parser.parse_args(flags if model is InterlinguaTransformer else [])
    name = f"{INTERLINGUA}_tiny" if model is InterlinguaTransformer else f"{MODEL}_tiny"
    ARCH_CONFIG_REGISTRY[name](args)
    torch.manual_seed(0)
    return model.build_model(args, StubTask(dictionary())).eval()


def ids(*words: str) -> list[int]:
    d = dictionary()
    return [d.index(w) for w in words]


PAD, EOS = 1, 2
# left-padded as fairseq batches sources: an Italian source of 3 subwords, an English one of 4
SOURCES = torch.tensor([[PAD, *ids("__it__", "a", "b", "c"), EOS], [*ids("__en__", *"abcd"), EOS]])


def test_the_interlingua_is_as_long_as_the_predicted_length_and_english_keeps_its_own():
    model = build()
    predictor = model.encoder.interlingua.length
    with torch.no_grad():
        predictor.weight.zero_()
        predictor.bias.zero_()
        predictor.bias[5] = 1.0  # every source predicts 5
    out = model.encoder(SOURCES)
    assert out["interlingua_lengths"][0].tolist() == [5, 4]  # Italian: predicted; English: 4
    assert out["encoder_out"][0].shape == (5, 2, 64)
    assert out["encoder_padding_mask"][0].tolist() == [[False] * 5, [False] * 4 + [True]]
    assert out["encoder_out"][0][4, 1].abs().sum() == 0  # nothing beyond the English length
    assert model.encoder.lengths_used.tolist() == [5, 4]


def test_gold_lengths_are_used_as_given():
    model = build()
    out = model.encoder(SOURCES, interlingua_lengths=torch.tensor([2, 6]))
    assert out["interlingua_lengths"][0].tolist() == [2, 6]
    assert out["encoder_out"][0].shape[0] == 6


def test_the_decoder_attends_to_the_interlingua_through_sequence_generator_reordering():
    model = build()
    out = model.encoder(SOURCES)
    reordered = model.encoder.reorder_encoder_out(out, torch.tensor([1, 1, 0]))
    assert reordered["encoder_out"][0].shape[1] == 3
    prev = torch.tensor([[EOS, *ids("__it__", "a")]] * 3)
    logits, _ = model.decoder(prev, encoder_out=reordered)
    assert logits.shape == (3, 3, len(dictionary()))


def test_a_short_interlingua_is_the_same_alone_and_beside_a_longer_one():
    model = build()
    batched = model.encoder(SOURCES, interlingua_lengths=torch.tensor([2, 6]))["encoder_out"][0]
    alone = model.encoder(SOURCES[:1], interlingua_lengths=torch.tensor([2]))["encoder_out"][0]
    assert torch.allclose(batched[:2, 0], alone[:, 0], atol=1e-5)  # padded queries are masked
    # the length classifier pools over the source's own tokens, not over its padding
    padded = model.encoder(SOURCES[:1])["length_logits"][0]
    unpadded = model.encoder(SOURCES[:1, 1:])["length_logits"][0]
    assert torch.allclose(padded, unpadded, atol=1e-5)


@pytest.mark.parametrize("bad", [K, K + 3, 0, -1])
def test_a_length_outside_1_to_k_minus_1_is_refused_naming_the_option(bad):
    with pytest.raises(InterlinguaError, match="--max-interlingua-length"):
        build().encoder(SOURCES, interlingua_lengths=torch.tensor([bad, 3]))


def test_a_source_without_a_language_tag_is_refused():
    untagged = torch.tensor([[*ids("a", "b"), EOS]])
    with pytest.raises(InterlinguaError, match=r"starts with 'a', not a language tag"):
        build().encoder(untagged)


def test_the_first_layers_first_residual_is_removed_and_the_others_kept():
    layers = build().encoder.interlingua.layers
    torch.manual_seed(1)
    q, states = torch.randn(3, 2, 64), torch.randn(4, 2, 64)
    q_mask, s_mask = torch.zeros(2, 3, dtype=torch.bool), torch.zeros(2, 4, dtype=torch.bool)

    def silence(*modules: torch.nn.Linear) -> None:
        for m in modules:
            torch.nn.init.zeros_(m.weight)
            torch.nn.init.zeros_(m.bias)

    with torch.no_grad():
        # layer 1 with its cross-attention and FFN silenced: y = LN(LN(LN(FFN_Q(q)))), no q
        first = layers[0]
        silence(first.encoder_attn.out_proj, first.fc2)
        ffn = first.query_fc2(first.activation_fn(first.query_fc1(q)))
        out = first(q, q_mask, states, s_mask)
        assert torch.allclose(out, F.layer_norm(ffn, (64,)), atol=1e-3)
        assert not torch.allclose(out, F.layer_norm(q + ffn, (64,)), atol=1e-2)
        # layer 2 with every function silenced keeps its input through three residuals
        second = layers[1]
        silence(second.self_attn.out_proj, second.encoder_attn.out_proj, second.fc2)
        assert torch.allclose(second(q, q_mask, states, s_mask), F.layer_norm(q, (64,)), atol=1e-3)
    assert [layer.first for layer in layers] == [True, False]
    assert layers[0].self_attn is None and layers[1].self_attn is not None


@pytest.mark.parametrize(("query", "length"), [("var", 0), ("ls", 4), ("uni", 4)])
def test_language_specific_queries_differ_per_language_and_uni_shares_one(query, length):
    interlingua = build(query, length).encoder.interlingua
    italian, english = interlingua.select(torch.tensor([1, 0]), 3)
    assert italian.shape == (3, 64)
    assert torch.equal(italian, english) == (query == "uni")
    assert interlingua.queries.shape == (
        (1 if query == "uni" else 3),
        K if query == "var" else 4,
        64,
    )
    assert (interlingua.length is None) == (query != "var")


def test_fixed_length_queries_need_a_length():
    with pytest.raises(InterlinguaError, match="--interlingua-length"):
        build("ls", 0)
    out = build("ls", 3).encoder(SOURCES, interlingua_lengths=torch.tensor([5, 6]))
    assert out["interlingua_lengths"][0].tolist() == [3, 3]  # fixed: given lengths are not used


def test_alignment_loss_is_zero_for_identical_interlinguas_and_positive_otherwise():
    model = build()
    lengths = torch.tensor([3, 3])
    a = model.encoder(SOURCES, interlingua_lengths=lengths)
    assert torch.allclose(cosine_alignment(a, a), torch.zeros(2), atol=1e-6)
    other = torch.tensor(
        [[*ids("__nl__", "e", "e", "d"), EOS, PAD], [*ids("__en__", *"eeee"), EOS]]
    )
    b = model.encoder(other, interlingua_lengths=lengths)
    assert (cosine_alignment(a, b) > 0.01).all()


def test_training_lengths_are_the_english_sides():
    encoder = build().encoder
    targets = torch.tensor(
        [[*ids("__en__", *"abcde"), EOS], [*ids("__nl__", "a"), EOS, PAD, PAD, PAD, PAD]]
    )
    assert teacher_lengths(encoder, SOURCES, targets).tolist() == [5, 4]
    with pytest.raises(InterlinguaError, match="no English side"):
        teacher_lengths(encoder, SOURCES[:1], targets[1:])


def sample() -> dict:
    target = torch.tensor(
        [[*ids("__en__", "a", "b", "e"), EOS], [*ids("__nl__", "d"), EOS, PAD, PAD]]
    )
    prev = torch.tensor(
        [[EOS, *ids("__en__", "a", "b", "e")], [EOS, *ids("__nl__", "d"), PAD, PAD]]
    )
    net_input = {
        "src_tokens": SOURCES,
        "src_lengths": torch.tensor([5, 6]),
        "prev_output_tokens": prev,
    }
    return {"net_input": net_input, "target": target, "ntokens": 8, "id": torch.tensor([0, 1])}


def test_the_loss_adds_weighted_alignment_and_length_losses():
    model = build()
    task = StubTask(dictionary())
    losses = {}
    for beta, gamma in ((0.0, 0.0), (1.0, 0.0), (1.0, 0.1)):
        criterion = InterlinguaCriterion(task, False, 0.1, ia_weight=beta, lp_weight=gamma)
        loss, size, log = criterion(model, sample())
        losses[beta, gamma] = loss.item()
    assert size == 8
    assert log["nmt_loss"].item() == pytest.approx(losses[0.0, 0.0], rel=1e-5)
    ia, lp = log["ia_loss"].item() / 2, log["lp_loss"].item() / 2  # sums over 2 sentences
    assert ia > 0 and lp > 0
    assert losses[1.0, 0.0] - losses[0.0, 0.0] == pytest.approx(ia * size, rel=1e-4)
    assert losses[1.0, 0.1] - losses[1.0, 0.0] == pytest.approx(0.1 * lp * size, rel=1e-4)
    assert 0 <= log["length_correct"].item() <= 2


def test_a_checkpoint_of_the_other_model_is_refused():
    transformer, interlingua = build(model=VariantTransformer), build()
    with pytest.raises(ArchitectureMismatch, match="plain Transformer model but this is an"):
        interlingua.load_state_dict(transformer.state_dict())
    with pytest.raises(ArchitectureMismatch, match="interlingua model but this is a plain"):
        transformer.load_state_dict(interlingua.state_dict())


def test_architectures_are_registered_through_the_user_dir_with_thesis_sizes():
    import mlrep.nmt.mlrep_fairseq  # noqa: F401  (fairseq's --user-dir import)

    assert ARCH_MODEL_REGISTRY[f"{INTERLINGUA}_base"] is InterlinguaTransformer
    assert ARCHITECTURES[f"{INTERLINGUA}_base"] == (512, 2048, 8, 3, 3, 6)
    assert ARCHITECTURES[f"{INTERLINGUA}_big"] == (1024, 4096, 16, 3, 3, 6)
    model = build()
    assert len(model.encoder.layers) == 1 and len(model.encoder.interlingua.layers) == 2
    assert len(model.decoder.layers) == 2
    assert interlingua_arch(f"{MODEL}_big") == f"{INTERLINGUA}_big"


def test_fairseq_args_build_the_interlingua_of_the_arch_size(tmp_path):
    plan = BatchPlan(1, 512, 1, 1, 512)
    s = dataclasses.replace(settings(), interlingua="var", max_interlingua_length=64)
    argv = fairseq_args(tmp_path, tmp_path, Variant(), s, plan)
    for flag in (
        f"--arch={INTERLINGUA}_tiny",
        "--interlingua-query=var",
        "--max-interlingua-length=64",
        f"--criterion={INTERLINGUA}",
        "--ia-weight=1.0",
        "--lp-weight=0.1",
        "--best-checkpoint-metric=nmt_loss",
    ):
        assert flag in argv
    plain = fairseq_args(tmp_path, tmp_path, Variant(), settings(), plan)
    assert f"--arch={MODEL}_tiny" in plain and "--criterion=label_smoothed_cross_entropy" in plain
    assert not any("interlingua" in a for a in plain)
    with pytest.raises(InterlinguaError, match="interlingua-length > 0"):
        fairseq_args(tmp_path, tmp_path, Variant(), dataclasses.replace(s, interlingua="uni"), plan)


def test_length_metrics_compare_with_the_english_references(tmp_path: Path):
    (tmp_path / "it-en.len").write_text("3\n2\n5\n")
    (tmp_path / "nl-en.len").write_text("1\n")
    (tmp_path / "en-it.len").write_text("9\n")  # from English: not a prediction
    references = {
        Direction("it", "en"): ["a b c", "a b c", "a b c d e"],
        Direction("nl", "en"): ["a b"],
        Direction("en", "it"): ["a"],
    }
    found = length_metrics(tmp_path, references)
    assert found == pytest.approx(
        {
            "len_acc_it": 200 / 3,
            "len_diff_it": 1 / 3,
            "len_acc_nl": 0.0,
            "len_diff_nl": 1.0,
            "len_acc": 100 / 3,
            "len_diff": 2 / 3,
        }
    )
    (tmp_path / "nl-en.len").write_text("x\n")
    with pytest.raises(NmtDataError, match=r"nl-en\.len:1: 'x' is no length"):
        length_metrics(tmp_path, references)


def test_gold_metrics_rename_the_x_to_english_scores():
    scores = json.loads(
        json.dumps(
            {
                "metrics": {
                    "bleu_it-en": 20.0,
                    "bleu_nl-en": 30.0,
                    "sup_bleu": 25.0,
                    "floor_to_en_bleu": 2.0,
                },
                "bleu_stats": {
                    "to_en_bleu": [[1.0]],
                    "sup_bleu": [[1.0]],
                    "floor_to_en_bleu": [[2.0]],
                },
                "groups": {
                    "to_en_bleu": [["it-en", 1]],
                    "sup_bleu": [["it-en", 1]],
                    "floor_to_en_bleu": [["it-en", 1]],
                },
            }
        )
    )
    with pytest.raises(NmtDataError, match="--gold-length"):
        gold_metrics(scores)
    scores["metrics"]["to_en_bleu"] = 25.0
    metrics, stats, groups = gold_metrics(scores)
    assert metrics == {
        "gold_bleu_it-en": 20.0,
        "gold_bleu_nl-en": 30.0,
        "gold_to_en_bleu": 25.0,
        # the copied sources are the same as the predicted-length decode's: the same floor
        "floor_gold_to_en_bleu": 2.0,
    }
    assert list(stats) == list(groups) == ["gold_to_en_bleu", "floor_gold_to_en_bleu"]
    assert stats["floor_gold_to_en_bleu"] == [[2.0]]


def test_a_section_without_interlingua_keys_trains_the_plain_transformer():
    keys = {f.name: getattr(settings(), f.name) for f in dataclasses.fields(TrainSettings)}
    plain = {k: v for k, v in keys.items() if k not in omissible_names(TrainSettings)}
    options = argparse.Namespace(**dict.fromkeys(option_names(TrainSettings)))
    found = fill(options, TrainSettings, lambda: plain, "params.yaml: ch8")
    assert found == settings() and found.interlingua == "none"
    assert set(omissible_names(TrainSettings)) == {
        "interlingua",
        "interlingua_length",
        "max_interlingua_length",
        "ia_weight",
        "lp_weight",
        # Chapter 4's #0* resizes its architecture (Table B.1); 0 keeps the arch's shape
        "layers",
        "heads",
        "embed_dim",
        "ffn_dim",
        # the contrastive criterion (Chapter 5, mRASP2): off unless a section turns it on
        "contrastive",
        "sentence_weight",
        "sentence_temperature",
        "sentence_pool_tags",
        "word_weight",
        "word_temperature",
        "word_projection",
        # +align (Chapter 5): 0 trains without the alignment loss
        "alignment_weight",
        # early stopping (Chapter 5): 0 trains to max-update / max-epoch
        "patience",
    }
    del plain["lr"]  # an ordinary key is still required
    with pytest.raises(UsageError, match=r"params\.yaml: ch8: no 'lr'"):
        fill(options, TrainSettings, lambda: plain, "params.yaml: ch8")
