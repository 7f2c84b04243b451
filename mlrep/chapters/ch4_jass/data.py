"""Where Chapter 4's data files are: the fine-tuning pools, the monolingual words, the joint
BPE of each pair model and its pre-training pairs (workflow/rules/ch4_jass.smk asks here).

Every path sits under ``results/ch4_jass/data/``:

- ``pools/<corpus>/<split>.{<a>,<b>,ids}``: a fine-tuning corpus's pool (``train``, the nested
  sizes are its prefixes) and held-out sets in words, with ``valid.ja.bunsetsu`` etc. where the
  pair has Japanese (`mlrep.data.pools`). One pool per corpus (`CORPORA`: aspec_je, aspec_jc,
  wiki_jc, news_ek), cut from the words of the preprocess dataset params ``ch4_jass.corpora``
  names for it (tiny: the embedded corpus's ``thesis`` words for every corpus; full: each
  corpus's own download, so Wikipedia Ja-Zh never samples ASPEC-JC's lines);
- ``monolingual/``: the leak-free pre-training text (`mlrep data monolingual`, from the corpus
  ``ch4_jass.monolingual.corpus``: the embedded corpus at tiny, CC-100 at full), which leaves
  out every pool's ``train.ids`` (`exclude_ids`);
- ``words/mono.<lang>``, ``bunsetsu/mono.ja``, ``trees/{mono,valid.<corpus>}.en``: its words
  and the analyses the bunsetsu and tree tasks read;
- ``bpe/<model>/``: one joint BPE per pair model (``jaen``, ``jazh``, ``enko``);
- ``pretrain/<model>/<lang>/<tasks>/<split>.{src,tgt}``: one side's pairs, ``train`` from the
  monolingual words and ``valid`` from the valid set of the pair model's `home` pool (tasks: a
  pre-training's `runs.side_tasks` joined by ``+``: ``mass``, ``mass+bmass``, ``jass``;
  `mlrep.text.pretrain_tasks`);
- ``subwords/<corpus>/<split>.<lang>``: a pool's words in its pair model's BPE, the fine-tuning
  text;
- ``optimized/<corpus>.<size>/``: the optimised Transformer #0*'s own data at one fine-tuning
  size (`sample`): ``bpe/``, a joint BPE learned on that size's training sample (the first
  `runs.sample_size` pool lines, both languages) with Table B.1's merges, and
  ``subwords/<split>.<lang>``, the pool's words in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mlrep.chapters.ch4_jass import runs
from mlrep.errors import MlrepError
from mlrep.paths import Paths
from mlrep.text import plan as preprocess_plan
from mlrep.text import pretrain_tasks

SECTION = "ch4_jass"
# pair model -> its fine-tuning pair (one BPE, one monolingual text and one model per pair)
FINETUNE_PAIRS = {model: "-".join(langs) for model, langs in runs.PAIRS.items()}
CORPORA = tuple(runs.CORPORA)  # the fine-tuning corpora, one pool each
SPLITS = ("train", "valid", "test")
PRETRAIN_SPLITS = ("train", "valid")
MONO = "mono"  # the text name of the monolingual words


class Ch4DataError(MlrepError):
    """A pair model, corpus, language or task set the chapter's data does not have."""


def root(paths: Paths) -> Path:
    return paths.chapter_data(SECTION)


def corpus_pair(corpus: str) -> str:
    """A fine-tuning corpus's language pair, as its pair model orders it (``ja-zh``)."""
    if corpus not in runs.CORPORA:
        raise Ch4DataError(f"no fine-tuning corpus {corpus!r}; choose from {', '.join(CORPORA)}")
    return FINETUNE_PAIRS[runs.CORPORA[corpus].pair]


def pool(paths: Paths, corpus: str) -> str:
    """The pool folder of fine-tuning corpus `corpus` (``{corpus}`` gives the pattern)."""
    return str(root(paths) / "pools" / corpus)


def pool_of(corpus: str) -> str:
    """The pool a fine-tuning corpus samples: its own (Wikipedia Ja-Zh is not ASPEC-JC)."""
    corpus_pair(corpus)
    return corpus


def home(model: str) -> str:
    """The corpus whose pool's valid set is a pair model's pre-training valid text (the first
    of its corpora: ASPEC for the Japanese pairs, as the thesis's token accuracy reads ASPEC dev
    sentences; News for en-ko)."""
    languages(model)
    return next(name for name, corpus in runs.CORPORA.items() if corpus.pair == model)


