"""What Chapter 4's training and evaluation rules read and write (workflow/rules/ch4_jass.smk
asks here): each pre-training's data-bin and model, each fine-tune's data-bin, model, test
hypotheses and metrics, and the runs a scale trains.

- ``data/bin/pretrain/<id>/``: `mlrep nmt pair-pretrain` of a pre-training: both sides'
  pairs (`data.sides`) and the pair's dictionary ``dict.txt``, which also counts the
  fine-tuning subwords of the pair's pools (train and valid of both languages), so no
  fine-tuning subword is ``<unk>``;
- ``data/bin/finetune/<id>/``: `mlrep nmt pair-finetune` of a fine-tune: the first
  `runs.sample_size` lines of its pool's training subwords in its direction, the pool's valid
  set, binarised with the dictionary of its start (`dictionary_source`; #0*: the sample's
  own ``dict.txt``, written there);
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
trains that MASS model. The optimised baseline #0* (``optimized``, `OPTIMIZED`) has its own
everything, per fine-tuning sample (`data.sample`, Table B.1's column of its size,
`settings.optimized`): a joint BPE learned on the sample's words with the size's merges
(`data.optimized_bpe`), the pool written in it (`data.optimized_subwords`), a dictionary of
the sample alone (`mlrep nmt pair-finetune` without ``--dict``) and a small model whose shape,
dropout, label smoothing and batch replace the ``finetune`` block's (`train_settings`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mlrep.chapters.ch4_jass import data, runs
from mlrep.chapters.ch4_jass.settings import SECTION, optimized
from mlrep.cliutil import flags_from
from mlrep.paths import Paths

PRETRAIN, FINETUNE = "pretrain", "finetune"  # the stages: pair-train's --stage, folder names
SUMMARY = "train.json"  # `mlrep.nmt.train.SUMMARY` (torch-free here: the rules plan with it)
BEST = "checkpoint_best.pt"  # `mlrep.nmt.train.BEST`
HYPOTHESES = "test.hyp"
METRICS = "metrics.json"  # `mlrep.report.metrics`' contract
DICT = "dict.txt"  # `mlrep.nmt.pair.DICT`
DATA_BIN = "bin"  # `mlrep.nmt.pair.BIN`
STEP_SEPARATOR = "::"  # `mlrep.nmt.cli.STEP_SEPARATOR`
# the pre-trained model whose data's dictionary #0 is binarised with (see the module's doc)
VANILLA_DICTIONARY = "mass"
OPTIMIZED = "optimized"  # #0*: its own BPE, dictionary and model shape per sample


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


def pretrain_inputs(paths: Paths, run_id: str, section: Mapping[str, Any]) -> dict[str, list[str]]:
    """`mlrep nmt pair-pretrain`'s files of a pre-training, by option: each side's train and
    valid pairs (first language first) and the train and valid subwords of every pool of its
    pair model that the resolved ``ch4_jass`` `section` builds (`data.model_pools`)."""
    run = runs.pretraining(run_id)
    found: dict[str, list[str]] = {}
    for split in data.PRETRAIN_SPLITS:
        stems = [
            data.pretrain(paths, run.pair, lang, data.side(run_id, lang), split)
            for lang in run.languages
        ]
        found[f"{split}_source"] = [f"{stem}.src" for stem in stems]
        found[f"{split}_target"] = [f"{stem}.tgt" for stem in stems]
    found["finetune_text"] = [
        data.subwords(paths, corpus, split, lang)
        for corpus in data.model_pools(section, run.pair)
        for split in data.PRETRAIN_SPLITS
        for lang in run.languages
    ]
    return found


def dictionary_source(run_id: str) -> str:
    """The pre-training whose data's ``dict.txt`` a fine-tune is binarised with: its start,
    for #0 its pair's MASS pre-training (`VANILLA_DICTIONARY`); "" for #0*, whose dictionary
    is its own sample's."""
    run = runs.finetune(run_id)
    if run.start == OPTIMIZED:
        return ""
    if run.pretrained:
        return run.pretrained
    return runs.PreTraining(runs.CORPORA[run.corpus].pair, runs.model(VANILLA_DICTIONARY)).id


def fine_text(paths: Paths, run_id: str, split: str, lang: str) -> str:
    """One language of a split of a fine-tune's pool in the fine-tune's BPE: its pair model's,
    or for #0* its own sample's."""
    run = runs.finetune(run_id)
    if run.start == OPTIMIZED:
        return data.optimized_subwords(paths, data.sample(run.corpus, run.size), split, lang)
    return data.subwords(paths, data.pool_of(run.corpus), split, lang)


def finetune_inputs(paths: Paths, run_id: str) -> dict[str, str]:
    """`mlrep nmt pair-finetune`'s files of a fine-tune: the pre-training data folder whose
    ``dict.txt`` it is binarised with (``pair_data``; none for #0*), then by option the pool's
    training and valid subwords in its direction (the sample is a prefix of train)."""
    run = runs.finetune(run_id)
    source = dictionary_source(run_id)
    found = {"pair_data": pretrain_data(paths, source)} if source else {}
    for split in data.PRETRAIN_SPLITS:
        found[f"{split}_source"] = fine_text(paths, run_id, split, run.src)
        found[f"{split}_target"] = fine_text(paths, run_id, split, run.tgt)
    return found


