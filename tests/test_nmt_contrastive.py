"""The contrastive criterion on hand-sized batches: InfoNCE against a plain-Python computation,
units from fairseq's own collater, padding and tags kept out, the loss's weighting, which
parameters each term reaches, and the metrics it logs."""

from __future__ import annotations

import argparse
import math

import pytest
import torch
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.models import ARCH_CONFIG_REGISTRY

from mlrep.nmt.contrastive import (
    AlignmentBatchError,
    ContrastiveCriterion,
    content_mask,
    encode_sides,
    info_nce,
    mean_pool,
    tag_lookup,
    unit_states,
    units,
)
from mlrep.nmt.model import MODEL, VariantTransformer
from tests.nmt_helpers import StubTask, word_dictionary

torch.set_num_threads(1)
WORDS = ["__en__", "__ja__", "__it__", "a", "b", "c", "d", "e", "f", "g"]


def dictionary() -> Dictionary:
    return word_dictionary(WORDS)


DICT = dictionary()
PAD, EOS = DICT.pad(), DICT.eos()


def line(*words: str) -> torch.Tensor:
    return torch.tensor([DICT.index(w) for w in words] + [EOS])


def model() -> VariantTransformer:
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    VariantTransformer.add_args(parser)
    args = parser.parse_args([])
    ARCH_CONFIG_REGISTRY[f"{MODEL}_tiny"](args)
    args.dropout = 0.0
    torch.manual_seed(0)
    return VariantTransformer.build_model(args, StubTask(DICT))


def criterion(**weights) -> ContrastiveCriterion:
    torch.manual_seed(1)
    return ContrastiveCriterion(
        StubTask(DICT), False, 0.1, encoder_dim=64, word_projection=16, **weights
    )


# three pairs of different lengths, tagged s-enc-t-dec; each link list is one sentence's
# (source position, target position) pairs in the tagged lines, a unit written as the cross
# product of its subwords (pair 0: "a b"↔"e" is one phrase unit, "c"↔"f g" another)
PAIRS = [
    (
        line("__en__", "a", "b", "c"),
        line("__ja__", "e", "f", "g"),
        [(1, 1), (2, 1), (3, 2), (3, 3)],
    ),
    (line("__en__", "d"), line("__ja__", "e", "d"), [(1, 2)]),
    (line("__ja__", "g", "f", "e", "d", "c"), line("__en__", "a", "b"), [(1, 1), (5, 2)]),
]


def batch(pairs=PAIRS) -> dict:
    sources = [s for s, _, _ in pairs]
    targets = [t for _, t, _ in pairs]
    links = [torch.tensor(a).view(-1) for _, _, a in pairs]
    dataset = LanguagePairDataset(
        sources,
        [len(s) for s in sources],
        DICT,
        targets,
        [len(t) for t in targets],
        DICT,
        align_dataset=links,
    )
    return dataset.collater([dataset[i] for i in range(len(pairs))])


def tokens_of(sample: dict, members: torch.Tensor, side: str) -> list[str]:
    table = sample["net_input"]["src_tokens"] if side == "s" else sample["target"]
    return [DICT[table[r, p]] for r, p in members.tolist()]


def test_info_nce_matches_a_plain_python_computation():
    anchors = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    candidates = torch.tensor([[2.0, 0.1], [0.5, 1.0], [-1.0, 1.0]])
    t = 0.5

    def cos(u, v):
        return sum(x * y for x, y in zip(u, v, strict=True)) / math.hypot(*u) / math.hypot(*v)

    sim = [[cos(a, c) / t for c in candidates.tolist()] for a in anchors.tolist()]
    rows = -sum(sim[k][k] - math.log(sum(math.exp(x) for x in sim[k])) for k in range(3))
    cols = -sum(sim[k][k] - math.log(sum(math.exp(sim[m][k]) for m in range(3))) for k in range(3))
    one_way = info_nce(anchors, candidates, t, symmetric=False)
    both = info_nce(anchors, candidates, t, symmetric=True)
    assert one_way.loss.item() == pytest.approx(rows, rel=1e-5)
    assert both.loss.item() == pytest.approx(rows + cols, rel=1e-5)
    # P@1 both ways whatever the loss: rows 0 and 1 retrieve their positive (anchor 2 at 45°
    # is nearer candidate 1 at 63° than its own candidate 2 at 135°); of the columns only 0
    best_row = [max(range(3), key=lambda m: sim[k][m]) for k in range(3)]
    best_col = [max(range(3), key=lambda m: sim[m][k]) for k in range(3)]
    assert (best_row, best_col) == ([0, 1, 1], [0, 2, 1])
    assert (one_way.correct.item(), one_way.retrievals) == (3, 6)
    assert both.correct.item() == 3


def test_pooling_skips_padding_and_tags():
    tags = tag_lookup(DICT.symbols)
    assert [DICT[i] for i in tags.nonzero().flatten().tolist()] == ["__en__", "__ja__", "__it__"]
    tokens = torch.tensor([[PAD, DICT.index("__en__"), DICT.index("a"), EOS]])
    mask = content_mask(tokens, PAD, tags)
    assert mask.tolist() == [[False, False, True, True]]
    states = torch.tensor([[[100.0], [50.0], [2.0], [4.0]]])
    assert mean_pool(states, mask).tolist() == [[3.0]]


