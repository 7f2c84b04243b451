"""Burmese syllables, Khmer words and Romanian normalisation on known strings."""

import pytest

from mlrep import config as cfg
from mlrep.cli import main
from mlrep.text import moses, plan, scripts, segment
from mlrep.text.normalise import normalise_romanian, remove_diacritics
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        # "hello": the stacked ဂ (under ္) and the kinzi င်္ stay in the first syllable
        ("မင်္ဂလာပါ", ["မင်္ဂ", "လာ", "ပါ"]),
        # "Myanmar": a consonant silenced by the asat ends the syllable before it
        ("မြန်မာ", ["မြန်", "မာ"]),
        # a tiny-corpus line: Latin words and punctuation split, ။ its own token
        (
            "Cmd+I ကို နှိုပ်ပြီး ကို ဖယ်ပစ်ပါ။",
            ["Cmd", "+", "I", "ကို", "နှိုပ်", "ပြီး", "ကို", "ဖယ်", "ပစ်", "ပါ", "။"],
        ),
        # the dot below may stand before the asat; digits stay together
        ("၂၀၂၄ ခုနှစ် ကြည့်ပါ", ["၂၀၂၄", "ခု", "နှစ်", "ကြည့်", "ပါ"]),
        # a stacked cluster is one syllable ("cemetery")
        ("သင်္ချိုင်း", ["သင်္ချိုင်း"]),
    ],
)
def test_burmese_syllables(line, tokens):
    assert scripts.burmese(line) == tokens
    assert "".join(tokens) == "".join(line.split())  # nothing lost, nothing added


def test_khmer_keeps_words_whole_and_splits_punctuation():
    line = "សង្កត់ Ctrl+I បន្ទាប់មក ដើម្បីបដិសេធរឿងនេះ។ ១២៣"
    assert scripts.khmer(line) == [
        "សង្កត់",
        "Ctrl",
        "+",
        "I",
        "បន្ទាប់មក",
        "ដើម្បីបដិសេធរឿងនេះ",
        "។",
        "១២៣",
    ]


@pytest.mark.parametrize("backend", moses.BACKENDS)
def test_moses_breaks_the_signs_the_segmenters_keep(backend):
    # why my and km are segmented rather than Moses-tokenized
    assert moses.tokenize(["တင်ပြချက်များ"], "my", backend) == ["တင ် ပြချက ် များ"]
    assert segment.segment(["တင်ပြချက်များ"], "my")[0].words == ("တင်", "ပြ", "ချက်", "များ")
    assert segment.tool_version("km") == "Khmer words (rules, mlrep.text.scripts)"


def test_romanian_normalisation_as_the_wmt16_scripts():
    cedilla = "\u015ecoala \u0163\u0103rii"  # Şcoala ţării, legacy cedilla forms
    assert normalise_romanian(cedilla) == "\u0218coala \u021b\u0103rii"  # comma below
    assert remove_diacritics(normalise_romanian(cedilla)) == "Scoala tarii"
    assert remove_diacritics("ÎNVĂȚĂMÂNTUL învățământul") == "INVATAMANTUL invatamantul"
    assert remove_diacritics("ş") == "ş"  # cedilla form: normalise first, as the scripts do


@pytest.mark.parametrize("backend", moses.BACKENDS)
def test_romanian_steps_run_between_normalisation_and_tokenization(backend):
    steps = ["normalise_romanian", "remove_diacritics"]
    line = "Datele selectate au fost \u015fterse \u201ecu succes\u201d."
    assert moses.tokenize([line], "ro", backend, steps=steps) == [
        "Datele selectate au fost sterse &quot; cu succes &quot; ."
    ]


def test_tokenize_applies_the_steps_a_dataset_gives_its_language(tmp_path):
    """Steps belong to a preprocess dataset (Chapter 5's Romanian in `thesis`, none in Chapter
    8's datasets); the rule passes the dataset's steps and the verb applies just those."""
    preprocess = cfg.load(cfg.load_yaml(REPO / "params.yaml"))["preprocess"]
    steps = plan.steps(preprocess, "thesis", "ro")
    assert steps == ["normalise_romanian", "remove_diacritics"]
    assert plan.steps(preprocess, "iwslt", "ro") == []
    source = tmp_path / "in.ro"
    source.write_text("Definește numele fișierului de bază\n", encoding="utf-8")
    out = tmp_path / "out.ro"
    args = ["text", "tokenize", "--params", str(REPO / "params.yaml"), "--lang", "ro"]
    assert main([*args, "--input", str(source), "--output", str(out), "--steps", *steps]) == 0
    assert out.read_text(encoding="utf-8") == "Defineste numele fisierului de baza\n"
    assert main([*args, "--input", str(source), "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "Definește numele fișierului de bază\n"
