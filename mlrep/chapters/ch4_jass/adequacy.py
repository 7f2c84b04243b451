"""Table 4.7's runs: the reference-free adequacy of the fine-tunes it shows (their test
hypotheses against the test source, `mlrep eval adequacy`) and its "Reference" row (the test
references against the same source), scored in one process per scale.

Each score is a run of group ``laser`` (`GROUP`), so it never shares a file with the
fine-tune's own BLEU: ``results/ch4_jass/laser/<fine-tune id>/seed<N>/metrics.json`` holds
``laser_<src>-<tgt>``, and ``laser/<corpus>.reference/seed0/`` the Reference row of a corpus
(one value per language pair, in its first direction, as the thesis prints it; no training
seed, so `UNTRAINED_SEED`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.chapters.ch4_jass import data, runs, training
from mlrep.chapters.ch4_jass.settings import SECTION
from mlrep.paths import Paths
from mlrep.report.metrics import METRICS_FILE, UNTRAINED_SEED

GROUP = "laser"  # runs <GROUP>/<name>, named after the thesis's measure (metric laser_<dir>)
TABLE = "thesis-table-4.7"
REFERENCE = "reference"  # <corpus>.reference: the Reference row's run of a corpus


def finetunes(section: Mapping[str, Any]) -> list[str]:
    """The planned fine-tunes that Table 4.7 shows (the 10k ones, 94k for En-Ko)."""
    return [
        run_id
        for run_id in runs.planned_finetunes(section)
        if any(cell.table == TABLE for cell in runs.cells(run_id))
    ]


def reference_run(corpus: str) -> str:
    return f"{corpus}.{REFERENCE}"


def references(section: Mapping[str, Any]) -> list[str]:
    """The corpora whose Reference cell a scale fills: those of its Table 4.7 fine-tunes."""
    return list(dict.fromkeys(runs.finetune(run_id).corpus for run_id in finetunes(section)))


def systems(paths: Paths, section: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """``mlrep eval adequacy``'s ``--system`` values (run, seed, direction, source, output):
    every Table 4.7 fine-tune at every seed, its hypotheses against the pool's test source,
    then each corpus's references against the same source."""
    found = []
    for seed in section["seeds"]:
        for run_id in finetunes(section):
            run = runs.finetune(run_id)
            source = training.score_inputs(paths, run_id)["source"]
            output = training.hypotheses(paths, run_id, seed)
            found.append((run_id, str(seed), run.direction, source, output))
    for corpus in references(section):
        direction = runs.CORPORA[corpus].directions[0]
        pool = data.pool(paths, data.pool_of(corpus))
        src, tgt = direction.split("-")
        files = (f"{pool}/test.{src}", f"{pool}/test.{tgt}")
        found.append((reference_run(corpus), str(UNTRAINED_SEED), direction, *files))
    return found


def system_flags(paths: Paths, section: Mapping[str, Any]) -> str:
    """The ``--system`` options of `systems`."""
    return " ".join("--system " + " ".join(values) for values in systems(paths, section))


def inputs(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every file the scores read: the hypotheses and the pools' test words."""
    return list(dict.fromkeys(f for values in systems(paths, section) for f in values[3:]))


def outputs(paths: Paths, section: Mapping[str, Any]) -> list[str]:
    """Every metrics.json the scores write: what target ``ch4_jass_adequacy`` builds."""
    return [
        str(paths.run(SECTION, f"{GROUP}/{run}", seed) / METRICS_FILE)
        for run, seed, *_ in systems(paths, section)
    ]


def fetched(section: Mapping[str, Any], resources: str) -> list[str]:
    """The encoder's checkpoint folder when the workflow fetches it (full: LASER under
    `resources`, Chapter 2's fetch step), so the job waits for it; the packaged mUSE has none."""
    encoder = section["adequacy"]["encoder"]
    return [encoder] if encoder.startswith(resources) else []
