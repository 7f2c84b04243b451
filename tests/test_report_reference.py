"""The published numbers under reports/reference: complete, parseable, cited."""

import re
import shutil

import pytest

from mlrep.report.reference import ReferenceError, load_all, load_sources, number
from tests.conftest import REPO

REFERENCE = REPO / "reports" / "reference"
SHARED = REPO.parent / "shared"


def test_every_listed_table_loads_with_a_seed_citation():
    tables = load_all(REFERENCE)
    assert len(tables) == len(list(REFERENCE.glob("*.csv"))) >= 113
    for table in tables.values():
        assert table.rows, table.table_id
        assert re.fullmatch(r"seeds/00[0-4]_[0-9a-f]{16}\.txt:\d+", table.source.citation)


def test_known_caveats_are_recorded():
    sources = load_sources(REFERENCE)
    assert any("shifted cells" in c for c in sources["thesis-table-E.3"].caveats)
    assert any("80.74" in c for c in sources["thesis-table-C.5"].caveats)
    assert sources["mrasp2-table-1"].caveats  # headers rebuilt from garbled fragments


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("42.19%", 42.19),
        ("4.9M", 4.9e6),
        ("67k", 67e3),
        ("12,000,000", 12e6),
        ("18.9†", 18.9),
        ("-", None),
        ("ILLEGIBLE", None),
        ("−0.5", -0.5),
    ],
)
def test_number_reads_printed_cells(cell, value):
    assert number(cell) == (pytest.approx(value) if value is not None else None)


def test_a_ragged_row_is_reported_with_file_and_line(tmp_path):
    shutil.copy(REFERENCE / "sources.yaml", tmp_path / "sources.yaml")
    for csv in REFERENCE.glob("*.csv"):
        shutil.copy(csv, tmp_path / csv.name)
    (tmp_path / "thesis-table-E.1.csv").write_text("System,Zero-shot,Supervised\nPreNorm,9.8\n")
    with pytest.raises(ReferenceError, match=r"thesis-table-E.1.csv:2: 2 cells"):
        load_all(tmp_path)


@pytest.mark.skipif(not (SHARED / "spec").exists(), reason="needs ../shared/spec (the lead's copy)")
def test_reference_tables_match_the_spec_transcriptions_and_citations():
    for csv in (SHARED / "spec" / "tables").glob("*.csv"):
        assert (REFERENCE / csv.name).read_bytes() == csv.read_bytes(), csv.name
    for source in load_sources(REFERENCE).values():
        lines = (SHARED / "seeds" / source.seed).read_text().splitlines()
        assert re.match(r"\**(Table|TABLE) ", lines[source.line - 1]), source.table_id
