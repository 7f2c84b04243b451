"""The variable-length neural interlingua (Chapter 7) as a fairseq model and criterion.

The encoder is `mlrep.nmt.model`'s: N ordinary layers make the source states H_S; then M
interlingua layers turn a query matrix Q (len_I rows) into the interlingua H_I that the decoder
attends to instead of H_S. Each interlingua layer is three `_sublayer` blocks on the query
stream, so the LayerNorm placement is the same switch as everywhere else: a position-wise FFN
(layer 1: the queries carry no content yet for self-attention to use) or self-attention over
the queries (layers 2..M), cross-attention to H_S, and an FFN. The first residual of layer 1 is
removed (Liu et al., 2021), so the queries themselves never reach H_I unchanged.

Queries (``--interlingua-query``): ``uni`` one matrix for every language with a fixed length;
``ls`` one per source language, fixed length; ``var`` one per source language with K =
``--max-interlingua-length`` rows, of which the first len_I are used. The source language is
the tag (``__xx__``) that starts every source (the s-enc-t-dec format); the languages are the
dictionary's tags. With ``var``, len_I comes from a K-way classifier on the mean-pooled H_S,
except that an English source's interlingua is as long as the source (subwords, without its
tag and EOS), and a caller may pass gold lengths (``interlingua_lengths``, which fairseq's
SequenceGenerator forwards from ``net_input``). Training teaches the classifier with, and feeds
the layers, the English side's length: every training pair is English-centric.

Criterion ``mlrep_interlingua``: L = L_NMT + β·L_IA + γ·L_LP, where L_IA is one minus the mean
position-wise cosine between the interlinguas of source and target (the target, which starts
with its own tag, goes through the same encoder with the same len_I) and L_LP the classifier's
cross-entropy. ``nmt_loss`` is logged apart so checkpoints are selected on it, as the thesis does.
"""

# no `from __future__ import annotations`: fairseq reads the criterion config's field types
import math
import re
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from fairseq import metrics, utils
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    LabelSmoothedCrossEntropyCriterionConfig,
)
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerConfig
from fairseq.modules.transformer_layer import TransformerDecoderLayerBase
from torch import Tensor, nn

from mlrep.errors import MlrepError
from mlrep.nmt.model import (
    MODEL,
    VariantEncoder,
    VariantTransformer,
    _ffn,
    _norm,
    _sublayer,
    sized,
)
from mlrep.nmt.variant import Variant

INTERLINGUA = "mlrep_interlingua"
QUERIES = ("uni", "ls", "var")
ENGLISH = "en"
_TAG = re.compile(r"^__(\S+)__$")

# name -> (d_model, FFN, heads, ordinary encoder layers N, interlingua layers M, decoder layers)
ARCHITECTURES = {
    f"{INTERLINGUA}_tiny": (64, 128, 2, 1, 2, 2),
    f"{INTERLINGUA}_base": (512, 2048, 8, 3, 3, 6),
    f"{INTERLINGUA}_big": (1024, 4096, 16, 3, 3, 6),
}


class InterlinguaError(MlrepError):
    """An input the interlingua cannot take (no language tag, a length out of range)."""


def interlingua_arch(arch: str) -> str:
    """The interlingua architecture of a Transformer size (``mlrep_transformer_base`` ->
    ``mlrep_interlingua_base``): the ``arch`` setting names the size for both models."""
    name = arch.replace(MODEL, INTERLINGUA, 1)
    if name not in ARCHITECTURES:
        raise ValueError(
            f"no interlingua architecture for arch {arch!r}; choose one of "
            + ", ".join(a.replace(INTERLINGUA, MODEL, 1) for a in ARCHITECTURES)
        )
    return name


