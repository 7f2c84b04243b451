"""Burmese syllables and Khmer words: the scripts the Moses tokenizer breaks.

Moses's tokenizer (Perl and sacremoses alike) splits off every character that is neither a
letter nor a digit, and Burmese and Khmer write syllables with combining signs that are
neither: the asat ``်`` and the Khmer coeng ``្`` become tokens of their own
("တင ် ပြ", "បង ្ ហាញ"), on 798 and 769 of the first 2,000 tiny-corpus lines. So these two
languages go to `segment` instead of Moses (``preprocess.segment.languages``).

* Burmese (``my``): syllables, as the thesis's Chapter 5 segments Burmese with ``myseg.py``
  (Ding et al. 2020, not in any registry) before SentencePiece. This is the rule-based syllable
  breaking common in Burmese NLP: a syllable starts at a consonant that is neither stacked
  under a virama (``္``) nor silenced by an asat (``်``), or at an independent vowel or a
  standalone symbol; digits stay together and punctuation (``၊ ။``) is a token. ``myseg.py``
  also merges some syllables into words, so its tokens are fewer and longer.
* Khmer (``km``, Chapter 6, where the tokenization fed to fast_align is unspecified): Khmer
  writes no spaces between words, so a token is a space-delimited run of Khmer letters with
  its signs kept whole, punctuation (``។``) and digits split off. No syllable breaking: a
  Khmer final consonant carries no mark, so syllables are not recoverable by rule.

Other characters in these lines (Latin words, ASCII punctuation) are split as word runs and
single symbols.
"""

from __future__ import annotations

import re

_VIRAMA, _ASAT, _DOT_BELOW = "\u1039", "\u103a", "\u1037"
_CONSONANT = re.compile("[\u1000-\u1021\u103f]")  # including the great sa ဿ
_STANDALONE = re.compile("[\u1023-\u102a\u104c-\u104f]")  # independent vowels, ၌ ၍ ၎ ၏

_OTHER = r"(?:(?![\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff])\w)+|[^\w\s]"
_BURMESE = re.compile(
    rf"([\u1040-\u1049]+)|([\u104a\u104b])|([\u1000-\u103f\u104c-\u109f]+)|({_OTHER})"
)
_KHMER = re.compile(
    rf"([\u17e0-\u17e9]+)|([\u17d4-\u17db])"
    rf"|([\u1780-\u17d3\u17dc-\u17df\u17f0-\u17ff\u19e0-\u19ff]+)|({_OTHER})"
)


def _starts_syllable(run: str, at: int) -> bool:
    char = run[at]
    if _STANDALONE.match(char):
        return True
    if not _CONSONANT.match(char) or (at and run[at - 1] == _VIRAMA):
        return False
    after = run[at + 1 : at + 3].replace(_DOT_BELOW, "")[:1]  # ့ may precede the asat
    return after not in (_ASAT, _VIRAMA)


def burmese_syllables(run: str) -> list[str]:
    """Break a run of Burmese letters and signs into syllables."""
    cuts = [at for at in range(1, len(run)) if _starts_syllable(run, at)]
    return [run[a:b] for a, b in zip([0, *cuts], [*cuts, len(run)], strict=True)]


def burmese(line: str) -> list[str]:
    """Tokens of a Burmese line: syllables, digit runs, punctuation, other words."""
    tokens: list[str] = []
    for digits, punct, letters, other in _BURMESE.findall(line):
        tokens.extend(burmese_syllables(letters) if letters else [digits or punct or other])
    return tokens


def khmer(line: str) -> list[str]:
    """Tokens of a Khmer line: space-delimited letter runs, digit runs, punctuation."""
    return ["".join(groups) for groups in _KHMER.findall(line)]
