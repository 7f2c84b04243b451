"""Where Chapter 4's data files are: the fine-tuning pools, the monolingual words, the joint
BPE of each pair model and its pre-training pairs (workflow/rules/ch4_jass.smk asks here).

Every path sits under ``results/ch4_jass/data/``:

- ``pools/<a>-<b>/<split>.{<a>,<b>,ids}``: a fine-tuning pair's pool (``train``, the nested
  sizes are its prefixes) and held-out sets in words, with ``valid.ja.bunsetsu`` etc. where the
  pair has Japanese (`mlrep.data.pools`);
- ``monolingual/``: the leak-free pre-training text (`mlrep data monolingual`), which leaves
  out every pool's ``train.ids`` (`exclude_ids`);
- ``words/mono.<lang>``, ``bunsetsu/mono.ja``, ``trees/{mono,valid.<a>-<b>}.en``: its words
  and the analyses the bunsetsu and tree tasks read;
- ``bpe/<model>/``: one joint BPE per pair model (``jaen``, ``jazh``, ``enko``);
- ``pretrain/<model>/<lang>/<tasks>/<split>.{src,tgt}``: one side's pairs, ``train`` from the
  monolingual words and ``valid`` from the pool's valid set (tasks: a pre-training's
  `runs.side_tasks` joined by ``+``: ``mass``, ``mass+bmass``, ``jass``;
  `mlrep.text.pretrain_tasks`);
- ``subwords/<a>-<b>/<split>.<lang>``: a pool's words in its pair model's BPE, the fine-tuning
  text;
- ``optimized/<corpus>.<size>/``: the optimised Transformer #0*'s own data at one fine-tuning
  size (`sample`): ``bpe/``, a joint BPE learned on that size's training sample (the first
  `runs.sample_size` pool lines, both languages) with Table B.1's merges, and
  ``subwords/<split>.<lang>``, the pool's words in it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mlrep.chapters.ch4_jass import runs
from mlrep.errors import MlrepError
from mlrep.paths import Paths
from mlrep.text import pretrain_tasks

SECTION = "ch4_jass"
# pair model -> its fine-tuning pair (one BPE, one monolingual text and one model per pair)
FINETUNE_PAIRS = {model: "-".join(langs) for model, langs in runs.PAIRS.items()}
SPLITS = ("train", "valid", "test")
PRETRAIN_SPLITS = ("train", "valid")
MONO = "mono"  # the text name of the monolingual words


class Ch4DataError(MlrepError):
    """A pair model, language or task set the chapter's data does not have."""


def root(paths: Paths) -> Path:
    return paths.chapter_data(SECTION)


def pool(paths: Paths, pair: str) -> str:
    """The pool folder of fine-tuning pair `pair` (a-b; ``{a}-{b}`` gives the pattern)."""
    return str(root(paths) / "pools" / pair)


def pool_outputs(paths: Paths, *suffixes: str) -> list[str]:
    """The pattern of a pool's files: each of `suffixes` (a language, ids, ja.bunsetsu) of
    every split."""
    return [f"{pool(paths, '{a}-{b}')}/{split}.{suffix}" for split in SPLITS for suffix in suffixes]


def pool_sources(paths: Paths, dataset: str, pair: str, stage: str) -> list[str]:
    """The preprocessed files (stage ``tok`` or ``bunsetsu``) of dataset `dataset` that the pool
    of `pair` reads: each non-English language from its English-centric corpus pair, and
    English from the pair itself where it has English (ja-zh is joined on segment ids)."""
    langs = pair.split("-")
    names = [
        f"en-{lang}.{side}"
        for lang in langs
        if lang != "en"
        for side in (lang, "en")
        if side == lang or "en" in langs
    ]
    if stage == "bunsetsu":
        names = [name for name in names if name.endswith(".ja")]
    folder = paths.preprocessed(dataset, stage)
    return [str(folder / f"{split}.{name}") for split in SPLITS for name in names]


def exclude_ids(paths: Paths) -> list[str]:
    """The ids files the pre-training text leaves out: every pool's training lines."""
    return [f"{pool(paths, pair)}/train.ids" for pair in FINETUNE_PAIRS.values()]


def words(paths: Paths, lang: str) -> str:
    return str(root(paths) / "words" / f"{MONO}.{lang}")


def bunsetsu(paths: Paths, lang: str) -> str:
    return str(root(paths) / "bunsetsu" / f"{MONO}.{lang}")


def trees(paths: Paths, text: str) -> str:
    """English trees of `text`: ``mono`` or ``valid.<a>-<b>`` (a pool's valid set)."""
    return str(root(paths) / "trees" / f"{text}.en")


def bpe(paths: Paths, model: str) -> str:
    return str(root(paths) / "bpe" / model)


