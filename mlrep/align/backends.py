"""Directional aligners behind ``mlrep align``: fast_align (sil-thot) and eflomal.

No registry here ships the fast_align binary. ``sil-thot``'s ``FastAlignModel`` reimplements it
(Dyer et al. 2013: IBM Model 2 reparameterized with a diagonal prior whose tension is
re-estimated after every iteration, optional variational Bayes) and, unlike ``systran-align``
(fast_align's library behind a symmetrizing API), gives each direction's Viterbi links, which
``-r`` needs. Two fast_align options cannot be switched off in thot and map as close as it gets:
without ``-d`` the model is thot's IBM Model 1 (a uniform prior, as fast_align without ``-d``),
and with ``-d`` the tension is always optimized (``-o``), so ``-d`` alone warns.

A reverse run aligns target to source and transposes, so both directions print ``i-j`` in
source-target orientation, as fast_align ``-r`` does. Skipped pairs (`mlrep.align.bitext`)
get no links.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlrep.align.bitext import Bitext
from mlrep.align.pharaoh import Link, parse_links

BACKENDS = ("fast_align", "eflomal")
PACKAGES = {"fast_align": "sil-thot", "eflomal": "eflomal"}  # recorded in --stats
# thot's sentence-length limit; longer pairs are skipped (counted) instead of crashing in C++.
THOT_MAX_LENGTH = 1024


@dataclass(frozen=True)
class Options:
    """fast_align's options (same defaults as fast_align) plus eflomal's own knobs."""

    favor_diagonal: bool = False  # -d
    optimize_tension: bool = False  # -o
    variational_bayes: bool = False  # -v
    reverse: bool = False  # -r
    iterations: int = 5  # -I
    p0: float = 0.08  # -q: probability of aligning to NULL (fast_align with -d)
    eflomal_model: int = 3  # 1: IBM1, 2: +HMM, 3: +fertility
    eflomal_samplers: int = 3  # eflomal has no seed: its samplers make runs differ slightly


def _fast_align(text: Bitext, options: Options) -> list[frozenset[Link]]:
    from thot.alignment import FastAlignModel, Ibm1AlignmentModel

    if options.favor_diagonal:
        model = FastAlignModel()
        model.fast_align_p0 = options.p0
        if not options.optimize_tension:
            print(
                "mlrep align: warning: thot's fast_align always optimizes the diagonal "
                "tension; running as -d -o",
                file=sys.stderr,
            )
    else:
        model = Ibm1AlignmentModel()
    model.variational_bayes = options.variational_bayes
    kept = text.kept()
    for n in kept:
        source, target = text.source[n], text.target[n]
        model.add_sentence_pair(*((target, source) if options.reverse else (source, target)))
    links: list[frozenset[Link]] = [frozenset()] * len(text)
    if not kept:
        return links
    model.emit_training_alignments = True
    model.start_training()
    for _ in range(options.iterations):
        model.train()
    model.end_training()
    for index, n in enumerate(kept):
        _, matrix = model.get_training_alignment(index)
        rows, columns = matrix.to_numpy().nonzero()  # rows: the model's source side
        pairs = zip(*((columns, rows) if options.reverse else (rows, columns)), strict=True)
        links[n] = frozenset((int(i), int(j)) for i, j in pairs)
    return links


def _eflomal(text: Bitext, options: Options) -> list[frozenset[Link]]:
    import eflomal

    kept = text.kept()
    links: list[frozenset[Link]] = [frozenset()] * len(text)
    if not kept:
        return links
    aligner = eflomal.Aligner(
        model=options.eflomal_model,
        n_iterations=None,
        n_samplers=options.eflomal_samplers,
    )
    with tempfile.TemporaryDirectory(prefix="mlrep-eflomal-") as tmp:
        out = Path(tmp) / ("rev" if options.reverse else "fwd")
        source = [" ".join(text.source[n]) + "\n" for n in kept]
        target = [" ".join(text.target[n]) + "\n" for n in kept]
        keyword = "links_filename_rev" if options.reverse else "links_filename_fwd"
        aligner.align(source, target, **{keyword: str(out)}, quiet=True)
        lines = out.read_text(encoding="utf-8").splitlines()
    for n, line in zip(kept, lines, strict=True):
        links[n] = parse_links(line, f"eflomal output line {n + 1}")
    return links


def align(text: Bitext, backend: str, options: Options) -> list[frozenset[Link]]:
    """One direction's links per sentence pair (empty for skipped pairs)."""
    if backend == "fast_align":
        return _fast_align(text, options)
    if backend == "eflomal":
        return _eflomal(text, options)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
