"""Chapter 6's test sets: per setting and test set, one source and one reference file per
direction its runs decode, cut from the corpus files as the data layer names them.

A test set is the folder ``<out>/`` holding ``<src>-<tgt>.src`` and ``<src>-<tgt>.ref`` (raw
text, line by line) for every direction of the setting (`directions_of`: BLOOMZ+24 English ↔
each language, BLOOMZ+3 the 12 supervised and 30 zero-shot directions of its six languages),
at most `max_test` lines each, and ``sets.json`` (the directions' line counts and sources).
The rows are `mlrep.nmt.data.evaluation_rows`' (the English-centric cut of Chapters 7 and 8):
a supervised direction reads its en-xx set, a zero-shot one the corpus's own xx-yy set where
there is one (OPUS-100's zero-shot sets at full) or the en-xx and en-yy sets joined on the same
English sentence (the tiny corpus), so both sides translate one English message. BLOOM reads
raw text, so the "encoded" side of the cut is the raw file itself.

Input files are named as the data layer's readers name them: ``<split>.<pair>.<lang>``
(OPUS-100 ``test.af-en.af``, the tiny corpus ``test.en-af.af``), or Flores-200's multi-way
``<split>.multiway.<code>`` with its own codes (``devtest.multiway.afr_Latn``), which
`corpus_sets` maps to ISO codes through `FLORES_CODES` and turns into en-xx sets (the same
lines of the English file against each language's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from mlrep.chapters.ch6_aligninstruct.runs import PIVOT_LANGUAGE, Run
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, read_lines
from mlrep.nmt.data import Corpora, Direction, Sets, evaluation_rows, sets_of

INDEX = "sets.json"
SOURCE, REFERENCE = ".src", ".ref"
MULTIWAY = "multiway"  # the pair part of a multi-way set's files (Flores)
# ISO 639-1 -> Flores-200 code (the thesis names no mapping: the spec's, a project decision)
FLORES_CODES: Mapping[str, str] = {
    "en": "eng_Latn",
    "af": "afr_Latn",
    "am": "amh_Ethi",
    "be": "bel_Cyrl",
    "cy": "cym_Latn",
    "ga": "gle_Latn",
    "gd": "gla_Latn",
    "gl": "glg_Latn",
    "ha": "hau_Latn",
    "ka": "kat_Geor",
    "kk": "kaz_Cyrl",
    "km": "khm_Khmr",
    "ky": "kir_Cyrl",
    "li": "lim_Latn",
    "my": "mya_Mymr",
    "nb": "nob_Latn",
    "nn": "nno_Latn",
    "oc": "oci_Latn",
    "si": "sin_Sinh",
    "tg": "tgk_Cyrl",
    "tk": "tuk_Latn",
    "tt": "tat_Cyrl",
    "ug": "uig_Arab",
    "uz": "uzn_Latn",
    "yi": "ydd_Hebr",
    "ar": "arb_Arab",
    "de": "deu_Latn",
    "fr": "fra_Latn",
    "nl": "nld_Latn",
    "ru": "rus_Cyrl",
    "zh": "zho_Hans",
}


class EvaluationSetError(MlrepError):
    """Corpus files that cannot make a Chapter 6 test set, or a test set that is incomplete."""


def directions_of(setting: str, languages: Sequence[str]) -> list[tuple[str, str]]:
    """Every direction a run of `setting` decodes (a pivot run decodes a subset of them);
    BLOOMZ+24's need `languages` (the scale's), BLOOMZ+3's are its six."""
    found = Run(setting, "", "", tuple(languages)).directions(languages)
    if not found:
        raise EvaluationSetError(
            f"{setting} has no directions without languages: give the scale's BLOOMZ+24 "
            "languages (--languages)"
        )
    return found


