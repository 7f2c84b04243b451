"""Chapter 6's plan of files (mlrep/chapters/ch6_aligninstruct/plan.py) at both scales, without
Snakemake: which adapter a run decodes, what a stage trains on, where test sets come from."""

from __future__ import annotations

import pytest

from mlrep.chapters.ch6_aligninstruct.plan import Plan
from mlrep.paths import Paths
from tests.conftest import params_at


def plan(scale: str) -> Plan:
    params = params_at(scale)
    paths = Paths.from_config(params)
    return Plan(params["ch6_aligninstruct"], params["preprocess"], params["align"], paths)


@pytest.fixture(scope="module")
def tiny() -> Plan:
    return plan("tiny")


@pytest.fixture(scope="module")
def full() -> Plan:
    return plan("full")


def test_full_scale_plans_the_thesis_grid_on_bloomz_checkpoints(full):
    trainings = [r for r in full.runs.values() if r.trains]
    assert len([r for r in trainings if r.setting == "bloomz-24"]) == 31
    assert len([r for r in trainings if r.setting == "bloomz-3"]) == 6
    assert full.base("7b1") == "bigscience/bloomz-7b1" and full.base_input("7b1") == []
    assert len(full.languages("bloomz-24")) == 24
    # 53 runs and 4 analyses, one metrics.json each
    assert len(full.targets([1])) == len(full.runs) + len(full.analyses) == 57


def test_a_decoding_run_reads_the_adapter_of_the_run_it_decodes(tiny):
    last = tiny.stage.format(block="bloomz-24", run="7b1-mt-align", seed="1", stage=1)
    assert tiny.adapter_of("bloomz-24", "7b1-mt-align", "1") == [last]
    assert tiny.adapter_of("bloomz-24", "7b1-mt-align-p3", "1") == [last]
    assert tiny.adapter_of("bloomz-24", "7b1-noft", "1") == []
    # a curriculum decodes its last stage; its second stage starts from its first
    curriculum = tiny.adapter_of("bloomz-24", "7b1-align-then-mt", "1")
    assert curriculum[0].endswith("7b1-align-then-mt/seed1/stage2/train.json")
    assert tiny.previous_stage("bloomz-24", "7b1-align-then-mt", "1", 2)[0].endswith(
        "7b1-align-then-mt/seed1/stage1/train.json"
    )
    assert tiny.previous_stage("bloomz-24", "7b1-align-then-mt", "1", 1) == []


def test_a_stage_trains_on_its_objectives_for_the_blocks_languages(tiny):
    files = tiny.stage_inputs("bloomz-24", "7b1-align-then-mt", 1)
    assert [f.rsplit("/", 1)[1] for f in files] == [
        "en-af.align.jsonl",
        "en-gd.align.jsonl",
        "en-ka.align.jsonl",
    ]
    six = tiny.stage_inputs("bloomz-3", "7b1-de-nl-ru-mt", 1)
    assert [f.rsplit("/", 1)[1] for f in six] == [f"en-{x}.mt.jsonl" for x in ("de", "nl", "ru")]


def test_instructions_read_the_alignment_layers_links_of_the_blocks_dataset(tiny, full):
    en, xx, links = tiny.pair_tokens("bloomz-24", "af")
    assert en.endswith("preprocess/opus24/tok/train.en-af.en") and xx.endswith(".af")
    assert links.endswith("align/opus24/en-af/fast_align.grow-diag-final-and/links.txt")
    assert full.pair_raw("bloomz-24", "af")[1][1].endswith("opus_opus100/train.af-en.af")


def test_test_sets_come_from_the_split_or_flores_multiway_files(tiny, full):
    tiny_flores = [path for _, path in tiny.test_raw("bloomz-24", "flores")]
    assert tiny_flores[0].endswith("tiny_corpus/valid.en-af.en")
    full_flores = [path for _, path in full.test_raw("bloomz-24", "flores")]
    assert full_flores[0].endswith("devtest.multiway.eng_Latn")
    assert full_flores[1].endswith("devtest.multiway.afr_Latn") and len(full_flores) == 25
    # BLOOMZ+3 at full: the English-centric sets and OPUS-100's zero-shot sets
    zero_shot = [path for _, path in full.test_raw("bloomz-3", "opus")]
    assert any(path.endswith("opus_opus100_zeroshot/test.ar-de.ar") for path in zero_shot)


def test_an_analysis_compares_its_three_models_on_the_languages_run(tiny):
    inputs = tiny.cosine_inputs("bloomz-24", "7b1-cosine", "1")
    assert [p.rsplit("/", 1)[1] for p in inputs.values()] == [
        "7b1-noft.json",
        "7b1-mt.json",
        "7b1-mt-align.json",
    ]
    pairs = tiny.cosine_pairs("bloomz-24", "7b1-cosine")
    assert [p.rsplit("/", 1)[1] for p in pairs["src"]] == ["en-af.src", "en-gd.src", "en-ka.src"]
    seen = tiny.cosine_pairs("bloomz-3", "7b1-ar-de-fr-nl-ru-zh-cosine-ar-fr-zh")
    assert [p.rsplit("/", 1)[1] for p in seen["tgt"]] == ["en-ar.ref", "en-fr.ref", "en-zh.ref"]
