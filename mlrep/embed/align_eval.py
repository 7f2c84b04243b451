"""OneAligner's evaluation of any Hugging Face encoder: sentence retrieval and bitext mining
scored on token states of one layer with BERT-score (or mean pooling), normalised within
evaluation blocks (`bertscore.evaluation_scores`; α = 0 leaves the scores unnormalised).

- Tatoeba: P@1 xx→en for every language of a normalised Tatoeba folder (``test.<xx>-eng.*``),
  ``tatoeba_<xx>``, and their unweighted mean ``tatoeba_avg`` (the paper's "Avg. Acc."), with
  each query's hit (the report's paired bootstrap resamples them). `tatoeba_variants` scores
  several scorers of one encoder (Table 1's four) from one encoding.
- New-Tatoeba: P@1 a→b for every pair of a folder `mlrep.embed.new_tatoeba` built (the
  pairs its index kept, each with its sampled examples), ``new_tatoeba_<a>-<b>``, and the
  means over the pairs with English (``new_tatoeba_eng``) and over the others
  (``new_tatoeba_not_eng``).
- BUCC on the embedded corpus: the comparable split of `mining.hide_gold`, mined with the
  normalised BERT-score matrix instead of margin-scored vectors: every source proposes its
  best target and every target its best source, the proposals are kept greedily one-to-one
  (`mining.select`), the threshold is where F1 peaks on the tune split's gold and F1 is
  reported on the test split at that threshold (``bucc_<xx>``). The paper does not say how it
  chose the threshold; this is XTREME's protocol with the paper's score in place of the margin.
  With ``bucc_candidates`` k > 0 only the k-NN candidates of mean-pooled vectors are
  BERT-scored (`bucc_filter`, a deviation for full BUCC), and ``bucc_recall_<xx>`` records the
  share of gold pairs among them.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from mlrep.embed import bertscore, bucc_filter, hf_encoder, new_tatoeba
from mlrep.embed.align_data import Examples, pair_sentences
from mlrep.embed.settings import AlignBuccSettings, AlignEvaluateSettings, BuccSettings
from mlrep.embed.train import SUMMARY_FILE
from mlrep.evaluate import mining
from mlrep.evaluate.protocols import BenchmarkError, tatoeba_languages
from mlrep.io import read_lines
from mlrep.report.metrics import Scores


def scores(
    encoder: hf_encoder.Encoder,
    queries: Sequence[str],
    candidates: Sequence[str],
    settings: AlignEvaluateSettings,
) -> torch.Tensor:
    """The evaluation scores of every query (row) against every candidate (column), on the
    CPU; they are computed on the encoder's device, where the token dot products are cheap."""
    return variant_scores(encoder, queries, candidates, [settings])[0]


def variant_scores(
    encoder: hf_encoder.Encoder,
    queries: Sequence[str],
    candidates: Sequence[str],
    variants: Sequence[AlignEvaluateSettings],
) -> list[torch.Tensor]:
    """`scores` under each of `variants` (scorers of one encoding: their similarity and α may
    differ, nothing else), from one encoding of both sides and one raw score matrix per
    similarity: α only normalises that matrix, so Table 1's four scorers of an encoder cost
    one encoding and one BERT-score pass, not four."""
    if not queries or not candidates:
        raise BenchmarkError(
            f"{len(queries)} queries and {len(candidates)} candidates: nothing to score; "
            "check the evaluation files"
        )
    settings = _one_encoding(variants)
    sides = [
        hf_encoder.encode(
            encoder, list(text), settings.layer, settings.max_tokens, settings.encode_batch_size
        )
        for text in (queries, candidates)
    ]
    (src, src_mask), (tgt, tgt_mask) = (
        (states.to(encoder.device), mask.to(encoder.device)) for states, mask in sides
    )
    raw: dict[str, torch.Tensor] = {}
    found = []
    for variant in variants:
        if variant.similarity not in raw:
            raw[variant.similarity] = bertscore.evaluation_scores(
                src, src_mask, tgt, tgt_mask, similarity=variant.similarity, alpha=0.0
            )
        f = raw[variant.similarity]
        found.append(
            (
                bertscore.normalize_blocks(f, variant.alpha, variant.eval_batch)
                if variant.alpha
                else f
            ).cpu()
        )
    return found