def pretrain(paths: Paths, model: str, lang: str, tasks: str, split: str) -> str:
    """The stem of one side's pairs (``.src`` / ``.tgt``)."""
    return str(root(paths) / "pretrain" / model / lang / tasks / split)


def languages(model: str) -> list[str]:
    if model not in FINETUNE_PAIRS:
        raise Ch4DataError(f"no pair model {model!r}; choose from {', '.join(FINETUNE_PAIRS)}")
    return FINETUNE_PAIRS[model].split("-")


def parsed_words(paths: Paths, text: str) -> str:
    """The English words file that trees file `text` parses."""
    if text == MONO:
        return words(paths, "en")
    return f"{pool(paths, text.split('.', 1)[1])}/valid.en"


def pretrain_inputs(paths: Paths, model: str, split: str, lang: str, tasks: str) -> dict:
    """A side's words (train: the monolingual words; valid: the pool's valid set), the
    pair's BPE and, where its tasks need them, the bunsetsu spans or trees of those words."""
    if lang not in languages(model):
        raise Ch4DataError(f"pair model {model} ({FINETUNE_PAIRS[model]}) has no language {lang}")
    names = pretrain_tasks.expand_tasks(tasks.split("+"))
    pair = FINETUNE_PAIRS[model]
    if split == "train":
        side = {"words": words(paths, lang), "bunsetsu": bunsetsu(paths, lang)}
        parsed = trees(paths, MONO)
    else:
        folder = pool(paths, pair)
        side = {"words": f"{folder}/valid.{lang}", "bunsetsu": f"{folder}/valid.{lang}.bunsetsu"}
        parsed = trees(paths, f"valid.{pair}")
    found = {"words": side["words"], "bpe": bpe(paths, model)}
    if pretrain_tasks.BUNSETSU_TASKS.intersection(names):
        found["bunsetsu"] = side["bunsetsu"]
    if pretrain_tasks.TREE_TASKS.intersection(names):
        found["trees"] = parsed
    return found


def side(run_id: str, lang: str) -> str:
    """The task set of one side of a pre-training, as its pair files are named: its
    `runs.side_tasks` joined by ``+`` (one file of pairs, the tasks shuffled together)."""
    return "+".join(runs.side_tasks(run_id, lang))


def sides(run_ids: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """(pair model, language) -> the task sets the pre-trainings `run_ids` read, each once."""
    found: dict[tuple[str, str], list[str]] = {}
    for run_id in run_ids:
        run = runs.pretraining(run_id)
        for lang in run.languages:
            task_sets = found.setdefault((run.pair, lang), [])
            if side(run_id, lang) not in task_sets:
                task_sets.append(side(run_id, lang))
    return found


def pretrain_targets(paths: Paths, run_ids: Iterable[str]) -> list[str]:
    """The train and valid source file of every side that the pre-trainings `run_ids` read."""
    return [
        f"{pretrain(paths, model, lang, tasks, split)}.src"
        for (model, lang), task_sets in sides(run_ids).items()
        for tasks in task_sets
        for split in PRETRAIN_SPLITS
    ]


def pool_of(corpus: str) -> str:
    """The pool a fine-tuning corpus samples: its pair model's (ASPEC Ja-Zh and Wikipedia
    Ja-Zh share ja-zh's)."""
    return FINETUNE_PAIRS[runs.CORPORA[corpus].pair]


def model_of(pair: str) -> str:
    """The pair model whose BPE a pool's text is written in."""
    found = [model for model, name in FINETUNE_PAIRS.items() if name == pair]
    if not found:
        raise Ch4DataError(f"no pool {pair!r}; choose from {', '.join(FINETUNE_PAIRS.values())}")
    return found[0]


def subwords(paths: Paths, pair: str, split: str, lang: str) -> str:
    """One language of a pool's split in its pair model's BPE."""
    return str(root(paths) / "subwords" / pair / f"{split}.{lang}")


def subword_inputs(paths: Paths, pair: str, split: str, lang: str) -> dict[str, str]:
    """The pool words and the BPE that `subwords` encodes."""
    return {"text": f"{pool(paths, pair)}/{split}.{lang}", "model": bpe(paths, model_of(pair))}


def sample(corpus: str, size: str) -> str:
    """The name of one fine-tuning sample (a corpus at a size label): #0*'s data folder."""
    return f"{corpus}.{size}"


def optimized_bpe(paths: Paths, sample_name: str) -> str:
    """#0*'s joint BPE of one `sample`, learned on its training lines alone."""
    return str(root(paths) / "optimized" / sample_name / "bpe")


def optimized_subwords(paths: Paths, sample_name: str, split: str, lang: str) -> str:
    """One language of a split of a `sample`'s pool in that sample's own BPE (#0*'s text)."""
    return str(root(paths) / "optimized" / sample_name / "subwords" / f"{split}.{lang}")
