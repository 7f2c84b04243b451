"""Each scoring protocol against sacrebleu itself on hand-made hypotheses.

The expected numbers come from sacrebleu's functional API on text prepared here by hand (the
tokenized protocols' tokens are written out, or produced by jieba / GiNZA directly), so a
protocol that swaps hypothesis and reference, uses the wrong tokenizer, forgets to segment or
forgets the Romanian diacritics gives a different number.
"""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

from mlrep.evaluate import mt
from mlrep.evaluate.mt import Protocol, ProtocolError
from mlrep.report.stats import bleu_from_stats, corpus_chrf

# hypotheses shorter than their references, so that swapping the two changes BLEU
EN_REF = [
    "the cat sat on the mat near the door.",
    "we will meet again tomorrow at noon in the park.",
    "she reads a long book every evening before bed.",
]
EN_HYP = [
    "the cat sat on the mat.",
    "we meet again tomorrow in the park.",
    "she reads a book every evening.",
]
ZH_REF = ["猫坐在门边的垫子上。", "我们明天中午在公园再见面。", "她每天晚上睡觉前读一本很长的书。"]
ZH_HYP = ["猫坐在垫子上。", "我们明天在公园见面。", "她每天晚上读书。"]
JA_REF = ["猫はドアの近くのマットの上に座った。", "明日の正午に公園でまた会いましょう。"]
JA_HYP = ["猫はマットの上に座った。", "明日公園で会いましょう。"]
RO_REF = ["Ea citește o carte lungă în fiecare seară.", "Vremea este rece astăzi în oraș."]
# mRASP2's Romanian references lack diacritics; the hypotheses here keep them
RO_HYP = ["Ea citește o carte în fiecare seară.", "Vremea este rece în oraș."]
# the same lines as Moses tokenizes them, written out, without and with diacritics removed
RO_REF_TOKENS = ["Ea citește o carte lungă în fiecare seară .", "Vremea este rece astăzi în oraș ."]
RO_HYP_TOKENS = ["Ea citește o carte în fiecare seară .", "Vremea este rece în oraș ."]
RO_REF_PLAIN = ["Ea citeste o carte lunga in fiecare seara .", "Vremea este rece astazi in oras ."]
RO_HYP_PLAIN = ["Ea citeste o carte in fiecare seara .", "Vremea este rece in oras ."]
EN_TOKENS = (
    [
        "the cat sat on the mat .",
        "we meet again tomorrow in the park .",
        "she reads a book every evening .",
    ],
    [
        "the cat sat on the mat near the door .",
        "we will meet again tomorrow at noon in the park .",
        "she reads a long book every evening before bed .",
    ],
)


def sacre(hyps: list[str], refs: list[str], tokenize: str) -> float:
    return sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenize).score


@pytest.mark.parametrize(
    ("protocol", "lang", "hyps", "refs", "tokenize"),
    [
        ("sacrebleu", "en", EN_HYP, EN_REF, "13a"),
        ("sacrebleu", "zh", ZH_HYP, ZH_REF, "zh"),
        ("sacrebleu", "zh_CN", ZH_HYP, ZH_REF, "zh"),
        ("sacrebleu-13a", "en", EN_HYP, EN_REF, "13a"),
        ("sacrebleu-zh", "zh", ZH_HYP, ZH_REF, "zh"),
        ("sacrebleu-ja-mecab", "ja", JA_HYP, JA_REF, "ja-mecab"),
    ],
)
def test_detokenized_bleu_is_sacrebleus(protocol, lang, hyps, refs, tokenize):
    result = mt.score(Protocol(protocol), hyps, refs, lang)
    expected = sacre(hyps, refs, tokenize)
    assert result.score == pytest.approx(expected, abs=1e-9)
    assert 0 < expected < 100
    assert f"tok:{tokenize}" in result.signature
    assert result.kind == "bleu_stats" and len(result.stats) == len(hyps)
    # the statistics recompute the printed score: the bootstrap resamples this number
    assert bleu_from_stats(np.sum(result.stats, axis=0)) == pytest.approx(expected)


def test_the_references_are_the_references():
    """Swapping hypotheses and references changes BLEU (brevity penalty), so the check above
    catches a protocol that passes them the wrong way round."""
    assert sacre(EN_REF, EN_HYP, "13a") != pytest.approx(sacre(EN_HYP, EN_REF, "13a"), abs=0.5)
    assert sacre(ZH_REF, ZH_HYP, "zh") != pytest.approx(sacre(ZH_HYP, ZH_REF, "zh"), abs=0.5)


def test_the_tokenizer_matters_for_chinese_and_japanese():
    """13a leaves unspaced Chinese and Japanese as one token per clause: a protocol that used it
    for these targets would disagree with the expected numbers above."""
    assert sacre(ZH_HYP, ZH_REF, "13a") != pytest.approx(sacre(ZH_HYP, ZH_REF, "zh"), abs=1)
    assert sacre(JA_HYP, JA_REF, "13a") != pytest.approx(sacre(JA_HYP, JA_REF, "ja-mecab"), abs=1)