def _one_encoding(variants: Sequence[AlignEvaluateSettings]) -> AlignEvaluateSettings:
    """The first of `variants`, once every other differs from it in its scorer alone
    (similarity, α, the normalisation block): they share one encoding and one test set."""
    if not variants:
        raise BenchmarkError("no scorer given: pass at least one evaluation's settings")
    first = variants[0]
    scorer = {"similarity": first.similarity, "alpha": first.alpha, "eval_batch": first.eval_batch}
    for variant in variants[1:]:
        if dataclasses.replace(variant, **scorer) != first:
            raise BenchmarkError(
                f"scorers {first} and {variant} differ beyond similarity, alpha and "
                "eval_batch: evaluate them in separate calls"
            )
    return first


def hits(scores: torch.Tensor) -> list[int]:
    """Each query's hit (1: row i retrieved its own column i, 0: another): the per-query data
    the report's paired bootstrap resamples; their mean × 100 is `bertscore.precision_at_1`."""
    predicted = scores.argmax(dim=1)
    return (predicted == torch.arange(scores.shape[0])).int().tolist()


def retrieval(encoder: hf_encoder.Encoder, pairs: Examples, settings: AlignEvaluateSettings):
    """P@1 of each source retrieving its own target among all targets."""
    return bertscore.precision_at_1(scores(encoder, pairs.src, pairs.tgt, settings))


def training_pairs(encoder: str | Path) -> dict[str, float]:
    """``train_pairs``: the examples a fine-tuned encoder's pairs offered before the budget
    (its ``train.json``'s ``pool``; OneAligner's Figure 1 plots accuracy against it). A hub id
    or a folder no fine-tuning wrote gives nothing."""
    summary = Path(encoder) / SUMMARY_FILE
    if not summary.is_file():
        return {}
    pool = json.loads(summary.read_text()).get("pool")
    return {} if pool is None else {"train_pairs": float(pool)}


def tatoeba(encoder: hf_encoder.Encoder, folder: Path, settings: AlignEvaluateSettings) -> Scores:
    """``tatoeba_<xx>`` (xx→eng P@1) for each language of `settings.tatoeba_languages` (none:
    every language of `folder`), and ``tatoeba_avg``; each with its chance floor
    (``floor_<name>``: 1/candidates) and each query's hit, which the report's claims test a
    side against (the floor) and resample (the paired bootstrap)."""
    return tatoeba_variants(encoder, folder, [settings])[0]


def tatoeba_variants(
    encoder: hf_encoder.Encoder, folder: Path, variants: Sequence[AlignEvaluateSettings]
) -> list[Scores]:
    """`tatoeba` under each scorer of `variants` (`variant_scores`: one encoding of each
    language's pairs for all of them), in their order."""
    settings = _one_encoding(variants)
    found, names = [Scores() for _ in variants], []
    limit = settings.tatoeba_pairs or None
    for lang in settings.tatoeba_languages or tatoeba_languages(folder):
        stem = folder / f"test.{lang}-eng"
        xx, eng = (read_lines(Path(f"{stem}.{side}"), BenchmarkError) for side in (lang, "eng"))
        if len(xx) != len(eng):
            raise BenchmarkError(f"{stem}.{lang}: {len(xx)} lines but .eng has {len(eng)}")
        pairs = Examples(xx[:limit], eng[:limit])
        names.append(f"tatoeba_{lang}")
        matrices = variant_scores(encoder, pairs.src, pairs.tgt, variants)
        for scores_of, matrix in zip(found, matrices, strict=True):
            value = bertscore.precision_at_1(matrix)
            scores_of.add(names[-1], value, _chance(pairs), hits(matrix))
    for scores_of in found:
        scores_of.mean("tatoeba_avg", names)
    return found


def _chance(pairs: Examples) -> float:
    """P@1 (percent) of a random ranking: one gold among the candidates."""
    return 100.0 / len(pairs.tgt)


def pair_sets(
    encoder: hf_encoder.Encoder, folder: Path, settings: AlignEvaluateSettings
) -> dict[str, float]:
    """``new_tatoeba_<a>-<b>`` for every pair of a built New-Tatoeba folder (all its sampled
    examples) and the English / non-English means (a mean over no pair is not written)."""
    found, groups = Scores(), {"eng": [], "not_eng": []}
    for pair in new_tatoeba.pairs(folder):
        chosen = pair_sentences(folder, new_tatoeba.SPLIT, pair)
        name = f"new_tatoeba_{pair}"
        found.add(name, retrieval(encoder, chosen, settings), _chance(chosen))
        groups["eng" if new_tatoeba.english(pair) else "not_eng"].append(name)
    for group, names in groups.items():
        if names:
            found.mean(f"new_tatoeba_{group}", names)
    return found.metrics