def pools(section: Mapping[str, Any]) -> list[str]:
    """The pools a resolved ``ch4_jass`` section builds: every pair model's `home` and every
    corpus it fine-tunes on."""
    return list(dict.fromkeys([*(home(m) for m in FINETUNE_PAIRS), *section["sizes"]]))


def model_pools(section: Mapping[str, Any], model: str) -> list[str]:
    """The `pools` of a section whose text a pair model's BPE writes."""
    return [corpus for corpus in pools(section) if model_of(corpus) == model]


def pool_outputs(paths: Paths, corpus: str, *suffixes: str) -> list[str]:
    """A pool's files: each of `suffixes` (a language, ids, ja.bunsetsu) of every split."""
    return [f"{pool(paths, corpus)}/{split}.{suffix}" for split in SPLITS for suffix in suffixes]


def pool_dataset(section: Mapping[str, Any], corpus: str) -> str:
    """The preprocess dataset a corpus's pool is cut from (params ``ch4_jass.corpora``)."""
    found = section["corpora"].get(corpus)
    if not found:
        raise Ch4DataError(
            f"params.yaml {SECTION}.corpora names no preprocess dataset for {corpus}; add one"
        )
    return found


def pool_pairs(pre: Mapping[str, Any], dataset: str, corpus: str) -> list[str]:
    """The pairs of preprocess dataset `dataset` a corpus's pool reads: the corpus's pair
    itself where the dataset has it (either order), else the English-centric pair of each
    other language, joined on segment ids (the embedded corpus's ja-zh)."""
    listed = preprocess_plan.dataset(pre, dataset)["pairs"]
    a, b = corpus_pair(corpus).split("-")
    own = [pair for pair in (f"{a}-{b}", f"{b}-{a}") if pair in listed]
    wanted = own[:1] or [f"en-{lang}" for lang in (a, b) if lang != "en"]
    missing = [pair for pair in wanted if pair not in listed]
    if missing:
        raise Ch4DataError(
            f"preprocess.datasets.{dataset} has neither {a}-{b} nor {', '.join(missing)}, "
            f"which the pool of {corpus} reads; add them to its pairs or name another dataset "
            f"in {SECTION}.corpora"
        )
    return wanted


def pool_sources(
    pre: Mapping[str, Any], paths: Paths, dataset: str, corpus: str, stage: str
) -> list[str]:
    """The preprocessed files (stage ``tok`` or ``bunsetsu``: Japanese only) of `dataset`
    that a corpus's pool reads: both sides of each of its `pool_pairs`."""
    langs = corpus_pair(corpus).split("-")
    names = [
        f"{pair}.{lang}"
        for pair in pool_pairs(pre, dataset, corpus)
        for lang in pair.split("-")
        if lang in langs or "en" in langs
    ]
    if stage == "bunsetsu":
        names = [name for name in names if name.endswith(".ja")]
    folder = paths.preprocessed(dataset, stage)
    return [str(folder / f"{split}.{name}") for split in SPLITS for name in names]


def pool_ids(pre: Mapping[str, Any], paths: Paths, dataset: str, corpus: str) -> str | None:
    """The corpus folder whose ``.segids`` files name the pool's lines: the dataset's corpus
    where it reads the pool's pairs from there (the embedded corpus); None where registry sets
    (``corpora``) replace it, whose lines the pool numbers."""
    settings = preprocess_plan.dataset(pre, dataset)
    if any(pair in settings["corpora"] for pair in pool_pairs(pre, dataset, corpus)):
        return None
    return str(paths.dataset(settings["corpus"]))


def _spans(corpus: str) -> bool:
    """Whether a corpus's pool carries Japanese bunsetsu spans (it has Japanese)."""
    return "ja" in corpus_pair(corpus).split("-")


def pool_files(corpus: str) -> list[str]:
    """The suffixes of a pool's files per split: its languages, ``ids`` and, with Japanese,
    ``ja.bunsetsu``."""
    return [*corpus_pair(corpus).split("-"), "ids", *(["ja.bunsetsu"] if _spans(corpus) else [])]


def pool_inputs(
    pre: Mapping[str, Any], paths: Paths, section: Mapping[str, Any], corpus: str
) -> dict[str, Any]:
    """`mlrep data finetune-pool`'s files of a corpus: its words, the Japanese bunsetsu spans
    where it has Japanese, and the corpus folder of their segment ids where there is one."""
    dataset = pool_dataset(section, corpus)
    found: dict[str, Any] = {"words": pool_sources(pre, paths, dataset, corpus, "tok")}
    if _spans(corpus):
        found["bunsetsu"] = pool_sources(pre, paths, dataset, corpus, "bunsetsu")
    if ids := pool_ids(pre, paths, dataset, corpus):
        found["corpus"] = ids
    return found