def test_the_sentence_mean_pools_the_tags_only_where_asked_as_mrasp2_does():
    """mRASP2's release averages every non-padding position, its language token included;
    Chapter 5's +sent leaves the tags out. Units never pool tags either way."""
    net = model().eval()
    sample = batch()
    src, tgt = sample["net_input"]["src_tokens"], sample["target"]
    s, t = encoded(net, src), encoded(net, tgt)
    unpadded = [mean_pool(x, y.ne(PAD)) for x, y in ((s, src), (t, tgt))]
    sides = encode_sides(net.encoder, sample, PAD, tag_lookup(DICT.symbols))
    for pooled, expected in zip(sides.sentences(with_tags=True), unpadded, strict=True):
        assert torch.allclose(pooled, expected, atol=1e-6)
    assert not torch.allclose(sides.sentences()[0], unpadded[0], atol=1e-3)
    sent = info_nce(*unpadded, 0.1, symmetric=False).loss.item()
    plain, _, _ = criterion()(net, sample)
    pooled, _, log = criterion(sentence_weight=1.0, sentence_pool_tags=True)(net, sample)
    ntokens, sentences = sample["ntokens"], sample["target"].size(0)
    assert pooled.item() == pytest.approx(plain.item() + ntokens / sentences * sent, rel=1e-5)
    assert log["sent_loss"].item() == pytest.approx(sent, rel=1e-5)


def test_units_land_on_their_subwords_through_fairseqs_collater():
    sample = batch()
    found = units(sample["alignments"], sample["target"].size(1))
    assert found.count == 5
    # collation sorts rows by source length (the 6-token ja source first) and left-pads sources
    groups = {}
    for side, members, unit in (
        ("s", found.source, found.source_unit),
        ("t", found.target, found.target_unit),
    ):
        for token, u in zip(tokens_of(sample, members, side), unit.tolist(), strict=True):
            groups.setdefault(u, {"s": [], "t": []})[side].append(token)
    assert sorted((sorted(g["s"]), sorted(g["t"])) for g in groups.values()) == [
        (["a", "b"], ["e"]),
        (["c"], ["b"]),
        (["c"], ["f", "g"]),
        (["d"], ["d"]),
        (["g"], ["a"]),
    ]


def test_unit_states_are_the_mean_of_their_members():
    states = torch.arange(12.0).view(2, 3, 2)
    members = torch.tensor([[0, 1], [0, 2], [1, 0]])
    means = unit_states(states, members, torch.tensor([0, 0, 1]), 2)
    assert means.tolist() == [[3.0, 4.0], [6.0, 7.0]]


def test_a_link_on_a_tag_or_on_padding_is_refused():
    on_tag = [(line("__en__", "a"), line("__ja__", "e"), [(0, 1)])]
    with pytest.raises(AlignmentBatchError, match="language-tag position"):
        criterion(word_weight=0.1)(model(), batch(on_tag))


def encoded(net: VariantTransformer, tokens: torch.Tensor) -> torch.Tensor:
    out = net.encoder(tokens, src_lengths=tokens.ne(PAD).sum(1))
    return out["encoder_out"][0].transpose(0, 1)


def test_the_loss_adds_each_term_with_its_weight():
    """Each term recomputed outside the criterion: the sentence loss on tag-free mean pools,
    one way at τ = 0.1; the word loss on the projected means of the units' hand-listed
    subwords, both ways at T = 0.2."""
    net = model().eval()
    sample = batch()
    src, tgt = sample["net_input"]["src_tokens"], sample["target"]
    s, t = encoded(net, src), encoded(net, tgt)
    tags = tag_lookup(DICT.symbols)
    pooled = [mean_pool(x, content_mask(y, PAD, tags)) for x, y in ((s, src), (t, tgt))]
    sent = info_nce(*pooled, 0.1, symmetric=False).loss.item()
    ntokens, sentences = sample["ntokens"], sample["target"].size(0)

    plain, _, _ = criterion()(net, sample)
    sent_only, _, log = criterion(sentence_weight=1.0)(net, sample)
    assert log["nmt_loss"].item() == pytest.approx(plain.item(), rel=1e-6)
    assert sent_only.item() == pytest.approx(plain.item() + ntokens / sentences * sent, rel=1e-5)

    # rows after collation: 0 = the ja source of PAIRS[2], 1 = PAIRS[0], 2 = PAIRS[1]; each
    # unit as (row, source positions, target positions) in the left-padded/right-padded tensors
    hand = [(0, [1], [1]), (0, [5], [2]), (1, [3, 4], [1]), (1, [5], [2, 3]), (2, [5], [2])]
    assert [DICT[src[r, p[0]]] for r, p, _ in hand] == ["g", "c", "a", "c", "d"]
    assert [DICT[tgt[r, q[0]]] for r, _, q in hand] == ["a", "b", "e", "f", "d"]
    word = criterion(word_weight=0.1)
    means = [
        torch.stack([x[r, sides[k]].mean(0) for r, *sides in hand]) for k, x in ((0, s), (1, t))
    ]
    projected = [word.projection(m) for m in means]
    word_loss = info_nce(*projected, 0.2, symmetric=True).loss.item()
    both, _, log = word(net, sample)
    assert log["units"] == 5
    assert both.item() == pytest.approx(plain.item() + 0.1 * ntokens / 10 * word_loss, rel=1e-5)


