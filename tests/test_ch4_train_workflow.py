"""Chapter 4's training and evaluation through Snakemake (`ch4_jass_evaluate`, which needs
`ch4_jass_train`'s models): a pool's subwords, a pre-training's data-bin and model, fine-tunes
binarised with its dictionary and started from its best checkpoint (#0 from scratch), each
decoded and scored with WAT-style BLEU — built at tiny in a copy of the session's project,
trimmed to one pre-training and its two fine-tunes; planned whole at full."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.chapters.ch4_jass import runs, training
from mlrep.nmt.pair import DICT, RAW
from mlrep.nmt.pair import SUMMARY as DATA_SUMMARY
from mlrep.paths import Paths
from tests.conftest import REPO, copy_workflow, planned_jobs, snakemake
from tests.tiny_runs import CH4_DATA_TRIM, jobs_run, set_params

TARGET = "ch4_jass_evaluate"
PRETRAINED, SAMPLE = "jaen-mass", 30
FINETUNED = [f"aspec_je.ja-en.3k.{start}" for start in ("vanilla", PRETRAINED)]


def lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def read_json(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# the project's folders, relative to its root (as the rules name them)
PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels of the session's corpus
def test_tiny_finetunes_start_from_the_pretrained_model(tiny_project, tmp_path):
    project = tiny_project.copy(tmp_path)
    set_params(
        project,
        {
            **CH4_DATA_TRIM,
            "ch4_jass.pretrained": {"jaen": ["mass"]},
            "ch4_jass.baselines": ["vanilla"],
            "ch4_jass.directions": ["ja-en"],
            "ch4_jass.sizes": {"aspec_je": {"3k": SAMPLE}},
            "ch4_jass.pretrain.max_update": 4,
            "ch4_jass.pretrain.warmup_updates": 2,
            "ch4_jass.finetune.max_update": 2,
            "ch4_jass.finetune.warmup_updates": 2,
        },
    )
    result = snakemake(project, "--cores", "2", "--", TARGET, timeout=1500)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ran = jobs_run(result.stdout + result.stderr)
    # one pre-training: its two MASS sides, train and valid; the pool's subwords it reads
    assert (ran["ch4_pretrain"], ran["ch4_finetune"], ran["ch4_pretrain_pairs"]) == (1, 2, 4)
    assert ran["ch4_subwords"] == 5  # train and valid of both languages, the test source
    data = project / training.pretrain_data(PATHS, PRETRAINED)
    pair = read_json(data / DATA_SUMMARY)
    assert pair["languages"] == ["ja", "en"]
    assert [Path(s).parent.parent.name for s, _ in pair["sources"]["train"]] == ["ja", "en"]
    # the pool's subwords count into the dictionary, in the pair's BPE
    pool_train = project / ch4_data.subwords(PATHS, "aspec_je", "train", "ja")
    assert str(pool_train.relative_to(project)) in pair["finetune_text"]
    assert "@@" in pool_train.read_text(encoding="utf-8")
    assert len(lines(project / ch4_data.subwords(PATHS, "aspec_je", "test", "ja"))) == 20
    best = training.best(PATHS, training.PRETRAIN, PRETRAINED, 1)
    assert (project / best).exists()
    for run in FINETUNED:
        folder = project / training.finetune_data(PATHS, run)
        binarised = read_json(folder / DATA_SUMMARY)
        # the sample: the first SAMPLE pool lines, source tagged with the target language
        assert binarised["lines"]["train"] == SAMPLE and binarised["direction"] == "ja-en"
        sources = lines(folder / RAW / "train.src-tgt.src")
        assert sources[0] == "[En] " + lines(pool_train)[0]
        # both are binarised with the pre-training's dictionary (#0 too: its pair's MASS data)
        assert binarised["dictionary"]["file"] == str(data.relative_to(project) / DICT)
        assert binarised["dictionary"]["sha256"] == pair["dictionary"]["sha256"]
        model = read_json(project / training.model(PATHS, training.FINETUNE, run, 1))
        assert model["updates"] == 2
        start = runs.finetune(run).pretrained
        assert model["init"] == (best if start else None), run
        # its test set decoded into words and scored on the pool's test words, as sacreBLEU
        # scores them untokenized (WAT: the words are the segmenters' already)
        hypotheses = lines(project / training.hypotheses(PATHS, run, 1))
        files = training.score_inputs(PATHS, run)
        references = lines(project / files["reference"])
        assert len(hypotheses) == len(references) == 20
        # words, no tag (a barely fine-tuned MASS model may still write [M]: it counts)
        assert not any("@@" in h or h.startswith("[En]") for h in hypotheses), hypotheses[:3]
        metrics = read_json(project / training.metrics(PATHS, run, 1))["metrics"]
        expected = sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none").score
        assert metrics["bleu_ja-en"] == pytest.approx(expected, abs=0.01), run


def test_full_scale_plans_every_run_on_the_thesis_gpus(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "-p", "--cores", "64", TARGET, "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    full = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "full"})["ch4_jass"]
    pretrained = {job.values("wildcards")["run"]: job for job in planned["ch4_pretrain"]}
    assert len(planned["ch4_pretrain"]) == len(pretrained) == 37
    assert set(pretrained) == set(runs.planned_pretrainings(full))
    finetuned = {job.values("wildcards")["run"]: job for job in planned["ch4_finetune"]}
    assert len(planned["ch4_finetune"]) == len(finetuned)
    assert set(finetuned) == set(runs.planned_finetunes(full))
    # every fine-tune but #0*, which no scale plans yet (pair-train cannot shape it)
    optimized = {r for r in runs.finetunes() if runs.finetune(r).start == "optimized"}
    assert set(finetuned) == set(runs.finetunes()) - optimized and len(optimized) == 28
    for rule in ("ch4_translate", "ch4_score"):  # each decoded and scored once
        assert {job.values("wildcards")["run"] for job in planned[rule]} == set(finetuned)
        assert len(planned[rule]) == len(finetuned), rule
    for job in pretrained.values():  # the thesis pre-trains on 4 GPUs, fine-tunes on 1
        assert (job.values("resources")["gpu"], job["threads"]) == ("4", "8")
        assert "--stage pretrain " in job.text and "--gpus 4 " in job.text
    for run, job in finetuned.items():
        assert (job.values("resources")["gpu"], job["threads"]) == ("1", "8")
        start = runs.finetune(run).pretrained
        init = f"--init results/ch4_jass/pretrain/{start}/seed1/model/checkpoint_best.pt "
        assert ("--init " in job.text) == bool(start) and (not start or init in job.text), run
    data = {job.values("wildcards")["run"]: job for job in planned["ch4_finetune_data"]}
    assert set(data) == set(finetuned)
    for run, job in data.items():
        assert f"--train-lines {runs.sample_size(full, run)} " in job.text, run
        source = (
            runs.finetune(run).pretrained or f"{runs.CORPORA[runs.finetune(run).corpus].pair}-mass"
        )
        assert f"--dict results/ch4_jass/data/bin/pretrain/{source}/dict.txt " in job.text, run
    assert "--train-lines 0 " in data["aspec_jc.ja-zh.672k.jazh-mass"].text
    # Wikipedia Ja-Zh samples its own pool, not ASPEC Ja-Zh's
    assert "/subwords/wiki_jc/train.zh " in data["wiki_jc.zh-ja.3k.jazh-jass"].text
    assert "/subwords/aspec_jc/train.zh " in data["aspec_jc.zh-ja.3k.jazh-jass"].text
    sides = ch4_data.sides(runs.planned_pretrainings(full))
    assert len(planned["ch4_pretrain_pairs"]) == 2 * sum(map(len, sides.values()))
    assert len(planned["ch4_subwords"]) == 4 * 3 * 2  # four pools, every split, both languages
