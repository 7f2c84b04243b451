"""WAT-style BLEU of a pair model's test words (`mlrep nmt pair-score`, Chapter 4): the words
are scored as given (sacrebleu ``--tokenize none``, not segmented again), with the signature
naming the segmenter, the copy-the-source floor, and per-sentence statistics that sum to the
printed score; the run's metrics.json holds them under declared names."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sacrebleu

from mlrep import cli
from mlrep.evaluate import mt
from mlrep.nmt.data import Direction, NmtDataError
from mlrep.nmt.score import pair_bleu
from mlrep.report.metrics import declared, read
from mlrep.report.stats import bleu_from_stats

# Moses tokens as the pools hold them: 13a would split "U.S.-based" and "e.g.", which are one
# token each here, so a second tokenization scores otherwise
REFS = [
    "the U.S.-based firm , e.g. Acme , grew fast .",
    "we meet at noon on the 3.5 km road .",
    "a small dog runs in the park .",
]
HYPS = [
    "the U.S.-based firm , e.g. Acme , grows fast .",
    "we meet at noon on 3.5 km road .",
    "a dog runs in the big park .",
]
SOURCES = ["米国 の 会社 は 速く 成長 した 。", "正午 に 会う 。", "犬 が 走る 。"]
SEGMENTER = mt.wat_segmenter("en")


def test_pair_bleu_is_sacrebleu_on_the_given_words_with_its_floor():
    result = pair_bleu(HYPS, REFS, SOURCES, Direction("ja", "en"), SEGMENTER)
    expected = sacrebleu.corpus_bleu(HYPS, [REFS], tokenize="none").score
    assert expected != pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)  # 13a differs
    metrics = result["metrics"]
    assert metrics["bleu_ja-en"] == pytest.approx(expected)
    floor = sacrebleu.corpus_bleu(SOURCES, [REFS], tokenize="none").score
    assert metrics["floor_bleu_ja-en"] == pytest.approx(floor)
    assert set(metrics) == set(result["bleu_stats"]) == {"bleu_ja-en", "floor_bleu_ja-en"}
    for name, value in metrics.items():
        stats = result["bleu_stats"][name]
        assert len(stats) == len(REFS)
        assert bleu_from_stats(np.sum(stats, axis=0)) == pytest.approx(value)
    signature = result["directions"]["ja-en"]["signature"]
    assert signature.startswith("wat:en:moses (mosestokenizer) (given words)|")
    assert "tok:none" in signature and result["directions"]["ja-en"]["lines"] == 3
    assert result["signatures"] == {"bleu_ja-en": signature, "floor_bleu_ja-en": signature}
    assert declared("ch4_jass").undeclared(metrics) == []


def test_japanese_words_are_not_segmented_again(monkeypatch):
    """The model's words are scored: no segmenter runs, and "東京 都" stays two words."""
    from mlrep.text import segment

    monkeypatch.setattr(segment, "segment", lambda *a, **k: pytest.fail("segmented again"))
    refs = ["東京都 に 行き ます 。", "会議 は 明日 です 。"]
    hyps = ["東京 都 に 行き ます 。", "会議 は 明日 だ 。"]
    scored = mt.presegmented_bleu(hyps, refs, "ja", "ginza (ja-ginza 5.2.0)")
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score
    assert scored.score == pytest.approx(expected)
    assert expected != pytest.approx(sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score)
    assert scored.signature.startswith("wat:ja:ginza (ja-ginza 5.2.0) (given words)|")
    assert mt.wat_segmenter("ja").startswith("ginza (ja-ginza ")


@pytest.mark.parametrize("what", ["hypotheses", "sources"])
def test_a_file_of_another_length_is_refused(what):
    given = {"hypotheses": HYPS, "sources": SOURCES} | {what: HYPS[:2]}
    with pytest.raises(NmtDataError, match=f"2 {what} for 3 references of ja-en"):
        pair_bleu(given["hypotheses"], REFS, given["sources"], Direction("ja", "en"), SEGMENTER)


def test_the_verb_writes_the_runs_metrics(tmp_path):
    files = {}
    for name, lines in (("hyp", HYPS), ("reference", REFS), ("source", SOURCES)):
        files[name] = tmp_path / name
        files[name].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "ch4_jass" / "aspec_je.ja-en.3k.jaen-jass" / "seed2" / "metrics.json"
    argv = ["nmt", "pair-score", "--section", "ch4_jass", "--scale", "tiny", "--seed", "2"]
    argv += ["--run", "aspec_je.ja-en.3k.jaen-jass", "--direction", "ja-en"]
    argv += ["--backend", "sacremoses", "--out", str(out)]
    argv += [f"--{name}={path}" for name, path in files.items()]
    assert cli.main(argv) == 0
    result = read(out)
    assert (result.run, result.seed, result.chapter) == (
        "aspec_je.ja-en.3k.jaen-jass",
        2,
        "ch4_jass",
    )
    expected = sacrebleu.corpus_bleu(HYPS, [REFS], tokenize="none").score
    assert result.metrics["bleu_ja-en"] == pytest.approx(expected)
    assert len(result.bleu_stats["bleu_ja-en"]) == 3
    signature = json.loads(out.read_text())["directions"]["ja-en"]["signature"]
    assert signature.startswith("wat:en:moses (sacremoses)")
    assert result.signatures == {"bleu_ja-en": signature, "floor_bleu_ja-en": signature}
