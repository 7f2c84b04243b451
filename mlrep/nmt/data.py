"""English-centric multilingual datasets cut from parallel corpora, and their language tags.

A dataset is a set of languages containing English, read from the sets of a preprocessed
dataset (`mlrep.text.plan.encoded_sets`): each set's raw corpus files (registry datasets as
the data layer's readers normalise them, or the embedded tiny corpus) with their tokenized,
subword-encoded counterparts, line by line. The cut keeps both: the subwords are what the
model reads, the raw lines are the references scoring compares detokenized output with. Training
uses only the English-centric pairs (en→xx and xx→en from each ``en-xx`` bitext); valid
covers the supervised directions and test *every* direction, a zero-shot test pair (xx→yy)
being the corpus's own xx-yy set or two en-xx sets joined on the same English sentence, so
a zero-shot reference is always a human translation of the source's message.

Two tag formats (Chapter 8's TAG factor), applied to subword lines:

* ``s-enc-t-dec``: ``__src__`` starts the encoder input and ``__tgt__`` the target, so the
  target tag is the decoder's first token; decoding forces it as a one-token prefix.
* ``t-enc``: ``__tgt__`` starts the encoder input only; the target is untagged.

Two tag styles (`TAG_STYLES`): a dataset binarised with its own dictionary tags with fairseq's
``__xx__``; one binarised with mBART's (Chapter 5's mBART FT) with mBART's own language tokens
``[xx_YY]``, so a fine-tuning reads the rows its pre-training learned: in ``s-enc-t-dec`` the
source's token starts the encoder input and the target's the decoder, as in mBART-50's
multilingual fine-tuning (Tang et al., 2020).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, permutations
from pathlib import Path

from mlrep.data import validate
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt import sampling

TAGS = ("s-enc-t-dec", "t-enc")
FAIRSEQ, MBART = TAG_STYLES = ("fairseq", "mbart")  # ``__ja__`` or mBART's ``[ja_XX]``
# mBART-25's pre-training languages, in the order its embedding rows hold their tokens
MBART25_LANGUAGES = [
    "ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN", "hi_IN",
    "it_IT", "ja_XX", "kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP", "nl_XX", "ro_RO",
    "ru_RU", "si_LK", "tr_TR", "vi_VN", "zh_CN",
]  # fmt: skip
_MBART_TOKENS = frozenset(f"[{code}]" for code in MBART25_LANGUAGES)
PIVOT = "en"
SPLITS = ("train", "valid", "test")
TEXT = "text"  # raw lines of a prepared dataset: the references
SUBWORDS = "sub"  # their subwords: what the model reads and writes
# the statistics of `cut` that the data tables print: zero-shot and supervised directions,
# English-centric training pairs, the valid and test lines of one direction
TABLE_STATS = ("n_zero", "n_supervised", "s_train", "valid_per_pair", "test_per_pair")


class NmtDataError(MlrepError):
    """Input data for an NMT step is missing or inconsistent."""


def language_token(language: str) -> str:
    """mBART's token of one of its languages (``ja_XX`` → ``[ja_XX]``)."""
    return f"[{language}]"


def mbart_language(lang: str) -> str:
    """The mBART-25 language of a dataset's language code (``ja`` → ``ja_XX``)."""
    for code in MBART25_LANGUAGES:
        if code.split("_")[0] == lang:
            return code
    raise NmtDataError(
        f"language {lang!r} has no mBART-25 language token (mBART-25 has "
        f"{', '.join(MBART25_LANGUAGES)}): drop {lang} from the languages given, or prepare "
        "the dataset with its own dictionary (no --dictionary)"
    )


def tag(lang: str, style: str = FAIRSEQ) -> str:
    """The language tag token of `lang` in `style` (`TAG_STYLES`)."""
    return language_token(mbart_language(lang)) if style == MBART else f"__{lang}__"


def tag_source(pieces: str, src: str, tgt: str, tag_format: str, style: str = FAIRSEQ) -> str:
    return f"{tag(src if tag_format == 's-enc-t-dec' else tgt, style)} {pieces}"


