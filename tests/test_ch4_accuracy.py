"""What Chapter 4's pre-training accuracy job reads and writes
(`mlrep.chapters.ch4_jass.accuracy`): each pre-training scored on every task of each side,
the held-out pairs given once per pair model, one metrics.json per pre-training and seed beside
its model — checked through the verb's own parser."""

from __future__ import annotations

import copy
import shlex
from pathlib import Path

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import accuracy, runs, training
from mlrep.cli import build_parser
from mlrep.nmt import cli as nmt_cli
from mlrep.paths import Paths
from tests.conftest import REPO

PATHS = Paths(results=Path("r"), reports=Path("p"), resources=Path("s"))
DATA = "r/ch4_jass/data"
TINY = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "tiny"})["ch4_jass"]
FULL = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "full"})["ch4_jass"]


def test_a_pretraining_is_scored_on_every_task_of_each_side():
    assert accuracy.scored("jaen-jass") == [("ja", "bmass"), ("ja", "brss.f"), ("en", "mass")]
    assert accuracy.scored("jaen-enss") == [("ja", "mass"), ("en", "mass"), ("en", "hfss")]
    assert accuracy.scored("jazh-bart-jass") == [
        ("ja", "bart"),
        ("ja", "bmass"),
        ("ja", "brss.f"),
        ("zh", "mass"),  # Chinese: MASS only
    ]


def test_its_metrics_sit_beside_the_model_in_the_tables_run_folder():
    found = accuracy.metrics(PATHS, "jaen-jass", 2)
    assert found == "r/ch4_jass/pretrain/jaen-jass/seed2/metrics.json"
    model = Path(training.model(PATHS, training.PRETRAIN, "jaen-jass", 2))
    assert model.parent.parent == Path(found).parent
    assert training.pretrain_run("jaen-jass") == "pretrain/jaen-jass"


def test_every_planned_pretraining_at_every_seed_is_a_target():
    section = {**copy.deepcopy(TINY), "seeds": [1, 2]}
    planned = runs.planned_pretrainings(section)
    assert len(planned) == 10
    assert accuracy.targets(PATHS, section) == [
        accuracy.metrics(PATHS, run_id, seed) for seed in (1, 2) for run_id in planned
    ]
    assert len(accuracy.targets(PATHS, FULL)) == 37 * len(FULL["seeds"])


def parsed(section: dict):
    """The verb's arguments as its own parser and checks read them."""
    argv = ["nmt", "token-accuracy", "--section", "ch4_jass"]
    args = build_parser().parse_args([*argv, *shlex.split(accuracy.arguments(PATHS, section))])
    files = nmt_cli._accuracy_pairs(args)
    return files, nmt_cli._accuracy_models(args, files)


def test_the_arguments_score_each_model_on_its_own_pairs_which_are_the_inputs():
    files, models = parsed(TINY)
    inputs = accuracy.inputs(PATHS, TINY)
    given = [str(path) for pair in files.values() for path in pair]
    assert sorted(given) == sorted(inputs["pairs"])  # each held-out file once, each an input
    assert len(given) == len(set(given))
    # jaen and jazh hold different Japanese pairs (their own BPE): one set per pair model
    assert files["jaen", "ja", "bmass"][0] == Path(f"{DATA}/pretrain/jaen/ja/bmass/valid.src")
    assert files["jazh", "ja", "bmass"][0] == Path(f"{DATA}/pretrain/jazh/ja/bmass/valid.src")
    assert [m.out for m in models] == [Path(t) for t in accuracy.targets(PATHS, TINY)]
    for m in models:
        run_id = m.run.removeprefix("pretrain/")
        assert m.run == training.pretrain_run(run_id) and m.seed == 1
        assert str(m.model / "train.json") in inputs["models"]
        assert m.model == Path(training.model(PATHS, "pretrain", run_id, 1)).parent
        assert (
            str(m.data) == training.pretrain_data(PATHS, run_id) and str(m.data) in inputs["data"]
        )
        pair = runs.pretraining(run_id).pair
        scored = [(lang, task) for lang, tasks in m.sides.items() for task in tasks]
        assert scored == accuracy.scored(run_id)
        assert {key for tasks in m.sides.values() for key in tasks.values()} == {
            (pair, lang, task) for lang, task in scored
        }