class InterlinguaLayer(TransformerDecoderLayerBase):
    """One interlingua layer: (FFN | self-attention) on Q, cross-attention to H_S, FFN."""

    def __init__(self, cfg: TransformerConfig, variant: Variant, first: bool) -> None:
        super().__init__(cfg, no_encoder_attn=False)
        self.placement = variant.layernorm
        self.first = first
        self.self_attn_layer_norm = _norm(variant, self.embed_dim)
        self.encoder_attn_layer_norm = _norm(variant, self.embed_dim)
        self.final_layer_norm = _norm(variant, self.embed_dim)
        if first:  # the query FFN replaces self-attention (no unused parameters left behind)
            self.self_attn = None
            ffn = cfg.decoder.ffn_embed_dim
            self.query_fc1 = nn.Linear(self.embed_dim, ffn)
            self.query_fc2 = nn.Linear(ffn, self.embed_dim)

    def forward(  # type: ignore[override]
        self, q: Tensor, query_mask: Tensor, states: Tensor, states_mask: Tensor
    ) -> Tensor:
        def first(h: Tensor) -> Tensor:
            h = self.activation_fn(self.query_fc1(h))
            return self.query_fc2(self.activation_dropout_module(h))

        def self_attend(h: Tensor) -> Tensor:
            out, _ = self.self_attn(
                query=h, key=h, value=h, key_padding_mask=query_mask, need_weights=False
            )
            return out

        def cross_attend(h: Tensor) -> Tensor:
            out, _ = self.encoder_attn(
                query=h,
                key=states,
                value=states,
                key_padding_mask=states_mask,
                static_kv=True,
                need_weights=False,
            )
            return out

        function = first if self.first else self_attend
        q = _sublayer(self, q, self.self_attn_layer_norm, function, self.placement, not self.first)
        q = _sublayer(self, q, self.encoder_attn_layer_norm, cross_attend, self.placement)
        return _sublayer(self, q, self.final_layer_norm, lambda h: _ffn(self, h), self.placement)


class Interlingua(nn.Module):
    """The queries, the length classifier and the interlingua layers (state-dict prefix
    ``encoder.interlingua.``, by which `mlrep.nmt.model` tells the two models' checkpoints
    apart)."""

    def __init__(self, cfg: TransformerConfig, variant: Variant, args: Any, languages: int):
        super().__init__()
        self.query = args.interlingua_query
        self.max_length = args.max_interlingua_length
        self.fixed_length = args.interlingua_length
        dim = cfg.encoder.embed_dim
        rows = self.max_length if self.query == "var" else self.fixed_length
        sets = 1 if self.query == "uni" else languages
        self.queries = nn.Parameter(torch.empty(sets, rows, dim).normal_(0, dim**-0.5))
        self.length = nn.Linear(dim, self.max_length) if self.query == "var" else None
        self.layers = nn.ModuleList(
            InterlinguaLayer(cfg, variant, first=i == 0) for i in range(args.interlingua_layers)
        )
        keep_final = variant.layernorm != "post" and variant.encoder_final_norm
        self.layer_norm = _norm(variant, dim) if keep_final else None

    def length_logits(self, states: Tensor, states_mask: Tensor) -> Tensor | None:
        """K-way length scores from the mean of the non-padded source states (var only)."""
        if self.length is None:
            return None
        keep = (~states_mask).t().unsqueeze(-1).type_as(states)  # T x B x 1
        mean = (states * keep).sum(0) / keep.sum(0).clamp(min=1)
        return self.length(mean)

    def select(self, languages: Tensor, longest: int) -> Tensor:
        """The first `longest` query rows of each row's language (uni: of the one matrix)."""
        query_set = torch.zeros_like(languages) if self.query == "uni" else languages
        return self.queries[query_set, :longest]

    def forward(
        self, states: Tensor, states_mask: Tensor, languages: Tensor, lengths: Tensor
    ) -> tuple[Tensor, Tensor]:
        """H_I (len_I × B × C, zero beyond each length) and its padding mask (B × len_I)."""
        longest = int(lengths.max())
        q = self.select(languages, longest).transpose(0, 1)
        positions = torch.arange(longest, device=lengths.device)
        mask = positions.unsqueeze(0) >= lengths.unsqueeze(1)
        for layer in self.layers:
            q = layer(q, mask, states, states_mask)
        if self.layer_norm is not None:
            q = self.layer_norm(q)
        return q.masked_fill(mask.t().unsqueeze(-1), 0.0), mask