def tag_target(pieces: str, tgt: str, tag_format: str, style: str = FAIRSEQ) -> str:
    return f"{tag(tgt, style)} {pieces}" if tag_format == "s-enc-t-dec" else pieces


def strip_tags(tokens: Sequence[str]) -> list[str]:
    """Drop language tags of either style from a token sequence (decoder output in
    S-ENC-T-DEC starts with one; a model may also emit one anywhere)."""
    return [t for t in tokens if not is_tag(t)]


def is_tag(token: str) -> bool:
    """Whether `token` is a language tag of either style (``__ja__``, ``[ja_XX]``)."""
    return (token.startswith("__") and token.endswith("__") and len(token) > 4) or (
        token in _MBART_TOKENS
    )


@dataclass(frozen=True)
class Direction:
    src: str
    tgt: str

    @property
    def name(self) -> str:
        return f"{self.src}-{self.tgt}"

    @property
    def zero_shot(self) -> bool:
        return PIVOT not in (self.src, self.tgt)

    @classmethod
    def parse(cls, name: str) -> Direction:
        src, _, tgt = name.partition("-")
        return cls(src, tgt)


def directions(languages: Iterable[str]) -> list[Direction]:
    """Every ordered pair of distinct languages, supervised (English-centric) first."""
    pairs = [Direction(a, b) for a, b in permutations(sorted(languages), 2)]
    return sorted(pairs, key=lambda d: (d.zero_shot, d.src, d.tgt))


Row = tuple[str, str, str, str]  # raw first, raw second, subwords first, subwords second


@dataclass(frozen=True)
class Bitext:
    """One line-aligned set, per language its raw corpus file and its subword file.

    A subword file may be shorter (preprocessing read the first ``max_lines`` lines): it
    covers the first lines of the raw file, one line each.
    """

    label: str  # <corpus folder>/<set>, for errors and the dataset's record of its sources
    raw: Mapping[str, Path]
    encoded: Mapping[str, Path]

    def rows(self, first: str, second: str) -> Iterator[Row]:
        """Rows with both sides non-empty, streamed (files can be huge)."""
        raw = validate.parallel([self.raw[first], self.raw[second]])
        for x, y in validate.parallel([self.encoded[first], self.encoded[second]]):
            row = next(raw, None)
            if row is None:
                raise NmtDataError(
                    f"{self.encoded[first]} has more lines than {self.raw[first]}: it is not "
                    "that file's preprocessing; rebuild it"
                )
            a, b = row
            if a.strip() and b.strip() and x.strip() and y.strip():
                yield a, b, x, y


Sets = Mapping[tuple[str, str], Mapping[str, tuple[Path, Path]]]  # (split, pair) -> lang -> files


def sets_of(raw: Sequence[Path], encoded: Sequence[Path]) -> Sets:
    """`Sets` from two parallel lists: each subword file ``<split>.<pair>.<lang>`` (as the
    preprocessing names it) and the raw corpus file it was made from."""
    if len(raw) != len(encoded):
        raise NmtDataError(f"{len(raw)} raw files for {len(encoded)} subword files; give one each")
    sets: dict[tuple[str, str], dict[str, tuple[Path, Path]]] = {}
    for source, sub in zip(raw, encoded, strict=True):
        split, pair, lang = sub.name.split(".")
        if not source.name.endswith(f".{lang}") or lang not in pair.split("-"):
            raise NmtDataError(
                f"{sub} ({lang} of {pair}) was not made from {source}: give the corpus file of "
                "each subword file, in the same order"
            )
        sets.setdefault((split, pair), {})[lang] = (source, sub)
    for (split, pair), files in sets.items():
        if len(files) != 2:
            raise NmtDataError(f"{split}.{pair}: give both languages' files")
    return sets


