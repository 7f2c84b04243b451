"""One NMT run's metrics (contract: `mlrep.report.metrics`), and the metric names `mlrep nmt`
writes (`PATTERNS`, included by the declaration of each chapter that trains with it: 8, and 7
next).

`mlrep nmt metrics` gathers what the earlier steps wrote: BLEU per direction and its
averages (`mlrep.nmt.score`, with their copy-the-source floors), the zero-shot off-target
rate (fastText language ID from `mlrep.evaluate.offtarget`, averaged over zero-shot
directions as the thesis does) and its floor (the same detector on the copied sources), the
probes' per-layer accuracies (``llr_{sup,zst}_{src,tgt}_enc<k>`` and ``…_dec<k>``: named by
the model's own layers, so a 2+2-layer tiny model's decoder lands where the thesis's 6+6
figures put decoder layers, L7–L12) and encoder SVCCA (``svcca_l<k>``). For Chapter 7's
interlingua: the X→en BLEU of a gold-length decode (``gold_*``, `gold_metrics`) and the
length predictor's accuracy against the English references (``len_*``, `length_metrics`).
"""

from __future__ import annotations

import json
from pathlib import Path

from mlrep.io import read_lines
from mlrep.nmt.data import PIVOT, Direction, NmtDataError
from mlrep.report.metrics import FLOOR

# template syntax: `mlrep.report.metrics.compile_template`
PATTERNS: tuple[str, ...] = (
    # prepare: the dataset's row of the data tables (7.1, 8.1), run data/<dataset>, seed 0:
    # `mlrep.nmt.data.TABLE_STATS` (the valid/test lines of the split's largest direction)
    "n_zero",
    "n_supervised",
    "s_train",
    "{valid|test}_per_pair",
    "n_languages",
    # score, bleurt (`mlrep.nmt.score`): per direction, and the means over the zero-shot and
    # the supervised directions, and over the supervised en→X and X→en ones
    "bleu_{src}-{tgt}",
    "{zst|sup|from_en|to_en}_bleu",
    "bleurt_{src}-{tgt}",
    "{zst|sup|from_en|to_en}_bleurt",
    # metrics --gold-scores: X→en BLEU decoded at the reference's interlingua length, its mean
    "gold_bleu_{src}-{tgt}",
    "gold_to_en_bleu",
    # metrics, interlingua models: % of X→en test lines whose interlingua length equals the
    # English reference's subword count, mean absolute difference; per source and the means
    "len_{acc|diff}_{src}",
    "len_{acc|diff}",
    # metrics: off-target rate (%) per zero-shot direction and their mean
    "off_target_{src}-{tgt}",
    "zst_off_target",
    # metrics: probe accuracy per layer (`layer_metrics`), encoder SVCCA per layer
    "llr_{sup|zst}_{src|tgt}_{enc|dec}{k}",
    "svcca_l{k}",
    # metrics --valid-log: the validation NMT loss at the end of epoch k, and at the k-th
    # validation its update, NMT loss and in-batch retrieval P@1 (`valid_log.curves`)
    "valid_nmt_loss_{k}",
    "valid{k}_{updates|nmt_loss|sent_p_at_1|word_p_at_1}",
)


def off_target(
    lines: dict[Direction, list[str]], model: str, model_path: Path | None
) -> tuple[float, dict[str, float], list[float], list[tuple[str, int]]]:
    """Mean off-target rate (%) over the zero-shot directions of `lines` (each direction's
    hypotheses, or its sources for the copy-the-source floor), the rate per direction, a score
    per sentence (100 for an off-target line), direction by direction, and the directions'
    ``groups`` (`mlrep.report.metrics`): each direction's rate is the mean of its sentences,
    and the report's paired bootstrap averages the directions as the thesis averages rates."""
    from mlrep.evaluate.offtarget import score

    results = {d.name: score(found, d.tgt, model, model_path) for d, found in lines.items()}
    sentences = [100.0 * flag for r in results.values() for flag in r.off]
    groups = [(name, r.n) for name, r in results.items()]
    rates = {name: r.off_target for name, r in results.items()}
    return sum(rates.values()) / len(rates), rates, sentences, groups