def test_chrf_plus_plus_is_sacrebleus():
    for hyps, refs in ((EN_HYP, EN_REF), (ZH_HYP, ZH_REF), (JA_HYP, JA_REF)):
        result = mt.score(Protocol("chrf++"), hyps, refs, "xx")
        expected = sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score
        assert result.score == pytest.approx(expected, abs=1e-9)
        assert expected != pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score, abs=0.1)
        assert expected != pytest.approx(sacrebleu.corpus_chrf(refs, [hyps], word_order=2).score)
        assert "nw:2" in result.signature and result.kind == "chrf_stats"
        assert corpus_chrf(np.array([result.stats]))[0] == pytest.approx(expected)


def test_wat_english_is_moses_tokens_scored_without_tokenizing():
    result = mt.score(Protocol("wat"), EN_HYP, EN_REF, "en")
    assert result.score == pytest.approx(sacre(*EN_TOKENS, "none"))
    assert result.signature.startswith("wat:en:moses (mosestokenizer)|") and "tok:none" in (
        result.signature
    )


def test_wat_chinese_is_jieba_words():
    import jieba

    words = [[" ".join(jieba.lcut(line)) for line in side] for side in (ZH_HYP, ZH_REF)]
    result = mt.score(Protocol("wat"), ZH_HYP, ZH_REF, "zh")
    assert result.score == pytest.approx(sacre(*words, "none"))
    assert result.score != pytest.approx(sacre(ZH_HYP, ZH_REF, "none"), abs=1)  # unsegmented
    assert "jieba" in result.signature


def test_wat_japanese_is_the_projects_segmenter():
    import spacy

    nlp = spacy.load("ja_ginza", exclude=["ner"])
    words = [[" ".join(t.text for t in nlp(line)) for line in side] for side in (JA_HYP, JA_REF)]
    result = mt.score(Protocol("wat"), JA_HYP, JA_REF, "ja")
    assert result.score == pytest.approx(sacre(*words, "none"))
    assert result.score != pytest.approx(sacre(JA_HYP, JA_REF, "none"), abs=1)
    assert "ginza" in result.signature


def test_mrasp2_chinese_is_characters():
    chars = [[" ".join(line) for line in side] for side in (ZH_HYP, ZH_REF)]
    result = mt.score(Protocol("mrasp2"), ZH_HYP, ZH_REF, "zh")
    assert result.score == pytest.approx(sacre(*chars, "none"))
    assert result.score != pytest.approx(mt.score(Protocol("wat"), ZH_HYP, ZH_REF, "zh").score)
    assert "characters" in result.signature


def test_mrasp2_romanian_diacritics_only_where_asked():
    kept = mt.score(Protocol("mrasp2"), RO_HYP, RO_REF, "ro")
    assert kept.score == pytest.approx(sacre(RO_HYP_TOKENS, RO_REF_TOKENS, "none"))
    plain_refs = [line.translate(str.maketrans("ăâîșțĂÂÎȘȚ", "aaistAAIST")) for line in RO_REF]
    removed = mt.score(Protocol("mrasp2", remove_diacritics=True), RO_HYP, plain_refs, "ro")
    assert removed.score == pytest.approx(sacre(RO_HYP_PLAIN, RO_REF_PLAIN, "none"))
    # against diacritic-free references, keeping the hypotheses' diacritics costs BLEU
    assert mt.score(Protocol("mrasp2"), RO_HYP, plain_refs, "ro").score < removed.score - 5
    assert "remove_diacritics" in removed.signature and "remove_diacritics" not in kept.signature


def test_mrasp2_cedilla_forms_count_as_comma_below():
    cedilla = [line.replace("ș", "\u015f").replace("ț", "\u0163") for line in RO_HYP]
    protocol = Protocol("mrasp2", remove_diacritics=True)
    assert mt.score(protocol, cedilla, RO_REF, "ro").score == pytest.approx(
        mt.score(protocol, RO_HYP, RO_REF, "ro").score
    )


def test_requests_the_protocol_cannot_serve():
    with pytest.raises(ProtocolError, match="unknown scoring protocol"):
        Protocol("bleu")
    with pytest.raises(ProtocolError, match="2 hypotheses for 3 references"):
        mt.score(Protocol("sacrebleu"), EN_HYP[:2], EN_REF, "en")
    with pytest.raises(ProtocolError, match="source sentences and a loaded checkpoint"):
        mt.score(Protocol("comet"), EN_HYP, EN_REF, "en")


def test_the_params_schema_knows_every_protocol_and_option():
    import dataclasses

    import yaml

    from mlrep.text.moses import BACKENDS
    from tests.conftest import REPO

    schema = yaml.safe_load((REPO / "workflow/schemas/params.schema.yaml").read_text())
    scoring = schema["$defs"]["scoring"]["properties"]
    assert tuple(scoring["name"]["enum"]) == mt.PROTOCOLS
    assert tuple(scoring["moses_backend"]["enum"]) == BACKENDS
    assert set(scoring) == {f.name for f in dataclasses.fields(Protocol)}


def test_comet_needs_a_checkpoint_setting():
    with pytest.raises(ProtocolError, match="comet_checkpoint is empty"):
        Protocol("comet").comet()
