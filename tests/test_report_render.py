"""Markdown, LaTeX, CSV and HTML renderings from empty, partial and full fixture results."""

import csv
import io

from mlrep.report import fill, render, tables
from mlrep.report.metrics import Results, collect
from mlrep.report.reference import load_all
from tests.conftest import REPO
from tests.report_helpers import ch8_results

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)


def table_82(results):
    return fill.fill(DEFINITIONS["thesis-table-8.2"], PUBLISHED["thesis-table-8.2"], results)


def test_empty_results_say_not_run_in_every_format():
    t = table_82(Results("tiny"))
    md = render.markdown(t)
    assert "measured at scale tiny / published" in md
    assert "| 2 | PostNorm | S-ENC-T-DEC | w/ | not run / **16.8** |" in md
    assert "No result of this table has been run at scale tiny yet." in md
    rows = list(csv.DictReader(io.StringIO(render.csv_text(t))))
    # nine systems and the copy-the-source floor row, nine columns
    assert len(rows) == 10 * 9 and {r["status"] for r in rows} == {"not run"}
    assert all(r["measured"] == "" and r["scale"] == "tiny" for r in rows)
    assert render.html_table(t).count('class="meas notrun"') == 90
    assert "not run / \\textbf{16.8}" in render.latex(t)


def test_partial_results_show_measured_values_beside_published(tmp_path):
    ch8_results(tmp_path)
    t = table_82(collect(tmp_path, "tiny"))
    md = render.markdown(t)
    assert (
        "| 2 | PostNorm | S-ENC-T-DEC | w/ | **17.0†** / **16.8** | **18.33** / **8.59%** |" in md
    )
    assert "| 1 | PreNorm | S-ENC-T-DEC | w/ | 10.0 / 10.1 | 50.33 / 42.19% |" in md
    rows = {(r["row"], r["column"]): r for r in csv.DictReader(io.StringIO(render.csv_text(t)))}
    post = rows[("postnorm-s-enc-t-dec-w", "Zero-shot OPUS BLEU")]
    assert (post["status"], post["seeds"], post["published_value"]) == (
        "measured",
        "1 10 20",
        "16.8",
    )
    assert rows[("pivot", "Zero-shot OPUS BLEU")]["status"] == "not run"


def test_latex_is_booktabs_and_escaped():
    t = fill.fill(DEFINITIONS["thesis-table-E.3"], PUBLISHED["thesis-table-E.3"], Results("full"))
    tex = render.latex(t)
    assert tex.startswith("\\begin{table}") and "\\toprule" in tex and "\\bottomrule" in tex
    assert "\\resizebox{\\textwidth}" in tex  # 18 columns
    assert "\\label{tab:thesis-table-E.3}" in tex
    assert "9.9\\textsuperscript{!}" in tex and "measured at scale full" in tex
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0]
    for line in body.strip().splitlines():
        assert line.count(" & ") == 17 and line.endswith("\\\\")


def test_descriptive_tables_show_published_values_only():
    t = fill.fill(DEFINITIONS["thesis-table-6.1"], PUBLISHED["thesis-table-6.1"], Results("tiny"))
    md = render.markdown(t)
    assert "not run" not in md.split("- ")[0]
    assert "published values only" in md


def test_a_measured_count_is_shown_in_the_magnitude_of_its_printed_cell():
    """Parameter counts are written whole (69123456) and printed in millions (69M)."""
    assert render.measured_text(fill.Cell("471M", measured=468_912_345.0), 0.05) == "468.9M"
    assert render.measured_text(fill.Cell("12.00M", measured=12_345_678.0), 0.05) == "12.35M"
    assert render.measured_text(fill.Cell("42.19%", measured=50.333), 0.05) == "50.33"
    assert render.measured_text(fill.Cell("-", measured=5e6), 0.05) == "5000000.0"
