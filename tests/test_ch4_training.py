"""What Chapter 4's training rules read and write (`mlrep.chapters.ch4_jass.training`): the
pre-training sides derived from the runs, each fine-tune's dictionary, sample and start, and
the #0* baseline refused until it can be trained."""

from __future__ import annotations

import copy
from pathlib import Path

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import data, runs, training
from mlrep.paths import Paths
from tests.conftest import REPO

PATHS = Paths(results=Path("r"), reports=Path("p"), resources=Path("s"))
DATA = "r/ch4_jass/data"
TINY = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "tiny"})["ch4_jass"]


def plan(**values) -> dict:
    return {**copy.deepcopy(TINY), **values}


def test_sides_are_the_planned_pretrainings_task_sets():
    assert data.sides(["jaen-mass-bmass", "jaen-jass-enss", "jaen-mass"]) == {
        ("jaen", "ja"): ["mass+bmass", "jass", "mass"],
        ("jaen", "en"): ["mass", "enss"],
    }
    # Chinese gets MASS alone; a task set two models share is built once
    assert data.sides(["jazh-jass", "jazh-bart-jass"]) == {
        ("jazh", "ja"): ["jass", "bart+jass"],
        ("jazh", "zh"): ["mass"],
    }


def test_a_pretraining_reads_its_sides_and_the_pools_subwords():
    found = training.pretrain_inputs(PATHS, "jaen-mass-bmass", TINY)
    assert found["train_source"] == [
        f"{DATA}/pretrain/jaen/ja/mass+bmass/train.src",
        f"{DATA}/pretrain/jaen/en/mass/train.src",
    ]
    assert found["valid_target"][1] == f"{DATA}/pretrain/jaen/en/mass/valid.tgt"
    assert found["finetune_text"] == [
        f"{DATA}/subwords/aspec_je/{split}.{lang}"
        for split in ("train", "valid")
        for lang in ["ja", "en"]
    ]
    # ja-zh's dictionary counts the subwords of each of its pools the scale builds
    full = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "full"})["ch4_jass"]
    jazh = training.pretrain_inputs(PATHS, "jazh-jass", full)["finetune_text"]
    assert [Path(p).parent.name for p in jazh] == 4 * ["aspec_jc"] + 4 * ["wiki_jc"]
    assert data.subword_inputs(PATHS, "wiki_jc", "test", "zh") == {
        "text": f"{DATA}/pools/wiki_jc/test.zh",
        "model": f"{DATA}/bpe/jazh",
    }


def test_a_finetune_reads_its_direction_and_its_starts_dictionary():
    found = training.finetune_inputs(PATHS, "wiki_jc.zh-ja.3k.jazh-jass")
    assert found == {
        "pair_data": f"{DATA}/bin/pretrain/jazh-jass",
        "train_source": f"{DATA}/subwords/wiki_jc/train.zh",
        "train_target": f"{DATA}/subwords/wiki_jc/train.ja",
        "valid_source": f"{DATA}/subwords/wiki_jc/valid.zh",
        "valid_target": f"{DATA}/subwords/wiki_jc/valid.ja",
    }
    assert training.decode_files(PATHS, "news_ek.ko-en.94k.enko-enss") == {
        "source": f"{DATA}/subwords/news_ek/test.ko",
        "target": f"{DATA}/subwords/news_ek/test.en",
    }
    best = "r/ch4_jass/pretrain/jazh-jass/seed2/model/checkpoint_best.pt"
    assert training.init_flag(PATHS, "wiki_jc.zh-ja.3k.jazh-jass", 2) == f"--init {best}"
    assert training.init_inputs(PATHS, "wiki_jc.zh-ja.3k.jazh-jass", 2) == {
        "init": "r/ch4_jass/pretrain/jazh-jass/seed2/model/train.json"
    }


def test_vanilla_takes_its_pairs_mass_dictionary_and_no_init():
    assert training.dictionary_source("news_ek.en-ko.20k.vanilla") == "enko-mass"
    assert training.dictionary_source("aspec_je.en-ja.3k.jaen-hfss") == "jaen-hfss"
    assert training.init_flag(PATHS, "news_ek.en-ko.20k.vanilla", 1) == ""
    assert training.init_inputs(PATHS, "news_ek.en-ko.20k.vanilla", 1) == {}
    # the MASS data is built for #0's dictionary though MASS itself is not trained
    trimmed = plan(pretrained={"jaen": ["jass"]}, directions=["ja-en"])
    assert training.pretrain_data_ids(trimmed) == ["jaen-jass", "jaen-mass"]
    models = training.targets(PATHS, trimmed)
    assert "r/ch4_jass/pretrain/jaen-mass/seed1/model/train.json" not in models
    assert "r/ch4_jass/pretrain/jaen-jass/seed1/model/train.json" in models
    assert "r/ch4_jass/aspec_je.ja-en.3k.vanilla/seed1/model/train.json" in models
    assert f"{DATA}/subwords/aspec_je/test.en" in models


