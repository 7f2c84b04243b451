"""Moses backends: the Perl scripts (mosestokenizer) and sacremoses are kept apart.

They agree on most lines but not all; the cases below are real lines of the tiny corpus on
which they differ, so swapping one for the other would change the data silently.
"""

import pytest

from mlrep.text import moses
from tests.conftest import tiny_corpus


@pytest.mark.parametrize(
    ("lang", "line", "perl", "sacre"),
    [
        (
            "de",
            "Workflow \u201a \u2018 aktualisiert.",  # German single quotes
            "Workflow &quot; &quot; aktualisiert .",
            "Workflow &apos; &apos; aktualisiert .",
        ),
        (
            "en",
            "Processed by Stripe, Inc. Your card",
            "Processed by Stripe , Inc. Your card",
            "Processed by Stripe , Inc . Your card",
        ),
    ],
)
def test_backends_differ_on_known_lines(lang, line, perl, sacre):
    assert moses.tokenize([line], lang, "mosestokenizer") == [perl]
    assert moses.tokenize([line], lang, "sacremoses") == [sacre]


@pytest.mark.parametrize("backend", moses.BACKENDS)
def test_tokenize_then_detokenize_restores_plain_text(backend):
    line = 'Hello, world! It\'s "great" & co-operative.'
    (tokens,) = moses.tokenize([line], "en", backend)
    assert "&amp;" in tokens and "co @-@ operative" in tokens
    assert moses.detokenize([tokens], "en", backend) == [line]


@pytest.mark.parametrize("backend", moses.BACKENDS)
def test_no_escape_and_no_normalisation(backend):
    (tokens,) = moses.tokenize(["a „b“ & c"], "de", backend, normalize=False, escape=False)
    assert tokens == "a „ b “ & c"


@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_agreement_on_the_tiny_corpus_is_high_but_not_total(tmp_path):
    out = tiny_corpus(tmp_path / "tiny_corpus", ["de"])
    sample = (out / "train.en-de.en").read_text(encoding="utf-8").splitlines()[:1500]
    perl = moses.tokenize(sample, "en", "mosestokenizer")
    sacre = moses.tokenize(sample, "en", "sacremoses")
    same = sum(a == b for a, b in zip(perl, sacre, strict=True))
    assert 0.99 * len(sample) <= same < len(sample)


def test_perl_detokenizer_removes_korean_word_spaces_and_sacremoses_does_not():
    line = "파일 마스크가 어떤 파일과도 일치하지 않습니다."
    tokens = moses.tokenize([line], "ko", "mosestokenizer")
    assert moses.detokenize(tokens, "ko", "sacremoses") == [line]
    assert moses.detokenize(tokens, "ko", "mosestokenizer") == [line.replace(" ", "")]
