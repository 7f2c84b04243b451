"""Pre-training pair files from a words file (`mlrep text pretrain-pairs`).

Reads a words file (`mlrep text segment`/`tokenize` output) and, for the tasks that need
them, its bunsetsu spans (`segment --bunsetsu`) or its parse lines (`text parse
--pretokenized`), checks that they describe the same sentences, builds every sentence's pair
for every task (`mlrep.text.pretrain_tasks`) and renders them in subword pieces. Pairs are
static: made once, offline, from a seed, as the thesis fed them to its trainer. With several
tasks the pairs are shuffled together, so that tasks mix inside every batch.

Each task draws from its own random stream (seed and task name), so adding a task to a run
leaves the pairs of the others unchanged.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from mlrep.text import pretrain_tasks as tasks
from mlrep.text.lines import Counts, TextInputError, read_lines
from mlrep.text.segment import parse_spans
from mlrep.text.subwords import apply_bpe, encode_sentencepiece
from mlrep.text.tree import Node, from_json, leaves

RESERVED = frozenset({tasks.MASK, *tasks.TASK_TAGS.values()})


@dataclass(frozen=True)
class Sentence:
    words: tuple[str, ...]
    bunsetsu: tuple[tuple[int, int], ...] = ()
    tree: Node | None = None  # None where the parser gave no tree


def _check_words(words: Sequence[str], where: str) -> None:
    reserved = sorted(RESERVED.intersection(words))
    if reserved:
        raise TextInputError(
            f"{where}: the words hold {', '.join(reserved)}, which the pre-training pairs "
            "reserve for masks and tags; remove or rewrite them in the corpus"
        )


def _bunsetsu(text: str, n_words: int, where: str) -> tuple[tuple[int, int], ...]:
    """Spans that tile the words line exactly, in order; anything else names the line."""
    fix = "re-run `mlrep text segment --bunsetsu` on this same words file"
    try:
        spans = parse_spans(text)
    except ValueError:
        raise TextInputError(f"{where}: not bunsetsu spans (start:end …); {fix}") from None
    end = 0
    for start, stop in spans:
        if start != end or stop <= start:
            raise TextInputError(
                f"{where}: bunsetsu {start}:{stop} does not follow the previous one (ending "
                f"at {end}); spans must cover the words in order; {fix}"
            )
        end = stop
    if end != n_words:
        raise TextInputError(
            f"{where}: the bunsetsu spans cover {end} words, the words line has {n_words}; {fix}"
        )
    return tuple(spans)


def _tree(text: str, words: Sequence[str], where: str) -> Node | None:
    """The parse line's tree, after checking it is a tree of exactly these words."""
    fix = "parse this same words file with `mlrep text parse --pretokenized`"
    try:
        record = json.loads(text)
        parsed_words, data = record["words"], record["tree"]
        tree = None if data is None else from_json(data)
    except (json.JSONDecodeError, KeyError, TypeError, TextInputError):
        raise TextInputError(f"{where}: not a parse line; {fix}") from None
    if list(parsed_words) != list(words):
        raise TextInputError(
            f"{where}: the tree is of another sentence ({' '.join(parsed_words)[:60]!r}, not "
            f"{' '.join(words)[:60]!r}); {fix}"
        )
    if tree is not None and sorted(leaves(tree)) != list(range(len(words))):
        raise TextInputError(
            f"{where}: the tree's leaves are not the sentence's {len(words)} words; {fix}"
        )
    return tree


def _side_file(path: Path, expected: int) -> list[str]:
    lines = read_lines(path)
    if len(lines) != expected:
        raise TextInputError(
            f"{path}: {len(lines)} lines, the words file has {expected}; make it from the same "
            "words file"
        )
    return lines


def read_sentences(
    words_path: Path, bunsetsu_path: Path | None = None, trees_path: Path | None = None
) -> list[Sentence | None]:
    """One `Sentence` per words line (None for an empty line), with its bunsetsu and tree."""
    word_lines = read_lines(words_path)
    spans = _side_file(bunsetsu_path, len(word_lines)) if bunsetsu_path else None
    trees = _side_file(trees_path, len(word_lines)) if trees_path else None
    out: list[Sentence | None] = []
    for number, line in enumerate(word_lines, start=1):
        words = tuple(line.split())
        if not words:
            out.append(None)
            continue
        _check_words(words, f"{words_path}:{number}")
        bunsetsu = (
            _bunsetsu(spans[number - 1], len(words), f"{bunsetsu_path}:{number}") if spans else ()
        )
        tree = _tree(trees[number - 1], words, f"{trees_path}:{number}") if trees else None
        out.append(Sentence(words, bunsetsu, tree))
    return out


