"""Contrastive objectives for many-to-many NMT, as one fairseq criterion.

Two losses pull translations together in the shared encoder; both encode the target sentence
with the same encoder as the source, and both contrast each positive against the rest of the
batch, the positive itself included in every denominator:

* **sentence level** (mRASP2, Pan et al. 2021; Chapter 5's "+sent" baseline): a sentence is the
  mean of its encoder states, with no projection head; each source retrieves its own target
  among the batch's targets at temperature τ (one direction, as mRASP2), and the summed loss is
  weighted by λ times the batch's mean target length (λ "scaled by |s|"), so it weighs like
  λ per token against the token-summed NMT loss.
* **word level** (Chapter 5, Eq. 5.1-5.3): each aligned unit (a word or a merged phrase, in
  subwords) is the mean of its subwords' encoder states, projected by g(x) = W2·ReLU(W1·x) to
  d' dimensions; cosine at temperature T, in both directions; the summed loss is weighted by
  w·N_T/(2N) (N_T the batch's target tokens, N its units), which puts it on the NMT loss's
  token scale. g exists for this loss only: it is the criterion's own module, saved with the
  checkpoint's criterion state, and the NMT loss never sees it.

Pooling and units skip padding and language tags (``__xx__``): a tag says which language a
sentence is in, which is not what translations share. EOS is content (mRASP2 pools it too).
mRASP2's release pools its language tokens into the sentence mean as well (it averages every
non-padding position); ``sentence_pool_tags`` does that for the sentence level alone, so that
paper's systems pool as it does while Chapter 5's +sent keeps the tag-free mean.

**Units come in the batch as fairseq's alignments** (``--load-alignments``): a unit is written
as the cross product of its source subwords and its target subwords, so the connected
components of one sentence's links are its units (the alignment layer's contract, see
`mlrep.nmt.alignments`). fairseq's collater shifts each source position by the sentence's left
padding and each target position by ``row × target width``; `units` undoes exactly that.

**Validation** always encodes the target and logs the in-batch sentence retrieval P@1 (both
directions, mean-pooled unprojected states: Figure 5.1's curves, also for the baselines that
train without a contrastive loss), and the in-batch word retrieval P@1 when the batch carries
alignments. ``nmt_loss`` is logged apart, and checkpoints are selected on it, so runs with and
without a contrastive term are selected alike.
"""

# no `from __future__ import annotations`: fairseq reads the criterion config's field types
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from fairseq import metrics, utils
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    LabelSmoothedCrossEntropyCriterionConfig,
)
from torch import Tensor, nn

from mlrep.align.pharaoh import Link
from mlrep.align.units import units as line_units
from mlrep.errors import MlrepError
from mlrep.nmt.data import is_tag

CONTRASTIVE = "mlrep_contrastive"


class AlignmentBatchError(MlrepError):
    """A batch whose alignment links point at padding or language tags."""


def tag_lookup(symbols: list[str]) -> Tensor:
    """For each dictionary index, whether its symbol is a language tag."""
    return torch.tensor([is_tag(s) for s in symbols], dtype=torch.bool)


def content_mask(tokens: Tensor, pad: int, is_tag: Tensor) -> Tensor:
    """B×T: the positions that are neither padding nor a language tag."""
    return tokens.ne(pad) & ~is_tag.to(tokens.device)[tokens]


def mean_pool(states: Tensor, mask: Tensor) -> Tensor:
    """B×C: the mean of each row's states (B×T×C) over its masked-in positions."""
    weights = mask.to(states.dtype).unsqueeze(-1)
    return (states * weights).sum(1) / weights.sum(1).clamp(min=1.0)


@dataclass(frozen=True)
class Contrast:
    """An InfoNCE term over N positive pairs: its summed loss and the retrievals it got right
    (`retrievals` of them, counting each direction scored)."""

    loss: Tensor
    correct: Tensor
    retrievals: int


