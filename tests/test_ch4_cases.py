"""Chapter 4's case tables (Tables 4.10, 4.11): each system's row reads that system's text of
the case run, the sentence is the line params.yaml names or the one whose reference is the
published one (NFKC, no spaces), and the table renders ``measured text / published text``
in Markdown, HTML and LaTeX, text cells never bold, averaged or marked."""

from __future__ import annotations

import csv
import io
import json
import shlex
from pathlib import Path

import pytest

from mlrep import cli
from mlrep import config as cfg
from mlrep.chapters.ch4_jass import cases, runs, training
from mlrep.evaluate.cases import CaseError, find_line, normalized, published_text
from mlrep.paths import Paths
from mlrep.report import fill, render, tables
from mlrep.report.metrics import MetricNameError, MetricsFileError, collect, declared, write
from mlrep.report.reference import load_all
from tests.conftest import REPO

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))
JE = "thesis-table-4.10"
RUN = "cases/aspec_je.ja-en.10k"


def section(scale: str) -> dict:
    return cfg.load({**cfg.load_yaml(REPO / "params.yaml"), "scale": scale})["ch4_jass"]


def row_key(table: str, label: str) -> str:
    published = PUBLISHED[table]
    keys = DEFINITIONS[table].row_keys(published.header, published.rows)
    (index,) = [i for i, row in enumerate(published.rows) if row[1].strip() == label]
    return keys[index]


def key_of(table: str, label: str) -> tables.CellKey:
    published, definition = PUBLISHED[table], DEFINITIONS[table]
    key = row_key(table, label)
    row = published.rows[DEFINITIONS[table].row_keys(published.header, published.rows).index(key)]
    (found,) = definition.cell_key(published.header, row, key, "Text")
    return found


def test_each_row_reads_its_own_systems_text_and_the_references_the_case_texts():
    seen = {JE: 0, "thesis-table-4.11": 0}
    for run_id, run in runs.finetunes().items():
        for cell in runs.cells(run_id):
            if cell.metric != cases.METRIC:
                continue
            expected = f"{cases.GROUP}/{run.corpus}.{run.direction}.{run.size}"
            assert key_of(cell.table, cell.row) == tables.CellKey(expected, (f"case_{run.start}",))
            seen[cell.table] += 1
    assert seen == {JE: 14, "thesis-table-4.11": 8}  # every system row of both tables
    assert key_of(JE, "Reference-Ja") == tables.CellKey(RUN, ("case_source",))
    assert key_of(JE, "Reference-En") == tables.CellKey(RUN, ("case_reference",))
    zh_ja = "cases/wiki_jc.zh-ja.10k"
    assert key_of("thesis-table-4.11", "Reference-Zh") == tables.CellKey(zh_ja, ("case_source",))
    assert key_of("thesis-table-4.11", "Reference-Ja").metrics == ("case_reference",)
    assert DEFINITIONS["thesis-table-4.11"].published_only == {"English gloss"}
    assert declared("ch4_jass").undeclared(["case_jaen-mass-deshuffle-ja", "case_source"]) == []


def test_a_scale_shows_only_the_systems_it_plans():
    (tiny,) = cases.cases(section("tiny"))  # tiny trains no Wikipedia Zh-Ja: no Table 4.11
    assert (tiny.table, tiny.run, tiny.seed, tiny.reference_row) == (
        JE,
        RUN,
        1,
        "Reference-En",
    )
    starts = ("vanilla", "jaen-mass", "jaen-bmass", "jaen-brss", "jaen-jass", "jaen-hfss")
    assert tiny.systems == (
        *(f"aspec_je.ja-en.10k.{s}" for s in starts),
        "aspec_je.ja-en.10k.jaen-enss",
    )
    full = {c.table: c for c in cases.cases(section("full"))}
    assert len(full[JE].systems) == 14 and len(full["thesis-table-4.11"].systems) == 8
    assert full["thesis-table-4.11"].reference_row == "Reference-Ja"
    assert cases.targets(PATHS, section("tiny")) == [f"results/ch4_jass/{RUN}/seed1/metrics.json"]
    words = shlex.split(cases.command(PATHS, section("full"), full[JE], "full"))
    assert words[words.index("--line") + 1] == "0"
    assert words[words.index("--reference") + 1] == "results/ch4_jass/data/pools/aspec_je/test.en"
    assert f"jaen-mass={training.hypotheses(PATHS, 'aspec_je.ja-en.10k.jaen-mass', 1)}" in words


