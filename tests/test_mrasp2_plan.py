"""mRASP2's systems (mlrep/chapters/mrasp2/systems.py) and its plan of files
(mlrep/chapters/mrasp2/plan.py) at both scales, without Snakemake; then the rule file's dry
runs: the data side planned at tiny from the alignment layer, at full from MUSE's files."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from mlrep.chapters.mrasp2 import systems
from mlrep.chapters.mrasp2.plan import Plan
from mlrep.data import registry
from mlrep.paths import Paths
from tests.conftest import REPO, params_at, planned_jobs, snakemake


@functools.cache  # one plan per scale for the module
def plan(scale: str) -> Plan:
    params = params_at(scale)
    return Plan(params["mrasp2"], params["align"], Paths.from_config(params), registry.load())


def test_the_five_systems_turn_on_table_4s_checkmarks():
    """Table 4: CTL, AA, MC24 per row, in the paper's order."""
    marks = {
        name: (s.contrastive, s.augmented, s.monolingual) for name, s in systems.SYSTEMS.items()
    }
    assert marks == {
        "m-transformer": (False, False, False),
        "mrasp": (False, True, False),
        "mrasp2-w-o-aa": (True, False, False),
        "mrasp2-w-o-mc24": (True, True, False),
        "mrasp2": (True, True, True),
    }
    # S1/S3 and S2/S4 read the same data; only mRASP2 reads the self-parallel pairs
    data = {name: s.data for name, s in systems.SYSTEMS.items()}
    assert data == {
        "m-transformer": "parallel",
        "mrasp": "aa",
        "mrasp2-w-o-aa": "parallel",
        "mrasp2-w-o-mc24": "aa",
        "mrasp2": "aa-mc24",
    }
    assert set(data.values()) == set(systems.DATA)


def test_a_system_adds_the_contrastive_criterion_only_where_it_is_on():
    loss = {"sentence_weight": 1.0, "sentence_temperature": 0.1}
    assert systems.System.parse("mrasp2").settings(loss) == {"contrastive": True, **loss}
    assert systems.System.parse("mrasp").settings(loss) == {}


def test_unknown_systems_and_copies_for_pairs_are_refused():
    with pytest.raises(systems.SystemNameError, match="m-transformer, mrasp,"):
        systems.System.parse("mrasp3")
    with pytest.raises(systems.SystemNameError, match="copies"):
        systems.System("x", contrastive=True, augmented=False, monolingual=True)
    assert systems.PIVOT_SYSTEM not in systems.SYSTEMS  # decodes, trains nothing


def test_tiny_induces_each_pairs_dictionary_from_the_alignment_layers_links():
    tiny = plan("tiny")
    assert "en-nl" not in tiny.pairs  # Dutch is held out of the parallel data,
    assert "en-nl" in tiny.dictionary_pairs  # not out of the dictionaries (MUSE has en-nl)
    assert tiny.dictionaries() == [
        f"results/mrasp2/data/dictionaries/{p}.txt" for p in tiny.dictionary_pairs
    ]
    assert tiny.dictionary_inputs() == tiny.dictionaries()
    tokens = "results/preprocess/opus/tok/train.en-de"
    assert tiny.pair_tokens("en-de") == {
        "source": f"{tokens}.en",
        "target": f"{tokens}.de",
        "links": "results/align/opus/en-de/fast_align.grow-diag-final-and/links.txt",
    }
    # AA substitutes the source of each direction, paired with the other side
    assert tiny.side_tokens("en-de", "de") == {"source": f"{tokens}.de", "target": f"{tokens}.en"}
    assert tiny.side_tokens("en-de", "en") == {"source": f"{tokens}.en", "target": f"{tokens}.de"}


def test_full_reads_muses_files_of_the_pairs_muse_has():
    full = plan("full")
    muse = "resources/datasets/muse_dictionaries"
    # MUSE's registry entry has no en-ar: Arabic words stay as they are
    assert len(full.dictionary_pairs) == 24 and "en-ar" in full.dictionary_pairs
    assert len(full.dictionaries()) == 23
    assert f"{muse}/en-nl.txt" in full.dictionaries()
    assert f"{muse}/en-ar.txt" not in full.dictionaries()
    assert full.dictionary_inputs() == [f"{muse}/fetched.json"]


def test_both_sides_of_each_pair_and_every_mixed_language_are_substituted():
    tiny, full = plan("tiny"), plan("full")
    assert len(tiny.augmented_files()) == 2 * len(tiny.pairs)
    assert "results/mrasp2/data/aa/en-zh/train.zh" in tiny.augmented_files()
    assert tiny.mono_files() == [
        f"results/mrasp2/data/mc24/aa/mono.{x}" for x in ["de", "en", "fr", "nl"]
    ]
    assert tiny.data_files() == [*tiny.augmented_files(), *tiny.mono_files()]
    assert len(full.mono_languages) == 24  # MC24


def test_each_monolingual_language_gets_its_words_from_the_preprocessing_step_of_its_script():
    tiny, full = plan("tiny"), plan("full")
    segmented = ["ja", "zh", "my", "km"]
    assert tiny.mono_steps(segmented) == {
        "tokenize": ["de", "en", "fr", "nl"],
        "segment": [],
        "segment_ja": [],
    }
    steps = full.mono_steps(segmented)
    assert steps["segment"] == ["zh"] and steps["segment_ja"] == ["ja"]
    assert len(steps["tokenize"]) == 22


@pytest.mark.parametrize("scale", ["tiny", "full"])
def test_the_data_side_plans_from_its_dictionaries_to_every_substituted_file(scale):
    result = snakemake(REPO, "-n", "-p", "mrasp2_data", "--config", f"scale={scale}")
    assert result.returncode == 0, result.stderr
    jobs = planned_jobs(result.stdout)
    subject = plan(scale)
    assert len(jobs["mrasp2_augment"]) == len(subject.augmented_files())
    assert len(jobs["mrasp2_augment_mono"]) == len(subject.mono_languages)
    (synonyms,) = jobs["mrasp2_synonyms"]
    for dictionary in subject.dictionaries():
        assert dictionary in synonyms.text
    # tiny induces one dictionary per pair; full reads MUSE's, fetched from the registry
    induced = len(subject.dictionary_pairs) if scale == "tiny" else 0
    assert len(jobs.get("mrasp2_dictionary", [])) == induced
    (mix,) = jobs["mrasp2_mono_mix"]
    assert "--temperature 5.0" in mix.text
    assert "--fixed nl" in mix.text
    # each side's C(x) is paired with the other side of its pair
    augment = next(j for j in jobs["mrasp2_augment"] if j.values("wildcards")["lang"] == "de")
    assert "--input results/preprocess/opus/tok/train.en-de.de" in augment.text
    assert "--target results/preprocess/opus/tok/train.en-de.en" in augment.text
    assert "--p 0.9" in augment.text and Path(subject.synonyms).name in augment.text
