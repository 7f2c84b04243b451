"""Chapter 8 through Snakemake: a trimmed tiny run end to end (data → train → decode → score →
probes/SVCCA → metrics.json → Table 8.2), and the full-scale plan with GPU resources."""

from __future__ import annotations

import csv
import json
import re

import pytest

from tests.conftest import copy_workflow, planned_jobs, snakemake

PREPROCESS_RULES = ["tokenize_shard", "train_subwords", "encode_subwords"]
CH8_RULES = [
    *PREPROCESS_RULES,
    "ch8_prepare",
    "ch8_train",
    "ch8_translate",
    "ch8_translate_pivot",
    "ch8_states",
    "ch8_probe",
    "ch8_svcca",
    "ch8_score",
    "ch8_metrics",
    "report",
    "ch8_layernorm",
]
SYSTEMS = ["prenorm-s-enc-t-dec-w", "postnorm-t-enc-w"]


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_trimmed_chapter_8_run_fills_metrics_and_table_8_2(tiny_project, ch8_run):
    """The session's shared Chapter 8 run (tests/tiny_runs.py): IWSLT, two systems and the
    pivot, one seed, a few updates each."""
    reports = tiny_project.root / "reports"
    # Chapter 8 ran its own rules and the shared preprocessing, nothing else (no download)
    assert set(tiny_project.ran["ch8_layernorm"]) <= set(CH8_RULES), tiny_project.ran
    runs = ch8_run / "iwslt"
    for system in SYSTEMS:
        doc = json.loads((runs / system / "seed1/metrics.json").read_text())
        assert doc["run"] == f"iwslt/{system}" and doc["scale"] == "tiny"
        metrics = doc["metrics"]
        for name in ("zst_bleu", "sup_bleu", "zst_off_target", "bleu_it-nl", "svcca_l1"):
            assert name in metrics, name
        assert {
            f"llr_{s}_{side}_{layer}"
            for s in ("sup", "zst")
            for side in ("src", "tgt")
            for layer in ("enc1", "enc2", "dec1", "dec2")  # the tiny model's 2+2 layers
        } <= set(metrics)
        assert len(doc["bleu_stats"]["zst_bleu"]) == 6 * 12
        # the copy-the-source floors, with their statistics on the same sentences
        assert len(doc["bleu_stats"]["floor_zst_bleu"]) == 6 * 12
        assert doc["groups"]["floor_zst_bleu"] == doc["groups"]["zst_bleu"]
        assert 0 <= metrics["floor_zst_off_target"] <= 100 and "floor_bleu_it-nl" in metrics
        assert (runs / system / "seed1/model/config.yaml").exists()
    pivot = json.loads((runs / "pivot/seed1/metrics.json").read_text())
    assert "zst_bleu" in pivot["metrics"] and "sup_bleu" not in pivot["metrics"]

    with open(reports / "tables/thesis-table-8.2.csv", encoding="utf-8") as handle:
        cells = {(r["row"], r["column"]): r for r in csv.DictReader(handle)}
    for row in ("prenorm-s-enc-t-dec-w", "postnorm-t-enc-w", "pivot"):
        assert cells[(row, "Zero-shot IWSLT BLEU")]["status"] != "not run", row
    # the cell is the run's zero-shot BLEU, the mean over its six zero-shot directions
    prenorm = json.loads((runs / "prenorm-s-enc-t-dec-w/seed1/metrics.json").read_text())
    metrics = prenorm["metrics"]
    zero_shot = [f"bleu_{a}-{b}" for a in ("it", "nl", "ro") for b in ("it", "nl", "ro") if a != b]
    zst = metrics["zst_bleu"]
    assert zst == pytest.approx(sum(metrics[d] for d in zero_shot) / 6, abs=1e-6)
    assert float(cells[("prenorm-s-enc-t-dec-w", "Zero-shot IWSLT BLEU")]["measured"]) == (
        pytest.approx(zst, abs=0.01)
    )
    assert cells[("postnorm-s-enc-t-dec-w", "Zero-shot IWSLT BLEU")]["status"] == "not run"
    assert cells[("prenorm-s-enc-t-dec-w", "Zero-shot OPUS BLEU")]["status"] == "not run"

    with open(reports / "tables/thesis-table-8.1.csv", encoding="utf-8") as handle:
        table_8_1 = {(r["row"], r["column"]): r for r in csv.DictReader(handle)}
    assert float(table_8_1[("iwslt", "N_zero")]["measured"]) == 6
    assert float(table_8_1[("iwslt", "S_train")]["measured"]) == 3 * 200
    assert table_8_1[("opus", "N_zero")]["status"] == "not run"

    # scored as plain text against the raw references: BPE merged, Moses undone
    hyp = (runs / "prenorm-s-enc-t-dec-w/seed1/hyp/it-nl.hyp").read_text(encoding="utf-8")
    sub = (runs / "prenorm-s-enc-t-dec-w/seed1/hyp/it-nl.sub").read_text(encoding="utf-8")
    assert "@@" not in hyp and len(hyp.splitlines()) == len(sub.splitlines()) == 12


def jobs(stdout: str, rule: str) -> list[dict[str, str]]:
    """Each planned job of `rule` in a dry run's output: its input, output and wildcards."""
    found = []
    for block in re.findall(rf"rule {rule}:\n((?:    .*\n)*)", stdout):
        found.append(dict(re.findall(r"^    (\w+): (.*)$", block, re.MULTILINE)))
    return found


