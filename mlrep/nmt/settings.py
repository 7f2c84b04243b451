"""The settings of the NMT verbs, spelled once: each field is a params.yaml key, an option of
its verb (`mlrep.cliutil.add_options`) and its help. A module of its own, free of torch and
fairseq, so the workflow can read the field names when it plans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mlrep.cliutil import option_names, positive_float, positive_int

# what `mlrep nmt train` does with checkpoints in its folder that were trained on other
# settings or data (`mlrep.nmt.train`): refuse them, or delete them and train anew
ON_STALE = ("refuse", "restart")


@dataclass(frozen=True)
class DataSettings:
    """params.yaml ``data``: how much of each split ``mlrep nmt prepare`` cuts (its options)."""

    max_train: int = field(metadata={"type": positive_int, "help": "pairs per en-xx bitext"})
    max_valid: int = field(metadata={"type": positive_int, "help": "lines per valid direction"})
    max_test: int = field(metadata={"type": positive_int, "help": "lines per test direction"})
    max_length: int = field(
        metadata={"type": positive_int, "help": "training pairs with a longer side are left out"}
    )
    # temperature sampling of the training pairs (`mlrep.nmt.sampling`; Chapter 5: 1.5):
    # omissible, so a section without it keeps each bitext's pairs as cut (T = 1)
    sampling_temperature: float = field(
        default=1.0,
        metadata={
            "omissible": True,
            "type": positive_float,
            "help": "T: resample each en-xx bitext's pairs to a share ∝ n^(1/T) (1: as cut)",
        },
    )
    sampling_seed: int = field(
        default=1, metadata={"omissible": True, "help": "seed of the resampled fractions"}
    )


@dataclass(frozen=True)
class DatasetSettings:
    """The entries of ``datasets.<name>`` that ``mlrep nmt prepare`` reads (its options)."""

    languages: list[str] = field(metadata={"help": "the dataset's languages, English included"})
    splits: list[str] = field(
        metadata={
            "nargs": 3,
            "metavar": ("TRAIN", "VALID", "TEST"),
            "help": "the preprocessed splits read as train, valid and test",
        }
    )


def prepare_dataset_values(dataset: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of a ``datasets.<name>`` mapping that ``nmt prepare`` reads, for its rule."""
    return {k: dataset[k] for k in option_names(DatasetSettings)}


@dataclass(frozen=True)
class TrainSettings:
    """Everything a training run reads. The fields are the params.yaml keys (``datasets.<name>``
    then ``train``) and the options of ``mlrep nmt train`` (`mlrep.cliutil.add_options`), less
    `TRAIN_VERB_SET`, which the verb sets itself."""

    arch: str = field(metadata={"help": "a registered architecture (mlrep.nmt.model)"})
    dropout: float = field(metadata={"help": "dropout probability"})
    lr: float = field(metadata={"help": "peak learning rate (inverse-sqrt schedule)"})
    max_epoch: int = field(metadata={"help": "0: bounded by max-update only"})
    max_update: int = field(metadata={"help": "0: bounded by max-epoch only"})
    max_tokens: int = field(metadata={"type": positive_int, "help": "tokens per GPU batch"})
    warmup_updates: int = field(metadata={"type": positive_int, "help": "lr warm-up updates"})
    label_smoothing: float = field(metadata={"help": "label-smoothed cross-entropy's epsilon"})
    save_interval_updates: int = field(
        metadata={"type": positive_int, "help": "updates between checkpoints"}
    )
    seed: int = field(metadata={"help": "training seed"})
    gpus: int = field(
        default=1,
        metadata={
            "type": positive_int,
            "help": "the thesis's GPUs: its effective batch is gpus × max-tokens per update",
        },
    )
    threads: int = field(default=1, metadata={"type": positive_int, "help": "CPU threads"})
    fp16: bool = field(default=False, metadata={"help": "mixed precision (GPU only)"})
    # early stopping (Chapter 5: 8 validations without a better validation loss): omissible,
    # 0 trains to max-update / max-epoch
    patience: int = field(
        default=0,
        metadata={
            "omissible": True,
            "help": "stop after this many validations without a better loss (0: never)",
        },
    )
    # the model's shape where it differs from ``arch``'s (Chapter 4's optimised Transformer #0*,
    # Table B.1): omissible, 0 keeps the architecture's size
    layers: int = field(
        default=0, metadata={"omissible": True, "help": "encoder and decoder layers (0: arch's)"}
    )
    heads: int = field(
        default=0, metadata={"omissible": True, "help": "attention heads (0: arch's)"}
    )
    embed_dim: int = field(
        default=0, metadata={"omissible": True, "help": "embedding dimension (0: arch's)"}
    )
    ffn_dim: int = field(
        default=0, metadata={"omissible": True, "help": "feed-forward dimension (0: arch's)"}
    )
    # Chapter 7's interlingua (`mlrep.nmt.interlingua`): omissible, so a section that trains
    # no interlingua (Chapter 8) has none of these keys and gets the plain Transformer
    interlingua: Literal["none", "uni", "ls", "var"] = field(
        default="none",
        metadata={
            "omissible": True,
            "help": "interlingua queries: none (plain Transformer), uni, ls (fixed length), var",
        },
    )
    interlingua_length: int = field(
        default=0,
        metadata={"omissible": True, "help": "the fixed interlingua length of uni and ls"},
    )
    max_interlingua_length: int = field(
        default=256,
        metadata={
            "omissible": True,
            "type": positive_int,
            "help": "K: var's length classes (lengths < K)",
        },
    )
    ia_weight: float = field(
        default=1.0, metadata={"omissible": True, "help": "β: interlingua alignment loss"}
    )
    lp_weight: float = field(
        default=0.1, metadata={"omissible": True, "help": "γ: length prediction loss"}
    )
    # Garg et al. (2019)'s supervised attention (Chapter 5's +align, `mlrep.nmt.model`'s
    # mlrep_transformer_align): omissible, 0 trains without it
    alignment_weight: float = field(
        default=0.0,
        metadata={
            "omissible": True,
            "help": "λ of the alignment loss on one cross-attention head (Garg et al.: 0.05; "
            "needs the data-bin's alignments)",
        },
    )
    # the contrastive criterion (`mlrep.nmt.contrastive`: mRASP2's sentence-level loss,
    # Chapter 5's word-level loss): omissible, so sections without it keep plain
    # label-smoothed cross-entropy; on with both weights 0 it trains exactly that and logs
    # in-batch retrieval P@1 at each validation (Chapter 5's Figure 5.1 baselines)
    contrastive: bool = field(
        default=False,
        metadata={
            "omissible": True,
            "help": "train with mlrep_contrastive: its terms by weight, retrieval P@1 logged",
        },
    )
    sentence_weight: float = field(
        default=0.0, metadata={"omissible": True, "help": "λ: sentence-level contrastive loss"}
    )
    sentence_temperature: float = field(
        default=0.1, metadata={"omissible": True, "help": "τ of the sentence-level loss"}
    )
    sentence_pool_tags: bool = field(
        default=False,
        metadata={
            "omissible": True,
            "help": "the sentence-level mean pools the language tags too (mRASP2's release)",
        },
    )
    word_weight: float = field(
        default=0.0,
        metadata={
            "omissible": True,
            "help": "w: word-level contrastive loss (needs the data-bin's alignments)",
        },
    )
    word_temperature: float = field(
        default=0.2, metadata={"omissible": True, "help": "T of the word-level loss"}
    )
    word_projection: int = field(
        default=128,
        metadata={"omissible": True, "type": positive_int, "help": "d': the word head's size"},
    )