def test_every_planned_run_and_seed_is_a_target():
    models = [t for t in training.targets(PATHS, plan(seeds=[1, 2])) if t.endswith(".json")]
    planned = runs.planned_pretrainings(TINY) + runs.planned_finetunes(TINY)
    assert len(models) == 2 * len(planned) == 2 * (10 + 52)
    assert "r/ch4_jass/aspec_je.ja-en.10k.jaen-enss/seed2/model/train.json" in models


FULL = cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": "full"})["ch4_jass"]


def test_optimized_learns_its_sizes_merges_on_its_sample_alone():
    """#0*'s BPE per sample: Table B.1's merges of its size, on its first training lines."""
    with_optimized = plan(baselines=["vanilla", "optimized"])
    samples = training.optimized_samples(with_optimized)
    assert samples == [f"{c}.{n}" for c in ("aspec_je", "aspec_jc") for n in ("3k", "10k")] + [
        "news_ek.20k",
        "news_ek.94k",
    ]
    assert training.optimized_samples(plan(baselines=["optimized"], directions=["zh-ja"])) == [
        "aspec_jc.3k",
        "aspec_jc.10k",
    ]
    assert training.optimized_samples(TINY) == []  # tiny plans #0 alone
    for sample, merges, lines in (("aspec_je.3k", 5000, 3000), ("news_ek.94k", 15000, 0)):
        assert training.optimized_bpe_options(FULL, sample) == {
            "merges": merges,
            "max_lines": lines,
        }
    assert training.optimized_bpe_options(with_optimized, "aspec_jc.10k") == {
        "merges": TINY["optimized"]["10k"]["merges"],
        "max_lines": TINY["sizes"]["aspec_jc"]["10k"],
    }
    # a sample comes from its own corpus's pool (Wikipedia Ja-Zh's, not ASPEC-JC's)
    assert training.optimized_bpe_inputs(PATHS, "wiki_jc.3k") == [
        f"{DATA}/pools/wiki_jc/train.ja",
        f"{DATA}/pools/wiki_jc/train.zh",
    ]
    assert training.optimized_text_inputs(PATHS, "aspec_je.10k", "test", "en") == {
        "text": f"{DATA}/pools/aspec_je/test.en",
        "model": f"{DATA}/optimized/aspec_je.10k/bpe",
    }


def test_optimized_finetunes_its_own_text_with_its_own_dictionary_and_shape():
    from mlrep.nmt.cli import _pair_steps

    run = "aspec_je.en-ja.10k.optimized"
    own = f"{DATA}/optimized/aspec_je.10k/subwords"
    assert training.finetune_inputs(PATHS, run) == {
        "train_source": f"{own}/train.en",
        "train_target": f"{own}/train.ja",
        "valid_source": f"{own}/valid.en",
        "valid_target": f"{own}/valid.ja",
    }
    assert training.decode_files(PATHS, run)["source"] == f"{own}/test.en"
    assert training.dictionary_source(run) == "" and training.init_inputs(PATHS, run, 1) == {}
    # no pre-training data is built for it (#0's MASS data is, for #0's dictionary)
    with_optimized = plan(pretrained={}, baselines=["optimized"], directions=["en-ja"])
    assert training.pretrain_data_ids(with_optimized) == []
    steps = training.finetune_steps(PATHS, FULL, [run], "mosestokenizer")
    parsed = [_pair_steps().parse_args(step) for step in steps]
    assert parsed[0].dict is None  # pair-finetune: the sample's own dictionary
    table = FULL["optimized"]["10k"]
    trained = parsed[1]
    assert (trained.layers, trained.heads, trained.embed_dim, trained.ffn_dim) == (
        table["layers"],
        table["heads"],
        table["embed_dim"],
        table["ffn_dim"],
    )
    assert (trained.label_smoothing, trained.max_tokens) == (
        table["label_smoothing"],
        table["max_tokens"],
    )
    assert trained.dropout == 0.3 and trained.arch == FULL["finetune"]["arch"]
    assert trained.max_update == FULL["finetune"]["max_update"] and trained.init is None
    assert str(parsed[2].source) == f"{own}/test.en"  # decoded in its own BPE
    # the other fine-tunes keep the finetune block: no shape
    vanilla = training.finetune_steps(PATHS, FULL, ["aspec_je.en-ja.10k.vanilla"], "sacremoses")
    assert _pair_steps().parse_args(vanilla[1]).layers is None