def check_inputs(task_names: Sequence[str], bunsetsu: bool, trees: bool) -> None:
    """Bunsetsu tasks need the spans file, tree tasks the parse file."""
    names = tasks.expand_tasks(task_names)
    for group, given, what in (
        (tasks.BUNSETSU_TASKS, bunsetsu, "bunsetsu spans (--bunsetsu)"),
        (tasks.TREE_TASKS, trees, "parse lines (--trees)"),
    ):
        wanting = [t for t in names if t in group]
        if wanting and not given:
            raise tasks.TaskError(f"{', '.join(wanting)} need {what} of the words file")


def sentence_pair(
    task: str,
    sentence: Sentence,
    rng: random.Random,
    vocabulary: Sequence[str],
    settings: tasks.TaskSettings,
) -> tasks.Pair | None:
    """The task's pair of one sentence; None for a tree task on a sentence without a tree."""
    n_words = len(sentence.words)
    if task in tasks.BUNSETSU_TASKS and not sentence.bunsetsu:
        raise tasks.TaskError(f"{task} needs the bunsetsu spans of {' '.join(sentence.words)!r}")
    if task in tasks.TREE_TASKS:
        if sentence.tree is None:
            return None
        if task == "hfss":
            return tasks.hfss(sentence.tree)
        return tasks.pmass(sentence.tree, task == "pmass.s", rng, vocabulary, settings)
    if task == "bmass":
        return tasks.bmass(sentence.bunsetsu, rng, vocabulary, settings)
    if task in ("brss.f", "brss.r"):
        return tasks.brss(sentence.words, sentence.bunsetsu, forward=task == "brss.f")
    if task == "mass":
        return tasks.mass(n_words, rng, vocabulary, settings)
    if task == "multimass":
        return tasks.multimass(n_words, rng, vocabulary, settings)
    if task == "deshuffle":
        return tasks.deshuffle(n_words, rng)
    return tasks.bart(n_words, rng, settings)


def subword_pieces(model: Path | None, words: Sequence[str]) -> Callable[[str], list[str]]:
    """Each word's subword pieces under the `train-subwords` model folder (each word alone:
    both segmenters split at spaces, so a word's pieces do not depend on its neighbours);
    without a model every word is one piece."""
    if model is None:
        return lambda word: [word]
    distinct = sorted(set(words))
    if (model / "spm.model").exists():
        encoded = encode_sentencepiece(model / "spm.model", distinct)
    elif (model / "bpe.codes").exists():
        encoded = apply_bpe(model / "bpe.codes", distinct)
    else:
        raise TextInputError(f"{model}: no subword model; run `mlrep text train-subwords`")
    table = {word: line.split() for word, line in zip(distinct, encoded, strict=True)}
    return table.__getitem__


def make_pairs(
    sentences: Sequence[Sentence | None],
    task_names: Sequence[str],
    lang: str,
    seed: int,
    settings: tasks.TaskSettings,
    pieces: Callable[[str], list[str]] | None = None,
) -> tuple[list[tuple[str, str]], Counts]:
    """Every sentence's rendered pair for every task (shuffled together when several), and
    what was made: pairs per task, sentences skipped, the reordering tasks' moved-word ratio."""
    names = tasks.expand_tasks(task_names)
    present = [s for s in sentences if s is not None]
    wants_trees = any(t in tasks.TREE_TASKS for t in names)
    vocabulary = sorted({w for s in present for w in s.words})
    split = pieces or (lambda word: [word])
    rngs = {task: random.Random(f"{seed}:{task}") for task in names}
    made: Counter[str] = Counter()
    moved: Counter[str] = Counter()
    reordered: Counter[str] = Counter()
    out: list[tuple[str, str]] = []
    for sentence in present:
        for task in names:
            pair = sentence_pair(task, sentence, rngs[task], vocabulary, settings)
            if pair is None:
                continue
            made[task] += 1
            if tasks.TASK_TAGS[task] == tasks.REORDERING_TAG:
                changed, total = tasks.moved_words(pair)
                moved[task] += changed
                reordered[task] += total
            out.append(tasks.render(pair, sentence.words, lang, split))
    if len(names) > 1:
        random.Random(f"{seed}:shuffle").shuffle(out)
    # the files' lines are the pairs; the sentences they came from are counted apart
    counts = Counts(lines=len(out), processed=len(out))
    counts.extra = {
        "input_lines": len(sentences),
        "empty_lines": len(sentences) - len(present),
        # sentences the parser gave no tree have no PMASS or HFSS pair
        "no_tree": sum(1 for s in present if s.tree is None) if wants_trees else 0,
        "tasks": names,
        "lang": lang,
        "seed": seed,
        **asdict(settings),
        "pairs": dict(made),
        "moved_word_ratio": {
            t: round(moved[t] / reordered[t], 4) for t in reordered if reordered[t]
        },
    }
    return out, counts