def info_nce(anchors: Tensor, candidates: Tensor, temperature: float, symmetric: bool) -> Contrast:
    """Row k of `anchors` and of `candidates` (N×C each) form the k-th positive; every other
    row is a negative. The loss sums −log softmax over each anchor's row of similarities
    (and, `symmetric`, over each candidate's column), the positive in its denominator; P@1
    is scored both ways, whatever the loss uses. Cosines come from one matrix product of the
    unit-length rows: broadcasting `cosine_similarity` would build an N×N×C tensor, hundreds of
    MB per batch of word units (benchmarks/contrastive_throughput.py)."""
    similarity = F.normalize(anchors, dim=-1) @ F.normalize(candidates, dim=-1).T
    logits = similarity / temperature
    loss = -logits.log_softmax(dim=1).diagonal().sum()
    if symmetric:
        loss = loss - logits.log_softmax(dim=0).diagonal().sum()
    gold = torch.arange(len(anchors), device=anchors.device)
    with torch.no_grad():
        correct = similarity.argmax(1).eq(gold).sum() + similarity.argmax(0).eq(gold).sum()
    return Contrast(loss, correct, 2 * len(anchors))


@dataclass(frozen=True)
class Units:
    """Aligned units of a batch: for each member subword, its (row, position) in the source or
    target tokens and the unit it belongs to (0..count-1)."""

    source: Tensor  # P×2 (row, position) in src_tokens
    source_unit: Tensor  # P
    target: Tensor  # Q×2 (row, position) in target
    target_unit: Tensor  # Q
    count: int


def units(alignments: Tensor, target_width: int) -> Units:
    """The units of a collated batch's alignments (L×2: source position in the left-padded
    source row, row × `target_width` + target position): each row's connected components
    (`mlrep.align.units`), numbered row by row."""
    rows: dict[int, list[Link]] = {}
    for source, flat in alignments.tolist():
        row, position = divmod(flat, target_width)
        rows.setdefault(row, []).append((source, position))
    members: dict[str, list[tuple[int, int, int]]] = {"s": [], "t": []}
    count = 0
    for row, links in rows.items():
        for source_positions, target_positions in line_units(links):
            members["s"] += [(row, p, count) for p in source_positions]
            members["t"] += [(row, p, count) for p in target_positions]
            count += 1

    def tensors(side: str) -> tuple[Tensor, Tensor]:
        table = torch.tensor(members[side], dtype=torch.long).view(-1, 3)
        return table[:, :2], table[:, 2]

    source, source_unit = tensors("s")
    target, target_unit = tensors("t")
    return Units(source, source_unit, target, target_unit, count)


def unit_states(states: Tensor, members: Tensor, unit: Tensor, count: int) -> Tensor:
    """count×C: each unit's mean over the states (B×T×C) of its member positions."""
    picked = states[members[:, 0].to(states.device), members[:, 1].to(states.device)]
    index = unit.to(states.device)
    sums = states.new_zeros(count, states.size(-1)).index_add(0, index, picked)
    sizes = states.new_zeros(count).index_add(0, index, states.new_ones(len(index)))
    return sums / sizes.unsqueeze(-1)


def check_units(found: Units, source_ok: Tensor, target_ok: Tensor) -> None:
    """Refuse units that cover padding or a tag: the alignment file was written for other
    subwords (or without the tag offset), so the loss would contrast the wrong states."""
    for side, members, ok in (
        ("source", found.source, source_ok),
        ("target", found.target, target_ok),
    ):
        bad = ~ok[members[:, 0].to(ok.device), members[:, 1].to(ok.device)]
        if bad.any():
            row, position = members[bad.nonzero()[0, 0]].tolist()
            raise AlignmentBatchError(
                f"an alignment link points at a {side} padding or language-tag position "
                f"(batch row {row}, position {position}); the alignment file does not match "
                "the binarised subwords: binarise the links with the same subword files and tag "
                "format as the text (`mlrep.nmt.prepare.binarise`)"
            )


