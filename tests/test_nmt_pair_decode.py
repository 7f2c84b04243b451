"""Decoding a fine-tuned pair model, without a model: its source carries the target
language's tag only and its decoder gets no forced first token (`PairTranslator`), and its
hypotheses come back as words, BPE merged, one per input line (`translate_pair`). A real
model's decode is tested with its training (tests/test_nmt_pair_train.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from mlrep.nmt.data import Direction, NmtDataError
from mlrep.nmt.decode import PairTranslator
from mlrep.nmt.settings import BeamSettings
from mlrep.nmt.translate import translate_pair

BEAM = BeamSettings(beam=1, max_len_a=1.0, max_len_b=5, batch_size=2)


def test_a_pair_source_has_the_target_tag_only_and_no_forced_prefix():
    translator = PairTranslator.__new__(PairTranslator)  # no checkpoint: the tagging only
    assert translator.source("東京 に 行@@ く", Direction("ja", "en")) == "[En] 東京 に 行@@ く"
    assert translator.source("to Tokyo", Direction("en", "ja")) == "[Ja] to Tokyo"
    assert translator.prefix("en") is None


class Recorder:
    """A fairseq dictionary that records the lines it is asked to encode."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def encode_line(self, line: str, add_if_not_exist: bool, append_eos: bool):
        assert (add_if_not_exist, append_eos) == (False, True)
        self.lines.append(line)
        return torch.tensor([len(self.lines)])


def test_the_model_reads_the_tagged_source():
    translator = PairTranslator.__new__(PairTranslator)
    dictionary = Recorder()
    translator.task = type("Task", (), {"source_dictionary": dictionary})()
    translator.encode(["a b", "c"], Direction("ko", "en"))
    assert dictionary.lines == ["[En] a b", "[En] c"]


class Echo:
    """A translator whose hypotheses are its inputs' pieces, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[list[str], list[Direction], BeamSettings]] = []

    def generate(self, sources, dirs, beam):
        self.asked.append((list(sources), list(dirs), beam))
        return [s.split() for s in sources]


def test_hypotheses_are_words_with_bpe_merged(tmp_path: Path):
    source = tmp_path / "test.sub"
    source.write_text("東京 に 行@@ っ@@ た\nthe U.@@ S. firm@@ s\n\n", encoding="utf-8")
    echo = Echo()
    d = Direction("ja", "en")
    hypotheses = translate_pair(echo, source, d, BEAM)
    assert hypotheses == ["東京 に 行った", "the U.S. firms", ""]
    assert echo.asked == [(["東京 に 行@@ っ@@ た", "the U.@@ S. firm@@ s", ""], [d] * 3, BEAM)]


def test_an_empty_source_file_is_refused(tmp_path: Path):
    (tmp_path / "test.sub").write_text("", encoding="utf-8")
    with pytest.raises(NmtDataError, match=r"test\.sub: no lines to translate"):
        translate_pair(Echo(), tmp_path / "test.sub", Direction("ja", "en"), BEAM)