class InterlinguaEncoder(VariantEncoder):
    """`VariantEncoder`'s N layers, then the interlingua; the standard encoder-out dict, whose
    states are H_I (so SequenceGenerator's reordering and the decoder work unchanged), with
    ``interlingua_lengths`` and ``length_logits`` added for the criterion."""

    def __init__(self, cfg, dictionary, embed_tokens, variant: Variant, args: Any):
        super().__init__(cfg, dictionary, embed_tokens, variant)
        codes = [(i, _TAG.match(s)) for i, s in enumerate(dictionary.symbols)]
        tags = [(i, m.group(1)) for i, m in codes if m]
        self.languages = [lang for _, lang in tags]
        table = torch.full((len(dictionary),), -1, dtype=torch.long)
        for k, (index, _) in enumerate(tags):
            table[index] = k
        self.register_buffer("tag_language", table, persistent=False)
        self.english = self.languages.index(ENGLISH) if ENGLISH in self.languages else -1
        self.interlingua = Interlingua(cfg, variant, args, len(self.languages))
        self.lengths_used: Tensor | None = None  # the last batch's len_I (decoding reads it)

    def source_languages(self, tokens: Tensor) -> Tensor:
        """Language index of each row's first non-pad token (sources are left-padded)."""
        first = tokens.ne(self.padding_idx).long().argmax(1, keepdim=True)
        tag = tokens.gather(1, first).squeeze(1)
        languages = self.tag_language[tag]
        if (languages < 0).any():
            row = int((languages < 0).nonzero()[0])
            raise InterlinguaError(
                f"a source starts with {self.dictionary[int(tag[row])]!r}, not a language tag "
                f"(one of {', '.join(f'__{x}__' for x in self.languages)}): the interlingua "
                "needs the source language, so prepare the data with --tag-format s-enc-t-dec"
            )
        return languages

    def text_lengths(self, tokens: Tensor) -> Tensor:
        """Subwords per row, without its tag and EOS (an English sentence's len_I)."""
        return tokens.ne(self.padding_idx).sum(1) - 2

    def interlingua_lengths(
        self, tokens: Tensor, languages: Tensor, logits: Tensor | None, given: Tensor | None
    ) -> Tensor:
        """len_I per row: fixed (uni, ls), given, or the source's for English and the
        classifier's argmax (length 0 excluded) otherwise."""
        if logits is None:
            lengths = torch.full_like(languages, self.interlingua.fixed_length)
        elif given is not None:
            lengths = given.to(languages.device).long()
        else:
            predicted = logits.detach().clone()
            predicted[:, 0] = -math.inf
            lengths = torch.where(
                languages == self.english, self.text_lengths(tokens), predicted.argmax(1)
            )
        k = self.interlingua.max_length
        if (lengths >= k).any() or (lengths <= 0).any():
            bad = int(lengths[(lengths >= k) | (lengths <= 0)][0])
            raise InterlinguaError(
                f"interlingua length {bad} is outside 1..{k - 1}: a length must be below "
                f"--max-interlingua-length ({k}) and positive; raise --max-interlingua-length "
                "(the max-interlingua-length setting) above the longest English sentence of "
                "the training, validation and test data, counted in subwords"
            )
        return lengths

    def forward(  # type: ignore[override]
        self,
        src_tokens: Tensor,
        src_lengths: Tensor | None = None,
        return_all_hiddens: bool = False,
        token_embeddings: Tensor | None = None,
        interlingua_lengths: Tensor | None = None,
    ) -> dict[str, list[Tensor]]:
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        states, states_mask = out["encoder_out"][0], out["encoder_padding_mask"][0]
        languages = self.source_languages(src_tokens)
        logits = self.interlingua.length_logits(states, states_mask)
        lengths = self.interlingua_lengths(src_tokens, languages, logits, interlingua_lengths)
        self.lengths_used = lengths
        h, mask = self.interlingua(states, states_mask, languages, lengths)
        return {
            "encoder_out": [h],
            "encoder_padding_mask": [mask],
            "encoder_embedding": [],
            "encoder_states": out["encoder_states"],  # H_S's layers (the probes' states)
            "src_tokens": [],
            "src_lengths": out["src_lengths"],
            "interlingua_lengths": [lengths],
            "length_logits": [] if logits is None else [logits],
        }


