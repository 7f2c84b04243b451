"""How each measured number was scored reaches the table: metrics.json ``signatures`` (one per
measured metric, refused for a metric not measured) are read with the run, kept by the cells
that read the metric, and named in the notes under Table 4.3, one sentence per distinct
signature with the columns (else rows, else cells) it scored; none without a measured cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlrep.report import fill, render, tables
from mlrep.report.metrics import MetricsFileError, collect, joint_signature, read, write
from mlrep.report.reference import load_all
from tests.conftest import REPO

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
TABLE = "thesis-table-4.3"
# what `mlrep nmt pair-score` writes: the segmenter, then sacreBLEU's own signature
SACREBLEU = "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.4.3"
TO_EN = f"wat:en:moses (sacremoses) (given words)|{SACREBLEU}"
TO_JA = f"wat:ja:ginza (ja-ginza 5.2.0) (given words)|{SACREBLEU}"
FLOOR_SIGNATURE = "the floor's own signature"


def write_run(
    results: Path, system: str, direction: str, signature: str, scale: str = "tiny"
) -> None:
    """A pair model's run of Table 4.3 (3k), its BLEU and floor each with a signature."""
    run = f"aspec_je.{direction}.3k.{system}"
    name = f"bleu_{direction}"
    write(
        results / "ch4_jass" / run / "seed1" / "metrics.json",
        "ch4_jass",
        run,
        1,
        scale,
        {name: 20.0, f"floor_{name}": 1.0},
        signatures={name: signature, f"floor_{name}": FLOOR_SIGNATURE},
    )


def table_notes(results: Path) -> tuple[fill.FilledTable, list[str]]:
    filled = fill.fill(DEFINITIONS[TABLE], PUBLISHED[TABLE], collect(results, "tiny"), (50, 1))
    return filled, [n for n in render.notes(filled) if n.startswith("Scoring signature")]


def test_each_signature_names_its_columns_once(tmp_path):
    for system in ("jaen-mass", "jaen-enss"):
        write_run(tmp_path, system, "ja-en", TO_EN)
        write_run(tmp_path, system, "en-ja", TO_JA)
    filled, found = table_notes(tmp_path)
    assert found == [
        f"Scoring signature: {TO_EN} — columns Ja-En 3k.",
        f"Scoring signature: {TO_JA} — columns En-Ja 3k.",
    ]
    assert filled.cell("jaen-mass", "Ja-En 3k").signatures == {TO_EN}
    # the floor table keeps the floors' signature, not the metric's
    assert filled.floor is not None
    assert list(filled.floor.signatures()) == [FLOOR_SIGNATURE]
    assert all(note in render.markdown(filled) for note in found)


def test_one_signature_for_the_whole_table_is_one_sentence(tmp_path):
    for direction in ("ja-en", "en-ja"):
        write_run(tmp_path, "jaen-mass", direction, TO_EN)
    _, found = table_notes(tmp_path)
    assert found == [f"Scoring signature: {TO_EN} — columns Ja-En 3k, En-Ja 3k."]


def test_signatures_sharing_a_column_name_their_rows(tmp_path):
    write_run(tmp_path, "jaen-mass", "ja-en", TO_EN)
    write_run(tmp_path, "jaen-enss", "ja-en", TO_JA)
    _, found = table_notes(tmp_path)
    assert found == [
        f"Scoring signature: {TO_EN} — rows Main baselines 1 MASS.",
        f"Scoring signature: {TO_JA} — rows Proposed methods for English 13 ENSS.",
    ]


def test_no_measured_cell_no_signature(tmp_path):
    write_run(tmp_path, "jaen-mass", "ja-en", TO_EN, scale="full")  # another scale's run
    filled, found = table_notes(tmp_path)
    assert found == [] and filled.signatures() == {}
    assert filled.cell("jaen-mass", "Ja-En 3k").status == fill.NOT_RUN


def test_a_signature_of_a_metric_not_measured_is_refused(tmp_path):
    path = tmp_path / "ch4_jass" / "run" / "seed1" / "metrics.json"
    with pytest.raises(MetricsFileError, match=r"signatures\.bleu_en-ja for a metric not in"):
        write(
            path, "ch4_jass", "run", 1, "tiny", {"bleu_ja-en": 1.0}, signatures={"bleu_en-ja": "x"}
        )
    with pytest.raises(MetricsFileError, match="map metric names to their signature"):
        write(
            path, "ch4_jass", "run", 1, "tiny", {"bleu_ja-en": 1.0}, signatures={"bleu_ja-en": ""}
        )
    assert not path.exists()
    write(path, "ch4_jass", "run", 1, "tiny", {"bleu_ja-en": 1.0}, signatures={"bleu_ja-en": "x"})
    assert read(path).signatures == {"bleu_ja-en": "x"}


def test_a_joint_signature_is_the_same_whatever_the_order_or_nesting():
    assert joint_signature(["b", "a", "b"]) == "a + b"
    assert joint_signature(["b", joint_signature(["c", "a"])]) == "a + b + c"
    assert joint_signature([joint_signature(["a", "b"]), "b"]) == "a + b"
