"""Turn gettext UI strings into plain sentences fit for training and evaluation.

Catalog strings carry software scaffolding that no human translation of running text has:
format placeholders, HTML, keyboard accelerators, line breaks inside one message. Each is
removed here, the same way on the English and the translated side, so that the pair stays
parallel. Pairs whose sides disagree on placeholders are reported (the caller drops them):
a translation that lost or gained a placeholder is usually not a faithful one.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

# printf-style conversions; only trusted when the catalog flags the entry as a format string,
# because "100% of" would otherwise read as the conversion "% o".
_PRINTF = re.compile(
    r"""%(?:\([^)\s]+\)|\d+\$)?[#0 +-]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[hlLqjzt]*[diouxXeEfFgGcrsa]"""
)
# "%(name)s" is unambiguous even without a flag.
_NAMED_PRINTF = re.compile(r"%\([A-Za-z_][\w.]*\)[#0 +-]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")
_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\$\{[^}]*\}")
_BRACE = re.compile(r"\{[A-Za-z0-9_.\[\]]*(?:![rsa])?(?::[^{}\s]*)?\}")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_CJK_ACCEL = re.compile(r"\s*[(（][&_][A-Za-z0-9][)）]")
_AMP_ACCEL = re.compile(r"(?<!\w)&(?=[^\W\d_])(?![A-Za-z]+;)")
_UNDERSCORE_ACCEL = re.compile(r"(?<![\w_])_(?=[^\W\d_])")
_EMPTY_PAIRS = re.compile(
    r"""\(\s*\)|\[\s*\]|（\s*）|「\s*」|『\s*』|"\s*"|“\s*”|„\s*“|«\s*»|‘\s*’|`+\s*`+|'\s*'"""
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u2028\u2029\ufeff]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?、。，．！？：；])")
_REPEATED_PUNCT = re.compile(r"([,;:、，；：])(?:\s*\1)+")
_WS = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")
_CODE_LIKE = re.compile(r"^[A-Z0-9_]+$|^[\w.-]+\.[a-z]{1,4}$|^[a-z]+(?:_[a-z0-9]+)+$")


def _is_format(flags: frozenset[str]) -> bool:
    """True when the catalog marks the entry as a format string (python-, c-, javascript-…)."""
    return any(f.endswith("-format") and not f.startswith("no-") for f in flags)


@dataclass(frozen=True)
class Cleaned:
    """One side of a message after cleaning, with the number of placeholders it had."""

    text: str
    placeholders: int


def clean_message(text: str, flags: frozenset[str] = frozenset()) -> Cleaned:
    """Strip placeholders, markup and accelerators from one catalog string.

    `flags` are the entry's gettext flags (``python-format`` …): printf-style patterns are
    removed only where the catalog says the string is a format string.
    """
    is_format = _is_format(flags)
    text = text.replace("%%", "\x00") if is_format else text
    count = 0

    def _drop(pattern: re.Pattern[str], s: str) -> str:
        nonlocal count
        s, n = pattern.subn(" ", s)
        count += n
        return s

    text = _drop(_TEMPLATE, text)
    text = _drop(_PRINTF if is_format else _NAMED_PRINTF, text)
    text = _drop(_BRACE, text)
    text = text.replace("\x00", "%")
    text = _TAG.sub(" ", text)
    text = _CJK_ACCEL.sub("", text)
    text = _AMP_ACCEL.sub("", text)
    text = _UNDERSCORE_ACCEL.sub("", text)
    text = html.unescape(text)
    text = _CONTROL.sub(" ", text)
    text = _WS.sub(" ", text)
    # removing a placeholder can leave "``" or "()" behind; two passes catch nested leftovers
    for _ in range(2):
        text = _EMPTY_PAIRS.sub(" ", text)
    text = _WS.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    return Cleaned(text.strip(), count)


def rejection(
    english: Cleaned, translation: Cleaned, source_english: str, max_chars: int
) -> str | None:
    """Why a cleaned pair is unusable, or None when it is kept.

    The reasons are stable strings: they are the keys of the drop counts in the manifest.
    """
    if not english.text or not translation.text:
        return "empty_after_cleaning"
    if _CODE_LIKE.match(source_english.strip()):
        return "code_like"
    if not _LETTER.search(english.text) or not _LETTER.search(translation.text):
        return "no_letters"
    if english.placeholders != translation.placeholders:
        return "placeholder_mismatch"
    if english.text.casefold() == translation.text.casefold():
        return "untranslated_copy"
    if len(english.text) > max_chars or len(translation.text) > max_chars:
        return "too_long"
    return None