def test_the_published_reference_is_found_after_nfkc_and_without_spaces(tmp_path):
    published = "翌嘉永2年（1849年）11月22日に婚姻し、"
    lines = [
        "翌嘉永 ２ 年 （ 1850 年 ）",
        "翌 嘉永 ２ 年 （ １８４９ 年 ） １１ 月 ２２ 日 に 婚姻 し 、",
    ]
    assert normalized(lines[1]) == normalized(published)
    assert find_line(lines, published, "test.ja") == 2
    with pytest.raises(CaseError, match=r"test\.ja: no line matches the published reference '翌"):
        find_line(lines[:1], published, "test.ja")
    table = REPO / "reports" / "reference" / f"{JE}.csv"
    assert published_text(table, "Reference-En", "Text").startswith("Various properties")
    with pytest.raises(CaseError, match=r"thesis-table-4\.10\.csv: 0 rows labelled 'Reference-Zh'"):
        published_text(table, "Reference-Zh", "Text")


def write_files(folder: Path, systems: tuple[str, ...], lines: int = 5) -> dict[str, Path]:
    """A test set and one hypothesis file per system: line i of each names the file and i."""
    found = {}
    for name in ("source", "reference", *systems):
        path = folder / f"{name}.txt"
        path.write_text("".join(f"{name} line {i}\n" for i in range(1, lines + 1)))
        found[name] = path
    return found


def case(tmp_path: Path, line: int, files: dict[str, Path], *extra: str) -> int:
    out = tmp_path / "results" / "ch4_jass" / RUN / "seed1" / "metrics.json"
    systems = [f"{n}={p}" for n, p in files.items() if n not in ("source", "reference")]
    argv = ["eval", "case", "--source", str(files["source"]), "--reference"]
    argv += [str(files["reference"]), "--systems", *systems, "--line", str(line)]
    argv += ["--section", "ch4_jass", "--run", RUN, "--seed", "1", "--out", str(out)]
    return cli.main([*argv, "--scale", "tiny", *extra])


def test_table_4_10_renders_each_systems_text_beside_the_published_one(tmp_path):
    systems = ("vanilla", "jaen-mass", "jaen-jass")
    files = write_files(tmp_path, systems)
    assert case(tmp_path, 3, files) == 0
    # another seed's output: a text cell shows one seed's text, the lowest
    seed2 = tmp_path / "results" / "ch4_jass" / RUN / "seed2" / "metrics.json"
    write(seed2, "ch4_jass", RUN, 2, "tiny", {}, texts={"case_jaen-mass": "seed 2 text"})
    results = collect(tmp_path / "results", "tiny")
    filled = fill.fill(DEFINITIONS[JE], PUBLISHED[JE], results, (50, 1))
    mass = filled.cell("jaen-mass", "Text")
    assert (mass.text, mass.text_seed, mass.status) == ("jaen-mass line 3", 1, "measured")
    assert filled.cell("reference", "Text").text == "reference line 3"
    assert filled.cell("source", "Text").text == "source line 3"
    assert filled.cell("vanilla", "Text").text == "vanilla line 3"
    assert filled.cell("jaen-bmass", "Text").status == fill.NOT_RUN  # no output: not run
    assert filled.runs_used == {("ch4_jass", RUN)}
    # a text is never a value: never bold, averaged, marked † or flagged
    for row in filled.cells:
        for cell in row:
            assert cell.measured is None and not cell.bold_measured and cell.p_value is None
    assert filled.flags == []
    markdown = render.markdown(filled)
    published = PUBLISHED[JE].rows[3][2]  # the MASS row's printed output
    assert f"| 1 | MASS | jaen-mass line 3 / {published} |" in markdown
    assert "| 2 | BMASS | not run / On the basis" in markdown
    assert "Text cells: the measured text at seed 1." in markdown
    page = render.html_table(filled)
    assert '<span class="meas text">jaen-mass line 3</span>' in page
    rows = list(csv.DictReader(io.StringIO(render.csv_text(filled))))
    (long,) = [r for r in rows if r["row"] == "jaen-mass"]
    assert (long["measured"], long["status"], long["seeds"]) == (
        "jaen-mass line 3",
        "measured",
        "1",
    )


