"""Stand-ins: a benchmark hosted elsewhere, cut from a local corpus's held-out split.

At tiny the workflow must run on a machine that reaches only the package index, so a benchmark
that lives on another host (Tatoeba; Flores, BUCC and the WMT/IWSLT test sets once their
layouts are added to `LAYOUTS`) is replaced by a stand-in (``data.stand_ins`` in params.yaml):
English-centric pairs of the embedded corpus's held-out split, through the benchmark's
protocol (its languages, the content filters of ``data.datasets.<key>``, up to `pairs` pairs
per language) and into its normalised layout, so a chapter reads it exactly as it reads the
real one. Its ``metadata.json`` records that it is a stand-in, of which benchmark, cut from
which corpus split (with the sha256 of the corpus's record file), and the report labels every
number measured on it.
"""

from __future__ import annotations

import random
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlrep.data import readers, validate
from mlrep.data.registry import Dataset
from mlrep.data.source import TextSet
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, sha256_file
from mlrep.provenance import DATA_RECORDS, STAND_IN, record


class StandInError(MlrepError):
    """A stand-in that cannot be cut: no layout for the benchmark's format, or no corpus data."""


@dataclass(frozen=True)
class Settings:
    """How a stand-in is cut (params.yaml ``data.stand_ins.<key>``, less the corpus)."""

    split: str  # the corpus split the lines come from (held out of every training set)
    pairs: int  # per language, drawn at random (0: every pair of the split)
    seed: int
    codes: Mapping[str, str]  # the benchmark's language code -> the corpus's (jpn -> ja)


@dataclass(frozen=True)
class Cut:
    """One benchmark language drawn from the corpus: its side and the English side, aligned."""

    code: str
    text: Path
    english: Path


# Per registry reader (the benchmark's format): the normalised sets of its cut languages.
LAYOUTS: dict[str, Callable[[list[Cut]], list[TextSet]]] = {
    "tatoeba": lambda cuts: [readers.tatoeba_set(c.code, c.text, c.english) for c in cuts],
}


def corpus_record(corpus: Path) -> Path:
    """The file that fingerprints the corpus (the tiny corpus's manifest.json, a normalised
    dataset's metadata.json)."""
    for name in DATA_RECORDS:
        if (corpus / name).is_file():
            return corpus / name
    raise StandInError(
        f"{corpus}: no {' or '.join(DATA_RECORDS)}; build the corpus first (`snakemake {corpus}`)"
    )


def _draw(corpus: Path, code: str, corpus_code: str, settings: Settings, scratch: Path) -> Cut:
    """Up to `settings.pairs` pairs of the split, drawn with a per-language seed, kept in
    corpus order."""
    stem = f"{settings.split}.en-{corpus_code}"
    rows = list(validate.parallel([corpus / f"{stem}.{corpus_code}", corpus / f"{stem}.en"]))
    keep = range(len(rows))
    if 0 < settings.pairs < len(rows):
        keep = sorted(random.Random(f"{settings.seed}:{code}").sample(keep, settings.pairs))
    cut = Cut(code, scratch / f"{code}.{code}", scratch / f"{code}.eng")
    for path, column in ((cut.text, 0), (cut.english, 1)):
        text = "".join(rows[i][column] + "\n" for i in keep)
        path.write_text(text, encoding="utf-8", newline="\n")
    return cut


def cut(
    dataset: Dataset,
    corpus: Path,
    out: Path,
    languages: list[str] | None,
    settings: Settings,
    filters: validate.Filters,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the stand-in of `dataset` into `out` (atomic) and return its metadata.

    `languages` are the benchmark's codes (None: every code of `settings.codes`); one the
    corpus cannot serve is left out and listed under ``stand_in.missing`` with the reason, so
    a chapter's cells for it read "not run". With `config`, the folder also gets config.yaml
    and provenance.json.
    """
    layout = LAYOUTS.get(str(dataset.reader))
    if layout is None:
        raise StandInError(
            f"{dataset.key}: no stand-in layout for its {dataset.reader!r} format yet (known: "
            f"{sorted(LAYOUTS)}); add one to mlrep/data/stand_in.py, or remove its "
            "data.stand_ins block in params.yaml so the real benchmark is fetched"
        )
    fingerprint = corpus_record(corpus)
    missing: dict[str, str] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(
            prefix=f".{out.name}.", suffix=".scratch", dir=out.parent
        ) as tmp,
        atomic_directory(out) as staging,
    ):
        cuts = []
        for code in languages or list(settings.codes):
            corpus_code = settings.codes.get(code)
            stem = f"{settings.split}.en-{corpus_code}"
            if corpus_code is None:
                missing[code] = f"no corpus code for it in data.stand_ins.{dataset.key}.codes"
            elif not (corpus / f"{stem}.en").is_file():
                missing[code] = f"{corpus.name} has no {stem}.{{en,{corpus_code}}}"
            else:
                cuts.append(_draw(corpus, code, corpus_code, settings, Path(tmp)))
        if not cuts:
            raise StandInError(
                f"{corpus}: no language of the {dataset.key} stand-in is in the corpus "
                f"({'; '.join(f'{k}: {v}' for k, v in missing.items())}); check "
                f"data.stand_ins.{dataset.key}.codes and split"
            )
        for code, why in missing.items():
            print(f"{dataset.key} stand-in: {code} left out ({why})", file=sys.stderr)
        about = {
            "source_key": dataset.key,
            "name": f"Stand-in for {dataset.name}",
            "licence": f"that of {corpus.name} (its {fingerprint.name} lists the sources)",
            "citation": f"none: lines of {corpus.name} ({settings.split}), not {dataset.citation}",
        }
        origin = {
            STAND_IN: {
                "benchmark": dataset.key,
                "corpus": corpus.name,
                "split": settings.split,
                "corpus_record": {"file": fingerprint.name, "sha256": sha256_file(fingerprint)},
                "pairs": settings.pairs,
                "seed": settings.seed,
                "codes": {c.code: settings.codes[c.code] for c in cuts},
                "missing": missing,
            }
        }
        metadata = readers.publish(layout(cuts), staging, filters, about, origin)
        if config is not None:
            record(staging, f"data stand-in {dataset.key}", config)
    return metadata


def describe(info: Mapping[str, Any]) -> str:
    """How a report names the data of a stand-in (its metadata's ``stand_in`` field)."""
    return f"stand-in for {info['benchmark']}, cut from {info['corpus']} {info['split']}"
