"""Chapter 4's case tables (Tables 4.10, 4.11) as files: which test set and systems each case
shows, which published row holds its reference, and the run the texts become
(workflow/rules/ch4_jass.smk asks here; `mlrep.evaluate.cases` does the work).

A *case* is one case table's test set: the corpus, direction and size of its ``Text`` column
(`runs.GRIDS`: Table 4.10 ASPEC Ja-En 10k, Table 4.11 Wikipedia Zh-Ja 10k), its systems the
planned fine-tunes of those rows, shown at the section's first seed (one output per system,
as the thesis prints). Its texts are the run ``cases/<corpus>.<src>-<tgt>.<size>``
(``results/ch4_jass/cases/<name>/seed<N>/metrics.json``): ``case_source``, ``case_reference``
and ``case_<start>`` per system. Which line it shows is params.yaml ``ch4_jass.cases.<table>
.line``: 0 finds the line whose reference is the table's published ``Reference-<Tgt>`` row
(full scale: the thesis's sentence), N > 0 is line N of the (capped) test set. A scale that
plans no system of a case table writes no case for it, so its cells read "not run".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlrep.chapters.ch4_jass import runs, training
from mlrep.chapters.ch4_jass.settings import SECTION
from mlrep.paths import Paths

GROUP = "cases"  # the runs cases/<name>
METRIC = "case"  # `runs.Column.metric` of a case table's text column


@dataclass(frozen=True)
class Case:
    """One case table's test set, the seed shown and its planned systems, in table order."""

    table: str
    corpus: str
    direction: str
    size: str
    seed: int
    systems: tuple[str, ...]

    @property
    def run(self) -> str:
        return f"{GROUP}/{self.corpus}.{self.direction}.{self.size}"

    @property
    def reference_row(self) -> str:
        """The published row holding the reference: ``Reference-<target language>``."""
        return f"Reference-{self.direction.split('-')[1].title()}"


def cases(section: Mapping[str, Any]) -> list[Case]:
    """The cases a resolved ``ch4_jass`` section shows: only planned systems, and no case for
    a table none of whose systems the scale plans."""
    found: dict[tuple[str, str, str, str], list[str]] = {}
    for run_id in runs.planned_finetunes(section):
        run = runs.finetune(run_id)
        for cell in runs.cells(run_id):
            if cell.metric == METRIC:
                key = (cell.table, run.corpus, run.direction, run.size)
                found.setdefault(key, []).append(run_id)
    seed = section["seeds"][0]
    return [Case(*setting, seed, tuple(systems)) for setting, systems in found.items()]


def name(run_id: str) -> str:
    """A system's text name suffix: its start (``case_jaen-mass``)."""
    return runs.finetune(run_id).start


def metrics(paths: Paths, case: Case) -> str:
    """A case's ``metrics.json``: the texts its table's cells read."""
    return str(paths.run(SECTION, case.run, case.seed) / training.METRICS)


def inputs(paths: Paths, case: Case) -> dict[str, Any]:
    """The test words of its direction and each system's test hypotheses (table order)."""
    return {
        **training.score_inputs(paths, case.systems[0]),
        "hypotheses": [training.hypotheses(paths, s, case.seed) for s in case.systems],
    }


def files(paths: Paths, case: Case) -> list[str]:
    """What a case reads (`inputs`), as one list."""
    found = inputs(paths, case)
    return [found["source"], found["reference"], *found["hypotheses"]]


def command(paths: Paths, section: Mapping[str, Any], case: Case, scale: str) -> str:
    """The `mlrep eval case` command of one case (its line from ``cases.<table>.line``)."""
    found = inputs(paths, case)
    systems = " ".join(
        f"{name(s)}={h}" for s, h in zip(case.systems, found["hypotheses"], strict=True)
    )
    return (
        f"mlrep eval case --source {found['source']} --reference {found['reference']} "
        f"--systems {systems} --line {section[GROUP][case.table]['line']} "
        f"--published {paths.reference / case.table}.csv --row {case.reference_row} "
        f"--section {SECTION} --run {case.run} --seed {case.seed} "
        f"--out {metrics(paths, case)} --scale {scale}"
    )


def targets(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every case's ``metrics.json`` at a scale: the text cells of Tables 4.10/4.11 (what the
    chapter target needs of this piece)."""
    return [metrics(paths, c) for c in cases(section)]
