"""Chapter 4's fine-tuned systems in its tables: every published cell of Tables 4.3-4.6, 4.8,
4.9 and B.2-B.4 reads the run that `runs.cells` says fills it, under a declared metric name,
and a table fills from the metrics.json files `mlrep nmt pair-score` writes: measured cells,
a † where the paired bootstrap beats the MASS row, "not run" elsewhere, and the notes name
the sacreBLEU signature the measured cells were scored with."""

from __future__ import annotations

from pathlib import Path

import pytest
import sacrebleu

from mlrep import cli
from mlrep.chapters.ch4_jass import adequacy, runs, training
from mlrep.nmt import token_accuracy
from mlrep.report import fill, render, tables
from mlrep.report.metrics import collect, declared, write
from mlrep.report.reference import load_all
from tests.conftest import REPO
from tests.report_helpers import REFERENCES

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
BOUND = {
    f"thesis-table-{t}"
    for t in ("4.3", "4.4", "4.5", "4.6", "4.7", "4.8", "4.9", "4.14", "B.2", "B.3", "B.4")
}
REFERENCE_ROW = "*"  # Table 4.7's source-vs-reference row
# the run group of a metric measured apart from the fine-tune's BLEU
GROUPS = {"adequacy": "human", "fluency": "human", "laser": adequacy.GROUP}


def cell_keys(cell: runs.Cell) -> list[tables.CellKey]:
    """What the table definition reads for one of `runs.cells`' published cells."""
    definition, published = DEFINITIONS[cell.table], PUBLISHED[cell.table]
    header, rows = published.header, published.rows
    by = header.index(cell.by)
    (index,) = [i for i, row in enumerate(rows) if row[by].strip() == cell.row]
    key = definition.row_keys(header, rows)[index]
    return definition.cell_key(header, rows[index], key, cell.column)


def test_every_bound_cell_reads_the_run_that_fills_it():
    seen: dict[str, int] = {}
    ch4 = declared("ch4_jass")
    for run_id, run in runs.finetunes().items():
        for cell in runs.cells(run_id):
            if cell.table not in BOUND:
                continue
            metric = f"{cell.metric}_{run.direction}"
            group = GROUPS.get(cell.metric)
            expected = f"{group}/{run_id}" if group else run_id
            assert cell_keys(cell) == [tables.CellKey(expected, (metric,))], (run_id, cell)
            assert ch4.declares(metric)
            seen[cell.table] = seen.get(cell.table, 0) + 1
    # every measured cell: the rows' runs by the columns, but for a "-" (a model a pair does
    # not pre-train: Table 4.14's ja-zh columns of its English rows) and Table 4.7's
    # Reference row (no fine-tune)
    for table in BOUND:
        published, labels = PUBLISHED[table], DEFINITIONS[table].labels
        cells = [
            value
            for row in published.rows
            if row[0] != REFERENCE_ROW
            for value in row[labels:]
            if value.strip() != "-"
        ]
        assert seen[table] == len(cells), table


def write_hypotheses(folder: Path, name: str, drop_every: int) -> Path:
    """REFERENCES with every `drop_every`-th word dropped: a system of controlled quality."""
    lines = [
        " ".join(w for i, w in enumerate(line.split(), 1) if i % drop_every) for line in REFERENCES
    ]
    path = folder / f"{name}.hyp"
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def pair_score(results: Path, run: str, hyp: Path, reference: Path, source: Path) -> int:
    out = results / "ch4_jass" / run / "seed1" / "metrics.json"
    argv = ["nmt", "pair-score", "--section", "ch4_jass", "--scale", "tiny", "--run", run]
    argv += ["--hyp", str(hyp), "--reference", str(reference), "--source", str(source)]
    argv += ["--direction", "ja-en", "--backend", "mosestokenizer", "--seed", "1"]
    return cli.main([*argv, "--out", str(out)])


def test_a_table_fills_from_pair_score_with_a_dagger_over_mass(tmp_path):
    reference = tmp_path / "test.en"
    reference.write_text("".join(x + "\n" for x in REFERENCES), encoding="utf-8")
    source = tmp_path / "test.ja"
    source.write_text("".join("猫 が いる\n" for _ in REFERENCES), encoding="utf-8")
    systems = {"jaen-mass": 2, "jaen-enss": 9}  # MASS drops every 2nd word, ENSS every 9th
    for start, drop in systems.items():
        hyp = write_hypotheses(tmp_path, start, drop)
        assert (
            pair_score(tmp_path / "results", f"aspec_je.ja-en.3k.{start}", hyp, reference, source)
            == 0
        )
    results = collect(tmp_path / "results", "tiny")
    for table_id, row in (("thesis-table-4.3", "jaen-enss"), ("thesis-table-B.2", "jaen-enss")):
        table = fill.fill(DEFINITIONS[table_id], PUBLISHED[table_id], results, (200, 1))
        enss, mass = table.cell(row, "Ja-En 3k"), table.cell("jaen-mass", "Ja-En 3k")
        hyps = (tmp_path / "jaen-enss.hyp").read_text(encoding="utf-8").splitlines()
        expected = sacrebleu.corpus_bleu(hyps, [REFERENCES], tokenize="none").score
        assert enss.measured == pytest.approx(expected)
        assert enss.p_value is not None and enss.p_value < 0.05
        assert render.measured_text(enss, 0.05).endswith(render.DAGGER)
        assert mass.p_value is None and not render.measured_text(mass, 0.05).endswith(render.DAGGER)
        assert table.cell(row, "Ja-En 10k").status == fill.NOT_RUN
        assert table.cell(row, "En-Ja 3k").status == fill.NOT_RUN
    assert table.cell("jaen-bart", "Ja-En 3k").status == fill.NOT_RUN
    # how the cells were scored: the one signature pair-score wrote, under the table
    (signature,) = {r.signatures["bleu_ja-en"] for r in results.files()}
    assert signature.startswith("wat:en:moses (mosestokenizer) (given words)|")
    assert f"Scoring signature: {signature} — columns Ja-En 3k." in render.notes(table)


