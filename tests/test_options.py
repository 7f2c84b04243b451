"""A step's settings are spelled once: a settings dataclass.

Its fields are the options of the verbs that read it (`mlrep.cliutil.add_options`) and the
keys of the params.yaml sections those verbs fall back on. A key added to params.yaml but not
to the dataclass, or a field added but not to params.yaml, fails here rather than at run time
(a verb that cannot fill its settings) or never (a key nothing reads).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from mlrep import cli
from mlrep import config as cfg
from mlrep.chapters.ch2_ems import runs
from mlrep.cliutil import (
    add_options,
    common_options,
    omissible_names,
    option_names,
    settings_from,
)
from mlrep.data import download, tiny_corpus
from mlrep.data.monolingual import MonolingualSettings
from mlrep.data.validate import Filters
from mlrep.embed import settings as embed
from mlrep.evaluate.adequacy import EncoderSettings
from mlrep.evaluate.settings import ClassifySettings, MarginSettings, PoolSettings, SearchSettings
from mlrep.llm import settings as llm
from mlrep.nmt import settings as nmt
from mlrep.report import fill
from mlrep.text import lines, moses, segment
from mlrep.text.cli import UNCAPPED, UNDO
from mlrep.text.head_final import HeadFinalSettings
from mlrep.text.pretrain_tasks import TaskSettings
from mlrep.text.subwords import SubwordSettings
from tests.conftest import REPO

PARAMS = cfg.load(cfg.load_yaml(REPO / "params.yaml"))
NMT_SECTIONS = [
    name for name, section in PARAMS.items() if isinstance(section, dict) and "decode" in section
]

# verb -> the settings dataclasses whose fields are its options, less those it sets itself
VERBS: dict[tuple[str, ...], list[tuple[type, tuple[str, ...]]]] = {
    ("nmt", "train"): [(nmt.TrainSettings, nmt.TRAIN_VERB_SET)],
    ("nmt", "pair-train"): [(nmt.TrainSettings, nmt.TRAIN_VERB_SET)],
    ("nmt", "translate"): [(nmt.BeamSettings, ())],
    ("nmt", "pair-translate"): [(nmt.BeamSettings, ())],
    ("nmt", "states"): [(nmt.BeamSettings, ()), (nmt.StatesSettings, ())],
    ("nmt", "bleurt"): [(nmt.BleurtSettings, ())],
    ("nmt", "retrieval"): [(nmt.RetrievalSettings, ())],
    ("nmt", "token-accuracy"): [(nmt.TokenAccuracySettings, ())],
    ("nmt", "prepare"): [(nmt.DataSettings, ()), (nmt.DatasetSettings, ())],
    ("ch2", "prepare"): [(embed.PrepareSettings, embed.VERB_SET)],
    ("ch2", "train"): [(embed.EmsConfig, embed.FROM_DATA), (embed.TrainSettings, embed.VERB_SET)],
    ("ch2", "evaluate"): [(embed.EvaluateSettings, ())],
    ("ch2", "baseline"): [(embed.EvaluateSettings, ())],
    ("embed", "prepare"): [(embed.PrepareSettings, embed.VERB_SET)],
    ("embed", "teacher-cache"): [(embed.TeacherSettings, ())],
    ("embed", "distill"): [
        (embed.StudentConfig, embed.STUDENT_FROM_DATA),
        (embed.DistillConfig, embed.DISTILL_FROM_DATA),
        (embed.DistillTrainSettings, embed.VERB_SET),
    ],
    ("embed", "reduce"): [
        (embed.ReduceSettings, ()),
        (embed.TrainSettings, embed.VERB_SET),
        (embed.DistillConfig, (*embed.DISTILL_FROM_DATA, *embed.NOT_AMS)),
    ],
    ("embed", "evaluate"): [
        (embed.EvaluateSettings, ()),
        (embed.BenchmarkSettings, ()),
        (MarginSettings, ()),
        (SearchSettings, ()),
        (embed.TeacherSettings, embed.NOT_EVALUATED),
    ],
    ("embed", "mlm-pretrain"): [(embed.MlmSettings, ())],
    ("embed", "align-finetune"): [(embed.AlignFinetuneSettings, embed.ALIGN_VERB_SET)],
    ("embed", "align-evaluate"): [(embed.AlignEvaluateSettings, ()), (embed.AlignBuccSettings, ())],
    ("llm", "stand-in"): [(llm.StandInSettings, ())],
    ("llm", "lora-train"): [(llm.LoraSettings, ())],
    ("llm", "generate"): [(llm.GenerateSettings, ())],
    ("llm", "cosine"): [(llm.CosineSettings, ())],
    ("report", "build"): [(fill.ReportSettings, ())],
    ("report", "summary"): [(fill.ReportSettings, ())],
    ("data", "fetch"): [(download.Policy, download.CALLER_SET)],
    ("data", "normalize"): [(Filters, ())],
    ("data", "stand-in"): [(Filters, ())],
    ("data", "monolingual"): [(MonolingualSettings, ())],
    ("corpus", "sources"): [(tiny_corpus.Sources, ())],
    ("corpus", "tiny"): [(tiny_corpus.Settings, ())],
    ("text", "head-final"): [(HeadFinalSettings, ())],
    ("text", "train-subwords"): [(SubwordSettings, ())],
    ("text", "pretrain-pairs"): [(TaskSettings, ())],
    ("eval", "retrieval"): [(MarginSettings, ()), (SearchSettings, ())],
    ("eval", "paracrawl"): [
        (PoolSettings, ()),
        (MarginSettings, ()),
        (SearchSettings, ()),
    ],
    ("eval", "bucc"): [(MarginSettings, ()), (SearchSettings, ())],
    ("eval", "classify"): [(ClassifySettings, ())],
    ("eval", "adequacy"): [(EncoderSettings, ())],
    ("text", "tokenize"): [(moses.TokenizeSettings, ()), (lines.Limits, ())],
    ("text", "detokenize"): [(moses.TokenizeSettings, UNDO), (lines.Limits, UNCAPPED)],
    ("text", "segment"): [(segment.SegmentSettings, ()), (lines.Limits, ())],
    ("text", "parse"): [(lines.Limits, ())],
    ("text", "encode-subwords"): [(lines.Limits, UNCAPPED)],
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
        by_hand = {k for k in fields if getattr(options[k], "settings", None) is not cls}
        assert not by_hand, (
            f"{' '.join(verb)}: options spelled beside {cls.__name__} instead of by its fields "
            f"(add_options): {by_hand}"
        )


def test_only_cliutil_reads_options_by_name():
    """A verb reads its settings through `settings_from`/`fill`: an option read by a computed
    name (``{k: getattr(args, k) for k in KEYS}``) is a key list beside the dataclass."""
    found = []
    for path in sorted((REPO / "mlrep").rglob("*.py")):
        if path.name == "cliutil.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and ast.unparse(node.args[0]) == "args"
                and not isinstance(node.args[1], ast.Constant)
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, f"options read by a computed name: {', '.join(found)}"


def _keys(*sections: Mapping[str, Any]) -> set[str]:
    return set().union(*(set(section) for section in sections))


@pytest.mark.parametrize("section", NMT_SECTIONS)
def test_nmt_settings_are_the_params_keys(section):
    nmt_section = PARAMS[section]
    assert _keys(nmt_section["decode"]) == set(option_names(nmt.BeamSettings))
    # the analyses' settings, in the sections whose chapter runs them (Chapter 8, not 7)
    for key, settings in (("states", nmt.StatesSettings), ("bleurt", nmt.BleurtSettings)):
        if key in nmt_section:
            assert _keys(nmt_section[key]) == set(option_names(settings)), (section, key)
    fields = set(option_names(nmt.TrainSettings, nmt.TRAIN_VERB_SET))
    if "datasets" not in nmt_section:
        # Chapter 4 trains in two stages, each one whole TrainSettings block (its rules pass it)
        for stage in ("pretrain", "finetune"):
            keys = _keys(nmt_section[stage])
            assert keys <= fields, f"{section}.{stage} keys no TrainSettings field: {keys - fields}"
            assert fields - set(omissible_names(nmt.TrainSettings)) <= keys, (section, stage)
        return
    train = _keys(nmt_section["train"])
    assert train <= fields, f"{section}.train keys no TrainSettings field: {train - fields}"
    for name, dataset in nmt_section["datasets"].items():
        # omissible fields (the interlingua's) keep their defaults where a section omits them
        per_dataset = fields - train - set(omissible_names(nmt.TrainSettings))
        assert per_dataset <= _keys(dataset), (
            f"TrainSettings fields in neither {section}.train nor {section}.datasets.{name}: "
            f"{per_dataset - _keys(dataset)}"
        )


def test_retrieval_settings_are_the_params_keys():
    # Chapter 5's validation retrieval (`mlrep nmt retrieval`), in the chapter that reports it
    assert _keys(PARAMS["ch5_wordcl"]["retrieval"]) == set(option_names(nmt.RetrievalSettings))


def test_mbart_pretrain_settings_are_the_params_keys():
    # Chapter 5's stand-in (`mlrep nmt mbart-pretrain`): every setting but the omissible noise
    keys = _keys(PARAMS["ch5_wordcl"]["mbart_pretrain"])
    fields = set(option_names(nmt.MbartPretrainSettings))
    assert fields - set(omissible_names(nmt.MbartPretrainSettings)) <= keys <= fields


def test_ch2_settings_are_the_params_keys():
    section = PARAMS[runs.SECTION]
    model = set(option_names(embed.EmsConfig, embed.FROM_DATA))
    train = set(option_names(embed.TrainSettings, embed.VERB_SET))
    assert _keys(section["model"], section["objective"]) == model
    assert _keys(section["train"]) == train
    # Chapter 3's settings (the languages kept, the Tatoeba languages scored) are omissible
    prepare = option_names(embed.PrepareSettings, (*embed.VERB_SET, "languages"))
    assert _keys(section["prepare"]) == set(prepare)
    evaluate = option_names(embed.EvaluateSettings, ("tatoeba_languages",))
    assert _keys(section["evaluate"]) == set(evaluate)
    assert {"languages", "tatoeba_languages"} <= {
        *omissible_names(embed.PrepareSettings),
        *omissible_names(embed.EvaluateSettings),
    }
    overridden = _keys(*(run or {} for run in section["runs"].values()), section["grid"]["values"])
    assert overridden <= model | train, f"runs change keys no verb reads: {overridden}"


def test_nmt_prepare_settings_are_the_params_keys():
    # Chapter 4 cuts no multilingual datasets: pre-training pairs and nested samples instead
    for section in (s for s in NMT_SECTIONS if "datasets" in PARAMS[s]):
        fields = set(option_names(nmt.DataSettings))
        required = fields - set(omissible_names(nmt.DataSettings))
        assert required <= _keys(PARAMS[section]["data"]) <= fields, section
        for name, dataset in PARAMS[section]["datasets"].items():
            fields = set(option_names(nmt.DatasetSettings))
            assert fields <= _keys(dataset), f"{section}.datasets.{name} lacks {fields}"


def test_tiny_corpus_settings_are_the_params_keys():
    assert _keys(PARAMS["data"]["tiny_corpus"]) == set(option_names(tiny_corpus.Settings))


def _schema_keys(*path: str) -> set[str]:
    """The keys the params schema allows under `path` (``*``: a user-keyed entry)."""
    node = cfg.load_yaml(cfg.DEFAULT_SCHEMA)
    for name in path:
        node = node["additionalProperties"] if name == "*" else node["properties"][name]
    return set(node["properties"])


def test_filters_are_the_keys_of_a_dataset_block():
    """A dataset block may leave a filter out (`Filters`' default applies), so a field and a
    key that disagree would never fail at run time: the schema's keys are the fields."""
    allowed = _schema_keys("data", "datasets", "*") - {"languages"}
    assert allowed == set(option_names(Filters))


def test_subword_settings_are_the_keys_of_a_subword_setting():
    default = _keys(PARAMS["preprocess"]["subwords"]["default"])
    assert set(option_names(SubwordSettings)) == default - {"joint"}


def test_evaluation_suite_settings_are_the_params_keys():
    section = PARAMS["evaluate"]
    margin = set(option_names(MarginSettings))
    assert _keys(section["search"]) == set(option_names(SearchSettings))
    assert _keys(section["retrieval"]) == _keys(section["bucc"]) == margin
    assert _keys(section["paracrawl"]) == margin | set(option_names(PoolSettings))
    assert _keys(section["classify"]) == set(option_names(ClassifySettings))


def test_report_settings_are_the_params_keys():
    assert _keys(PARAMS["report"]) == set(option_names(fill.ReportSettings))


def test_download_settings_are_params_keys():
    fields = set(option_names(download.Policy, download.CALLER_SET))
    assert fields <= _keys(PARAMS["data"]["download"])


def test_preprocess_settings_are_the_params_keys():
    section = PARAMS["preprocess"]
    assert set(option_names(lines.Limits)) <= _keys(section)
    assert _keys(section["tokenize"]) == set(option_names(moses.TokenizeSettings))
    assert _keys(section["head_final"]) == set(option_names(HeadFinalSettings))
    assert set(option_names(segment.SegmentSettings)) <= _keys(section["segment"])


def test_settings_from_takes_options_over_the_params_file():
    """Explicit options win, the rest come from the first section holding the key, typed by
    the parser the fields built."""
    parser = argparse.ArgumentParser(parents=[common_options()])
    add_options(parser, nmt.BeamSettings)
    args = parser.parse_args(["--beam", "7", "--params", str(REPO / "params.yaml")])
    scale, beam = settings_from(args, nmt.BeamSettings, (f"{NMT_SECTIONS[0]}.decode",))
    expected = PARAMS[NMT_SECTIONS[0]]["decode"] | {"beam": 7}
    assert (scale, dataclasses.asdict(beam)) == (PARAMS["scale"], expected)
