"""SacreBLEU per direction, the chapter's averages, and the statistics for the bootstrap.

Tokenizer ``zh`` for Chinese targets and ``13a`` otherwise (the thesis's protocol); each
direction keeps sacrebleu's signature. ``zst_bleu`` / ``sup_bleu`` are the means over the
zero-shot / supervised directions (the thesis averages directions, then seeds); their
per-sentence statistics, pooled over the directions, feed the report's paired bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sacrebleu.metrics import BLEU

from mlrep.io import read_lines
from mlrep.nmt.data import Direction, NmtDataError, read_pair
from mlrep.report.stats import sentence_stats


def tokenizer(lang: str) -> str:
    return "zh" if lang.split("_")[0] == "zh" else "13a"


def score(hyp_dir: Path, text_dir: Path, wanted: Sequence[Direction]) -> dict:
    """BLEU of ``<dir>.hyp`` files against the test references of each direction."""
    per_direction: dict[str, dict] = {}
    stats: dict[str, list[list[float]]] = {"zst_bleu": [], "sup_bleu": []}
    for d in wanted:
        hyps = read_lines(hyp_dir / f"{d.name}.hyp", NmtDataError)
        _, refs = read_pair(text_dir, "test", d)
        if len(hyps) != len(refs):
            raise NmtDataError(
                f"{hyp_dir / (d.name + '.hyp')}: {len(hyps)} hypotheses for {len(refs)} "
                "references; decode again"
            )
        bleu = BLEU(tokenize=tokenizer(d.tgt))
        result = bleu.corpus_score(hyps, [refs])
        per_direction[d.name] = {
            "bleu": result.score,
            "signature": str(bleu.get_signature()),
            "zero_shot": d.zero_shot,
            "lines": len(hyps),
        }
        stats["zst_bleu" if d.zero_shot else "sup_bleu"].extend(
            sentence_stats(hyps, refs, tokenize=tokenizer(d.tgt))
        )
    metrics = {f"bleu_{name}": v["bleu"] for name, v in per_direction.items()}
    for key, zero_shot in (("zst_bleu", True), ("sup_bleu", False)):
        values = [v["bleu"] for v in per_direction.values() if v["zero_shot"] == zero_shot]
        if values:
            metrics[key] = sum(values) / len(values)
    return {
        "metrics": metrics,
        "directions": per_direction,
        "bleu_stats": {k: v for k, v in stats.items() if v},
    }
