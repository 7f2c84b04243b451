"""Chapter 4's human evaluation as files (`mlrep.chapters.ch4_jass.human`): the blind sheets a
scale exports are Tables 4.8/4.9's planned systems, one sheet per direction; every human cell
of those tables is a judged system's run; the aggregate reads the returned sheets of its own
evaluation, or the blank exported sheet (pending) while none is back."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import human, runs, training
from mlrep.paths import Paths
from tests.conftest import REPO

PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))


def section(scale: str, **changes) -> dict:
    params = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": scale})["ch4_jass"]
    return {**params, **changes}


def test_full_judges_the_rows_of_tables_4_8_and_4_9_in_both_directions():
    found = {e.name: e for e in human.evaluations(section("full"))}
    rows = {
        "wiki_jc": ("vanilla", "jazh-mass", "jazh-bmass", "jazh-brss", "jazh-jass"),
        "aspec_je": ("vanilla", "jaen-mass", "jaen-pmass-p", "jaen-hfss", "jaen-enss"),
    }
    expected = {
        f"{corpus}.{direction}.10k.seed1": tuple(f"{corpus}.{direction}.10k.{s}" for s in starts)
        for corpus, starts in rows.items()
        for direction in runs.CORPORA[corpus].directions
    }
    assert {name: e.systems for name, e in found.items()} == expected
    # every human cell of the two tables is one judged system's run (and nothing else is)
    judged = {f"human/{s}" for e in found.values() for s in e.systems}
    bound = {
        f"human/{run_id}"
        for run_id in runs.finetunes()
        for cell in runs.cells(run_id)
        if cell.metric in ("adequacy", "fluency")
    }
    assert judged == bound
    targets = human.targets(PATHS, section("full"))
    assert len(targets) == len(judged) == 20
    assert "results/ch4_jass/human/wiki_jc.zh-ja.10k.jazh-jass/seed1/metrics.json" in targets


def test_a_scale_judges_only_the_systems_it_plans():
    tiny = section("tiny")
    planned = set(runs.planned_finetunes(tiny))
    found = human.evaluations(tiny)
    # tiny: Table 4.9's ASPEC Ja-En rows but PMASS; Wikipedia Ja-Zh is not run
    assert [e.name for e in found] == ["aspec_je.ja-en.10k.seed1", "aspec_je.en-ja.10k.seed1"]
    assert found[0].systems == tuple(
        f"aspec_je.ja-en.10k.{s}" for s in ("vanilla", "jaen-mass", "jaen-hfss", "jaen-enss")
    )
    assert all(set(e.systems) <= planned for e in found)
    # the judged seed is the section's first; no 10k size: nothing to judge, no target
    assert {e.seed for e in human.evaluations({**tiny, "seeds": [3, 1]})} == {3}
    assert human.targets(PATHS, section("tiny", sizes={"aspec_je": {"3k": 30}})) == []
    with pytest.raises(human.Ch4HumanError, match=r"no human evaluation 'wiki_jc\.ja-zh\.10k"):
        human.evaluation(tiny, "wiki_jc.ja-zh.10k.seed1")


def test_each_evaluation_reads_its_own_returns_or_its_blank_sheet(tmp_path):
    (ja_en,) = [e for e in human.evaluations(section("tiny")) if e.direction == "ja-en"]
    inputs = human.export_inputs(PATHS, ja_en)
    assert inputs["source"] == "results/ch4_jass/data/pools/aspec_je/test.ja"
    assert inputs["hypotheses"] == [training.hypotheses(PATHS, s, 1) for s in ja_en.systems]
    assert Path(human.sheet(PATHS, ja_en.name)).parent != Path(human.key(PATHS, ja_en.name)).parent

    returned = tmp_path / "returned"
    blank = [human.sheet(PATHS, ja_en.name)]
    assert human.sheets_read(PATHS, returned, ja_en.name) == blank  # no folder yet
    (returned / ja_en.name).mkdir(parents=True)
    (returned / ja_en.name / "notes.txt").write_text("judge b is late\n")
    assert human.sheets_read(PATHS, returned, ja_en.name) == blank  # only CSVs count
    for judge in ("b judge.csv", "a.csv"):
        (returned / ja_en.name / judge).write_text("item\n")
    other = returned / "aspec_je.en-ja.10k.seed1"
    other.mkdir()
    (other / "c.csv").write_text("item\n")
    assert human.sheets_read(PATHS, returned, ja_en.name) == [
        str(returned / ja_en.name / judge) for judge in ("a.csv", "b judge.csv")
    ]
