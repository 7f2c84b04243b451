"""OneAligner through Snakemake: a trimmed tiny run end to end (leak-free text, three stand-in
encoders MLM-pretrained, the twelve unsupervised scorers, the fine-tunings of the trimmed lists
scored on Tatoeba-36 and, for the Top1 models, the New-Tatoeba set cut from the corpus and BUCC
→ metrics.json → the paper's tables and Figure 2's per-language points), and the plans: tiny on
CPU, full with the paper's 105 fine-tunings on GPUs."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import copy_workflow, planned_jobs, snakemake

RULES = [
    "dataset_stand_in",  # Tatoeba's, where no chapter before built it
    "monolingual",
    "onealigner_pretrain",
    "onealigner_evaluate_unsupervised",
    "onealigner_finetune",
    "onealigner_evaluate",
    "onealigner_new_tatoeba",
    "onealigner_language_points",
    "report",
    "onealigner",
]


def metrics(folder) -> dict:
    return json.loads((folder / "metrics.json").read_text())["metrics"]


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_trimmed_onealigner_run_fills_metrics(tiny_project, onealigner_run):
    """The session's shared run (tests/tiny_runs.py): three stand-ins of a few updates, the
    twelve unsupervised scorers, all / all-nobudget on en-ur, the Top1 models and top2."""
    assert set(tiny_project.ran["onealigner"]) <= set(RULES), tiny_project.ran
    for encoder, kind in (("mbert", "bert"), ("xlmr-large", "xlm-roberta")):
        config = json.loads((onealigner_run / f"data/encoders/{encoder}/config.json").read_text())
        assert config["model_type"] == kind
    unsup = {p.parent.parent.name for p in onealigner_run.glob("unsup-*/seed0/metrics.json")}
    assert len(unsup) == 12
    raw = metrics(onealigner_run / "unsup-xlmr-base-bertscore-raw/seed0")
    assert set(raw) == {f"{p}tatoeba_{x}" for p in ("", "floor_") for x in ("deu", "jpn", "avg")}
    budgeted = json.loads((onealigner_run / "all/seed1/model/train.json").read_text())
    everything = json.loads((onealigner_run / "all-nobudget/seed1/model/train.json").read_text())
    assert budgeted["sampled"] == 100 < everything["sampled"] == everything["pool"]
    top1 = metrics(onealigner_run / "en-es/seed1")
    assert {"new_tatoeba_eng", "new_tatoeba_not_eng", "bucc_de", "bucc_avg"} <= set(top1)
    assert top1["train_pairs"] > 1000  # en-es of the tiny corpus
    assert {"tatoeba_avg", "bucc_de"} <= set(metrics(onealigner_run / "ne-fr-es/seed1"))
    assert "bucc_avg" not in metrics(onealigner_run / "top2/seed1")  # Tatoeba-36 only
    assert not (onealigner_run / "top1").exists()  # en-es, not trained twice
    # New-Tatoeba (trim: pairs of 1,480 merged examples, 20 drawn): every built pair scored
    built = json.loads((onealigner_run / "data/new_tatoeba/new_tatoeba.json").read_text())
    pairs = ["en-de", "en-es", "en-fr", "es-fr"]  # of the trim's 6 languages
    assert list(built["pairs"]) == pairs
    assert all(len(entry["indices"]) == 20 for entry in built["pairs"].values())
    scored = {name.removeprefix("new_tatoeba_") for name in top1 if name.count("-") == 1}
    assert scored >= set(pairs) and top1["floor_new_tatoeba_es-fr"] == 100 / 20
    english = [top1[f"new_tatoeba_{p}"] for p in pairs if p.startswith("en-")]
    assert top1["new_tatoeba_eng"] == pytest.approx(sum(english) / len(english))
    # Figure 2: a point per language of those pairs, x its pretraining text in GiB
    fr = metrics(onealigner_run / "top1-eng/fr/seed1")
    expected = [top1[f"new_tatoeba_{p}"] for p in pairs if "fr" in p.split("-")]
    assert fr["new_tatoeba_acc"] == pytest.approx(sum(expected) / len(expected))
    text = onealigner_run / "data/monolingual/fr.txt"
    assert fr["cc100_gb"] == text.stat().st_size / 2**30
    points = {p.parent.parent.name for p in onealigner_run.glob("top1-eng/*/seed1/metrics.json")}
    assert points == {"de", "en", "es", "fr"}


def test_tiny_scale_plans_every_step_as_a_cpu_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "-p", "onealigner", "--config", "chapters=[onealigner]")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    for rule, found in planned.items():
        assert all("gpu" not in job.values("resources") for job in found), rule
    assert {j.values("wildcards")["encoder"] for j in planned["onealigner_pretrain"]} == {
        "mbert",
        "xlmr-base",
        "xlmr-large",
    }
    # an encoder's four Table 1 scorers in one job (one encoding), each its own run folder
    assert len(planned["onealigner_evaluate_unsupervised"]) == 3
    tuned = {job.values("wildcards")["run"]: job for job in planned["onealigner_finetune"]}
    assert {"all", "all-nobudget", "en-es", "ne-fr-es", "top2", "top4"} <= set(tuned)
    assert "top1" not in tuned
    assert "--pairs en-es en-fr " in tuned["top2"].text and "--budget 2000 " in tuned["top2"].text
    assert "--budget 0 " in tuned["all-nobudget"].text
    # the fine-tunings start from the xlmr-large stand-in and keep Tatoeba's sentences out
    assert "--encoder results/onealigner/data/encoders/xlmr-large " in tuned["en-de"].text
    assert "--exclude results/data/stand_ins/laser_tatoeba_v1 " in tuned["en-de"].text
    evaluations = {job.values("wildcards")["run"]: job for job in planned["onealigner_evaluate"]}
    assert "--bucc results/data/tiny_corpus " in evaluations["en-es"].text
    assert "--bucc" not in evaluations["top2"].text
    (unsup,) = [
        j
        for j in planned["onealigner_evaluate_unsupervised"]
        if j.values("wildcards")["encoder"] == "mbert"
    ]
    assert "--grid --out 'results/onealigner/unsup-mbert-{similarity}-{norm}/seed0/" in unsup.text
    assert "--run 'unsup-mbert-{similarity}-{norm}' " in unsup.text
    assert "--alpha 0.75 " in unsup.text and "--layer 2" in unsup.text
    assert "--similarity" not in unsup.text
    (build,) = planned["onealigner_new_tatoeba"]
    assert (
        "--corpus results/data/tiny_corpus " in build.text and "--splits valid test " in build.text
    )
    assert "--min-examples 1000 --sample 50 --seed 1 --languages en af " in build.text
    assert "--new-tatoeba results/onealigner/data/new_tatoeba " in evaluations["en-es"].text
    (points,) = planned["onealigner_language_points"]
    assert "--metrics results/onealigner/en-es/seed1/metrics.json " in points.text
    assert "--text results/onealigner/data/monolingual " in points.text


def test_full_scale_plans_the_papers_fine_tunings_on_gpus(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "-p", "--cores", "64", "onealigner", "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    counts = dict(re.findall(r"^(onealigner_\w+)\s+(\d+)$", result.stdout, re.MULTILINE))
    assert int(counts["onealigner_finetune"]) == int(counts["onealigner_evaluate"]) == 105
    assert counts["onealigner_evaluate_unsupervised"] == "3"  # one per encoder: 12 runs
    assert "onealigner_pretrain" not in counts  # hub models at full
    planned = planned_jobs(result.stdout)
    for rule in ("onealigner_finetune", "onealigner_evaluate", "onealigner_evaluate_unsupervised"):
        for job in planned[rule]:
            assert job.values("resources")["gpu"] == "1", rule
    tuned = {job.values("wildcards")["run"]: job for job in planned["onealigner_finetune"]}
    assert "--encoder xlm-roberta-large " in tuned["all"].text
    assert "--budget 1000000 " in tuned["all"].text and "--layer 17 " in tuned["all"].text
    assert "--data results/data/manual_tatoeba_challenge_v20210807 " in tuned["ne-de-fr"].text
    assert "--exclude results/data/xtreme_tatoeba36 results/data/bucc_bucc2018 " in (
        tuned["en-es"].text
    )
    (build,) = planned["onealigner_new_tatoeba"]
    assert "--corpus results/data/manual_tatoeba_challenge_v20210807 " in build.text
    assert "--splits dev test --min-examples 1000 --sample 1000 " in build.text
    assert "--languages eng vie rus " in build.text
    (points,) = planned["onealigner_language_points"]
    assert "--cc100-gb eng=300.8 " in points.text and "--text" not in points.text