class Corpora:
    """The sets of a preprocessed dataset, by split and unordered language pair.

    `sets` is `mlrep.text.plan.encoded_sets`: per (split, pair), each language's (raw file,
    subword file). A raw file is named as its reader names it (``train.de-en.de``,
    ``dev.en-fr.fr``, ``test.en-it.it``), which labels the set; either order serves both
    directions.
    """

    def __init__(self, sets: Sets) -> None:
        self.sets: dict[tuple[str, frozenset[str]], Bitext] = {}
        for (split, pair), files in sets.items():
            raw = next(iter(files.values()))[0]
            label = f"{raw.parent.name}/{raw.name.rsplit('.', 1)[0]}"
            self.sets[(split, frozenset(pair.split("-")))] = Bitext(
                label,
                {lang: paths[0] for lang, paths in files.items()},
                {lang: paths[1] for lang, paths in files.items()},
            )

    def find(self, split: str, a: str, b: str) -> Bitext | None:
        return self.sets.get((split, frozenset((a, b))))

    def bitext(self, split: str, a: str, b: str) -> Bitext:
        """The set of `split` for languages `a` and `b`, or an error naming what there is."""
        found = self.find(split, a, b)
        if found is None:
            there = sorted(s.label for (sp, langs), s in self.sets.items() if langs & {a, b})
            raise NmtDataError(
                f"no {split} set for {a}-{b} in the preprocessed dataset; sets with {a} or "
                f"{b}: {there[:12] or 'none'}; check the dataset's `splits` and `languages` "
                "and its subword setting's pairs in params.yaml"
            )
        return found


def split_directions(languages: Iterable[str], split: str) -> list[Direction]:
    """Directions of a split: train the en-xx bitexts, valid the supervised ones, test all.

    Validation selects checkpoints on supervised loss and trains the probes on supervised
    states (the thesis's protocol), so no zero-shot valid set is needed (OPUS-100 has none).
    """
    if split == "train":
        return [Direction(PIVOT, xx) for xx in sorted(set(languages) - {PIVOT})]
    every = directions(languages)
    return every if split == "test" else [d for d in every if not d.zero_shot]


Pairs = dict[str, Row]  # English -> its first en-xx row, in corpus order


def _by_english(rows: Iterable[Row]) -> Pairs:
    """The first row of each English sentence (its key for joining languages)."""
    out: Pairs = {}
    for row in rows:
        out.setdefault(row[0], row)
    return out


def _oriented(row: Row, d: Direction) -> Row:
    """An en-xx row as a row of `d` (en→xx keeps it, xx→en swaps the sides)."""
    return row if d.src == PIVOT else (row[1], row[0], row[3], row[2])


def _hold_out(bitexts: Mapping[str, Bitext], caps: Mapping[str, int]) -> dict[str, set[str]]:
    """English sentences held out of training for each split in `caps` (Europarl v7).

    Candidates are multi-way: the English occurs exactly once in every en-xx bitext, so each
    language's side is the translation of that one sentence. They are ordered by a hash of
    the English (spread over the whole corpus, independent of file order) and dealt out:
    the first ``caps[first split]`` to it, the next to the second.
    """
    if not caps:
        return {}
    counts: dict[str, int] | None = None
    for xx, bitext in bitexts.items():
        seen: dict[str, int] = {}
        for en, *_ in bitext.rows(PIVOT, xx):
            if counts is None or en in counts:
                seen[en] = seen.get(en, 0) + 1
        counts = {en: n for en, n in seen.items() if n == 1}
    ranked = sorted(counts or {}, key=lambda en: hashlib.sha256(en.encode("utf-8")).digest())
    held: dict[str, set[str]] = {}
    start = 0
    for split, cap in caps.items():
        held[split] = set(ranked[start : start + cap])
        start += cap
        if not held[split]:
            raise NmtDataError(
                f"{', '.join(b.label for b in bitexts.values())}: no English sentence left that "
                f"occurs once in every bitext to hold out for {split}; add languages' data or "
                f"name a {split} split of the corpus in `splits`"
            )
    return held


