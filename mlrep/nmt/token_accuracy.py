"""Teacher-forced token accuracy of a pre-trained model on pre-training pairs (Chapter 4,
Tables 4.12 and 4.13).

The thesis reports OpenNMT's validation accuracy: the decoder is fed the gold target shifted
by one (teacher forcing, one forward pass per batch), and a position is correct when its
argmax is the gold token. Here the pairs are `mlrep text pretrain-pairs` files of held-out
sentences, one pair of files per task, read with the model's own dictionaries. Which
positions count:

* a target piece ``[M]`` (`MASK`) does not: it marks a position the task does not ask for
  (the unmasked words of a masking task), and predicting it is free;
* the end of sentence does, as in OpenNMT's accuracy, which counts every non-padding target
  position: ending the sentence is a prediction the model makes when it decodes. It adds one
  position per pair, the same for every model compared.

A task's accuracy is over its own pairs; the overall accuracy is over the counted positions
of every task together, so a task with more counted positions weighs more (the thesis's
overall figures are not the mean of its task columns). Pieces outside the dictionary read as
``<unk>`` and are counted like any other (``unknown`` says how many), as fairseq reads them
in training.

Beside the accuracies a pre-trained model's metrics file holds the reordering statistic of its
training pairs (`moved_words`), which the thesis states in its text: the share of words a
reordering task moves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlrep.errors import MlrepError
from mlrep.io import read_lines
from mlrep.text.pretrain_tasks import MASK, REORDERING_TAG, TASK_TAGS, TASKS

OVERALL = "overall"
REORDERING = tuple(task for task, tag in TASK_TAGS.items() if tag == REORDERING_TAG)
# the metric names a pre-trained model's metrics file holds, for the declaration of the
# chapter that reports them (template syntax: `mlrep.report.metrics.compile_template`): its
# accuracies on one language's pairs (`metrics`) and the moved-word share of its training
# pairs (`moved_words`)
PATTERNS: tuple[str, ...] = (
    f"token_accuracy_{{lang}}_{{{'|'.join((*TASKS, OVERALL))}}}",
    f"moved_words_{{lang}}_{{{'|'.join(REORDERING)}}}",
)


class TokenAccuracyError(MlrepError):
    """Pair files that cannot be scored as given."""


@dataclass(frozen=True)
class Tally:
    """Counted target positions of some pairs, and how many of them the model got right."""

    pairs: int = 0
    tokens: int = 0
    correct: int = 0
    unknown: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.pairs + other.pairs,
            self.tokens + other.tokens,
            self.correct + other.correct,
            self.unknown + other.unknown,
        )

    @property
    def accuracy(self) -> float:
        """Percent of the counted positions predicted right."""
        return 100 * self.correct / self.tokens


def read_pairs(source: Path, target: Path) -> list[tuple[str, str]]:
    """The (source, target) lines of one task's pair files, which must be line-parallel."""
    sources = read_lines(source, TokenAccuracyError)
    targets = read_lines(target, TokenAccuracyError)
    if len(sources) != len(targets):
        raise TokenAccuracyError(
            f"{source} has {len(sources)} lines and {target} {len(targets)}: a task's pair "
            "files are line-parallel; pass the --source and --target of one "
            "`mlrep text pretrain-pairs` run"
        )
    if not sources:
        raise TokenAccuracyError(f"{source}: no pairs; make the task's pairs of the dev text")
    return list(zip(sources, targets, strict=True))


def counted(target: str) -> list[bool]:
    """Per target position (the pieces, then the end of sentence): whether it is scored."""
    return [piece != MASK for piece in target.split()] + [True]


def _ids(dictionary: Any, line: str) -> Any:
    """A line's token ids with EOS, as fairseq-preprocess binarises it (unknown: ``<unk>``)."""
    return dictionary.encode_line(line, add_if_not_exist=False, append_eos=True).long()


def tally(
    model: Any, task: Any, device: Any, pairs: Sequence[tuple[str, str]], batch_size: int
) -> Tally:
    """Teacher-forced predictions of `model` (a fairseq translation model with its `task`'s
    dictionaries, on `device`) on `pairs`, `batch_size` pairs per forward pass."""
    import torch
    from fairseq.data import data_utils

    source_dict, target_dict = task.source_dictionary, task.target_dictionary
    pad, eos, unk = target_dict.pad(), target_dict.eos(), target_dict.unk()
    total = Tally()
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            batch = pairs[start : start + batch_size]
            sources = [_ids(source_dict, s) for s, _ in batch]
            targets = [_ids(target_dict, t) for _, t in batch]
            src_tokens = data_utils.collate_tokens(sources, source_dict.pad(), source_dict.eos())
            # the decoder's input: EOS, then the gold target without its own EOS
            previous = data_utils.collate_tokens(targets, pad, eos, move_eos_to_beginning=True)
            gold = data_utils.collate_tokens(targets, pad, eos)
            scored = torch.zeros_like(gold, dtype=torch.bool)
            for row, (_, target) in enumerate(batch):
                flags = counted(target)
                scored[row, : len(flags)] = torch.tensor(flags)
            logits, _ = model(
                src_tokens.to(device),
                torch.tensor([len(s) for s in sources]).to(device),
                previous.to(device),
            )
            right = (logits.argmax(-1).cpu() == gold) & scored
            total += Tally(
                len(batch),
                int(scored.sum()),
                int(right.sum()),
                int(((gold == unk) & scored).sum()),
            )
    return total


