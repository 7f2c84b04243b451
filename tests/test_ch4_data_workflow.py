"""Chapter 4's data half through Snakemake: fine-tuning pools, leak-free pre-training text, its
words, one joint BPE per pair model and the pre-training pairs (`ch4_jass_pretrain_data`) —
checked in the session's shared tiny run of the chapter (tests/tiny_runs.py), planned at full."""

from __future__ import annotations

import re

import pytest

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.chapters.ch4_jass import training
from mlrep.text.pretrain_tasks import (
    BUNSETSU_TASKS,
    TASK_TAGS,
    TREE_TASKS,
    expand_tasks,
    language_tag,
)
from tests.conftest import REPO, copy_workflow, planned_jobs, snakemake

TARGET = "ch4_jass_pretrain_data"


def section(scale: str) -> dict:
    """The resolved ``ch4_jass`` section of the repository's params at `scale`."""
    return cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": scale})["ch4_jass"]


TINY = section("tiny")


def lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels of the session's corpus
def test_tiny_pretraining_data_is_built_without_a_leak(tiny_project, ch4_run):
    project = tiny_project.root
    trim = cfg.load(cfg.load_yaml(project / "params.yaml"))["ch4_jass"]
    data = project / "results/ch4_jass/data"
    for (model, lang), task_sets in ch4_data.sides(training.pretrain_data_ids(trim)).items():
        for tasks in task_sets:
            for split in ch4_data.PRETRAIN_SPLITS:
                stem = data / "pretrain" / model / lang / tasks / split
                sources, targets = lines(stem.with_suffix(".src")), lines(stem.with_suffix(".tgt"))
                assert len(sources) == len(targets) > 0, stem
                # every source: a task tag of the set's tasks (all of them), the language tag
                tags = {TASK_TAGS[task] for task in expand_tasks(tasks.split("+"))}
                assert {source.split()[0] for source in sources} == tags, stem
                assert {source.split()[1] for source in sources} == {language_tag(lang)}, stem
    assert "@@" in (data / "pretrain/jaen/ja/mass/train.src").read_text()  # the pair's BPE
    # pools: the trim's 60 lines per corpus (ASPEC-JC: the ja-zh of both), valid and test capped
    pool = data / "pools/aspec_je"
    assert len(lines(pool / "train.ids")) == 60 and len(lines(pool / "valid.ja")) == 20
    assert len(lines(pool / "test.en")) == 20
    assert len(lines(pool / "valid.ja.bunsetsu")) == 20
    # the leak test: no pool or held-out segment in any language's pre-training text
    used = {
        segment
        for corpus in ch4_data.pools(trim)
        for split in ch4_data.SPLITS
        for segment in lines(data / "pools" / corpus / f"{split}.ids")
    }
    held_out = {
        segment
        for path in (project / "results/data/tiny_corpus").glob("*.segids")
        if not path.name.startswith("train.")
        for segment in lines(path)
    }
    text = {s for lang in ("en", "ja", "ko", "zh") for s in lines(data / f"monolingual/{lang}.id")}
    assert len(text) > 1000
    assert not text & used and not text & held_out
    assert len(lines(data / "words/mono.ja")) == 150


def test_full_scale_plans_the_pretraining_data(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "-p", "--cores", "64", TARGET, "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    # one pool per corpus, each cut from its own preprocessed download (Wikipedia Ja-Zh's
    # never from ASPEC-JC's), the lines numbered: a download has no segment ids
    for corpus in ch4_data.CORPORA:
        (job,) = planned[f"ch4_pool_{corpus}"]
        words = f"--words results/preprocess/{corpus}/tok "
        assert words in job.text and "--ids" not in job.text, corpus
        assert f"--out results/ch4_jass/data/pools/{corpus} " in job.text, corpus
        assert all(f"results/preprocess/{corpus}/" in p for p in job["input"].split(", ")), corpus
    fetched = {job.values("wildcards")["key"]: job for job in planned["dataset_fetch"]}
    assert set(fetched) == {
        "manual_aspec_je",
        "manual_aspec_jc",
        "manual_kyoto_wiki_jc",
        "jungyeul_news_ek",
        "statmt_cc100",
    }
    assert "--dest resources/datasets/manual_aspec_je " in fetched["manual_aspec_je"].text
    sides = ch4_data.sides(training.pretrain_data_ids(section("full")))
    assert len(planned["ch4_pretrain_pairs"]) == 2 * sum(map(len, sides.values()))
    # the pre-training text: CC-100, leaving every pool's training lines out
    (mono,) = planned["monolingual"]
    assert "--corpus results/data/statmt_cc100 " in mono.text
    for corpus in ch4_data.CORPORA:
        assert f"results/ch4_jass/data/pools/{corpus}/train.ids" in mono.text
    merges = {
        job.values("wildcards")["model"]: re.search(r"--merges (\d+)", job.text)[1]
        for job in planned["ch4_bpe"]
    }
    assert merges == {"jaen": "40000", "jazh": "30000", "enko": "30000"}  # thesis §3.1
    for job in planned["ch4_pretrain_pairs"]:
        tasks = job.values("wildcards")["tasks"]
        names = set(expand_tasks(tasks.split("+")))
        assert ("--bunsetsu" in job.text) == bool(names & BUNSETSU_TASKS), tasks
        assert ("--trees" in job.text) == bool(names & TREE_TASKS), tasks
    # the tree tasks of every kind and a combined side, e.g. #5 MASS + BMASS's Japanese
    built = {job.values("wildcards")["tasks"] for job in planned["ch4_pretrain_pairs"]}
    assert {"pmass.s", "pmass.p+hfss", "mass+bmass", "bart+enss"} <= built
    for rule in ("ch4_tokenize", "ch4_segment", "ch4_segment_ja"):
        for job in planned[rule]:
            assert "--max-lines 0 " in job.text and "--shards 1 " in job.text, rule
