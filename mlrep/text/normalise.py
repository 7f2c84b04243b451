"""Language-specific normalisation run between Moses punctuation normalisation and tokenization.

Chapter 5 follows mBART, whose Romanian preprocessing is the WMT16 En-Ro practice of
Sennrich et al. (2016, ``wmt16-scripts``): normalise-punctuation, then the two Romanian steps
below, then ``tokenizer.perl -a``. They matter for BLEU and for word alignment alike: the
WMT16 corpora mix the cedilla and comma-below forms of ş/ș and ţ/ț, and many texts omit
diacritics altogether, so removing them makes one spelling of each word.

Steps are named (``preprocess.datasets.<name>.steps.<lang>``) and recorded in each output's
metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

# s/t with cedilla (legacy, wrongly used for Romanian): Ş ş Ţ ţ → with comma below: Ș ș Ț ț
_COMMA_BELOW = str.maketrans("\u015e\u015f\u0162\u0163", "\u0218\u0219\u021a\u021b")
# Ș ș Ț ț Ă ă Â â Î î (comma below assumed normalised) → base letters
_NO_DIACRITICS = str.maketrans(
    "\u0218\u0219\u021a\u021b\u0102\u0103\u00c2\u00e2\u00ce\u00ee", "SsTtAaAaIi"
)


def normalise_romanian(text: str) -> str:
    """Cedilla ş/ţ (U+015E/F, U+0162/3) → comma-below ș/ț (U+0218/9, U+021A/B)."""
    return text.translate(_COMMA_BELOW)


def remove_diacritics(text: str) -> str:
    """Romanian ș ț ă â î (either case) → s t a a i; run after `normalise_romanian`."""
    return text.translate(_NO_DIACRITICS)


STEPS: dict[str, Callable[[str], str]] = {
    "normalise_romanian": normalise_romanian,
    "remove_diacritics": remove_diacritics,
}


def pipeline(names: Sequence[str]) -> Callable[[str], str]:
    """The named steps applied in order (unknown names are a KeyError the CLI prevents)."""
    steps = [STEPS[name] for name in names]

    def run(text: str) -> str:
        for step in steps:
            text = step(text)
        return text

    return run