def _bucc_split(folder: Path, split: str, lang: str, spec: BuccSettings) -> tuple:
    """(xx sentences, en sentences, the mining split of their ids and gold pairs): normalised
    BUCC 2018 as published where the split has its ``<split>.<xx>-en.gold`` (full; sides
    ``.<xx>``, ``.en`` and their ``.ids``), else a corpus split with its gold hidden
    (`mining.hide_gold`)."""
    empty = np.zeros((0, 0), dtype=np.float32)  # the scores are the encoder's, not vectors
    stem = f"{folder}/{split}.{lang}-en"
    if Path(f"{stem}.gold").exists():
        src, tgt = (read_lines(Path(f"{stem}.{side}"), BenchmarkError) for side in (lang, "en"))
        src_ids = mining.read_ids(Path(f"{stem}.{lang}.ids"), len(src))
        tgt_ids = mining.read_ids(Path(f"{stem}.en.ids"), len(tgt))
        gold = mining.read_gold(Path(f"{stem}.gold"), src_ids, tgt_ids)
        return src, tgt, mining.Split(empty, empty, src_ids, tgt_ids, gold)
    both = pair_sentences(folder, split, f"{lang}-en")
    rows = len(both)
    src_rows, tgt_rows = mining.hide_gold(rows, spec.gold_fraction, spec.bucc_seed)
    ids = [str(r) for r in range(rows)]
    gold = {(ids[r], ids[r]) for r in np.intersect1d(src_rows, tgt_rows)}
    split_ids = mining.Split(
        empty, empty, [ids[r] for r in src_rows], [ids[r] for r in tgt_rows], gold
    )
    return [both.src[r] for r in src_rows], [both.tgt[r] for r in tgt_rows], split_ids


def mine(matrix: torch.Tensor) -> mining.Mined:
    """Pairs proposed by each row's and each column's best score, kept one-to-one, best first."""
    forward, backward = matrix.max(dim=1), matrix.max(dim=0)
    return mining.select(
        forward.indices.numpy(),
        forward.values.numpy(),
        backward.indices.numpy(),
        backward.values.numpy(),
    )


def _mined(
    encoder: hf_encoder.Encoder,
    src: list[str],
    tgt: list[str],
    ids: mining.Split,
    k: int,
    settings: AlignEvaluateSettings,
) -> tuple[mining.Mined, float]:
    """One split mined, and the percent of its gold pairs that were scored at all: every pair
    when `k` is 0 or reaches both sides' sizes (k-NN would return every pair), else the k-NN
    candidates of `bucc_filter`."""
    if k == 0 or k >= max(len(src), len(tgt)):
        return mine(scores(encoder, src, tgt, settings)), 100.0
    sides = tuple(
        hf_encoder.batches(
            encoder, text, settings.layer, settings.max_tokens, settings.encode_batch_size
        )
        for text in (src, tgt)
    )
    return bucc_filter.mine_prefiltered(
        sides, ids, k, alpha=settings.alpha, batch=settings.eval_batch, device=encoder.device
    )


def bucc(
    encoder: hf_encoder.Encoder,
    folder: Path,
    spec: AlignBuccSettings,
    settings: AlignEvaluateSettings,
) -> tuple[dict[str, float], dict]:
    """``bucc_<xx>`` F1 (test split, threshold from the tune split), their mean ``bucc_avg``,
    the pre-filter's recall of the test split's gold (``bucc_recall_<xx>``: 100 when every pair
    is scored) and the details (threshold, precision and recall of both splits, the pre-filter
    recall of each). A split that is both tune and test is mined once."""
    f1, recalls, details = {}, {}, {}
    for lang in spec.bucc_languages:
        found: dict[str, tuple] = {}
        for split in dict.fromkeys((spec.bucc_tune, spec.bucc_test)):
            src, tgt, ids = _bucc_split(folder, split, lang, spec)
            mined, covered = _mined(encoder, src, tgt, ids, spec.bucc_candidates, settings)
            found[split] = (mined, ids, covered)
        tune, test = found[spec.bucc_tune], found[spec.bucc_test]
        threshold, tuned = mining.best_threshold(*tune[:2])
        tested = mining.apply_threshold(*test[:2], threshold)
        f1[f"bucc_{lang}"] = tested["f1"]
        recalls[f"bucc_recall_{lang}"] = test[2]
        details[lang] = {
            "threshold": threshold,
            "tune": tuned | {"candidate_recall": tune[2]},
            "test": tested | {"candidate_recall": test[2]},
        }
    if f1:
        f1["bucc_avg"] = statistics.fmean(f1.values())
    return f1 | recalls, details