def evaluation_rows(
    corpora: Corpora,
    wanted: Sequence[Direction],
    name: str,
    cap: int,
    held: tuple[set[str], Mapping[str, Bitext]] | None = None,
) -> Iterator[tuple[Direction, list[Row], str]]:
    """Each direction of `wanted` with its first `cap` evaluation rows of the corpora's split
    `name`, and where they come from (a set's label, or two joined on English).

    A supervised direction reads its en-xx set (xx→en with the sides swapped). A zero-shot one
    reads the corpora's own xx-yy set where there is one (OPUS-100's zero-shot sets), else the
    en-xx and en-yy sets joined on the same raw English sentence (the first row of each English
    sentence, in the xx set's order), so both sides translate one English message. `held`
    (English sentences, the train bitexts) takes the rows from the training bitexts instead,
    those whose English was held out of training (`_hold_out`), and never a direct set.
    Every English-centric set of the directions' languages must exist (an error names what
    there is). The rows are what `cut` writes for valid and test, and what any step that
    evaluates on a corpus's held-out split reads (Chapter 6's test sets)."""
    others = sorted({lang for d in wanted for lang in (d.src, d.tgt)} - {PIVOT})
    if held is not None:
        english, train = held
        by_lang = {
            xx: _by_english(r for r in train[xx].rows(PIVOT, xx) if r[0] in english)
            for xx in others
        }
        how = {xx: f"held out of {train[xx].label}" for xx in others}
    else:
        bitexts = {xx: corpora.bitext(name, PIVOT, xx) for xx in others}
        by_lang = {xx: _by_english(b.rows(PIVOT, xx)) for xx, b in bitexts.items()}
        how = {xx: b.label for xx, b in bitexts.items()}
    for d in wanted:
        direct = corpora.find(name, d.src, d.tgt) if d.zero_shot and held is None else None
        if direct is not None:
            yield d, list(islice(direct.rows(d.src, d.tgt), cap)), direct.label
        elif d.zero_shot:
            src_side, tgt_side = by_lang[d.src], by_lang[d.tgt]
            shared = [en for en in src_side if en in tgt_side][:cap]
            rows = [
                (src_side[en][1], tgt_side[en][1], src_side[en][3], tgt_side[en][3])
                for en in shared
            ]
            yield d, rows, f"{how[d.src]} + {how[d.tgt]} on English"
        else:
            xx = d.tgt if d.src == PIVOT else d.src
            yield d, [_oriented(row, d) for row in by_lang[xx].values()][:cap], how[xx]


def cut(
    corpora: Corpora,
    languages: Sequence[str],
    splits: Sequence[str],
    out: Path,
    max_train: int,
    max_valid: int,
    max_test: int,
    max_length: int,
    sampling_temperature: float = 1.0,
    sampling_seed: int = 1,
) -> dict:
    """Write ``text/`` (raw) and ``sub/`` (subwords) ``{split}.{src}-{tgt}.{lang}`` for the
    dataset into `out`; return its statistics.

    `splits` names the sets' splits read as train, valid and test (a preprocessed dataset's
    own names: train, valid, test). Train holds each en-xx bitext once (both directions are
    made from it at binarisation), at most `max_train` pairs, leaving out pairs with a side
    over `max_length` subwords (counted in ``too_long``). Valid and test hold their
    directions (`split_directions`), at most `max_valid` / `max_test` lines each in corpus
    order. A zero-shot test set is the corpora's own xx-yy set where there is one (OPUS-100's
    zero-shot sets, IWSLT's non-English pairs), else the en-xx and en-yy sets joined on the
    same raw English sentence (the tiny corpus's segment ids follow its English), so both
    sides translate one English message. A valid or test split named like the train split
    (Europarl v7 publishes only training data) is held out of it (`_hold_out`): none of its
    English sentences is trained on. ``valid_per_pair`` / ``test_per_pair`` are the most lines
    of any one direction of the split: the thesis prints one per-pair size per dataset, which
    is the cap wherever it binds (a pair with fewer lines is a smaller corpus set).

    A `sampling_temperature` other than 1 resamples each en-xx bitext's training pairs to its
    temperature-sampled share (`mlrep.nmt.sampling`, seeded by `sampling_seed` and the
    pair), after the caps: ``s_train`` stays the pairs cut, ``sampling`` gives each bitext's
    pairs before and after.
    """
    if PIVOT not in languages:
        raise NmtDataError(f"dataset languages {list(languages)} must include English ({PIVOT})")
    if len(splits) != len(SPLITS):
        raise NmtDataError(f"splits {list(splits)}: name three, the corpus's {'/'.join(SPLITS)}")
    names = dict(zip(SPLITS, splits, strict=True))
    caps = {"valid": max_valid, "test": max_test}
    others = sorted(set(languages) - {PIVOT})
    train = {xx: corpora.bitext(names["train"], PIVOT, xx) for xx in others}
    held = _hold_out(train, {s: c for s, c in caps.items() if names[s] == names["train"]})
    dropped = set().union(*held.values())
    sources: dict[str, str] = {}
    s_train = too_long = 0
    per_pair = {split: 0 for split in caps}
    train_counts: dict[str, int] = {}
    for xx in others:
        kept = (row for row in train[xx].rows(PIVOT, xx) if row[0] not in dropped)
        rows = []
        for row in kept:
            if len(rows) == max_train:
                break
            if max(len(row[2].split()), len(row[3].split())) > max_length:
                too_long += 1
            else:
                rows.append(row)
        s_train += len(rows)
        train_counts[f"en-{xx}"] = len(rows)
        _write_pair(out, "train", Direction(PIVOT, xx), rows)
        sources[f"train.en-{xx}"] = train[xx].label + (" less held-out" if held else "")
    sampled = _resample(out, train_counts, sampling_temperature, sampling_seed)
    for split, cap in caps.items():
        wanted = split_directions(languages, split)
        train_held = (held[split], train) if split in held else None
        for d, rows, source in evaluation_rows(corpora, wanted, names[split], cap, train_held):
            sources[f"{split}.{d.name}"] = source
            if not rows:
                raise NmtDataError(f"{source}: no {split} pairs for {d.name}")
            _write_pair(out, split, d, rows)
            per_pair[split] = max(per_pair[split], len(rows))
    zero = [d for d in directions(languages) if d.zero_shot]
    return {
        "languages": sorted(languages),
        "n_zero": len(zero),
        "n_supervised": 2 * len(others),
        "s_train": s_train,
        **{f"{split}_per_pair": n for split, n in per_pair.items()},
        "too_long": too_long,
        "sources": sources,
        **sampled,
    }


