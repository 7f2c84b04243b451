"""Chapter 5's encoder analyses on the validation set (Appendix C.2, C.3; Tables C.4-C.9):
sentence and word retrieval P@1 of a trained model, per English-centric pair en-xx.

The encoder is read exactly as the contrastive criterion reads it, with its code
(`mlrep.nmt.contrastive.encode_sides`): each valid direction's subword lines tagged as the
data-bin tags them (`mlrep.nmt.prepare.tag_lines`), collated by fairseq's own collater, the
target encoded as a source. A sentence is the mean of its top-layer states over its content
positions: EOS in, padding and the language tag out (a tag names a language, which
translations do not share). A unit (a word or a merged phrase) is the mean of its subwords'
states. States are raw, with no projection head: the head g exists in +w2w runs only, and the
baselines must be read the same way. Similarity is cosine (`mlrep.evaluate.retrieval`).

Design choices the thesis leaves open:

* sentences: each valid direction's sources retrieve among all its targets, and its
  targets among all its sources. Retrieval runs over the whole validation set, not a batch,
  so the number depends on the set and not on how the lines were batched. A pair's P@1 is
  the mean over the retrievals of its two directions, en→xx and xx→en.
* words: units retrieve among the units of their batch only (Appendix C.3). A batch is what
  fairseq's validation forms at ``--max-tokens`` `batch_tokens` (512, `RetrievalSettings`)
  from one direction's lines: length-sorted, padded size at most 512 (its tags and EOS
  counted). Retrieval runs both ways, as the criterion's
  validation log scores it. A batch with fewer than two units is skipped, as the criterion
  skips it. A pair's P@1 is its correct retrievals over all retrievals in the batches of
  both directions, so each batch weighs by its retrievals.
* a pair whose valid directions have no links files (`mlrep nmt links` without
  ``valid.en-xx=``) gets no word metric, and the output says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from fairseq import utils
from fairseq.data import Dictionary, LanguagePairDataset

from mlrep.errors import MlrepError
from mlrep.evaluate import retrieval
from mlrep.nmt import alignments
from mlrep.nmt.contrastive import encode_sides, tag_lookup
from mlrep.nmt.data import PIVOT, TEXT, Direction, read_stats, split_directions
from mlrep.nmt.prepare import Tagged, read_subwords, tag_lines, tag_style
from mlrep.report.metrics import Scores


class RetrievalError(MlrepError):
    """Validation data the retrieval analyses cannot read as asked."""


def hits(queries: np.ndarray, candidates: np.ndarray) -> list[int]:
    """1 or 0 per retrieval among aligned rows (row k of each is the other's gold): every
    query among the candidates, then every candidate among the queries, by cosine."""
    forward, backward = retrieval.predict(queries, candidates)
    gold = np.arange(len(queries))
    return [int(h) for h in np.concatenate([forward == gold, backward == gold])]


def dataset(lines: Tagged, dictionary: Dictionary, linked: bool) -> LanguagePairDataset:
    """One direction's tagged lines as fairseq's validation reads them: token ids with EOS,
    left-padded sources, and with `linked` the tagged links (fairseq's ``.align`` layout)."""

    def ids(line: str) -> torch.Tensor:
        return dictionary.encode_line(line, add_if_not_exist=False, append_eos=True).long()

    sources = [ids(x) for x in lines.sources]
    targets = [ids(y) for y in lines.targets]
    links = [torch.tensor(x, dtype=torch.long).view(-1) for x in lines.links] if linked else None
    return LanguagePairDataset(
        sources,
        [len(x) for x in sources],
        dictionary,
        targets,
        [len(y) for y in targets],
        dictionary,
        shuffle=False,
        align_dataset=links,
    )


def batches(data: LanguagePairDataset, batch_tokens: int, where: str) -> list[np.ndarray]:
    """fairseq's validation batches of `data` at ``--max-tokens`` `batch_tokens`; a line
    that no batch holds is refused (fairseq would stop on it or, told to, skip it)."""
    sizes = data.num_tokens_vec(np.arange(len(data)))
    too_long = np.flatnonzero(sizes > batch_tokens)
    if len(too_long):
        line = int(too_long[0])
        raise RetrievalError(
            f"{where}:{line + 1}: {int(sizes[line])} tokens with tag and EOS, more than a "
            f"batch of {batch_tokens}; give a larger --batch-tokens"
        )
    return data.batch_by_size(data.ordered_indices(), max_tokens=batch_tokens)


@dataclass(frozen=True)
class Scored:
    """One valid direction's retrievals: `sentence_hits` its whole-set ones (sources first),
    `word_hits` its in-batch ones (None: no links), and what they were made of."""

    sentences: int
    sentence_hits: list[int]
    word_hits: list[int] | None
    units: int
    batches: int
    # each word retrieval's chance, 100 / the units of its batch (its floor)
    word_chance: list[float]


def score(
    encoder, data: LanguagePairDataset, is_tag: torch.Tensor, batch_tokens: int, where: str
) -> Scored:
    """The retrievals of one direction's `data`: sentences encoded in the word batches (a
    line's states do not depend on its batch), then retrieved over the whole set."""
    pad = data.src_dict.pad()
    device = next(encoder.parameters()).device
    rows: list[np.ndarray] = []
    sentences: list[tuple[np.ndarray, np.ndarray]] = []
    word_hits: list[int] = []
    word_chance: list[float] = []
    units = scored_batches = 0
    with torch.no_grad():
        for indices in batches(data, batch_tokens, where):
            sample = data.collater([data[i] for i in indices])
            sample = utils.apply_to_sample(lambda t: t.to(device), sample)
            sides = encode_sides(encoder, sample, pad, is_tag)
            rows.append(sample["id"].cpu().numpy())
            pooled_source, pooled_target = sides.sentences()
            sentences.append((_numpy(pooled_source), _numpy(pooled_target)))
            if "alignments" not in sample:
                continue
            source_units, target_units = sides.aligned_units(sample["alignments"])
            if len(source_units) < 2:  # one unit retrieves itself: the criterion skips it too
                continue
            word_hits += hits(_numpy(source_units), _numpy(target_units))
            word_chance += [retrieval.chance(len(source_units))] * (2 * len(source_units))
            units += len(source_units)
            scored_batches += 1
    order = np.argsort(np.concatenate(rows))
    source, target = (np.concatenate(side)[order] for side in zip(*sentences, strict=True))
    linked = data.align_dataset is not None
    return Scored(
        len(data),
        hits(source, target),
        word_hits if linked else None,
        units,
        scored_batches,
        word_chance,
    )


def _numpy(states: torch.Tensor) -> np.ndarray:
    return states.float().cpu().numpy()


def percent(correct: list[int]) -> float:
    return 100.0 * sum(correct) / len(correct)


def analyse(
    encoder,
    dictionary: Dictionary,
    prepared: Path,
    links: Path,
    tag_format: str,
    batch_tokens: int,
) -> dict:
    """Sentence and word retrieval P@1 (percent) of `encoder` on the valid set of the
    prepared dataset `prepared`, its links read from the `mlrep nmt links` folder `links`:
    ``metrics`` per pair and their means over pairs, ``pairs`` the counts (and why a pair
    has no word metric), ``sentence_scores`` and ``groups`` the per-retrieval data of every
    P@1 and of its chance floor (`mlrep.report.metrics.Scores`: a pair's chance is 100 / the
    candidates of each retrieval, a mean over pairs is one group per pair), ``directions``
    each retrieval's 1 or 0."""
    languages = read_stats(prepared / TEXT)["languages"]
    tags = tag_style(prepared)
    is_tag = tag_lookup(dictionary.symbols)
    scored: dict[Direction, Scored] = {}
    for d in split_directions(languages, "valid"):
        src, tgt = read_subwords(prepared, "valid", d)
        path = links / alignments.ALIGN / f"valid.{d.name}"
        line_links = alignments.check_lines(path, src, tgt) if path.exists() else []
        lines = tag_lines(d, src, tgt, line_links, tag_format, reverse=False, tags=tags)
        where = f"{prepared}/sub/valid.{d.name}.{d.src}"
        data = dataset(lines, dictionary, linked=path.exists())
        scored[d] = score(encoder, data, is_tag, batch_tokens, where)
    found = Scores()
    pairs: dict[str, dict[str, int | str]] = {}
    for xx in sorted(set(languages) - {PIVOT}):
        pair = f"{PIVOT}-{xx}"
        dirs = [Direction(PIVOT, xx), Direction(xx, PIVOT)]
        sentence = [h for d in dirs for h in scored[d].sentence_hits]
        chance = [
            retrieval.chance(scored[d].sentences) for d in dirs for _ in scored[d].sentence_hits
        ]
        found.add(f"sent_p_at_1_{pair}", percent(sentence), chance, sentence)
        counts: dict[str, int | str] = {
            "sentences": sum(scored[d].sentences for d in dirs),
            "units": sum(scored[d].units for d in dirs),
            "batches": sum(scored[d].batches for d in dirs),
        }
        missing = [f"valid.{d.name}" for d in dirs if scored[d].word_hits is None]
        word = [h for d in dirs for h in scored[d].word_hits or []]
        if missing:
            counts["no_word_metric"] = (
                f"no links {links}/{alignments.ALIGN}/{{{','.join(missing)}}}: give "
                f"`mlrep nmt links` the pair's valid links (valid.{pair}=<links file>)"
            )
        elif not word:
            counts["no_word_metric"] = "no batch holds two aligned units"
        else:
            chance = [c for d in dirs for c in scored[d].word_chance]
            found.add(f"word_p_at_1_{pair}", percent(word), chance, word)
        pairs[pair] = counts
    for name in ("sent", "word"):
        parts = [k for k in found.metrics if k.startswith(f"{name}_p_at_1_")]
        if parts:
            found.mean(f"{name}_p_at_1", parts)
    directions = {
        d.name: {"sentence_hits": s.sentence_hits, "word_hits": s.word_hits}
        for d, s in scored.items()
    }
    return {
        "metrics": found.metrics,
        "sentence_scores": found.sentence_scores,
        "groups": found.groups,
        "pairs": pairs,
        "directions": directions,
    }
