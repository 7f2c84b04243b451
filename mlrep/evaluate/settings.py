"""The settings of the ``mlrep eval`` suite (search, margin scoring, ParaCrawl's pool, the
classifier), free of torch.

`mlrep.cli` builds every verb's options from these dataclasses, and the Snakefile builds that
parser on every parse (`mlrep.closure.Verbs`), so they must not import a model library (as
`mlrep.nmt.settings` and `mlrep.embed.settings` do not); the modules that compute import them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlrep.cliutil import positive_int


@dataclass(frozen=True)
class ClassifySettings:
    """The classifier and its training: params.yaml ``evaluate.classify`` and the options of
    ``mlrep eval classify``; defaults are LASER's MLDoc choices."""

    hidden: tuple[int, ...] = field(
        default=(10, 8),
        metadata={"type": positive_int, "nargs": "*", "help": "hidden layer sizes"},
    )
    dropout: float = field(default=0.2, metadata={"help": "dropout probability"})
    lr: float = field(default=1e-3, metadata={"help": "Adam learning rate"})
    weight_decay: float = field(default=0.0, metadata={"help": "Adam weight decay"})
    epochs: int = field(default=500, metadata={"type": positive_int, "help": "training epochs"})
    batch_size: int = field(default=12, metadata={"type": positive_int, "help": "batch size"})
    runs: int = field(default=5, metadata={"type": positive_int, "help": "runs averaged"})
    seed: int = field(default=1, metadata={"help": "seed of the first run"})

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(self.hidden))  # a params.yaml list


MARGINS = ("absolute", "distance", "ratio")


@dataclass(frozen=True)
class SearchSettings:
    """params.yaml ``evaluate.search``: an option of every ``mlrep eval`` suite command."""

    block_size: int = field(
        metadata={"type": positive_int, "help": "rows per similarity block (memory ~ its square)"}
    )


@dataclass(frozen=True)
class MarginSettings:
    """How a neighbour is scored: params.yaml ``evaluate.retrieval``, ``paracrawl`` and
    ``bucc`` each hold these keys, the options of their ``mlrep eval`` commands."""

    margin: str = field(metadata={"choices": MARGINS, "help": "absolute = plain cosine"})
    k: int = field(metadata={"type": positive_int, "help": "neighbours averaged in a margin score"})


@dataclass(frozen=True)
class PoolSettings:
    """params.yaml ``evaluate.paracrawl``'s pool (its margin: `MarginSettings`):
    options of ``mlrep eval paracrawl``."""

    queries: int = field(metadata={"type": positive_int, "help": "source rows searched"})
    candidates: int = field(
        metadata={"type": positive_int, "help": "target rows: the gold ones plus distractors"}
    )
    seed: int = field(metadata={"help": "seed of the draw"})