def test_tiny_plan_preprocesses_the_datasets_pairs_with_the_shared_rules(tmp_path):
    """Chapter 8 reads the shared preprocessing: Moses tokens of en-it, en-nl, en-ro from the
    tiny corpus and the `iwslt` setting's joint BPE, then cuts and binarises them."""
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "ch8_layernorm", "--config", "chapters=[ch8_layernorm]")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    tokenized = {job["output"].split(",")[0] for job in jobs(result.stdout, "tokenize_shard")}
    assert tokenized == {
        f"results/preprocess/iwslt/tok/{split}.en-{xx}.{lang}"
        for split in ("train", "valid", "test")
        for xx in ("it", "nl", "ro")
        for lang in ("en", xx)
    }
    assert [job["output"] for job in jobs(result.stdout, "train_subwords")] == [
        "results/preprocess/iwslt/subwords/iwslt/all"
    ]
    assert len(jobs(result.stdout, "encode_subwords")) == 18
    (prepare,) = jobs(result.stdout, "ch8_prepare")
    inputs = prepare["input"].split(", ")
    assert inputs[0] == "results/data/tiny_corpus"
    assert set(inputs[1:]) == {t.replace("/tok/", "/sub/iwslt/") for t in tokenized}


def test_tiny_scale_plans_every_step_as_a_cpu_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "ch8_layernorm", "--config", "chapters=[ch8_layernorm]")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    assert planned["ch8_train"] and planned["ch8_translate"] and planned["ch8_probe"]
    for rule, jobs in planned.items():
        assert all("gpu" not in job.values("resources") for job in jobs), rule


def test_full_scale_plans_the_main_grid_and_variants_on_gpus(tmp_path):
    workdir = copy_workflow(tmp_path)
    # --cores: threads as a cluster job gets them (a dry run caps them at its cores)
    result = snakemake(
        workdir, "-n", "-p", "--cores", "64", "ch8_layernorm", "--config", "scale=full"
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    counts = dict(re.findall(r"^(ch8_\w+)\s+(\d+)$", result.stdout, re.MULTILINE))
    # 8 systems x 3 seeds x 3 datasets (72) + 72 LayerNorm-simple + 18 Swap-PreNorm + Enc-Last
    assert counts["ch8_train"] == "163"
    assert counts["ch8_translate_pivot"] == "9" and counts["ch8_prepare"] == "3"
    # the thesis corpora, normalised by the data layer's readers: OPUS-100 with its zero-shot
    # test sets, IWSLT 2017 multilingual, Europarl v7
    normalized = re.findall(
        r"rule dataset_normalize:\n(?:    .*\n)*?    output: (.*)", result.stdout
    )
    assert sorted(normalized) == [
        f"results/data/{key}"
        for key in (
            "opus_opus100",
            "opus_opus100_zeroshot",
            "statmt_europarl_v7",
            "wit3_iwslt2017_multilingual",
        )
    ]
    # each dataset is preprocessed from its own corpora, its zero-shot test sets included
    prepare = {
        job["output"]: job["input"].split(", ") for job in jobs(result.stdout, "ch8_prepare")
    }
    opus = prepare["results/ch8_layernorm/data/opus"]
    assert opus[:2] == ["results/data/opus_opus100", "results/data/opus_opus100_zeroshot"]
    assert "results/preprocess/opus/sub/opus/test.de-fr.fr" in opus
    assert len(opus) == 2 + 6 * 3 * 2 + 15 * 2
    europarl = prepare["results/ch8_layernorm/data/europarl"]
    assert europarl[0] == "results/data/statmt_europarl_v7" and len(europarl) == 1 + 4 * 2
    iwslt = prepare["results/ch8_layernorm/data/iwslt"]
    assert iwslt[0] == "results/data/wit3_iwslt2017_multilingual"
    assert "results/preprocess/iwslt/sub/iwslt/test.it-nl.nl" in iwslt
    models = sorted(job["output"] for job in jobs(result.stdout, "train_subwords"))
    assert models == [
        f"results/preprocess/{d}/subwords/{d}/all" for d in ("europarl", "iwslt", "opus")
    ]
    sharded = {
        job["output"].split(",")[0].split("/")[2] for job in jobs(result.stdout, "tokenize_shard")
    }
    assert sharded == {"opus", "iwslt", "europarl"}  # no other chapter's dataset
    assert counts["ch8_metrics"] == str(163 + 9)
    # BLEURT-20 for every scored run, on a GPU (Table E.9); tiny has no checkpoint
    assert counts["ch8_bleurt"] == str(163 + 9)
    planned = planned_jobs(result.stdout)
    assert len(planned["ch8_bleurt"]) == 163 + 9 and len(planned["ch8_train"]) == 163
    # training asks for the thesis's GPUs (base 4, big 8) and passes them on for the batch
    thesis_gpus = {"opus": "4", "iwslt": "4", "europarl": "8"}
    for job in planned["ch8_train"]:
        gpus = thesis_gpus[job.values("wildcards")["dataset"]]
        resources = job.values("resources")
        assert (resources["gpu"], resources["runtime"], job["threads"]) == (gpus, "2880", "8")
        assert f"--gpus {gpus} " in job.text
    # decoding every direction, states, probes and BLEURT: one GPU each, not a CPU thread
    for rule, runtime, mem_mb in (
        ("ch8_translate", "480", "64000"),
        ("ch8_translate_pivot", "480", "64000"),
        ("ch8_states", "480", "64000"),
        ("ch8_probe", "360", "32000"),
        ("ch8_bleurt", "360", "32000"),
    ):
        for job in planned[rule]:
            resources = job.values("resources")
            assert (resources.get("gpu"), resources["runtime"], resources["mem_mb"]) == (
                "1",
                runtime,
                mem_mb,
            ), rule
    assert all("gpu" not in job.values("resources") for job in planned["ch8_svcca"])  # numpy
    assert (
        "results/ch8_layernorm/opus/prenorm-s-enc-t-dec-w-enc-last/seed10/model/train.json"
        in result.stdout
    )
