"""Chapter 5's run inventory against the published tables: 28 trainings, and every printed
row of Tables 5.2, 5.3 and C.1-C.9 is one of them on its table's system."""

from __future__ import annotations

import pytest

from mlrep.chapters.ch5_wordcl import runs
from mlrep.report import tables
from mlrep.report.reference import load_all
from tests.conftest import REPO

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
# table -> the system whose runs it prints (Table 5.2 prints all three, one per column)
TABLE_SYSTEM = {
    "thesis-table-5.3": "626_en-tr-ro-et-my-kk",
    **dict.fromkeys(("thesis-table-C.1", "thesis-table-C.4", "thesis-table-C.7"), "222_en-ja"),
    **dict.fromkeys(
        ("thesis-table-C.2", "thesis-table-C.5", "thesis-table-C.8"), "626_en-it-ja-nl-tr-vi"
    ),
    **dict.fromkeys(
        ("thesis-table-C.3", "thesis-table-C.6", "thesis-table-C.9"), "626_en-tr-ro-et-my-kk"
    ),
}


def row_keys(table: str) -> tuple[list[str], list[str]]:
    """The published header and the report's row keys under the chapter's definition."""
    published = PUBLISHED[table]
    return published.header, DEFINITIONS[table].row_keys(published.header, published.rows)


def test_the_thesis_trains_28_runs_with_sent_on_the_626_systems_only():
    names = [r.name for r in runs.runs()]
    assert len(names) == len(set(names)) == 28
    assert {r.system for r in runs.runs()} == set(runs.SYSTEMS)
    assert sum(r.method.addition == "sent" for r in runs.runs()) == 4
    assert "222_en-ja/mlsc-sent" not in names and "626_en-tr-ro-et-my-kk/mbart-ft-sent" in names


@pytest.mark.parametrize("table", sorted(TABLE_SYSTEM))
def test_every_printed_row_is_one_run_of_its_system(table):
    system = TABLE_SYSTEM[table]
    header, keys = row_keys(table)
    found = [runs.run(system, key) for key in keys]
    assert len(set(found)) == len(found)
    if table.startswith("thesis-table-C."):
        directions = [c.split()[0].split("-") for c in header[1:] if c != "Avg."]
        pairs = {"-".join(sorted(d, key=lambda lang: lang != "en")) for d in directions}
        assert pairs == set(runs.SYSTEMS[system])


def test_every_column_of_table_5_2_is_a_system_and_every_row_a_run_of_each():
    header, keys = row_keys("thesis-table-5.2")
    systems = [runs.system_of_column(c) for c in header[1:]]
    assert systems == list(runs.SYSTEMS)
    assert len({runs.run(s, k) for s in systems for k in keys}) == 3 * 8


def test_each_addition_changes_what_the_thesis_says():
    def method(name: str) -> runs.Method:
        return runs.Method.parse(name)

    assert method("mlsc").settings == {} and not method("mlsc").pretrained
    assert method("mbart-ft").pretrained and method("mbart-ft-w2w").links == "w2w"
    word = method("mlsc-fa").settings
    assert (word["word_weight"], word["word_temperature"], word["word_projection"]) == (
        0.1,
        0.2,
        128,
    )
    assert word["dropout"] == method("mbart-ft-sent").settings["dropout"] == 0.2
    assert method("mlsc-fa").links == method("mlsc-align").links == "fa"
    assert method("mlsc-align").settings == {"alignment_weight": 0.05}
    assert method("mlsc-sent").settings["sentence_weight"] == 1.0
    assert method("mlsc-sent").links == ""


@pytest.mark.parametrize(
    ("call", "complaint"),
    [
        (lambda: runs.Method.parse("mlsc-w2v"), "no Chapter 5 method"),
        (lambda: runs.Method.parse("mbart-w2w"), "no Chapter 5 method"),
        (lambda: runs.run("222_en-ja", "mlsc-sent"), "trains no mlsc-sent on 222_en-ja"),
        (lambda: runs.run("626.III", "mlsc"), "no Chapter 5 system"),
        (lambda: runs.system_of_column("626.III"), "names no Chapter 5 system"),
    ],
)
def test_names_outside_the_inventory_are_refused(call, complaint):
    with pytest.raises(runs.Ch5RunError, match=complaint):
        call()


def test_extra_runs_add_single_runs_to_the_grid_once():
    section = {
        "run_systems": ["222_en-ja"],
        "methods": ["mlsc", "mlsc-sent"],  # +sent: not on 222
        "extra_runs": ["626_en-it-ja-nl-tr-vi/mlsc-w2w", "222_en-ja/mlsc"],
    }
    assert [r.name for r in runs.trained(section)] == [
        "222_en-ja/mlsc",
        "626_en-it-ja-nl-tr-vi/mlsc-w2w",
    ]
    assert runs.systems(section) == ["222_en-ja", "626_en-it-ja-nl-tr-vi"]
    with pytest.raises(runs.Ch5RunError, match="trains no mlsc-sent on 222_en-ja"):
        runs.trained({**section, "extra_runs": ["222_en-ja/mlsc-sent"]})