def layer_metrics(probes: dict[str, Path], svcca: Path | None) -> dict[str, float]:
    """Per-layer probe accuracies and SVCCA values under the report's metric names."""
    out: dict[str, float] = {}
    for subset, path in probes.items():
        result = json.loads(path.read_text(encoding="utf-8"))
        encoder = result["n_encoder_layers"]
        for side in ("src", "tgt"):
            for k, value in enumerate(result[side], start=1):
                if value is not None:  # a layer without tokens (every hypothesis empty)
                    layer = f"enc{k}" if k <= encoder else f"dec{k - encoder}"
                    out[f"llr_{subset}_{side}_{layer}"] = float(value)
    if svcca is not None:
        values = json.loads(svcca.read_text(encoding="utf-8"))["svcca"]
        out.update({f"svcca_l{k}": float(v) for k, v in enumerate(values, start=1)})
    return out


GOLD = "gold_"  # the prefix of a gold-length decode's metrics


def gold_metrics(scores: dict) -> tuple[dict[str, float], dict, dict]:
    """A gold-length decode's `mlrep.nmt.score` output as ``gold_bleu_<dir>`` and
    ``gold_to_en_bleu``, with that mean's sentence statistics and groups (for the bootstrap
    against the predicted-length ``to_en_bleu``)."""
    metrics = {GOLD + k: v for k, v in scores["metrics"].items() if k.startswith("bleu_")}
    if "to_en_bleu" not in scores["metrics"]:
        raise NmtDataError(
            "the gold-length scores hold no X→en direction: score a --gold-length decode"
        )
    # the mean and its copy-the-source floor (the same sources, so the same floor as the
    # predicted-length decode's: a claim on the gold side is judged against it too)
    names = {GOLD + "to_en_bleu": "to_en_bleu", FLOOR + GOLD + "to_en_bleu": FLOOR + "to_en_bleu"}
    metrics |= {gold: scores["metrics"][name] for gold, name in names.items()}
    stats = {gold: scores["bleu_stats"][name] for gold, name in names.items()}
    groups = {
        gold: scores["groups"][name] for gold, name in names.items() if name in scores["groups"]
    }
    return metrics, stats, groups


def _ints(path: Path) -> list[int]:
    values = []
    for number, line in enumerate(read_lines(path, NmtDataError), 1):
        try:
            values.append(int(line))
        except ValueError:
            raise NmtDataError(f"{path}:{number}: {line!r} is no length; decode again") from None
    return values


def length_metrics(hyp: Path, references: dict[Direction, list[str]]) -> dict[str, float]:
    """Per X→en direction with a ``.len`` file in `hyp`: the % of lines whose interlingua
    length equals the English reference's subword count (``len_acc_<X>``) and the mean absolute
    difference (``len_diff_<X>``), and both averaged over the sources (`references`: each X→en
    direction's subword references)."""
    out: dict[str, float] = {}
    for d, refs in references.items():
        path = hyp / f"{d.name}.len"
        if d.tgt != PIVOT or d.src == PIVOT or not path.exists():
            continue
        used = _ints(path)
        if len(used) != len(refs):
            raise NmtDataError(f"{path}: {len(used)} lengths for {len(refs)} references")
        gold = [len(r.split()) for r in refs]
        pairs = list(zip(used, gold, strict=True))
        out[f"len_acc_{d.src}"] = 100.0 * sum(u == g for u, g in pairs) / len(pairs)
        out[f"len_diff_{d.src}"] = sum(abs(u - g) for u, g in pairs) / len(pairs)
    for name in ("len_acc", "len_diff"):
        values = [v for k, v in out.items() if k.startswith(name + "_")]
        if values:
            out[name] = sum(values) / len(values)
    return out