def test_table_4_11_keeps_its_gloss_published_and_sets_cjk_in_latex(tmp_path):
    table = "thesis-table-4.11"
    run = "cases/wiki_jc.zh-ja.10k"
    write(
        tmp_path / "ch4_jass" / run / "seed1" / "metrics.json",
        "ch4_jass",
        run,
        1,
        "tiny",
        {},
        texts={"case_jazh-jass": "翌 嘉永 2 年 に 成婚 し", "case_source": "翌嘉永2年成婚"},
    )
    filled = fill.fill(DEFINITIONS[table], PUBLISHED[table], collect(tmp_path, "tiny"), (50, 1))
    assert filled.cell("jazh-jass", "English gloss").status == fill.PUBLISHED_ONLY
    latex = render.latex(filled)
    assert r"\begin{tabular}{lll" in latex  # the text column is left-aligned
    assert r"\begin{CJK}{UTF8}{min}翌\end{CJK}" in latex


def test_line_zero_shows_the_line_of_the_published_reference(tmp_path, capsys):
    files = write_files(tmp_path, ("jaen-mass",))
    # the published reference, spaced as words and in full-width digits, on line 4
    lines = files["reference"].read_text().splitlines()
    published = PUBLISHED[JE].rows[1][2]
    lines[3] = " ".join(published.replace("1", "１"))
    files["reference"].write_text("".join(x + "\n" for x in lines))
    table = REPO / "reports" / "reference" / f"{JE}.csv"
    assert case(tmp_path, 0, files, "--published", str(table), "--row", "Reference-En") == 0
    out = tmp_path / "results" / "ch4_jass" / RUN / "seed1" / "metrics.json"
    written = json.loads(out.read_text())
    assert written["line"] == 4
    assert written["texts"]["case_jaen-mass"] == "jaen-mass line 4"
    assert written["texts"]["case_source"] == "source line 4"
    # no such line: the error names the reference file and the published sentence
    files["reference"].write_text("".join(x + "\n" for x in lines[:3]))
    assert case(tmp_path, 0, files, "--published", str(table), "--row", "Reference-En") != 0
    error = capsys.readouterr().err
    assert f"{files['reference']}: no line matches the published reference 'Various" in error
    assert case(tmp_path, 9, files) != 0
    assert "reference.txt: line 9 is not in its 3 lines" in capsys.readouterr().err


def test_texts_are_declared_strings_never_also_numbers(tmp_path):
    path = tmp_path / "metrics.json"
    with pytest.raises(MetricNameError, match="case-mass"):
        write(path, "ch4_jass", RUN, 1, "tiny", {}, texts={"case-mass": "x"})
    with pytest.raises(MetricsFileError, match="bleu_ja-en both a metric and a text"):
        write(path, "ch4_jass", RUN, 1, "tiny", {"bleu_ja-en": 1.0}, texts={"bleu_ja-en": "x"})
    with pytest.raises(MetricsFileError, match="texts must map names to strings"):
        write(path, "ch4_jass", RUN, 1, "tiny", {}, texts={"case_source": 3})
    assert not path.exists()
