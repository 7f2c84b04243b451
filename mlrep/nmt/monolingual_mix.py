"""A temperature-sampled mix of monolingual text and its tagged self-parallel pairs (mRASP2's
MC24, §3.1 and Table 10).

mRASP2 balances News Crawl across 24 languages with temperature sampling, ñ_i ∝ (n_i / N)^(1/T)
at T = 5, except three languages absent from its parallel data (Nl, Pl, Pt), which Table 10
keeps at ratio 1.00. Here:

- `mix_counts` gives each language's lines: the `fixed` languages keep all theirs, the others
  share the rest of the budget (`total`; by default every input line, so Table 10's
  Σ Final ≈ Σ Original holds) by `mlrep.nmt.sampling`'s temperature shares and rounding;
- `mix` resamples each language's lines to its count with `mlrep.nmt.sampling.resample`
  (whole repeats, then a seeded subset), so the mix is a deterministic function of the seed;
- `self_parallel` tags a language's pairs (C(x), x), the Aligned Augmentation of the mixed text
  (`mlrep.text.augment`) against the text itself, as `mlrep.nmt.prepare` tags a direction's
  lines: the direction xx→xx, its source tag the original language even though C(x) is
  code-switched, as mRASP's RAS script keeps the sentence's language indicator.

Sampling comes first and augmentation second, as the paper orders them, so each repeat of an
upsampled sentence is a separate line that AA perturbs with its own draws.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from mlrep.nmt import sampling
from mlrep.nmt.data import FAIRSEQ, Direction, NmtDataError
from mlrep.nmt.prepare import tag_lines


def mix_counts(
    counts: Mapping[str, int],
    temperature: float,
    total: int | None = None,
    fixed: Iterable[str] = (),
) -> dict[str, int]:
    """Each language's lines in the mix, in the order of `counts` (lines per language): the
    `fixed` languages keep their n_i (ratio 1), the others share `total` (default Σ n_i) less
    the fixed lines by temperature, their counts summing to it exactly."""
    kept = set(fixed)
    unknown = sorted(kept - set(counts))
    if unknown:
        raise NmtDataError(f"fixed languages {unknown} have no line counts (given: {list(counts)})")
    sampled = {lang: n for lang, n in counts.items() if lang not in kept}
    budget = (sum(counts.values()) if total is None else total) - sum(counts[k] for k in kept)
    if budget < 0 or (budget > 0 and not sampled):
        raise NmtDataError(
            f"a mix of {total} lines cannot keep the fixed languages' "
            f"{sum(counts[k] for k in kept)} lines and sample {sorted(sampled)}"
        )
    after = sampling.sampled_counts(sampled, temperature, budget) if sampled else {}
    return {lang: counts[lang] if lang in kept else after[lang] for lang in counts}


def mix(
    texts: Mapping[str, Sequence[str]], counts: Mapping[str, int], seed: int
) -> dict[str, list[str]]:
    """Each language's lines resampled to its count in `counts` (`mix_counts`), each language
    with its own seed string so that adding a language leaves the others' lines as they were."""
    return {lang: sampling.resample(texts[lang], counts[lang], f"{seed}:{lang}") for lang in counts}


def self_parallel(
    augmented: list[str],
    original: list[str],
    lang: str,
    tag_format: str,
    style: str = FAIRSEQ,
    drop_unchanged: bool = True,
) -> tuple[list[str], list[str]]:
    """The pairs (C(x), x) of language `lang` as the data-bin holds them: subword lines tagged
    as the direction `lang`→`lang` in `tag_format` and tag `style` (`mlrep.nmt.data`).

    `drop_unchanged` leaves out the pairs whose C(x) is x: mRASP's RAS script keeps only the
    sentences it replaced a word in, and mRASP2's monolingual data is that script's output
    alone, so an unperturbed sentence would add a copy task the paper did not train. (The
    script counts a replacement spelled like the word it replaces; text equality does not.)"""
    if len(augmented) != len(original):
        raise NmtDataError(
            f"{len(augmented)} augmented lines for {len(original)} original {lang} lines"
        )
    kept = [
        (source, target)
        for source, target in zip(augmented, original, strict=True)
        if not (drop_unchanged and source.split() == target.split())
    ]
    sources, targets = [s for s, _ in kept], [t for _, t in kept]
    links = [frozenset()] * len(kept)
    tagged = tag_lines(Direction(lang, lang), sources, targets, links, tag_format, False, style)
    return tagged.sources, tagged.targets