def corpus_folders(pre: Mapping[str, Any], paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """The datasets (results/data/<key>) the chapter reads: those of every pool's preprocessed
    pairs and the monolingual corpus (the `data` target fetches them)."""
    folders = []
    for corpus in pools(section):
        dataset = pool_dataset(section, corpus)
        for pair in pool_pairs(pre, dataset, corpus):
            for split in preprocess_plan.splits_of(pre, dataset, pair):
                lang = pair.split("-")[0]
                folders.append(
                    str(preprocess_plan.source(pre, paths, dataset, split, pair, lang)[0])
                )
    folders.append(str(paths.dataset(section["monolingual"]["corpus"])))
    return list(dict.fromkeys(folders))


def pool_flags(
    pre: Mapping[str, Any], paths: Paths, section: Mapping[str, Any], corpus: str
) -> str:
    """`mlrep data finetune-pool`'s options naming a corpus's pair and files (`pool_inputs`):
    ``--ids`` only where the words have segment ids (the embedded corpus); a registry
    download's lines are numbered."""
    dataset = pool_dataset(section, corpus)
    flags = f"--pair {corpus_pair(corpus)} --words {paths.preprocessed(dataset, 'tok')}"
    if ids := pool_ids(pre, paths, dataset, corpus):
        flags += f" --ids {ids}"
    if _spans(corpus):
        flags += f" --aligned ja.bunsetsu={paths.preprocessed(dataset, 'bunsetsu')}"
    return flags


def exclude_ids(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """The ids files the pre-training text leaves out: every pool's training lines."""
    return [f"{pool(paths, corpus)}/train.ids" for corpus in pools(section)]


def words(paths: Paths, lang: str) -> str:
    return str(root(paths) / "words" / f"{MONO}.{lang}")


def bunsetsu(paths: Paths, lang: str) -> str:
    return str(root(paths) / "bunsetsu" / f"{MONO}.{lang}")


def trees(paths: Paths, text: str) -> str:
    """English trees of `text`: ``mono`` or ``valid.<corpus>`` (a pool's valid set)."""
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
    """A side's words (train: the monolingual words; valid: the valid set of the pair
    model's `home` pool), the pair's BPE and, where its tasks need them, the bunsetsu spans
    or trees of those words."""
    if lang not in languages(model):
        raise Ch4DataError(f"pair model {model} ({FINETUNE_PAIRS[model]}) has no language {lang}")
    names = pretrain_tasks.expand_tasks(tasks.split("+"))
    corpus = home(model)
    if split == "train":
        side = {"words": words(paths, lang), "bunsetsu": bunsetsu(paths, lang)}
        parsed = trees(paths, MONO)
    else:
        folder = pool(paths, corpus)
        side = {"words": f"{folder}/valid.{lang}", "bunsetsu": f"{folder}/valid.{lang}.bunsetsu"}
        parsed = trees(paths, f"valid.{corpus}")
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


def model_of(corpus: str) -> str:
    """The pair model whose BPE a pool's text is written in."""
    corpus_pair(corpus)
    return runs.CORPORA[corpus].pair


def subwords(paths: Paths, corpus: str, split: str, lang: str) -> str:
    """One language of a pool's split in its pair model's BPE."""
    return str(root(paths) / "subwords" / corpus / f"{split}.{lang}")


def subword_inputs(paths: Paths, corpus: str, split: str, lang: str) -> dict[str, str]:
    """The pool words and the BPE that `subwords` encodes."""
    return {"text": f"{pool(paths, corpus)}/{split}.{lang}", "model": bpe(paths, model_of(corpus))}


def sample(corpus: str, size: str) -> str:
    """The name of one fine-tuning sample (a corpus at a size label): #0*'s data folder."""
    return f"{corpus}.{size}"


def optimized_bpe(paths: Paths, sample_name: str) -> str:
    """#0*'s joint BPE of one `sample`, learned on its training lines alone."""
    return str(root(paths) / "optimized" / sample_name / "bpe")


def optimized_subwords(paths: Paths, sample_name: str, split: str, lang: str) -> str:
    """One language of a split of a `sample`'s pool in that sample's own BPE (#0*'s text)."""
    return str(root(paths) / "optimized" / sample_name / "subwords" / f"{split}.{lang}")