@register_model(INTERLINGUA)
class InterlinguaTransformer(VariantTransformer):
    """`VariantTransformer` whose encoder ends in the variable-length interlingua."""

    @classmethod
    def add_args(cls, parser) -> None:
        super().add_args(parser)
        parser.add_argument("--interlingua-query", choices=QUERIES, help="query kind")
        parser.add_argument(
            "--interlingua-length", type=int, help="fixed interlingua length (uni, ls)"
        )
        parser.add_argument(
            "--max-interlingua-length", type=int, help="K: var's longest interlingua + 1"
        )
        parser.add_argument("--interlingua-layers", type=int, help="M interlingua layers")

    @classmethod
    def build_model(cls, args, task):
        _interlingua_defaults(args)
        if args.interlingua_query != "var" and args.interlingua_length <= 0:
            raise InterlinguaError(
                f"--interlingua-query {args.interlingua_query} needs a fixed length: "
                "set --interlingua-length (interlingua-length) to a positive number"
            )
        if args.interlingua_layers < 1:
            raise InterlinguaError("--interlingua-layers must be at least 1")
        return super().build_model(args, task)

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        cfg = TransformerConfig.from_namespace(args)
        return InterlinguaEncoder(cfg, src_dict, embed_tokens, Variant.from_args(args), args)

    def forward(  # type: ignore[override]
        self,
        src_tokens: Tensor,
        src_lengths: Tensor,
        prev_output_tokens: Tensor,
        interlingua_lengths: Tensor | None = None,
        return_all_hiddens: bool = True,
        features_only: bool = False,
    ):
        """The decoder's output; its extra dict carries the encoder's (``interlingua``)."""
        encoder_out = self.encoder(
            src_tokens,
            src_lengths=src_lengths,
            return_all_hiddens=return_all_hiddens,
            interlingua_lengths=interlingua_lengths,
        )
        x, extra = self.decoder(
            prev_output_tokens,
            encoder_out=encoder_out,
            features_only=features_only,
            src_lengths=src_lengths,
            return_all_hiddens=return_all_hiddens,
        )
        extra["interlingua"] = encoder_out
        return x, extra


def _interlingua_defaults(args: Any) -> None:
    args.interlingua_query = getattr(args, "interlingua_query", None) or "var"
    args.interlingua_length = getattr(args, "interlingua_length", None) or 0
    args.max_interlingua_length = getattr(args, "max_interlingua_length", None) or 256
    args.interlingua_layers = getattr(args, "interlingua_layers", None) or 3


def _interlingua_sized(embed: int, ffn: int, heads: int, n: int, m: int, decoder: int):
    def architecture(args: Any) -> None:
        args.decoder_layers = getattr(args, "decoder_layers", decoder)
        args.interlingua_layers = getattr(args, "interlingua_layers", None) or m
        sized(embed, ffn, heads, n)(args)
        _interlingua_defaults(args)

    return architecture


register_model_architecture(INTERLINGUA, INTERLINGUA)(
    _interlingua_sized(*ARCHITECTURES[f"{INTERLINGUA}_base"])
)
for _name, _size in ARCHITECTURES.items():
    register_model_architecture(INTERLINGUA, _name)(_interlingua_sized(*_size))


def cosine_alignment(source: dict, target: dict) -> Tensor:
    """Per sentence, 1 − the mean over its len_I positions of cos(H_I(X)_i, H_I(Y)_i)."""
    a, b = source["encoder_out"][0], target["encoder_out"][0]
    keep = (~source["encoder_padding_mask"][0]).t().type_as(a)  # len_I × B
    cosine = F.cosine_similarity(a, b, dim=-1) * keep
    return 1.0 - cosine.sum(0) / keep.sum(0)