def corpus_sets(raw: Sequence[Path]) -> Sets:
    """The sets of `raw` as `mlrep.nmt.data.Corpora` reads them: pair files as they are, a
    multi-way split's files as one en-xx set per language (English's file on both)."""
    pairs = [path for path in raw if path.name.split(".")[1:2] != [MULTIWAY]]
    sets: dict[tuple[str, str], dict[str, tuple[Path, Path]]] = dict(
        (key, dict(files)) for key, files in sets_of(pairs, pairs).items()
    )
    iso = {code: lang for lang, code in FLORES_CODES.items()}
    multiway: dict[str, dict[str, Path]] = {}
    for path in raw:
        parts = path.name.split(".")
        if parts[1:2] != [MULTIWAY]:
            continue
        if len(parts) != 3 or parts[2] not in iso:
            raise EvaluationSetError(
                f"{path}: a multi-way file must be <split>.{MULTIWAY}.<Flores code> with a code "
                f"of FLORES_CODES ({', '.join(sorted(iso))}); give the Flores-200 reader's "
                "files, or add the language to FLORES_CODES"
            )
        multiway.setdefault(parts[0], {})[iso[parts[2]]] = path
    for split, files in multiway.items():
        english = files.get(PIVOT_LANGUAGE)
        if english is None:
            raise EvaluationSetError(
                f"{split}.{MULTIWAY}: no English file ({split}.{MULTIWAY}."
                f"{FLORES_CODES[PIVOT_LANGUAGE]}) among {sorted(p.name for p in files.values())}"
                "; give it with the other languages"
            )
        for lang, path in files.items():
            if lang != PIVOT_LANGUAGE:
                sets[(split, f"{PIVOT_LANGUAGE}-{lang}")] = {
                    PIVOT_LANGUAGE: (english, english),
                    lang: (path, path),
                }
    return sets


def write(
    raw: Sequence[Path],
    split: str,
    setting: str,
    languages: Sequence[str],
    max_test: int,
    out: Path,
) -> dict:
    """Write the test set of `setting` (its directions over `languages`) from the corpus
    files `raw`, split `split` (OPUS-100 ``test``, Flores-200 ``devtest``; at tiny the
    embedded corpus's ``test`` and ``valid``), at most `max_test` lines a direction, into the
    folder `out` (atomically); return ``sets.json``'s content."""
    if max_test < 1:
        raise EvaluationSetError(f"max_test {max_test}: a test set needs at least one line")
    corpora = Corpora(corpus_sets(raw))
    wanted = [Direction(src, tgt) for src, tgt in directions_of(setting, languages)]
    found: dict[str, dict] = {}
    with atomic_directory(out) as staging:
        for d, rows, source in evaluation_rows(corpora, wanted, split, max_test):
            if not rows:
                raise EvaluationSetError(
                    f"{source}: no {split} lines for {d.name}; check the corpus files given"
                )
            for suffix, column in ((SOURCE, 0), (REFERENCE, 1)):
                text = "".join(row[column] + "\n" for row in rows)
                (staging / f"{d.name}{suffix}").write_text(text, encoding="utf-8", newline="\n")
            found[d.name] = {"lines": len(rows), "source": source}
        index = {"setting": setting, "split": split, "max_test": max_test, "directions": found}
        (staging / INDEX).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return index


def read(folder: Path, src: str, tgt: str) -> tuple[list[str], list[str]]:
    """One direction's sources and references, one each."""
    paths = [folder / f"{src}-{tgt}{suffix}" for suffix in (SOURCE, REFERENCE)]
    for path in paths:
        if not path.is_file():
            raise EvaluationSetError(
                f"{path}: no such test file; write the test set with `mlrep ch6 tests` for "
                "this setting and languages"
            )
    sources, references = (read_lines(path, EvaluationSetError) for path in paths)
    if len(sources) != len(references):
        raise EvaluationSetError(
            f"{paths[0]} has {len(sources)} lines, {paths[1]} {len(references)}: write the "
            "test set again with `mlrep ch6 tests`"
        )
    return sources, references