def optimized_samples(section: Mapping[str, Any]) -> list[str]:
    """The samples (`data.sample`) whose own BPE and text the planned #0* fine-tunes read."""
    planned = [runs.finetune(r) for r in runs.planned_finetunes(section)]
    return list(
        dict.fromkeys(data.sample(r.corpus, r.size) for r in planned if r.start == OPTIMIZED)
    )


def _sample_run(sample: str) -> runs.FineTune:
    """A #0* fine-tune of `sample` (both directions share its sample and its BPE)."""
    corpus, size = sample.split(".", 1)
    return runs.FineTune(corpus, runs.CORPORA[corpus].directions[0], size, OPTIMIZED)


def optimized_pool(sample: str) -> str:
    """The pool (its corpus, ``aspec_je``, …) a sample is cut from."""
    return data.pool_of(_sample_run(sample).corpus)


def optimized_bpe_inputs(paths: Paths, sample: str) -> list[str]:
    """The pool training words of both languages a sample's BPE learns from (their first
    `optimized_bpe_options` ``max_lines`` lines)."""
    pool = optimized_pool(sample)
    languages = data.corpus_pair(pool).split("-")
    return [f"{data.pool(paths, pool)}/train.{lang}" for lang in languages]


def optimized_bpe_options(section: Mapping[str, Any], sample: str) -> dict[str, int]:
    """`mlrep text train-subwords`' options of a sample's BPE: Table B.1's merges of its size
    and its training lines (`runs.sample_size`, 0: the whole pool)."""
    run = _sample_run(sample)
    return {
        "merges": optimized(section, run.size).merges,
        "max_lines": runs.sample_size(section, run.id),
    }


def optimized_text_inputs(paths: Paths, sample: str, split: str, lang: str) -> dict[str, str]:
    """The pool words and the sample's BPE that `data.optimized_subwords` encodes."""
    pool = data.pool(paths, optimized_pool(sample))
    return {"text": f"{pool}/{split}.{lang}", "model": data.optimized_bpe(paths, sample)}


