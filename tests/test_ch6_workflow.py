"""Chapter 6 through Snakemake, trimmed (tests/tiny_runs.py): real fast_align links → the
instruction sets → stand-in BLOOM bases pretrained on leak-free text → LoRA stages → greedy
decoding of every test direction (BLOOMZ+3's pivot in two passes) → BLEU/chrF++/COMET stand-in
→ metrics.json, the layer-wise cosine analyses, and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sacrebleu.metrics import BLEU
from safetensors.torch import load_file

from mlrep.align.pharaoh import read_alignments
from mlrep.llm import adapter
from mlrep.llm.instruct import strip_terminal
from tests.tiny_runs import CHAPTER_TRIMS

TRIM = CHAPTER_TRIMS["ch6_aligninstruct"]
LANGUAGES = TRIM["ch6_aligninstruct.blocks.bloomz-24.languages"]
RULES = {
    "monolingual",
    "tokenize_shard",
    "segment_shard",
    "align_bitext",
    "align_direction",
    "align_symmetrize",
    "align_gather",
    "ch6_stand_in",
    "ch6_instructions",
    "ch6_tests",
    "ch6_train",
    "ch6_decode",
    "ch6_comet_stand_in",
    "ch6_score",
    "ch6_metrics",
    "ch6_cosine",
    "ch6_cosine_metrics",
    "ch6_aligninstruct",
    "report",
}


@pytest.fixture(scope="module")
def ch6(tiny_project, ch6_run) -> tuple[Path, dict[str, int]]:
    """The session's project with the chapter target built; returns its results folder and the
    jobs each rule of the target ran."""
    return ch6_run, tiny_project.ran["ch6_aligninstruct"]


def metrics(results: Path, run: str) -> dict:
    return json.loads((results / run / "seed1" / "metrics.json").read_text())


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_every_run_of_the_trim_trains_decodes_and_scores(ch6):
    results, ran = ch6
    assert set(ran) <= RULES, ran
    # 7b1 mt, mt-align, align-then-mt (2 stages); 1b1 mt, mt-align; BLOOMZ+3's two sets ×
    # mt, mt-align
    assert ran["ch6_train"] == 4 + 2 + 4
    assert ran["ch6_stand_in"] == 2  # the two sizes of the trim
    for run in ("bloomz-24/7b1-noft", "bloomz-24/7b1-mt", "bloomz-24/1b1-mt-align"):
        doc = metrics(results, run)
        assert (doc["run"], doc["scale"]) == (run, "tiny")
        for name in ("opus_bleu_en-xx", "opus_chrf_xx-en", "flores_bleu_en-xx"):
            assert 0 <= doc["metrics"][name] <= 100, (run, name)
        # COMET's code path ran on the stand-in: its cells read "not run at this scale"
        assert "not run at this scale" in doc["pending"]["opus_comet_en-xx"]


@pytest.mark.slow
@pytest.mark.network
def test_bleu_is_sacrebleu_of_the_hypotheses_less_the_template_period(ch6):
    results, _ = ch6
    run = results / "bloomz-24" / "7b1-mt" / "seed1"
    tests = results / "data" / "tests" / "bloomz-24" / "opus"
    doc = json.loads((run / "metrics.json").read_text())
    for lang in LANGUAGES:
        decoded = (run / "hyp" / "opus" / f"en-{lang}.txt").read_text().splitlines()
        hyp = [strip_terminal(h) for h in decoded]
        ref = (tests / f"en-{lang}.ref").read_text().splitlines()
        assert len(hyp) == len(ref) == TRIM["ch6_aligninstruct.data"]["max_test"]
        expected = BLEU(tokenize="13a").corpus_score(hyp, [ref]).score
        assert doc["metrics"][f"opus_bleu_en-{lang}"] == pytest.approx(expected, abs=1e-6)
    per_language = [doc["metrics"][f"opus_bleu_en-{lang}"] for lang in LANGUAGES]
    assert doc["metrics"]["opus_bleu_en-xx"] == pytest.approx(sum(per_language) / len(LANGUAGES))


@pytest.mark.slow
@pytest.mark.network
def test_align_instructions_assert_spans_of_the_alignment_layers_links(ch6, tiny_project):
    results, _ = ch6
    root = tiny_project.root
    lang = LANGUAGES[0]
    records = [
        json.loads(line)
        for line in (results / "data" / "instructions" / "bloomz-24" / f"en-{lang}.align.jsonl")
        .read_text()
        .splitlines()
    ]
    assert records and {r["output"] for r in records} == {"True", "False"}
    links = read_alignments(
        root
        / "results"
        / "align"
        / "opus24"
        / f"en-{lang}"
        / "fast_align.grow-diag-final-and"
        / "links.txt"
    )
    pairs = TRIM["ch6_aligninstruct.blocks.bloomz-24.max_pairs"]
    assert len(links) >= pairs
    # one instance per pair and direction, built from the first max_pairs aligned lines
    assert len(records) <= 2 * pairs and len(records) > pairs


@pytest.mark.slow
@pytest.mark.network
def test_lora_stages_learn_and_chain_their_adapters(ch6):
    results, _ = ch6
    run = results / "bloomz-24" / "7b1-align-then-mt" / "seed1"
    first = json.loads((run / "stage1" / "train.json").read_text())
    second = json.loads((run / "stage2" / "train.json").read_text())
    # stage 2 starts from stage 1's adapter; both record what they dropped as over-length
    assert second["init_adapter"].endswith("7b1-align-then-mt/seed1/stage1/adapter")
    assert first["init_adapter"] is None
    for record in (first, second):
        assert all("dropped" in counts for counts in record["examples"]["files"].values())
    # a run of the trim is a dozen updates, too few for its loss to fall measurably (the
    # learning tests are tests/test_llm_lora.py's): here, that every update moved the adapter
    # (LoRA's B starts at zero) and each stage recorded each of its updates' losses
    for stage, record in (("stage1", first), ("stage2", second)):
        assert len(record["losses"]) == record["updates"] > 0
        weights = load_file(run / stage / "adapter" / adapter.WEIGHTS)
        lora_b = [w for name, w in weights.items() if "lora_B" in name]
        assert lora_b and all(w.abs().sum() > 0 for w in lora_b), stage


@pytest.mark.slow
@pytest.mark.network
def test_bloomz3_scores_its_groups_and_pivots_through_english(ch6):
    results, _ = ch6
    doc = metrics(results, "bloomz-3/7b1-ar-de-fr-nl-ru-zh-mt")
    for group in ("overall", "seen-unseen", "unseen-unseen", "en-seen", "unseen-en"):
        assert 0 <= doc["metrics"][f"opus_bleu_{group}"] <= 100, group
    pivot = results / "bloomz-3" / "7b1-ar-de-fr-nl-ru-zh-mt-pivot" / "seed1"
    second = [json.loads(line) for line in (pivot / "hyp.pass2.jsonl").read_text().splitlines()]
    first = (pivot / "hyp.pass1.txt").read_text().splitlines()
    # the second pass translates the first pass's English from English
    assert second and all(r["direction"].startswith("en-") for r in second)
    assert [r["input"].split("\n")[1] for r in second[:3]] == [
        f"English: {strip_terminal(line)}." for line in first[:3]
    ]
    assert (
        "opus_bleu_unseen-unseen"
        in metrics(results, "bloomz-3/7b1-ar-de-fr-nl-ru-zh-mt-pivot")["metrics"]
    )


@pytest.mark.slow
@pytest.mark.network
def test_cosine_analyses_cover_every_layer_of_the_stand_in(ch6):
    results, _ = ch6
    doc = metrics(results, "bloomz-24/7b1-cosine")
    layers = sorted(int(k.split("_l")[1]) for k in doc["metrics"] if k.startswith("delta1_l"))
    assert layers == [1, 2, 3, 4]  # the 7b1 stand-in's four layers
    cosine = results / "bloomz-24" / "7b1-cosine" / "seed1" / "cosine"
    noft, mt = (
        json.loads((cosine / f"{model}.json").read_text())["cosine"]
        for model in ("7b1-noft", "7b1-mt")
    )
    assert doc["metrics"]["delta1_l2"] == pytest.approx(mt[1] - noft[1])