def test_token_accuracy_metrics_are_named_per_language_and_task_and_declared():
    result = token_accuracy.accuracies(
        {"bmass": token_accuracy.Tally(2, 10, 7), "brss.f": token_accuracy.Tally(2, 30, 30)}
    )
    metrics = token_accuracy.metrics(result, "ja")
    assert metrics == {
        "token_accuracy_ja_bmass": 70.0,
        "token_accuracy_ja_brss.f": 100.0,
        "token_accuracy_ja_overall": 92.5,  # 37 of 40 counted positions
    }
    ch4 = declared("ch4_jass")
    assert ch4.undeclared(metrics) == []
    assert not ch4.declares("token_accuracy_ja_brss") and not ch4.declares("token_accuracy_bmass")


def test_every_accuracy_cell_reads_its_pretraining_and_a_dash_is_published_only():
    """Tables 4.12/4.13: a row is its ja-en pre-training (run ``pretrain/<id>``), a column a
    task of the table's language (Overall: all of them); `runs.pretraining_cells` names the
    measured cells, and exactly the others print "-"."""
    ch4 = declared("ch4_jass")
    for table in runs.ACCURACY:
        definition, published = DEFINITIONS[table.table], PUBLISHED[table.table]
        header, rows = published.header, published.rows
        keys = definition.row_keys(header, rows)
        assert keys == [runs.start_of(name, "jaen") for _, name in table.rows], table.table
        for row, key in zip(rows, keys, strict=True):
            cells = runs.pretraining_cells(key)
            measured = {c.column for c in cells if c.table == table.table}
            assert measured, key
            for column, task in table.tasks.items():
                printed = row[header.index(column)].strip()
                if column in measured:
                    metric = f"token_accuracy_{table.lang}_{task or 'overall'}"
                    run = training.pretrain_run(key)
                    expected = [tables.CellKey(run, (metric,))]
                    assert definition.cell_key(header, row, key, column) == expected
                    assert ch4.declares(metric) and printed != "-", (key, column)
                else:
                    assert definition.published_only_in(key, column), (key, column)
                    assert printed == "-", (key, column)


def test_the_accuracy_tables_fill_from_a_pretrainings_metrics(tmp_path):
    """JASS's metrics file fills its Table 4.12 row; a row the scale did not pre-train reads
    "not run", a "-" reads published only; the ENSS row of Table 4.13 reads its own file."""
    values = {
        "pretrain/jaen-jass": {
            "token_accuracy_ja_bmass": 40.0,
            "token_accuracy_ja_brss.f": 90.0,
            "token_accuracy_ja_overall": 75.0,
            "token_accuracy_en_mass": 30.0,
            "token_accuracy_en_overall": 30.0,
            "moved_words_ja_brss.f": 71.5,
        },
        "pretrain/jaen-enss": {
            "token_accuracy_en_mass": 35.0,
            "token_accuracy_en_hfss": 95.0,
            "token_accuracy_en_overall": 60.0,
        },
    }
    for run, metrics in values.items():
        out = tmp_path / "ch4_jass" / run / "seed1" / "metrics.json"
        write(out, "ch4_jass", run, 1, "tiny", metrics)
    results = collect(tmp_path, "tiny")
    ja = fill.fill(DEFINITIONS["thesis-table-4.12"], PUBLISHED["thesis-table-4.12"], results)
    cells = {column: ja.cell("jaen-jass", column) for column in ("Overall", "BMASS", "BRSS")}
    assert {c: cell.measured for c, cell in cells.items()} == {
        "Overall": 75.0,
        "BMASS": 40.0,
        "BRSS": 90.0,
    }
    assert ja.cell("jaen-jass", "MASS").status == fill.PUBLISHED_ONLY
    assert ja.cell("jaen-mass", "Overall").status == fill.NOT_RUN
    en = fill.fill(DEFINITIONS["thesis-table-4.13"], PUBLISHED["thesis-table-4.13"], results)
    assert (en.cell("jaen-enss", "Overall").measured, en.cell("jaen-enss", "HFSS").measured) == (
        60.0,
        95.0,
    )
    assert en.cell("jaen-enss", "PMASS").status == fill.PUBLISHED_ONLY