def accuracies(tallies: Mapping[str, Tally]) -> dict[str, Any]:
    """The metrics document of each task's tally and of all together: accuracy (percent),
    then the counts it comes from."""
    every = {**tallies, OVERALL: sum(tallies.values(), Tally())}
    return {
        "accuracy": {name: t.accuracy for name, t in every.items()},
        "tokens": {name: t.tokens for name, t in every.items()},
        "correct": {name: t.correct for name, t in every.items()},
        "pairs": {name: t.pairs for name, t in every.items()},
        "unknown": {name: t.unknown for name, t in every.items()},
        "counted": f"target pieces other than {MASK}, and the end of sentence",
    }


Sides = Mapping[str, Mapping[str, Sequence[tuple[str, str]]]]  # language -> task -> pairs


def read_sides(files: Mapping[str, Mapping[str, tuple[Path, Path]]]) -> dict:
    """The pairs of each language's tasks, from their (source, target) pair files; task names
    are checked and every file is read before a model is loaded, so a bad file stops the job
    before any model is scored."""
    unknown = sorted({name for tasks in files.values() for name in tasks} - set(TASKS))
    if unknown:
        raise TokenAccuracyError(
            f"unknown pre-training task {', '.join(unknown)}: name each pair of files by its "
            f"task ({', '.join(TASKS)})"
        )
    return {
        lang: {name: read_pairs(*paths) for name, paths in tasks.items()}
        for lang, tasks in files.items()
    }


def evaluate(checkpoint: Path, data_bin: Path, sides: Sides, batch_size: int) -> dict[str, Any]:
    """Per language, `accuracies` of the checkpoint (read with `data_bin`'s dictionaries) on
    each of its tasks' pairs (`read_sides`); the model is loaded once for all of them."""
    from mlrep.nmt.decode import load_model

    model, task, device = load_model(checkpoint, data_bin)
    return {
        lang: accuracies(
            {name: tally(model, task, device, pairs, batch_size) for name, pairs in tasks.items()}
        )
        for lang, tasks in sides.items()
    }


def metrics(result: Mapping[str, Any], lang: str) -> dict[str, float]:
    """The accuracies of `evaluate`'s `result` on language `lang`'s pairs under their metric
    names (`PATTERNS`): ``token_accuracy_<lang>_<task>`` and ``…_overall``."""
    return {f"token_accuracy_{lang}_{task}": v for task, v in result["accuracy"].items()}


def moved_words(folder: Path) -> dict[str, float]:
    """The share of words whose position a reordering task changes in the training pairs of a
    `mlrep nmt pair-pretrain` folder, in percent, as ``moved_words_<lang>_<task>``: the
    thesis's reordering statistic (BRSS 79.58%, HFSS 91.97% of the words move), measured on
    the pairs the model was trained on. Each train source file its ``pair.json`` lists carries
    it in the metadata `mlrep text pretrain-pairs` wrote beside it (``moved_word_ratio``, a
    share of that file's words)."""
    from mlrep.nmt.pair import SUMMARY
    from mlrep.text.lines import meta_path

    summary = folder / SUMMARY
    if not summary.exists():
        raise TokenAccuracyError(f"{summary}: not found; give a `mlrep nmt pair-pretrain` folder")
    found: dict[str, float] = {}
    for source, _ in json.loads(summary.read_text(encoding="utf-8"))["sources"]["train"]:
        meta = meta_path(Path(source))
        if not meta.exists():
            raise TokenAccuracyError(
                f"{meta}: not found, so {source}'s moved words are unknown; make the pairs "
                "with `mlrep text pretrain-pairs`, which writes it"
            )
        extra = json.loads(meta.read_text(encoding="utf-8"))["extra"]
        for task, ratio in extra["moved_word_ratio"].items():
            found[f"moved_words_{extra['lang']}_{task}"] = round(100 * ratio, 2)
    return found