def test_every_planned_fine_tune_is_scored_in_its_run_folder_on_the_pools_test_words():
    targets = training.evaluation_targets(PATHS, plan(seeds=[1, 2]))
    assert len(targets) == len(set(targets)) == 2 * len(runs.planned_finetunes(TINY))
    run = "aspec_jc.zh-ja.10k.jazh-jass"
    assert f"r/ch4_jass/{run}/seed2/metrics.json" in targets
    # the report's run folder holds the model, the hypotheses and the metrics
    folder = "r/ch4_jass/" + run + "/seed1"
    assert training.model(PATHS, training.FINETUNE, run, 1) == f"{folder}/model/train.json"
    assert training.hypotheses(PATHS, run, 1) == f"{folder}/test.hyp"
    # words, not subwords: the reference in the target language, the source as the floor
    assert training.score_inputs(PATHS, run) == {
        "reference": f"{DATA}/pools/aspec_jc/test.ja",
        "source": f"{DATA}/pools/aspec_jc/test.zh",
    }


def test_a_job_per_start_at_tiny_a_job_per_fine_tune_at_full():
    jobs = training.finetune_jobs(TINY)
    # #0 starts each pair model's runs afresh: one group per pair model
    assert set(jobs) == {
        *(s.replace("-", "_") for s in runs.planned_pretrainings(TINY)),
        "jaen_vanilla",
        "jazh_vanilla",
        "enko_vanilla",
    }
    assert jobs["jaen_jass"] == runs.finetunes_of(TINY, "jaen-jass")
    assert sorted(r for job in jobs.values() for r in job) == sorted(runs.planned_finetunes(TINY))
    single = training.finetune_jobs(plan(finetunes_per_job=1))
    assert single["aspec_je_ja_en_3k_jaen_mass"] == ["aspec_je.ja-en.3k.jaen-mass"]
    assert len(single) == len(runs.planned_finetunes(TINY))
    chunks = training.finetune_jobs(plan(finetunes_per_job=3))
    assert [len(chunks[f"jaen_mass_{n}"]) for n in (1, 2)] == [3, 1]
    assert chunks["jaen_mass_1"] + chunks["jaen_mass_2"] == jobs["jaen_mass"]


def test_a_jobs_steps_are_pair_verbs_that_read_and_write_only_its_declared_files():
    """The steps parse with the pair verbs' own parser, and every file a step names is an
    input or an output the job declares (or lies in a declared folder: a data-bin, a model)."""
    from mlrep.nmt.cli import _pair_steps

    run_ids = training.finetune_jobs(TINY)["jaen_mass"]
    inputs = training.finetune_job_inputs(PATHS, TINY, run_ids)
    outputs = training.finetune_job_outputs(PATHS, TINY, run_ids)
    declared = {*(f for files in inputs.values() for f in files)}
    declared |= {*outputs["data"], *outputs["runs"]}
    folders = {str(Path(f).parent) for f in declared} | set(declared)
    steps = training.finetune_steps(PATHS, TINY, run_ids, "mosestokenizer")
    parser = _pair_steps()
    verbs = [parser.parse_args(step).step for step in steps]
    assert verbs == ["pair-finetune", "pair-train", "pair-translate", "pair-score"] * 4
    for step in steps:
        parsed = vars(parser.parse_args(step))
        for value in parsed.values():
            for path in value if isinstance(value, list) else [value]:
                if isinstance(path, Path) and path.parts[0] == "r":
                    named = str(path)
                    assert named in folders or str(path.parent) in folders, (step[0], named)
    trained = [parser.parse_args(s) for s in steps if s[0] == "pair-train"]
    assert [t.init for t in trained] == [
        Path(training.best(PATHS, training.PRETRAIN, "jaen-mass", 1))
    ] * 4
    assert {t.max_update for t in trained} == {TINY["finetune"]["max_update"]}
