"""Build the embedded tiny corpus: English-centric, multi-way parallel, from gettext catalogs.

Every catalog message has an English source (msgid) and a human translation (msgstr), so the
union of catalogs over packages is a multi-way parallel corpus keyed by the English side.
The split of a segment is a function of its English text alone, so a sentence lands in the
same split in every language: zero-shot test pairs (ja–de, …) built by joining two
English-centric test sets never leak training sentences.

Output (flat, fairseq/Moses style) for every emitted language xx and split s:
``s.en-xx.en``, ``s.en-xx.xx`` (aligned lines) and ``s.en-xx.segids`` (segment ids shared
across languages, for multi-way joins), plus ``manifest.json``. Lines are sorted by segment id.

The ids' suffix is `IDS_SUFFIX`, and every reader finds the file through `ids_file`: a side's
suffix is its language code, so the ids need one no language code can take. ISO 639 codes
have two or three letters (``id`` is Indonesian, and even ``ids`` is ISO 639-3 Idesa), so the
suffix has six; format 1 used ``.id``, which Indonesian's text overwrote.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mlrep.cliutil import fraction, positive_int
from mlrep.data.catalogs import Message, read_wheel
from mlrep.data.gettext_clean import clean_message, rejection
from mlrep.data.wheels import WheelPin
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, atomic_write_text, sha256_file

SPLITS = ("train", "valid", "test")
FORMAT_VERSION = 2
IDS_SUFFIX = "segids"  # six letters: no ISO 639 code (two or three letters) can take it
REBUILD = "rebuild with `snakemake results/data/tiny_corpus`"

_TRADITIONAL_CHINESE = {"hant", "tw", "hk", "mo"}
_SCRIPT = re.compile(r"^[A-Z][a-z]{3}$")
_ALIASES = {"latin": "Latn", "cyrillic": "Cyrl"}


class CorpusLayoutError(MlrepError):
    """A corpus whose files do not follow this module's layout (one built by an older format)."""


def ids_file(side: Path) -> Path:
    """The segment ids aligned with `side` (any file ``<split>.<a>-<b>.<lang>`` of a pair).

    A corpus of format 1 has no such file (its ids were ``.id``): the error names the
    missing file and the rebuild, instead of a reader failing on a line count or a lookup.
    """
    path = side.with_suffix(f".{IDS_SUFFIX}")
    if not path.is_file():
        raise CorpusLayoutError(
            f"{path}: no segment ids; the corpus predates format {FORMAT_VERSION} (ids in "
            f"`.{IDS_SUFFIX}`, not `.id`, which is Indonesian's text): {REBUILD}"
        )
    return path


@dataclass(frozen=True)
class Sources:
    """params.yaml ``data.tiny_corpus.packages``: the option of ``mlrep corpus sources``."""

    packages: list[str] = field(
        metadata={"help": "pinned packages whose catalogs are read (earlier wins on duplicates)"}
    )


@dataclass(frozen=True)
class Settings(Sources):
    """params.yaml ``data.tiny_corpus``: the options of ``mlrep corpus tiny`` and the knobs
    of the build."""

    languages: list[str] = field(metadata={"help": "language codes, or 'all'"})
    required_languages: list[str] = field(
        metadata={"nargs": "*", "help": "languages the summary reports short of the target"}
    )
    valid_fraction: float = field(metadata={"type": fraction, "help": "share of valid segments"})
    test_fraction: float = field(metadata={"type": fraction, "help": "share of test segments"})
    max_chars: int = field(metadata={"type": positive_int, "help": "longer segments are dropped"})
    min_segments: int = field(
        metadata={"type": positive_int, "help": "languages with fewer are counted, not written"}
    )
    target_segments: int = field(
        metadata={"type": positive_int, "help": "the manifest flags languages below this"}
    )

    @property
    def wanted(self) -> tuple[str, ...] | None:
        """The languages to build; None: every language the catalogs have."""
        return None if self.languages in ("all", ["all"]) else tuple(self.languages)


@dataclass
class _LanguageState:
    kept: dict[str, tuple[int, str]] = field(default_factory=dict)  # en -> (variant rank, xx)
    variants: set[str] = field(default_factory=set)
    dropped: Counter[str] = field(default_factory=Counter)


def canonical_language(locale: str) -> tuple[str, int] | None:
    """Map a catalog locale to (language code, variant rank); None for English catalogs.

    Regional variants merge into their language (``pt_BR`` → ``pt``, rank 1), the bare
    language ranks first (rank 0). A script subtag other than the default is kept
    (``sr_Latn``); Chinese splits into simplified ``zh`` and traditional ``zh_Hant``.
    """
    parts = re.split(r"[_@-]", locale)
    base = parts[0].lower()
    if base == "en" or not base.isalpha():
        return None
    rest = [_ALIASES.get(p.lower(), p) for p in parts[1:]]
    if base == "zh":
        traditional = any(p.lower() in _TRADITIONAL_CHINESE for p in rest)
        return ("zh_Hant" if traditional else "zh"), (0 if len(rest) <= 1 else 1)
    scripts = [p for p in rest if _SCRIPT.match(p)]
    code = f"{base}_{scripts[0]}" if scripts else base
    return code, (0 if not rest or (scripts and len(rest) == 1) else 1)