def train_settings(section: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """`mlrep nmt pair-train`'s settings of a fine-tune: the ``finetune`` block, for #0* with
    its size's Table B.1 values (shape, dropout, label smoothing, batch) in place; its BPE
    merges are its data's (`optimized_bpe_options`)."""
    run = runs.finetune(run_id)
    block = dict(section[FINETUNE])
    if run.start == OPTIMIZED:
        block |= {k: v for k, v in asdict(optimized(section, run.size)).items() if k != "merges"}
    return block


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
    """A fine-tune's test set in its BPE (`fine_text`): source and reference (for decoding)."""
    run = runs.finetune(run_id)
    return {
        side: fine_text(paths, run_id, "test", lang)
        for side, lang in (("source", run.src), ("target", run.tgt))
    }


def pretrain_data_ids(section: Mapping[str, Any]) -> list[str]:
    """The pre-trainings whose data a scale builds: the planned ones and the dictionary
    sources of the planned fine-tunes (a baseline's, `dictionary_source`)."""
    needed = runs.planned_pretrainings(section)
    needed += [dictionary_source(run_id) for run_id in runs.planned_finetunes(section)]
    return [run_id for run_id in dict.fromkeys(needed) if run_id]


def targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every planned model's ``train.json``, at every seed of the section, and the subwords of
    every split of the pools they fine-tune on (the test sets are what they decode)."""
    pools = dict.fromkeys(
        data.pool_of(runs.finetune(r).corpus) for r in runs.planned_finetunes(section)
    )
    text = [
        data.subwords(paths, pair, split, lang)
        for pair in pools
        for split in data.SPLITS
        for lang in data.corpus_pair(pair).split("-")
    ]
    return text + [
        model(paths, stage, run_id, seed)
        for seed in section["seeds"]
        for stage, ids in (
            (PRETRAIN, runs.planned_pretrainings(section)),
            (FINETUNE, runs.planned_finetunes(section)),
        )
        for run_id in ids
    ]


def evaluation_targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every planned fine-tune's ``metrics.json`` at every seed of the section."""
    return [
        metrics(paths, run_id, seed)
        for seed in section["seeds"]
        for run_id in runs.planned_finetunes(section)
    ]


def finetune_jobs(section: Mapping[str, Any]) -> dict[str, list[str]]:
    """The fine-tunes each fine-tuning job runs, by job name, in plan order.

    A job binarises, trains, decodes and scores its fine-tunes at every seed in one process
    (`mlrep nmt pair-runs`). ``finetunes_per_job`` sets how many: 0 groups every planned
    fine-tune of one start (tiny, where each trains in seconds and fairseq's start-up would
    otherwise dominate; a baseline's per pair model), 1 gives each its own job (full, a GPU job
    per fine-tune), n cuts a start's fine-tunes into chunks of n. A job is named by its start,
    its fine-tune's id, or its start and chunk number, alike."""
    size = section["finetunes_per_job"]
    starts: dict[str, list[str]] = {}
    for run_id in runs.planned_finetunes(section):
        run = runs.finetune(run_id)
        # a baseline starts each pair model's runs afresh: one group per pair model
        start = run.start if run.pretrained else f"{runs.CORPORA[run.corpus].pair}-{run.start}"
        starts.setdefault(start, []).append(run_id)
    jobs: dict[str, list[str]] = {}
    for start, ids in starts.items():
        chunks = [ids[i : i + size] for i in range(0, len(ids), size)] if size else [ids]
        for number, chunk in enumerate(chunks, start=1):
            name = {0: start, 1: chunk[0]}.get(size, f"{start}.{number}")
            jobs[re.sub(r"\W", "_", name)] = chunk
    return jobs


def finetune_job_inputs(
    paths: Paths, section: Mapping[str, Any], run_ids: list[str]
) -> dict[str, list[str]]:
    """What a fine-tuning job reads, by kind: its fine-tunes' pair dictionaries' data folders
    and subwords, their starts' pre-trained models at each seed, and the test words scored."""
    found: dict[str, list[str]] = {"data": [], "init": [], "score": []}
    for run_id in run_ids:
        found["data"].extend(finetune_inputs(paths, run_id).values())
        found["data"].append(decode_files(paths, run_id)["source"])
        found["score"].extend(score_inputs(paths, run_id).values())
        for seed in section["seeds"]:
            found["init"].extend(init_inputs(paths, run_id, seed).values())
    return {kind: list(dict.fromkeys(files)) for kind, files in found.items()}


def finetune_job_outputs(
    paths: Paths, section: Mapping[str, Any], run_ids: list[str]
) -> dict[str, list[str]]:
    """What a fine-tuning job writes: each fine-tune's data-bin folder, and at each seed its
    model's ``train.json``, test hypotheses and ``metrics.json``."""
    return {
        "data": [finetune_data(paths, run_id) for run_id in run_ids],
        "runs": [
            path
            for run_id in run_ids
            for seed in section["seeds"]
            for path in (
                model(paths, FINETUNE, run_id, seed),
                hypotheses(paths, run_id, seed),
                metrics(paths, run_id, seed),
            )
        ],
    }


def _step(verb: str, *flags: str, **options: str | int) -> list[str]:
    """One `pair-runs` step: the verb, then each option as ``--<key with dashes> value``."""
    step = [verb]
    for key, value in options.items():
        step += [f"--{key.replace('_', '-')}", str(value)]
    return step + list(flags)


def finetune_steps(
    paths: Paths, section: Mapping[str, Any], run_ids: list[str], backend: str
) -> list[list[str]]:
    """The `mlrep nmt pair-runs` steps of a fine-tuning job, in order: per fine-tune its
    data-bin (`pair-finetune`), then at each seed its training from the pre-trained best
    checkpoint (`pair-train`; #0 from scratch), decoding (`pair-translate`) and WAT-style
    BLEU (`pair-score`). ``backend`` is the Moses tokenizer of the words (the signature's)."""
    steps: list[list[str]] = []
    for run_id in run_ids:
        run = runs.finetune(run_id)
        data_bin = finetune_data(paths, run_id)
        given = finetune_inputs(paths, run_id)
        dictionary = {"dict": f"{given.pop('pair_data')}/{DICT}"} if "pair_data" in given else {}
        words = score_inputs(paths, run_id)
        training = shlex.split(flags_from(train_settings(section, run_id)))
        steps.append(
            _step(
                "pair-finetune",
                **dictionary,
                direction=run.direction,
                train_lines=runs.sample_size(section, run_id),
                out=data_bin,
                **given,
            )
        )
        for seed in section["seeds"]:
            folder = str(Path(model(paths, FINETUNE, run_id, seed)).parent)
            init = {"init": best(paths, PRETRAIN, run.pretrained, seed)} if run.pretrained else {}
            common = {"section": SECTION, "seed": seed}
            steps.append(
                _step(
                    "pair-train",
                    *training,
                    stage=FINETUNE,
                    data=data_bin,
                    name=run_id,
                    out=folder,
                    on_stale="restart",  # the job reruns when a fine-tune's inputs changed
                    **common,
                    **init,
                )
            )
            steps.append(
                _step(
                    "pair-translate",
                    section=SECTION,
                    model=folder,
                    data_bin=f"{data_bin}/{DATA_BIN}",
                    direction=run.direction,
                    source=decode_files(paths, run_id)["source"],
                    out=hypotheses(paths, run_id, seed),
                )
            )
            steps.append(
                _step(
                    "pair-score",
                    hyp=hypotheses(paths, run_id, seed),
                    direction=run.direction,
                    backend=backend,
                    run=run_id,
                    out=metrics(paths, run_id, seed),
                    **common,
                    **words,
                )
            )
    return steps


def pair_runs_arguments(steps: list[list[str]]) -> str:
    """`mlrep nmt pair-runs`' positional arguments: the steps, quoted, between separators."""
    return f" {STEP_SEPARATOR} ".join(shlex.join(step) for step in steps)
