"""What Chapter 4's training and evaluation rules read and write (workflow/rules/ch4_jass.smk
asks here): each pre-training's data-bin and model, each fine-tune's data-bin, model, test
hypotheses and metrics, and the runs a scale trains.

- ``data/bin/pretrain/<id>/``: `mlrep nmt pair-pretrain` of a pre-training: both sides'
  pairs (`data.sides`) and the pair's dictionary ``dict.txt``, which also counts the pool's
  fine-tuning subwords (train and valid of both languages), so no fine-tuning subword is
  ``<unk>``;
- ``data/bin/finetune/<id>/``: `mlrep nmt pair-finetune` of a fine-tune: the first
  `runs.sample_size` lines of its pool's training subwords in its direction, the pool's valid
  set, binarised with the dictionary of its start (`dictionary_source`);
- ``pretrain/<id>/seed<N>/model/`` and ``<id>/seed<N>/model/`` (`Paths.model`): `mlrep nmt
  pair-train`'s checkpoints and ``train.json``; a fine-tune at seed N starts from its
  pre-training's ``checkpoint_best.pt`` at seed N. A fine-tune is a run of the chapter's
  tables, so its folder is the report's ``<run>/seed<N>/``: beside ``model/`` its test
  hypotheses (``test.hyp``, `mlrep nmt pair-translate`) and ``metrics.json`` (`mlrep nmt
  pair-score`).

The no-pre-training baseline #0 (``vanilla``) is a Transformer-big trained from scratch on the
same fine-tuning data, so it takes the dictionary of its pair's MASS pre-training data
(`VANILLA_DICTIONARY`): the same BPE and the same sample as the pre-trained rows, and a
dictionary every pair has (MASS is pre-trained by every pair model) whether or not the scale
trains that MASS model. The optimised baseline #0* needs its own BPE and a model shape
(Table B.1) that `mlrep nmt pair-train` cannot set yet: `trained_finetunes` refuses a plan
that lists it (params.yaml leaves it out at every scale).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.chapters.ch4_jass import data, runs
from mlrep.chapters.ch4_jass.settings import SECTION
from mlrep.errors import MlrepError
from mlrep.paths import Paths

PRETRAIN, FINETUNE = "pretrain", "finetune"  # the stages: pair-train's --stage, folder names
SUMMARY = "train.json"  # `mlrep.nmt.train.SUMMARY` (torch-free here: the rules plan with it)
BEST = "checkpoint_best.pt"  # `mlrep.nmt.train.BEST`
HYPOTHESES = "test.hyp"
METRICS = "metrics.json"  # `mlrep.report.metrics`' contract
# the pre-trained model whose data's dictionary #0 is binarised with (see the module's doc)
VANILLA_DICTIONARY = "mass"
UNTRAINED_BASELINES = ("optimized",)  # #0*: pair-train has no model-shape options yet


class Ch4TrainingError(MlrepError):
    """A plan that asks for a run the training rules cannot train."""


def pretrain_data(paths: Paths, run_id: str) -> str:
    return str(data.root(paths) / "bin" / PRETRAIN / run_id)


def finetune_data(paths: Paths, run_id: str) -> str:
    return str(data.root(paths) / "bin" / FINETUNE / run_id)


def pretrain_run(run_id: str) -> str:
    """A pre-training's run folder name under ``results/ch4_jass/`` (its model, its metrics)."""
    return f"{PRETRAIN}/{run_id}"


def model(paths: Paths, stage: str, run_id: str, seed: int | str) -> str:
    """The ``train.json`` of a run's model folder (its checkpoints sit beside it)."""
    run = pretrain_run(run_id) if stage == PRETRAIN else run_id
    return str(paths.model(SECTION, run, seed) / SUMMARY)


def hypotheses(paths: Paths, run_id: str, seed: int | str) -> str:
    """A fine-tune's test hypotheses: words, BPE merged (`mlrep nmt pair-translate`)."""
    return str(paths.run(SECTION, run_id, seed) / HYPOTHESES)


def metrics(paths: Paths, run_id: str, seed: int | str) -> str:
    """A fine-tune's ``metrics.json``: the report reads its cells here."""
    return str(paths.run(SECTION, run_id, seed) / METRICS)


def score_inputs(paths: Paths, run_id: str) -> dict[str, str]:
    """`mlrep nmt pair-score`'s references and copy floor: the pool's test words (WAT-style
    BLEU scores words, not subwords)."""
    run = runs.finetune(run_id)
    pool = data.pool(paths, data.pool_of(run.corpus))
    return {"reference": f"{pool}/test.{run.tgt}", "source": f"{pool}/test.{run.src}"}


def best(paths: Paths, stage: str, run_id: str, seed: int | str) -> str:
    """The checkpoint a run selects (lowest valid loss): what fine-tuning starts from."""
    return str(Path(model(paths, stage, run_id, seed)).parent / BEST)