def split_of(english: str, valid_fraction: float, test_fraction: float) -> str:
    """Deterministic split from the English text alone (sha256, first 8 bytes as a fraction)."""
    bucket = int.from_bytes(hashlib.sha256(english.encode("utf-8")).digest()[:8], "big") / 2**64
    if bucket < test_fraction:
        return "test"
    if bucket < test_fraction + valid_fraction:
        return "valid"
    return "train"


def segment_id(english: str) -> str:
    """Stable id of an English segment, shared by all its translations."""
    return hashlib.sha256(english.encode("utf-8")).hexdigest()[:16]


def collect(messages: Iterable[Message], settings: Settings) -> dict[str, _LanguageState]:
    """Clean, filter and deduplicate messages per language (first good translation wins)."""
    states: dict[str, _LanguageState] = defaultdict(_LanguageState)
    for message in messages:
        canonical = _wanted(settings, message.locale)
        if canonical is None:
            continue
        language, rank = canonical
        state = states[language]
        state.variants.add(message.locale)
        english = clean_message(message.english, message.flags)
        translation = clean_message(message.translation, message.flags)
        reason = rejection(english, translation, message.english, settings.max_chars)
        if reason:
            state.dropped[reason] += 1
            continue
        previous = state.kept.get(english.text)
        if previous is not None:
            state.dropped["duplicate"] += 1
            if previous[0] <= rank:
                continue
        state.kept[english.text] = (rank, translation.text)
    return states


def _wanted(settings: Settings, locale: str) -> tuple[str, int] | None:
    """(language, variant rank) of a catalog locale the build asked for, else None."""
    canonical = canonical_language(locale)
    if canonical is None or (settings.wanted and canonical[0] not in settings.wanted):
        return None
    return canonical


def build(wheels: list[tuple[WheelPin, Path]], out: Path, settings: Settings) -> dict:
    """Build the corpus from verified wheels into `out` (atomically) and return the manifest."""

    def accept(locale: str) -> bool:
        return _wanted(settings, locale) is not None

    messages = (m for _, path in wheels for m in read_wheel(path, accept))
    states = collect(messages, settings)
    languages: dict[str, dict] = {}
    short: dict[str, str] = {}
    with atomic_directory(out) as staging:
        for language in sorted(states):
            state = states[language]
            rows: dict[str, list[tuple[str, str, str]]] = {s: [] for s in SPLITS}
            for english, (_, translation) in state.kept.items():
                split = split_of(english, settings.valid_fraction, settings.test_fraction)
                rows[split].append((segment_id(english), english, translation))
            counts = {s: len(rows[s]) for s in SPLITS}
            total = sum(counts.values())
            written = total >= settings.min_segments
            if written:
                for split in SPLITS:
                    _write_split(staging, split, language, sorted(rows[split]))
            languages[language] = {
                **counts,
                "total": total,
                "written": written,
                "meets_target": total >= settings.target_segments,
                "catalog_locales": sorted(state.variants),
                "dropped": dict(sorted(state.dropped.items())),
            }
            if total < settings.target_segments:
                short[language] = (
                    f"{total} usable segments after cleaning and deduplication across the "
                    f"pinned packages, below the target of {settings.target_segments}"
                    + ("" if written else f"; not written (fewer than {settings.min_segments})")
                )
        manifest = {
            "corpus": "tiny",
            "format_version": FORMAT_VERSION,
            "sources": [
                {
                    "package": p.name,
                    "version": p.version,
                    "wheel": p.filename,
                    "sha256": p.sha256,
                    "license": p.license,
                }
                for p, _ in wheels
            ],
            "settings": {
                "languages": list(settings.wanted) if settings.wanted else "all",
                "valid_fraction": settings.valid_fraction,
                "test_fraction": settings.test_fraction,
                "max_chars": settings.max_chars,
                "min_segments": settings.min_segments,
                "target_segments": settings.target_segments,
            },
            "languages": languages,
            "short_languages": short,
            "files": {f.name: sha256_file(f) for f in sorted(staging.iterdir()) if f.is_file()},
        }
        atomic_write_text(
            staging / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        )
    return manifest


def _write_split(folder: Path, split: str, language: str, rows: list[tuple[str, str, str]]) -> None:
    if language == IDS_SUFFIX:
        raise CorpusLayoutError(f"language code {language!r} is the segment ids' suffix")
    stem = f"{split}.en-{language}"
    for suffix, column in ((IDS_SUFFIX, 0), ("en", 1), (language, 2)):
        text = "".join(f"{row[column]}\n" for row in rows)
        (folder / f"{stem}.{suffix}").write_text(text, encoding="utf-8", newline="\n")
