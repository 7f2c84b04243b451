"""A step's settings are spelled once: a settings dataclass.

Its fields are the options of the verbs that read it (`mlrep.cliutil.add_options`) and the
keys of the params.yaml sections those verbs fall back on. A key added to params.yaml but not
to the dataclass, or a field added but not to params.yaml, fails here rather than at run time
(a verb that cannot fill its settings) or never (a key nothing reads).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from mlrep import cli
from mlrep import config as cfg
from mlrep.chapters.ch2_ems import runs
from mlrep.cliutil import add_options, common_options, option_names, settings_from
from mlrep.data import download
from mlrep.data.monolingual import MonolingualSettings
from mlrep.embed import settings as embed
from mlrep.nmt import settings as nmt
from mlrep.report import fill
from mlrep.text import moses
from mlrep.text.head_final import HeadFinalSettings
from tests.conftest import REPO

PARAMS = cfg.load(cfg.load_yaml(REPO / "params.yaml"))
NMT_SECTIONS = [
    name for name, section in PARAMS.items() if isinstance(section, dict) and "decode" in section
]

# verb -> the settings dataclasses whose fields are its options, less those it sets itself
VERBS: dict[tuple[str, ...], list[tuple[type, tuple[str, ...]]]] = {
    ("nmt", "train"): [(nmt.TrainSettings, nmt.TRAIN_VERB_SET)],
    ("nmt", "translate"): [(nmt.BeamSettings, ())],
    ("nmt", "states"): [(nmt.BeamSettings, ()), (nmt.StatesSettings, ())],
    ("nmt", "bleurt"): [(nmt.BleurtSettings, ())],
    ("ch2", "prepare"): [(embed.PrepareSettings, embed.VERB_SET)],
    ("ch2", "train"): [(embed.EmsConfig, embed.FROM_DATA), (embed.TrainSettings, embed.VERB_SET)],
    ("ch2", "evaluate"): [(embed.EvaluateSettings, ())],
    ("ch2", "baseline"): [(embed.EvaluateSettings, ())],
    ("report", "build"): [(fill.ReportSettings, ())],
    ("report", "summary"): [(fill.ReportSettings, ())],
    ("data", "fetch"): [(download.Policy, download.CALLER_SET)],
    ("data", "monolingual"): [(MonolingualSettings, ())],
    ("text", "tokenize"): [(moses.TokenizeSettings, ())],
    ("text", "detokenize"): [(moses.TokenizeSettings, ("normalize", "escape"))],
    ("text", "head-final"): [(HeadFinalSettings, ())],
}


def _verb(words: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = cli.build_parser()
    for word in words:
        (choices,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = choices.choices[word]
    return parser


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.option_strings}


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_a_verbs_options_are_its_settings_fields(verb):
    options = _options(_verb(verb))
    for cls, skip in VERBS[verb]:
        fields = set(option_names(cls, skip))
        missing = fields - set(options)
        assert not missing, f"{' '.join(verb)} lacks options for {cls.__name__}: {missing}"
        untyped = {k for k in fields if options[k].type is None and options[k].choices is None}
        assert not untyped, f"{' '.join(verb)}: options without a type: {untyped}"


def _keys(*sections: Mapping[str, Any]) -> set[str]:
    return set().union(*(set(section) for section in sections))


@pytest.mark.parametrize("section", NMT_SECTIONS)
def test_nmt_settings_are_the_params_keys(section):
    nmt_section = PARAMS[section]
    assert _keys(nmt_section["decode"]) == set(option_names(nmt.BeamSettings))
    assert _keys(nmt_section["states"]) == set(option_names(nmt.StatesSettings))
    assert _keys(nmt_section["bleurt"]) == set(option_names(nmt.BleurtSettings))
    fields = set(option_names(nmt.TrainSettings, nmt.TRAIN_VERB_SET))
    train = _keys(nmt_section["train"])
    assert train <= fields, f"{section}.train keys no TrainSettings field: {train - fields}"
    for name, dataset in nmt_section["datasets"].items():
        per_dataset = fields - train
        assert per_dataset <= _keys(dataset), (
            f"TrainSettings fields in neither {section}.train nor {section}.datasets.{name}: "
            f"{per_dataset - _keys(dataset)}"
        )


def test_ch2_settings_are_the_params_keys():
    section = PARAMS[runs.SECTION]
    assert _keys(section["model"], section["objective"]) == set(runs.MODEL_KEYS)
    assert _keys(section["train"]) == set(runs.TRAIN_KEYS)
    assert _keys(section["prepare"]) == set(runs.PREPARE_KEYS)
    assert _keys(section["evaluate"]) == set(runs.EVALUATE_KEYS)
    overridden = _keys(*(run or {} for run in section["runs"].values()), section["grid"]["values"])
    assert overridden <= set(runs.RUN_KEYS), f"runs change keys no verb reads: {overridden}"


def test_report_settings_are_the_params_keys():
    assert _keys(PARAMS["report"]) == set(option_names(fill.ReportSettings))


def test_download_settings_are_params_keys():
    fields = set(option_names(download.Policy, download.CALLER_SET))
    assert fields <= _keys(PARAMS["data"]["download"])


def test_preprocess_settings_are_the_params_keys():
    section = PARAMS["preprocess"]
    assert _keys(section["tokenize"]) == set(option_names(moses.TokenizeSettings))
    assert _keys(section["head_final"]) == set(option_names(HeadFinalSettings))


def test_settings_from_takes_options_over_the_params_file():
    """Explicit options win, the rest come from the first section holding the key, typed by
    the parser the fields built."""
    parser = argparse.ArgumentParser(parents=[common_options()])
    add_options(parser, nmt.BeamSettings)
    args = parser.parse_args(["--beam", "7", "--params", str(REPO / "params.yaml")])
    scale, beam = settings_from(args, nmt.BeamSettings, (f"{NMT_SECTIONS[0]}.decode",))
    expected = PARAMS[NMT_SECTIONS[0]]["decode"] | {"beam": 7}
    assert (scale, dataclasses.asdict(beam)) == (PARAMS["scale"], expected)
