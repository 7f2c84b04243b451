"""A Chapter 6 run's training sets: per stage, the mixture of its objectives' instruction sets
over its fine-tuning languages.

`mlrep ch6 instructions` builds one JSONL file per language pair and objective (``--types``
one type), named ``<dir>/en-<xx>.<objective>.jsonl`` (`instruction_file`), so a set built once
serves every run that trains on that pair and objective: MTInstruct of en-af is the same file
for ``7b1-mt``, ``7b1-mt-align`` and ``3b-mt``. A stage's mixture is every file of its
objectives × languages, concatenated and shuffled (`mlrep.llm.instruct.mix`) with the seed
``1000 × run seed + stage number`` (`stage_seed`), so the two stages of a curriculum that
share an objective (MT+Align → MT) are shuffled apart, and a mixture is the same whenever it
is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mlrep.chapters.ch6_aligninstruct.runs import B24, PIVOT_LANGUAGE, Run, Stage
from mlrep.errors import MlrepError
from mlrep.llm.instruct import mix


class TrainingSetError(MlrepError):
    """A stage or an instruction file that a Chapter 6 run does not have."""


def instruction_file(folder: Path, language: str, objective: str) -> Path:
    """Where `mlrep ch6 instructions` writes one pair's set of one objective."""
    return folder / f"{PIVOT_LANGUAGE}-{language}.{objective}.jsonl"


def languages_of(run: Run, languages: Sequence[str]) -> tuple[str, ...]:
    """The fine-tuning languages: a BLOOMZ+24 run's are the scale's (`languages`, a trim of
    Table 6.1's 24), a BLOOMZ+3 run's its own language set."""
    return tuple(languages) if run.setting == B24 else run.languages


def stage(run: Run, number: int) -> Stage:
    """Stage `number` (1-based) of `run`."""
    if not 1 <= number <= len(run.stages):
        raise TrainingSetError(
            f"{run.path} has {len(run.stages)} training stage(s), not {number}"
            + ("" if run.trains else ": it trains nothing (a decoding of a base or another run)")
        )
    return run.stages[number - 1]


def stage_files(run: Run, number: int, languages: Sequence[str], folder: Path) -> list[Path]:
    """The instruction files of stage `number`, objectives in the stage's order, then the
    languages (what the workflow's training job depends on, built or not)."""
    return [
        instruction_file(folder, lang, objective)
        for objective in stage(run, number).objectives
        for lang in languages_of(run, languages)
    ]


def stage_inputs(run: Run, number: int, languages: Sequence[str], folder: Path) -> list[Path]:
    """`stage_files`, each of which must exist."""
    files = stage_files(run, number, languages, folder)
    missing = [path for path in files if not path.is_file()]
    if missing:
        raise TrainingSetError(
            f"{missing[0]} (and {len(missing) - 1} more) not found: build each pair's sets "
            "with `mlrep ch6 instructions --types <objective>`"
        )
    return files


def write_stage(
    run: Run, number: int, languages: Sequence[str], folder: Path, seed: int, out: Path
) -> int:
    """Write stage `number`'s training mixture to `out` (JSONL); returns its records."""
    return mix(stage_inputs(run, number, languages, folder), out, stage_seed(seed, number))


def stage_seed(seed: int, number: int) -> int:
    """The shuffle seed of stage `number` of a run trained with `seed`."""
    return seed * 1000 + number
