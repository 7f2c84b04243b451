"""Table 5.1 measured: per language pair, the corpus the word links were extracted from, the
out-of-domain (OD) text fast_align also learnt from, and the links of each kind (N).

Every number is read from the counts the alignment layer already wrote beside its links
(``stats.json``, `mlrep.align.runs`), never recounted:

* ``train_pairs`` (Size): the in-domain training pairs, the lines of the pair's w2w run on the
  ``align.split`` of ``align.dataset`` (`Paths.w2w_run`); the 1-to-1 run keeps the same lines;
* ``od_pairs`` (OD Size): the OD lines the ``+od`` fast_align run aligned after them
  (``od_lines`` of its `Paths.alignment_run`: 0 where ``align.od_corpora`` names none);
* ``n_w2w``, ``n_fa`` (N (w2w), N (FA)): the units (`mlrep.align.units`) of the w2w links and
  of the ``+od`` run's 1-to-1 links (`Paths.one_to_one_run`), over the in-domain training lines
  only: the OD lines only help fast_align learn. A w2w phrase pair is one unit, a 1-to-1 link
  is a unit of its own;
* ``{w2w|fa}_per_sentence``: N / Size, the thesis's alignments per sentence (Appendix A6:
  en-kk 1.0 w2w, 2.2 FA).

The row of pair ``en-xx`` is the run ``corpora/en-xx`` at `UNTRAINED_SEED` (no training).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.align import od
from mlrep.chapters.ch5_wordcl import runs
from mlrep.chapters.ch5_wordcl.links import pairs
from mlrep.errors import MlrepError
from mlrep.paths import Paths

STATS = "stats.json"
RUN_GROUP = "corpora"  # the rows' runs: corpora/<pair>


class CorpusStatsError(MlrepError):
    """Alignment counts that do not describe the same training lines."""


def run_name(pair: str) -> str:
    """The run holding `pair`'s row of Table 5.1."""
    return f"{RUN_GROUP}/{pair}"


def all_pairs(section: Mapping[str, Any]) -> list[str]:
    """The pairs of every system of the chapter (``datasets``): the rows it may measure."""
    found = [pair for system in section["datasets"] for pair in pairs(section, system)]
    return list(dict.fromkeys(found))


def run_pairs(section: Mapping[str, Any]) -> list[str]:
    """The pairs of the systems the chapter trains (`runs.systems`): the rows measured."""
    found = [pair for system in runs.systems(section) for pair in pairs(section, system)]
    return list(dict.fromkeys(found))


def stats_files(align: Mapping[str, Any], paths: Paths, pair: str) -> dict[str, str]:
    """The ``stats.json`` a pair's row reads: ``w2w`` (the training split's w2w links),
    ``fa_run`` (the ``+od`` symmetrized run) and ``fa`` (its 1-to-1 links)."""
    dataset, backend, method = align["dataset"], align["aligner"]["backend"], align["symmetrize"]
    return {
        "w2w": str(paths.w2w_run(dataset, pair, align["split"]) / STATS),
        "fa_run": str(paths.alignment_run(od.with_od(dataset), pair, backend, method) / STATS),
        "fa": str(paths.one_to_one_run(od.with_od(dataset), pair, backend, method) / STATS),
    }


def _read(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CorpusStatsError(f"{path}: not an alignment run's stats.json ({exc})") from None
    missing = [k for k in keys if not isinstance(stats.get(k), int)]
    if missing:
        raise CorpusStatsError(
            f"{path}: no count {', '.join(missing)}; rebuild the run with `mlrep align … --record`"
        )
    return stats


def corpus_row(w2w: Path, fa_run: Path, fa: Path) -> dict[str, float]:
    """Table 5.1's measured cells of one pair from its three ``stats.json`` (`stats_files`)."""
    w2w_stats = _read(w2w, ("pairs", "units"))
    run_stats = _read(fa_run, ("pairs", "od_lines"))
    fa_stats = _read(fa, ("pairs", "units"))
    size = w2w_stats["pairs"]
    if not size == run_stats["pairs"] == fa_stats["pairs"]:
        raise CorpusStatsError(
            f"{w2w}, {fa_run} and {fa} count {size}, {run_stats['pairs']} and "
            f"{fa_stats['pairs']} in-domain training lines; they must be the same lines: rebuild "
            "the alignments of this pair"
        )

    def per_sentence(units: int) -> float:
        return round(units / size, 4) if size else 0.0

    return {
        "train_pairs": size,
        "od_pairs": run_stats["od_lines"],
        "n_w2w": w2w_stats["units"],
        "n_fa": fa_stats["units"],
        "w2w_per_sentence": per_sentence(w2w_stats["units"]),
        "fa_per_sentence": per_sentence(fa_stats["units"]),
    }