def teacher_lengths(encoder: InterlinguaEncoder, source: Tensor, target: Tensor) -> Tensor:
    """len_I of each training pair: its English side's subword count (tag and EOS excluded).
    Pairs without an English side are an error: training and validation are English-centric."""
    from_english = encoder.source_languages(source) == encoder.english
    to_english = encoder.source_languages(target) == encoder.english
    if not (from_english | to_english).all():
        raise InterlinguaError(
            "a training or validation pair has no English side, so its interlingua length "
            "cannot be teacher-forced; train and validate on English-centric directions"
        )
    return torch.where(from_english, encoder.text_lengths(source), encoder.text_lengths(target))


@dataclass
class InterlinguaCriterionConfig(LabelSmoothedCrossEntropyCriterionConfig):
    ia_weight: float = field(default=1.0, metadata={"help": "β: interlingua alignment loss"})
    lp_weight: float = field(default=0.1, metadata={"help": "γ: length prediction loss"})


@register_criterion(INTERLINGUA, dataclass=InterlinguaCriterionConfig)
class InterlinguaCriterion(LabelSmoothedCrossEntropyCriterion):
    """L_NMT + β·L_IA + γ·L_LP; L_IA and L_LP are means over sentences, scaled by the sample
    size so that fairseq's normalisation of the summed loss leaves them as weighted means."""

    def __init__(
        self,
        task,
        sentence_avg,
        label_smoothing,
        ignore_prefix_size=0,
        report_accuracy=False,
        ia_weight=1.0,
        lp_weight=0.1,
    ):
        super().__init__(task, sentence_avg, label_smoothing, ignore_prefix_size, report_accuracy)
        self.ia_weight = ia_weight
        self.lp_weight = lp_weight

    def forward(self, model, sample, reduce=True):
        encoder = model.encoder
        net_input = sample["net_input"]
        gold = teacher_lengths(encoder, net_input["src_tokens"], sample["target"])
        net_output = model(**net_input, interlingua_lengths=gold)
        nmt_loss, nll_loss = self.compute_loss(model, net_output, sample, reduce=reduce)
        source = net_output[1]["interlingua"]
        lengths = source["interlingua_lengths"][0]
        target = encoder(sample["target"], interlingua_lengths=lengths)
        ia = cosine_alignment(source, target)
        sentences = sample["target"].size(0)
        sample_size = sentences if self.sentence_avg else sample["ntokens"]
        loss = nmt_loss + self.ia_weight * ia.mean() * sample_size
        logging_output = {
            "loss": loss.data,
            "nmt_loss": nmt_loss.data,
            "nll_loss": nll_loss.data,
            "ia_loss": ia.sum().data,
            "ntokens": sample["ntokens"],
            "nsentences": sentences,
            "sample_size": sample_size,
        }
        if source["length_logits"]:
            logits = source["length_logits"][0]
            lp = F.cross_entropy(logits, gold, reduction="none")
            loss = loss + self.lp_weight * lp.mean() * sample_size
            logging_output["loss"] = loss.data
            logging_output["lp_loss"] = lp.sum().data
            logging_output["length_correct"] = logits.argmax(1).eq(gold).sum().data
        return loss, sample_size, logging_output

    @classmethod
    def reduce_metrics(cls, logging_outputs) -> None:
        super().reduce_metrics(logging_outputs)
        sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
        sentences = sum(log.get("nsentences", 0) for log in logging_outputs)
        nmt = sum(log.get("nmt_loss", 0) for log in logging_outputs)
        metrics.log_scalar("nmt_loss", nmt / sample_size / math.log(2), sample_size, round=3)
        ia = sum(log.get("ia_loss", 0) for log in logging_outputs)
        metrics.log_scalar("ia_loss", ia / sentences, sentences, round=4)
        if any("lp_loss" in log for log in logging_outputs):
            lp = sum(log.get("lp_loss", 0) for log in logging_outputs)
            correct = sum(log.get("length_correct", 0) for log in logging_outputs)
            metrics.log_scalar("lp_loss", lp / sentences, sentences, round=4)
            metrics.log_scalar(
                "length_acc", 100.0 * utils.item(correct) / sentences, sentences, round=2
            )
