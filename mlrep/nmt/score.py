"""BLEU (and, at full scale, BLEURT) per direction, the chapter's averages, and the
statistics for the bootstrap.

The protocol is the chapter's (`mlrep.evaluate.mt`): Chapters 7 and 8 score with ``sacrebleu``
(tokenizer ``zh`` for Chinese targets and ``13a`` otherwise), Chapter 5 with tokenized BLEU
(``wat``: both sides segmented, then BLEU over the tokens); each direction keeps its
signature, and each metric
its ``signatures`` entry (a mean: its directions' distinct ones, joined). ``zst_bleu`` /
``sup_bleu`` are the means over the zero-shot / supervised directions (the thesis averages
directions, then seeds), ``from_en_bleu`` / ``to_en_bleu`` over the supervised en→X / X→en
ones (Chapter 7's split of the supervised average); their per-sentence statistics, listed
direction by direction with ``groups`` saying where each direction's sentences lie, feed the
report's paired bootstrap, which resamples within each direction and averages the
directions' BLEU as the metric does.

Every metric comes with its copy-the-source floor (``floor_<metric>``,
`mlrep.report.metrics.FLOOR`): each direction's source sentences scored as the hypothesis
against the same references with the same protocol, with their statistics and groups under
the floor's name, so the claims ledger can test sentence by sentence whether a system beats
what copying its input scores (shared subwords and names make that floor non-zero).

A pair model (Chapter 4, `pair_bleu`) has one direction per run and is scored with the
``wat`` protocol on the words it was trained on: `mlrep.evaluate.mt.presegmented_bleu`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mlrep.evaluate import mt
from mlrep.evaluate.bleurt import Bleurt
from mlrep.io import read_lines
from mlrep.nmt.data import PIVOT, Direction, NmtDataError, read_pair
from mlrep.report.metrics import FLOOR, joint_signature

SACREBLEU = mt.Protocol("sacrebleu")  # Chapters 7 and 8's protocol


def _means(d: Direction) -> list[str]:
    """The averages direction `d` counts in (``zst``/``sup``, then ``from_en``/``to_en``)."""
    if d.zero_shot:
        return ["zst"]
    return ["sup", "from_en" if d.src == PIVOT else "to_en"] if PIVOT in (d.src, d.tgt) else ["sup"]


def _hypotheses(
    hyp_dir: Path, text_dir: Path, d: Direction
) -> tuple[list[str], list[str], list[str]]:
    """A direction's hypotheses, test sources and test references, one each."""
    hyps = read_lines(hyp_dir / f"{d.name}.hyp", NmtDataError)
    sources, refs = read_pair(text_dir, "test", d)
    if len(hyps) != len(refs):
        raise NmtDataError(
            f"{hyp_dir / (d.name + '.hyp')}: {len(hyps)} hypotheses for {len(refs)} "
            "references; decode again"
        )
    return hyps, sources, refs


def _bleu(
    hypotheses: dict[Direction, list[str]],
    references: dict[Direction, list[str]],
    protocol: mt.Protocol,
) -> dict:
    """Corpus BLEU per direction under `protocol`, the zero-shot / supervised means, and
    their per-sentence statistics and groups."""
    per_direction: dict[str, dict] = {}
    stats: dict[str, list[list[float]]] = {}
    groups: dict[str, list[tuple[str, int]]] = {}
    signatures: dict[str, list[str]] = {}
    for d, hyps in hypotheses.items():
        result = mt.score(protocol, hyps, references[d], d.tgt)
        per_direction[d.name] = {
            "bleu": result.score,
            "signature": result.signature,
            "zero_shot": d.zero_shot,
            "lines": len(hyps),
        }
        signatures[f"bleu_{d.name}"] = [result.signature]
        for mean in _means(d):
            stats.setdefault(f"{mean}_bleu", []).extend(result.stats)
            groups.setdefault(f"{mean}_bleu", []).append((d.name, len(hyps)))
            signatures.setdefault(f"{mean}_bleu", []).append(result.signature)
    return {
        "metrics": _metrics(per_direction, "bleu"),
        "directions": per_direction,
        "bleu_stats": stats,
        "groups": groups,
        "signatures": {name: joint_signature(found) for name, found in signatures.items()},
    }


def score(
    hyp_dir: Path,
    text_dir: Path,
    wanted: Sequence[Direction],
    protocol: mt.Protocol = SACREBLEU,
) -> dict:
    """BLEU of ``<dir>.hyp`` files against the test references of each direction under
    `protocol`, and each metric's copy-the-source floor (``floor_<metric>``, module
    docstring)."""
    read = {d: _hypotheses(hyp_dir, text_dir, d) for d in wanted}
    references = {d: refs for d, (_, _, refs) in read.items()}
    result = _bleu({d: hyps for d, (hyps, _, _) in read.items()}, references, protocol)
    floor = _bleu({d: sources for d, (_, sources, _) in read.items()}, references, protocol)
    for key in ("metrics", "bleu_stats", "groups", "signatures"):
        result[key] |= {FLOOR + name: v for name, v in floor[key].items()}
    return result


def _metrics(per_direction: dict[str, dict], name: str) -> dict[str, float]:
    """``<name>_<dir>`` per direction and their means (`_means`) over the directions there."""
    metrics = {f"{name}_{d}": v[name] for d, v in per_direction.items()}
    members: dict[str, list[float]] = {}
    for d, v in per_direction.items():
        for mean in _means(Direction.parse(d)):
            members.setdefault(f"{mean}_{name}", []).append(v[name])
    return metrics | {key: sum(values) / len(values) for key, values in members.items()}


def bleurt(
    hyp_dir: Path, text_dir: Path, wanted: Sequence[Direction], scorer: Bleurt, batch_size: int
) -> dict:
    """BLEURT ×100 (the thesis's Table E.9 scale) per direction, and its averages."""
    per_direction: dict[str, dict] = {}
    for d in wanted:
        hyps, _, refs = _hypotheses(hyp_dir, text_dir, d)
        values = scorer.score(refs, hyps, batch_size)
        per_direction[d.name] = {
            "bleurt": 100 * sum(values) / len(values),
            "zero_shot": d.zero_shot,
            "lines": len(hyps),
        }
    return {"metrics": _metrics(per_direction, "bleurt"), "directions": per_direction}


def pair_bleu(
    hypotheses: Sequence[str],
    references: Sequence[str],
    sources: Sequence[str],
    d: Direction,
    segmenter: str,
) -> dict:
    """WAT-style BLEU (``bleu_<src>-<tgt>``) of one fine-tuned pair model's test words, and
    its copy-the-source floor, with their per-sentence statistics and signatures: the words
    are the pool's (`segmenter`'s tokens, BPE merged) and are scored as they are."""
    name = f"bleu_{d.name}"
    for what, lines in (("hypotheses", hypotheses), ("sources", sources)):
        if len(lines) != len(references):
            raise NmtDataError(
                f"{len(lines)} {what} for {len(references)} references of {d.name}: give the "
                "test set's files, line by line, and decode all of it"
            )
    result = mt.presegmented_bleu(hypotheses, references, d.tgt, segmenter)
    floor = mt.presegmented_bleu(sources, references, d.tgt, segmenter)
    return {
        "metrics": {name: result.score, FLOOR + name: floor.score},
        "bleu_stats": {name: result.stats, FLOOR + name: floor.stats},
        "signatures": {name: result.signature, FLOOR + name: floor.signature},
        "directions": {
            d.name: {"bleu": result.score, "signature": result.signature, "lines": len(references)}
        },
    }