def grads(net: VariantTransformer, crit: ContrastiveCriterion, sample: dict, part: str):
    """The gradient of one part's own parameters: the decoder's without the embeddings it
    shares with the encoder (``--share-all-embeddings``), which are the encoder's input."""
    net.train()
    net.zero_grad()
    crit.zero_grad()
    crit(net, sample)[0].backward()
    shared = {id(p) for p in net.encoder.parameters()}
    parameters = {
        "encoder": list(net.encoder.parameters()),
        "decoder": [p for p in net.decoder.parameters() if id(p) not in shared],
        "projection": list(crit.projection.parameters()) if crit.projection else [],
    }[part]
    return torch.cat(
        [p.grad.flatten() if p.grad is not None else torch.zeros(p.numel()) for p in parameters]
    )


def test_the_contrastive_terms_reach_the_encoder_and_the_head_only():
    net = model()
    sample = batch()
    base = criterion()
    # only dropout-free pieces: the tiny model's dropout is 0, so the two runs are comparable
    for weights in ({"sentence_weight": 1.0}, {"word_weight": 0.1}):
        crit = criterion(**weights)
        assert not torch.allclose(
            grads(net, crit, sample, "encoder"), grads(net, base, sample, "encoder")
        )
        assert torch.allclose(
            grads(net, crit, sample, "decoder"), grads(net, base, sample, "decoder")
        )
    head = grads(net, criterion(word_weight=0.1), sample, "projection")
    assert head.abs().sum() > 0


def test_training_without_a_contrastive_term_is_plain_label_smoothed_cross_entropy():
    from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion

    net = model().train()
    sample = batch()
    ours, _, log = criterion()(net, sample)
    theirs, _, _ = LabelSmoothedCrossEntropyCriterion(StubTask(DICT), False, 0.1)(net, sample)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
    assert "sent_correct" not in log


def test_validation_logs_retrieval_precision_and_the_nmt_loss():
    from fairseq import metrics

    net = model().eval()
    sample = batch()
    _, _, log = criterion()(net, sample)
    assert log["sent_retrievals"] == 6 and log["word_retrievals"] == 10
    with metrics.aggregate() as agg:
        ContrastiveCriterion.reduce_metrics([log, log])
    values = agg.get_smoothed_values()
    assert values["sent_p_at_1"] == pytest.approx(100 * log["sent_correct"].item() / 6, abs=0.01)
    assert values["word_p_at_1"] == pytest.approx(100 * log["word_correct"].item() / 10, abs=0.01)
    assert values["nmt_loss"] == pytest.approx(values["loss"], abs=1e-3)


def test_the_training_flags_select_the_criterion_and_size_its_head():
    import dataclasses

    from mlrep.nmt.interlingua import InterlinguaError
    from mlrep.nmt.train import _model_flags
    from tests.nmt_helpers import settings

    assert "--criterion=label_smoothed_cross_entropy" in _model_flags(settings())
    on = dataclasses.replace(settings(), contrastive=True, sentence_weight=1.0)
    flags = _model_flags(on)
    assert {"--criterion=mlrep_contrastive", "--sentence-weight=1.0", "--encoder-dim=64"} <= set(
        flags
    )
    assert "--best-checkpoint-metric=nmt_loss" in flags and "--load-alignments" not in flags
    assert "--sentence-pool-tags" not in flags
    pooled = dataclasses.replace(on, sentence_pool_tags=True)
    assert "--sentence-pool-tags" in _model_flags(pooled)
    wide = dataclasses.replace(on, embed_dim=96, word_weight=0.1)
    assert {"--encoder-dim=96", "--word-weight=0.1", "--load-alignments"} <= set(_model_flags(wide))
    with pytest.raises(InterlinguaError, match="drop contrastive"):
        _model_flags(dataclasses.replace(on, interlingua="var"))


def test_an_empty_state_keeps_the_fresh_projection_head_and_a_saved_one_is_restored():
    """Fine-tuning from a pre-trained init (mbart-init writes an empty criterion state) starts
    the word projection as initialised; a run's own checkpoint restores it."""
    fresh = criterion(word_weight=0.1)
    before = {k: v.clone() for k, v in fresh.state_dict().items()}
    fresh.load_state_dict({})
    assert all(torch.equal(v, before[k]) for k, v in fresh.state_dict().items())
    saved = {k: torch.zeros_like(v) for k, v in before.items()}
    fresh.load_state_dict(saved)
    assert all(not v.any() for v in fresh.state_dict().values())
    with pytest.raises(RuntimeError, match="Missing key"):
        fresh.load_state_dict({"projection.inner.weight": saved["projection.inner.weight"]})