@dataclass(frozen=True)
class Sides:
    """A batch's source and target rows through the encoder: top-layer states (B×T×C each
    side) and the positions pooled (`content_mask`). The one reading of a batch that the
    losses, the validation log and Chapter 5's retrieval analyses (`mlrep.nmt.retrieval`)
    share, so their sentences and units are the same vectors."""

    source: Tensor
    target: Tensor
    source_ok: Tensor
    target_ok: Tensor
    # every non-padding position, language tags included (`sentences` with_tags)
    source_unpadded: Tensor
    target_unpadded: Tensor

    def sentences(self, with_tags: bool = False) -> tuple[Tensor, Tensor]:
        """Each row's mean-pooled content states: the source's and the target's (B×C each);
        `with_tags` pools the language tags too, as mRASP2's release does."""
        if with_tags:
            return (
                mean_pool(self.source, self.source_unpadded),
                mean_pool(self.target, self.target_unpadded),
            )
        return mean_pool(self.source, self.source_ok), mean_pool(self.target, self.target_ok)

    def aligned_units(self, alignments: Tensor) -> tuple[Tensor, Tensor]:
        """Each unit of the batch's collated `alignments` as the mean of its subwords'
        states: the source's and the target's (count×C each), the links checked first."""
        found = units(alignments, self.target.size(1))
        check_units(found, self.source_ok, self.target_ok)
        return (
            unit_states(self.source, found.source, found.source_unit, found.count),
            unit_states(self.target, found.target, found.target_unit, found.count),
        )


def encode_sides(encoder, sample: dict, pad: int, is_tag: Tensor, source_out=None) -> Sides:
    """Both sides of a collated batch through `encoder`, the target read as a source (its
    tokens as the encoder's input); `source_out` is the source's encoder output where the
    caller has it already (training feeds it to the decoder too)."""
    source_tokens = sample["net_input"]["src_tokens"]
    target_tokens = sample["target"]
    if source_out is None:
        source_out = encoder(source_tokens, src_lengths=sample["net_input"]["src_lengths"])
    target_out = encoder(target_tokens, src_lengths=target_tokens.ne(pad).sum(1))
    return Sides(
        source_out["encoder_out"][0].transpose(0, 1),
        target_out["encoder_out"][0].transpose(0, 1),
        content_mask(source_tokens, pad, is_tag),
        content_mask(target_tokens, pad, is_tag),
        source_tokens.ne(pad),
        target_tokens.ne(pad),
    )


class Projection(nn.Module):
    """g(x) = W2·ReLU(W1·x): the word-level loss's head (W1 d×d, W2 d×d')."""

    def __init__(self, dim: int, out: int):
        super().__init__()
        self.inner = nn.Linear(dim, dim)
        self.outer = nn.Linear(dim, out)

    def forward(self, x: Tensor) -> Tensor:
        return self.outer(torch.relu(self.inner(x)))


@dataclass
class ContrastiveCriterionConfig(LabelSmoothedCrossEntropyCriterionConfig):
    sentence_weight: float = field(
        default=0.0, metadata={"help": "λ of the sentence-level loss (0: off)"}
    )
    sentence_temperature: float = field(default=0.1, metadata={"help": "τ of the sentence loss"})
    sentence_pool_tags: bool = field(
        default=False, metadata={"help": "the sentence mean pools the language tags too"}
    )
    word_weight: float = field(default=0.0, metadata={"help": "w of the word-level loss (0: off)"})
    word_temperature: float = field(default=0.2, metadata={"help": "T of the word-level loss"})
    word_projection: int = field(default=128, metadata={"help": "d': g's output size"})
    encoder_dim: int = field(
        default=512, metadata={"help": "d: the encoder's output size (g's input)"}
    )