def pretrain_inputs(paths: Paths, run_id: str) -> dict[str, list[str]]:
    """`mlrep nmt pair-pretrain`'s files of a pre-training, by option: each side's train and
    valid pairs (first language first) and the pool's train and valid subwords."""
    run = runs.pretraining(run_id)
    pair = data.FINETUNE_PAIRS[run.pair]
    found: dict[str, list[str]] = {}
    for split in data.PRETRAIN_SPLITS:
        stems = [
            data.pretrain(paths, run.pair, lang, data.side(run_id, lang), split)
            for lang in run.languages
        ]
        found[f"{split}_source"] = [f"{stem}.src" for stem in stems]
        found[f"{split}_target"] = [f"{stem}.tgt" for stem in stems]
    found["finetune_text"] = [
        data.subwords(paths, pair, split, lang)
        for split in data.PRETRAIN_SPLITS
        for lang in run.languages
    ]
    return found


def dictionary_source(run_id: str) -> str:
    """The pre-training whose data's ``dict.txt`` a fine-tune is binarised with: its start,
    or for a baseline its pair's MASS pre-training (`VANILLA_DICTIONARY`)."""
    run = runs.finetune(run_id)
    if run.pretrained:
        return run.pretrained
    return runs.PreTraining(runs.CORPORA[run.corpus].pair, runs.model(VANILLA_DICTIONARY)).id


def finetune_inputs(paths: Paths, run_id: str) -> dict[str, str]:
    """`mlrep nmt pair-finetune`'s files of a fine-tune: the pre-training data folder whose
    ``dict.txt`` it is binarised with (``pair_data``), then by option the pool's training and valid
    subwords in its direction (the sample is a prefix of train)."""
    run = runs.finetune(run_id)
    pair = data.pool_of(run.corpus)
    found = {"pair_data": pretrain_data(paths, dictionary_source(run_id))}
    for split in data.PRETRAIN_SPLITS:
        found[f"{split}_source"] = data.subwords(paths, pair, split, run.src)
        found[f"{split}_target"] = data.subwords(paths, pair, split, run.tgt)
    return found


def init_inputs(paths: Paths, run_id: str, seed: int | str) -> dict[str, str]:
    """The pre-trained model a fine-tune waits for (its ``train.json``); none for a baseline."""
    pretrained = runs.finetune(run_id).pretrained
    return {"init": model(paths, PRETRAIN, pretrained, seed)} if pretrained else {}


def init_flag(paths: Paths, run_id: str, seed: int | str) -> str:
    """``--init`` of `mlrep nmt pair-train`: the pre-training's best checkpoint at the same
    seed; "" for a baseline, which trains from scratch."""
    pretrained = runs.finetune(run_id).pretrained
    return f"--init {best(paths, PRETRAIN, pretrained, seed)}" if pretrained else ""


def decode_files(paths: Paths, run_id: str) -> dict[str, str]:
    """A fine-tune's test set in its pair model's BPE: source and reference (for decoding)."""
    run = runs.finetune(run_id)
    pair = data.pool_of(run.corpus)
    return {
        side: data.subwords(paths, pair, "test", lang)
        for side, lang in (("source", run.src), ("target", run.tgt))
    }


def trained_finetunes(section: Mapping[str, Any]) -> list[str]:
    """The planned fine-tunes, each of which the rules can train."""
    planned = runs.planned_finetunes(section)
    for run_id in planned:
        if runs.finetune(run_id).start in UNTRAINED_BASELINES:
            raise Ch4TrainingError(
                f"params.yaml {SECTION}.baselines lists {runs.finetune(run_id).start} (#0*): "
                "its model shape is not an option of `mlrep nmt pair-train` yet; remove it"
            )
    return planned


def pretrain_data_ids(section: Mapping[str, Any]) -> list[str]:
    """The pre-trainings whose data a scale builds: the planned ones and the dictionary
    sources of the planned fine-tunes (a baseline's, `dictionary_source`)."""
    needed = runs.planned_pretrainings(section)
    needed += [dictionary_source(run_id) for run_id in trained_finetunes(section)]
    return list(dict.fromkeys(needed))


def targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every planned model's ``train.json``, at every seed of the section, and the subwords of
    every split of the pools they fine-tune on (the test sets are what they decode)."""
    pools = dict.fromkeys(data.pool_of(runs.finetune(r).corpus) for r in trained_finetunes(section))
    text = [
        data.subwords(paths, pair, split, lang)
        for pair in pools
        for split in data.SPLITS
        for lang in pair.split("-")
    ]
    return text + [
        model(paths, stage, run_id, seed)
        for seed in section["seeds"]
        for stage, ids in (
            (PRETRAIN, runs.planned_pretrainings(section)),
            (FINETUNE, trained_finetunes(section)),
        )
        for run_id in ids
    ]


def evaluation_targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every planned fine-tune's ``metrics.json`` at every seed of the section."""
    return [
        metrics(paths, run_id, seed)
        for seed in section["seeds"]
        for run_id in trained_finetunes(section)
    ]