def _resample(out: Path, before: dict[str, int], temperature: float, seed: int) -> dict:
    """Rewrite the cut training pairs in `out` (`before`: en-xx -> pairs) resampled to their
    temperature-sampled counts, one bitext at a time (read back from its files, so memory holds
    one bitext, not all); the ``sampling`` statistics, none at temperature 1 (the identity),
    so other datasets' files and stats stay as they were."""
    if temperature == 1:
        return {}
    if not all(before.values()):
        raise NmtDataError(f"training pairs {before}: temperature sampling needs every pair")
    after = sampling.sampled_counts(before, temperature)
    for name, count in after.items():
        d = Direction.parse(name)
        columns = (*read_pair(out / TEXT, "train", d), *read_pair(out / SUBWORDS, "train", d))
        rows: list[Row] = list(zip(*columns, strict=True))
        _write_pair(out, "train", d, sampling.resample(rows, count, f"{seed}:{name}"))
    ratio = sampling.ratios(before, temperature)
    return {
        "sampling": {
            "temperature": temperature,
            "seed": seed,
            "before": before,
            "after": after,
            "ratio": {name: round(r, 4) for name, r in ratio.items()},
        }
    }


def _write_pair(out: Path, split: str, d: Direction, rows: list[Row]) -> None:
    """Raw lines under ``text/``, their subwords under ``sub/``."""
    for column, (folder, lang) in enumerate(
        (f, lang) for f in (TEXT, SUBWORDS) for lang in (d.src, d.tgt)
    ):
        lines = "".join(row[column] + "\n" for row in rows)
        atomic_write_text(out / folder / f"{split}.{d.name}.{lang}", lines)


def read_pair(folder: Path, split: str, d: Direction) -> tuple[list[str], list[str]]:
    src = read_lines(folder / f"{split}.{d.name}.{d.src}", NmtDataError)
    tgt = read_lines(folder / f"{split}.{d.name}.{d.tgt}", NmtDataError)
    if len(src) != len(tgt):
        raise NmtDataError(f"{folder}/{split}.{d.name}: source and target differ in line count")
    return src, tgt


def write_stats(out: Path, stats: dict) -> None:
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")


def read_stats(folder: Path) -> dict:
    return json.loads((folder / "stats.json").read_text(encoding="utf-8"))