TRAIN_VERB_SET = ("seed", "threads")  # TrainSettings fields that are no params.yaml keys


def train_dataset_values(dataset: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of a ``datasets.<name>`` mapping that ``nmt train`` reads (the rest are
    ``nmt prepare``'s). Only those are read: a key nothing reads stays visible to the
    every-setting-is-read check."""
    return {k: dataset[k] for k in option_names(TrainSettings, skip=TRAIN_VERB_SET) if k in dataset}


@dataclass(frozen=True)
class BeamSettings:
    """Beam search's settings: the params.yaml ``decode`` keys and the decoding verbs' options
    (`mlrep.cliutil.add_options`)."""

    beam: int = field(metadata={"type": positive_int, "help": "beam size"})
    max_len_a: float = field(metadata={"help": "longest hypothesis: a × source length + b"})
    max_len_b: int = field(metadata={"type": positive_int, "help": "see max-len-a"})
    batch_size: int = field(metadata={"type": positive_int, "help": "sentences per batch"})


@dataclass(frozen=True)
class StatesSettings:
    """params.yaml ``states``: the options of ``mlrep nmt states``."""

    sentences: int = field(metadata={"type": positive_int, "help": "sentences per direction"})


@dataclass(frozen=True)
class RetrievalSettings:
    """params.yaml ``retrieval``: the options of ``mlrep nmt retrieval`` (Chapter 5's
    validation retrieval, `mlrep.nmt.retrieval`)."""

    batch_tokens: int = field(
        default=512,
        metadata={
            "type": positive_int,
            "omissible": True,
            "help": "tokens per word-retrieval batch (Appendix C.3: 512)",
        },
    )


@dataclass(frozen=True)
class BleurtSettings:
    """params.yaml ``bleurt``: the options of ``mlrep nmt bleurt``."""

    checkpoint: str = field(
        metadata={"help": "hub id (lucadiliello/BLEURT-20) or local folder; empty: not run"}
    )
    batch_size: int = field(metadata={"type": positive_int, "help": "sentences per batch"})


@dataclass(frozen=True)
class TokenAccuracySettings:
    """params.yaml ``token_accuracy``: the options of ``mlrep nmt token-accuracy``."""

    batch_size: int = field(metadata={"type": positive_int, "help": "pairs per forward pass"})


@dataclass(frozen=True)
class MbartPretrainSettings:
    """params.yaml ``mbart_pretrain``: the options of ``mlrep nmt mbart-pretrain``, the tiny
    scale's denoising pre-training of an mBART stand-in (`mlrep.nmt.mbart_pretrain`); the
    noise defaults are mBART-25's (Liu et al., 2020, §2.2)."""

    arch: str = field(metadata={"help": "the mlrep_transformer_mbart_* size (mbart-init's arch)"})
    updates: int = field(metadata={"type": positive_int, "help": "updates to train"})
    lr: float = field(metadata={"help": "peak learning rate (polynomial decay to 0)"})
    warmup_updates: int = field(metadata={"type": positive_int, "help": "lr warm-up updates"})
    max_tokens: int = field(metadata={"type": positive_int, "help": "tokens per batch"})
    tokens_per_sample: int = field(
        metadata={"type": positive_int, "help": "longest instance (whole sentences packed)"}
    )
    valid_lines: int = field(
        metadata={"type": positive_int, "help": "last lines of each language held out"}
    )
    validate_interval_updates: int = field(
        metadata={"type": positive_int, "help": "updates between validations (the loss curve)"}
    )
    seed: int = field(metadata={"help": "training and noise seed"})
    # omissible: a section without them pre-trains with mBART's noise
    mask: float = field(
        default=0.35, metadata={"omissible": True, "help": "share of the words masked"}
    )
    poisson_lambda: float = field(
        default=3.5,
        metadata={"omissible": True, "type": positive_float, "help": "λ of the span lengths"},
    )