@register_criterion(CONTRASTIVE, dataclass=ContrastiveCriterionConfig)
class ContrastiveCriterion(LabelSmoothedCrossEntropyCriterion):
    """Label-smoothed cross-entropy plus the sentence- and word-level contrastive losses."""

    def __init__(
        self,
        task,
        sentence_avg,
        label_smoothing,
        ignore_prefix_size=0,
        report_accuracy=False,
        sentence_weight=0.0,
        sentence_temperature=0.1,
        sentence_pool_tags=False,
        word_weight=0.0,
        word_temperature=0.2,
        word_projection=128,
        encoder_dim=512,
    ):
        super().__init__(task, sentence_avg, label_smoothing, ignore_prefix_size, report_accuracy)
        self.sentence_weight = sentence_weight
        self.sentence_temperature = sentence_temperature
        self.sentence_pool_tags = sentence_pool_tags
        self.word_weight = word_weight
        self.word_temperature = word_temperature
        self.projection = Projection(encoder_dim, word_projection) if word_weight > 0 else None
        self.register_buffer("is_tag", tag_lookup(task.source_dictionary.symbols), persistent=False)

    def load_state_dict(self, state_dict, strict=True):
        """An empty state is a pre-trained init's (`mlrep.nmt.mbart_init`: mBART was not
        trained with this criterion): the projection head keeps its fresh weights; a run's
        own checkpoint restores them, strictly."""
        if not state_dict:
            return None
        return super().load_state_dict(state_dict, strict)

    def forward(self, model, sample, reduce=True):
        net_input = sample["net_input"]
        source_out = model.encoder(net_input["src_tokens"], src_lengths=net_input["src_lengths"])
        net_output = model.decoder(
            net_input["prev_output_tokens"],
            encoder_out=source_out,
            src_lengths=net_input["src_lengths"],
        )
        nmt_loss, nll_loss = self.compute_loss(model, net_output, sample, reduce=reduce)
        sentences = sample["target"].size(0)
        sample_size = sentences if self.sentence_avg else sample["ntokens"]
        logging_output = {
            "loss": nmt_loss.data,
            "nmt_loss": nmt_loss.data,
            "nll_loss": nll_loss.data,
            "ntokens": sample["ntokens"],
            "nsentences": sentences,
            "sample_size": sample_size,
        }
        loss = nmt_loss
        wanted = not model.training or self.sentence_weight > 0 or self.word_weight > 0
        if wanted:
            loss = loss + self._contrast(model, sample, source_out, logging_output)
            logging_output["loss"] = loss.data
        return loss, sample_size, logging_output

    def _contrast(self, model, sample, source_out, log: dict) -> Tensor:
        """The weighted contrastive terms (0 where off), logging their parts and P@1."""
        sides = encode_sides(model.encoder, sample, self.padding_idx, self.is_tag, source_out)
        sentences = sides.sentences(self.sentence_pool_tags)
        sentence = info_nce(*sentences, self.sentence_temperature, symmetric=False)
        log.update(
            sent_loss=sentence.loss.data,
            sent_correct=sentence.correct.data,
            sent_retrievals=sentence.retrievals,
        )
        total = sides.source.new_zeros(())
        if self.sentence_weight > 0:
            mean_length = sample["ntokens"] / sample["target"].size(0)
            total = total + self.sentence_weight * mean_length * sentence.loss
        if "alignments" not in sample:
            return total
        source_units, target_units = sides.aligned_units(sample["alignments"])
        count = len(source_units)
        if count < 2:
            return total
        if not model.training:
            raw = info_nce(source_units, target_units, self.word_temperature, symmetric=True)
            log.update(word_correct=raw.correct.data, word_retrievals=raw.retrievals)
        if self.projection is None:
            return total
        word = info_nce(
            self.projection(source_units),
            self.projection(target_units),
            self.word_temperature,
            symmetric=True,
        )
        log.update(word_loss=word.loss.data, units=count)
        scale = self.word_weight * sample["ntokens"] / (2 * count)
        return total + scale * word.loss

    @classmethod
    def reduce_metrics(cls, logging_outputs) -> None:
        super().reduce_metrics(logging_outputs)

        def total(key: str) -> float:
            return utils.item(sum(log.get(key, 0) for log in logging_outputs))

        sample_size = total("sample_size")
        metrics.log_scalar(
            "nmt_loss", total("nmt_loss") / sample_size / math.log(2), sample_size, round=3
        )
        for name in ("sent", "word"):
            retrievals = total(f"{name}_retrievals")
            if retrievals:
                p_at_1 = 100.0 * total(f"{name}_correct") / retrievals
                metrics.log_scalar(f"{name}_p_at_1", p_at_1, retrievals, round=2)
        sentences = total("nsentences")
        if any("sent_loss" in log for log in logging_outputs):
            metrics.log_scalar("sent_loss", total("sent_loss") / sentences, sentences, round=4)
        count = total("units")
        if count:
            metrics.log_scalar("word_loss", total("word_loss") / (2 * count), count, round=4)
            metrics.log_scalar("units_per_sentence", count / sentences, sentences, round=2)
