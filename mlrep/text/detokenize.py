"""Tokenized subword text back to plain text, for scoring against raw references.

The inverse of the preprocessing chain, step by step in reverse: subwords are merged back into
tokens (subword-nmt's ``@@ `` joiners, or SentencePiece's ``▁`` word starts), then the
tokenizer is undone: Moses detokenization (which also unescapes ``&apos;`` and friends) for
Moses-tokenized languages, and for Chinese, Japanese, Burmese and Khmer (word- or
syllable-segmented with jieba / GiNZA / the rules of `mlrep.text.scripts`, which drop the
original spaces) the words are joined without spaces, keeping one only between two letters or
digits of a spaced script ("Django 项目" → "Django项目", "Django project" stays). A
spaced-script space next to a CJK character is lost, which scoring does not see: sacreBLEU's
``zh`` tokenizer splits every CJK character off, and tokenized BLEU segments again.
"""

from __future__ import annotations

import re
import unicodedata

from mlrep.text import moses

_BPE_JOINER = re.compile(r"@@( |$)")
_JOINED = ("zh", "ja", "my", "km")  # segmented languages written without spaces between words
_UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "MYANMAR", "KHMER")  # their scripts


class DetokenizeError(ValueError):
    """No way back to plain text for this language or subword method."""


def merge_subwords(line: str, method: str) -> str:
    """Tokens from the subwords of one line (`method`: subword_nmt or sentencepiece)."""
    if method == "subword_nmt":
        return _BPE_JOINER.sub("", line).strip()
    if method == "sentencepiece":
        return "".join(line.split()).replace("▁", " ").strip()
    raise DetokenizeError(f"unknown subword method {method!r}")


def _spaced(char: str) -> bool:
    """A letter or digit of a script that separates words by spaces (not CJK, kana, Hangul,
    Burmese or Khmer)."""
    if not char.isalnum():
        return False
    name = unicodedata.name(char, "")
    return not name.startswith(_UNSPACED)


def join_words(line: str) -> str:
    """Segmented Chinese/Japanese/Burmese/Khmer words as running text (a space only between
    spaced-script letters or digits)."""
    out = ""
    for word in line.split():
        if out and _spaced(out[-1]) and _spaced(word[0]):
            out += " "
        out += word
    return out


def detokenize(
    lines: list[str], lang: str, method: str, backend: str, segmented: list[str]
) -> list[str]:
    """Plain text of subword lines in `lang`: subwords merged, then the tokenizer undone
    (`segmented`: the languages the preprocessing word-segmented instead of Moses)."""
    tokens = [merge_subwords(line, method) for line in lines]
    if lang not in segmented:
        return moses.detokenize(tokens, lang, backend)
    if lang.split("_")[0] in _JOINED:
        return [join_words(line) for line in tokens]
    raise DetokenizeError(
        f"no detokenizer for segmented {lang} (only {', '.join(_JOINED)}); score its tokens"
    )
