"""Chapter 4's human evaluation (Tables 4.8, 4.9) as files: which fine-tunes each blind sheet
judges, where its sheet, its key and the judges' returned sheets lie, and the runs the scores
become (workflow/rules/ch4_jass.smk asks here; `mlrep.evaluate.human` does the work).

An *evaluation* is one direction of one table column group: the planned fine-tunes of a corpus,
direction and size that a table binds to adequacy/fluency cells (Table 4.8: Wikipedia Ja-Zh 10k,
Table 4.9: ASPEC Ja-En 10k, both directions), judged at the section's first seed (the judges
score one output per system, as the thesis did). Its *name* ``<corpus>.<src>-<tgt>.<size>.seed<N>``
names every file of it:

- ``results/ch4_jass/human/sheets/<name>.csv``: the blind sheet for the judges;
- ``results/ch4_jass/human/keys/<name>.json``: its key (label -> system), kept apart;
- ``<returned>/<name>/*.csv``: the judges' filled sheets, one per judge, in the folder that
  params.yaml ``ch4_jass.human.returned`` names (outside ``results/``: scores are inputs that
  no rule can make again);
- ``results/ch4_jass/human/<fine-tune>/seed<N>/metrics.json``: each judged system's mean
  adequacy and fluency, the runs ``human/<fine-tune>`` the tables read. While no sheet of an
  evaluation is returned, the aggregate reads the blank exported sheet itself, and every metric
  of its systems is pending ("awaiting human scores").
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlrep.chapters.ch4_jass import runs, training
from mlrep.chapters.ch4_jass.settings import SECTION
from mlrep.errors import MlrepError
from mlrep.evaluate.human import CRITERIA
from mlrep.paths import Paths

GROUP = "human"  # the judged systems' runs human/<fine-tune>, beside its sheets/ and keys/
SHEET, KEY, RETURNED = ".csv", ".json", "*.csv"


class Ch4HumanError(MlrepError):
    """An evaluation name that the scale does not judge."""


@dataclass(frozen=True)
class Evaluation:
    """One blind sheet: a corpus, direction and size, the judged seed and its systems (the
    planned fine-tunes whose cells are human scores), in table order."""

    corpus: str
    direction: str
    size: str
    seed: int
    systems: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.corpus}.{self.direction}.{self.size}.seed{self.seed}"


def evaluations(section: Mapping[str, Any]) -> list[Evaluation]:
    """The evaluations a resolved ``ch4_jass`` section judges: only planned fine-tunes, and
    none where a scale plans no system of a human table's column."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for run_id in runs.planned_finetunes(section):
        if any(cell.metric in CRITERIA for cell in runs.cells(run_id)):
            run = runs.finetune(run_id)
            found.setdefault((run.corpus, run.direction, run.size), []).append(run_id)
    seed = section["seeds"][0]
    return [Evaluation(*setting, seed, tuple(systems)) for setting, systems in found.items()]


def evaluation(section: Mapping[str, Any], name: str) -> Evaluation:
    """The evaluation of a name (a rule's wildcard)."""
    for found in evaluations(section):
        if found.name == name:
            return found
    raise Ch4HumanError(
        f"no human evaluation {name!r} at this scale; the judged ones: "
        f"{', '.join(e.name for e in evaluations(section)) or 'none'}"
    )


def sheet(paths: Paths, name: str) -> str:
    """The blind sheet the judges fill."""
    return str(paths.run_group(SECTION, GROUP) / "sheets" / f"{name}{SHEET}")


def key(paths: Paths, name: str) -> str:
    """The sheet's key, in a folder of its own so the sheets' folder can go to the judges."""
    return str(paths.run_group(SECTION, GROUP) / "keys" / f"{name}{KEY}")


def export_inputs(paths: Paths, found: Evaluation) -> dict[str, Any]:
    """The test source words (what the judges read) and each system's test hypotheses, in
    the order of `Evaluation.systems`."""
    return {
        "source": training.score_inputs(paths, found.systems[0])["source"],
        "hypotheses": [training.hypotheses(paths, s, found.seed) for s in found.systems],
    }


def returned_sheets(returned: Path, name: str) -> list[str]:
    """The judges' sheets of an evaluation: ``<returned>/<name>/*.csv``, sorted (none while the
    folder is missing or empty)."""
    return sorted(str(path) for path in (returned / name).glob(RETURNED) if path.is_file())


def sheets_read(paths: Paths, returned: Path, name: str) -> list[str]:
    """What the aggregate reads: the returned sheets, or while there are none the blank
    exported sheet, which makes every metric of the evaluation pending."""
    return returned_sheets(returned, name) or [sheet(paths, name)]


def metrics(paths: Paths, run_id: str, seed: int | str) -> str:
    """A judged system's ``metrics.json``: run ``human/<fine-tune>``."""
    return str(paths.run(SECTION, f"{GROUP}/{run_id}", seed) / training.METRICS)


def targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every judged system's ``metrics.json`` at a scale: the human cells of Tables 4.8/4.9
    (what the chapter target needs of this piece; the sheets and keys come with them)."""
    return [metrics(paths, s, e.seed) for e in evaluations(section) for s in e.systems]


def aggregate_command(paths: Paths, returned: Path, found: Evaluation, scale: str) -> str:
    """The `mlrep eval human-aggregate` command of one evaluation: its returned sheets (or its
    blank exported one, `sheets_read`; each quoted, as a judge names a file) against its key,
    into the runs ``human/<fine-tune>``."""
    sheets = " ".join(map(shlex.quote, sheets_read(paths, returned, found.name)))
    return (
        f"mlrep eval human-aggregate --sheets {sheets} --key {key(paths, found.name)} "
        f"--section {SECTION} --run-group {GROUP} --seed {found.seed} "
        f"--out {paths.run_group(SECTION, GROUP)} --scale {scale}"
    )
