"""The published numbers under reports/reference: complete, parseable, cited."""

import re
import shutil
import subprocess
import sys

import pytest

from mlrep.report.reference import ReferenceError, load_all, load_sources, multiplier, number
from tests.conftest import REPO

REFERENCE = REPO / "reports" / "reference"
# The comparison with the spec's transcriptions needs the spec, which a clone does not have:
# tools/check_reference.py does it for a maintainer who holds it.


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


def test_the_maintainer_check_compares_with_the_spec_and_its_cited_captions(tmp_path):
    spec, seeds = tmp_path / "spec", tmp_path / "seeds"
    shutil.copytree(REFERENCE, spec / "tables", ignore=shutil.ignore_patterns("*.yaml"))
    for source in load_sources(REFERENCE).values():
        path = seeds / source.seed
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text().splitlines() if path.exists() else []
        lines += [""] * (source.line - len(lines))
        lines[source.line - 1] = f"**Table {source.table_id}"
        path.write_text("\n".join(lines) + "\n")

    def check():
        tool = [sys.executable, str(REPO / "tools" / "check_reference.py")]
        args = ["--spec", str(spec), "--seeds", str(seeds), "--reference", str(REFERENCE)]
        return subprocess.run([*tool, *args], capture_output=True, text=True, check=False)

    assert check().returncode == 0, check().stdout
    (spec / "tables" / "thesis-table-E.1.csv").write_text("System,Zero-shot\nPreNorm,9.9\n")
    cited = load_sources(REFERENCE)["thesis-table-2.4"]
    (seeds / cited.seed).write_text("no caption here\n")
    result = check()
    assert result.returncode == 1
    assert "thesis-table-E.1.csv: differs from" in result.stdout
    assert f"thesis-table-2.4: {seeds / cited.seed}:{cited.line} is not a table caption" in (
        result.stdout
    )


def test_a_printed_magnitude_is_the_unit_a_measured_count_is_shown_in():
    assert multiplier("471M") == ("M", 1e6) and multiplier("4.9k") == ("k", 1e3)
    assert multiplier("1.2B*") == ("B", 1e9)
    for plain in ("42.19%", "83.7", "-", "", ">>223M"):
        assert multiplier(plain) == ("", 1.0), plain
