"""Human evaluation (`mlrep.evaluate.human`, ``mlrep eval human-export | human-aggregate``):
blind sheets drawn with a seed, returned sheets checked against their key, means per system,
and the report's "awaiting human scores" until a sheet comes back (Tables 4.8, 4.9)."""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path

import pytest

from mlrep.cli import main
from mlrep.evaluate import human
from mlrep.evaluate.human import AWAITING, COLUMNS, HumanEvalError, HumanSettings
from mlrep.report import metrics as report_metrics
from mlrep.report import reference, tables
from mlrep.report.fill import fill
from mlrep.report.metrics import MetricsFileError, collect, compile_template, read
from mlrep.report.render import csv_text, measured_text
from tests.conftest import REPO

CHAPTER = "ch4_jass"
# Table 4.8's rows, as their slugs (the run of each row)
SYSTEMS = ("w-o-pre-training", "mass", "bmass", "brss", "jass")
LINES = 30


@pytest.fixture(autouse=True)
def declared(monkeypatch):
    """The chapter declares the human metrics (its home is not built yet: stand in for it)."""
    regex = re.compile(compile_template(human.PATTERNS[0]))
    declaration = report_metrics.Declaration(CHAPTER, "test", human.PATTERNS, regex)
    monkeypatch.setattr(report_metrics, "declared", lambda chapter: declaration)


@pytest.fixture
def test_set(tmp_path) -> dict:
    """A source file, its reference and each system's output: no output or source names a
    system or repeats the reference."""
    folder = tmp_path / "test"
    folder.mkdir()
    source = folder / "test.ja"
    # commas and quotes: the CSV must quote them, not split the cell
    source.write_text("".join(f'原文 {i}, "です"\n' for i in range(LINES)), encoding="utf-8")
    ref = folder / "test.zh"
    ref.write_text("".join(f"参考译文 {i}\n" for i in range(LINES)), encoding="utf-8")
    outputs = {}
    for k, system in enumerate(SYSTEMS):
        outputs[system] = folder / f"{k}.hyp"
        outputs[system].write_text(
            "".join(f"译文 {i} 号 {k}\n" for i in range(LINES)), encoding="utf-8"
        )
    return {"source": source, "reference": ref, "outputs": outputs, "folder": tmp_path}


def _export(test_set: dict, tag: str = "", seed: int = 1, n: int = 12, order=SYSTEMS) -> dict:
    folder = test_set["folder"]
    sheet, key = folder / f"judges{tag}" / "sheet.csv", folder / f"private{tag}" / "key.json"
    systems = [f"{s}={test_set['outputs'][s]}" for s in order]
    argv = ["eval", "human-export", "--source", str(test_set["source"]), "--systems", *systems]
    argv += ["--direction", "ja-zh", "--sheet", str(sheet), "--key", str(key)]
    assert main([*argv, "--sentences", str(n), "--seed", str(seed)]) == 0
    return {"sheet": sheet, "key": key}


def _rows(sheet: Path) -> list[dict[str, str]]:
    with open(sheet, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _write(sheet: Path, rows: list[dict[str, str]]) -> None:
    """A sheet as a spreadsheet program saves CSV: a byte-order mark, CRLF line ends."""
    sheet.parent.mkdir(parents=True, exist_ok=True)
    with open(sheet, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


def _systems_of(key: Path) -> dict[tuple[str, str], tuple[str, int]]:
    """(item, label) -> (system, test line): read from the key's JSON directly."""
    items = json.loads(key.read_text(encoding="utf-8"))["items"]
    return {
        (str(i["item"]), label): (system, i["line"])
        for i in items
        for label, system in i["labels"].items()
    }


def _judge(exported: dict, scorer, out: Path) -> Path:
    """A returned sheet: `scorer(system, line)` -> (adequacy, fluency) for every row, rows in
    reverse order (a judge may sort them) and a comment column added."""
    systems = _systems_of(exported["key"])
    rows = _rows(exported["sheet"])
    for row in rows:
        adequacy, fluency = scorer(*systems[row["item"], row["label"]])
        row["adequacy"], row["fluency"] = str(adequacy), str(fluency)
        row["comment"] = "ok"
    _write(out, rows[::-1])
    return out


def _aggregate(exported: dict, sheets: list[Path], results: Path, seed: int = 1) -> int:
    group = "human/ja-zh"
    argv = ["eval", "human-aggregate", "--sheets", *map(str, sheets)]
    argv += ["--key", str(exported["key"]), "--section", CHAPTER, "--run-group", group]
    argv += ["--out", str(results / CHAPTER / group), "--scale", "tiny"]
    return main([*argv, "--seed", str(seed)])


# --- the scores of two judges with known per-system levels -------------------------------------
def judge_one(system: str, line: int) -> tuple[int, int]:
    adequacy = {"w-o-pre-training": 1, "mass": 2, "bmass": 3, "brss": 4}.get(system)
    # jass: depends on the sentence, so a mean over the wrong sentences shows
    return (adequacy or 1 + line % 5, 5 if system == "jass" else 4)


def judge_two(system: str, line: int) -> tuple[int, int]:
    return (min(judge_one(system, line)[0] + 1, 5), 2)


def test_export_fill_aggregate_gives_each_systems_mean(test_set, tmp_path):
    exported = _export(test_set)
    one = _judge(exported, judge_one, tmp_path / "returned" / "one.csv")
    two = _judge(exported, judge_two, tmp_path / "returned" / "two.csv")
    results = tmp_path / "results"
    assert _aggregate(exported, [one, two], results) == 0

    lines = sorted({line for _, line in _systems_of(exported["key"]).values()})
    assert len(lines) == 12
    for system in SYSTEMS:
        found = read(results / CHAPTER / "human/ja-zh" / system / "seed1" / "metrics.json")
        assert (found.chapter, found.run, found.seed) == (CHAPTER, f"human/ja-zh/{system}", 1)
        per_sentence = [
            statistics.fmean([judge_one(system, n)[0], judge_two(system, n)[0]]) for n in lines
        ]
        assert found.metrics["adequacy_ja-zh"] == pytest.approx(statistics.fmean(per_sentence))
        assert found.sentence_scores["adequacy_ja-zh"] == pytest.approx(per_sentence)
        fluency = statistics.fmean([judge_one(system, 1)[1], judge_two(system, 1)[1]])
        assert found.metrics["fluency_ja-zh"] == pytest.approx(fluency)
        assert found.pending == {}
    # hand count of the first two: one judge says 1 and 2, the other one more
    assert read(results / CHAPTER / "human/ja-zh/mass/seed1/metrics.json").metrics == pytest.approx(
        {"adequacy_ja-zh": 2.5, "fluency_ja-zh": 3.0}
    )
    # one judge's sheet alone: that judge's means
    assert _aggregate(exported, [two], results) == 0
    alone = read(results / CHAPTER / "human/ja-zh/w-o-pre-training/seed1/metrics.json")
    assert alone.metrics == pytest.approx({"adequacy_ja-zh": 2.0, "fluency_ja-zh": 2.0})


def test_the_sheet_is_blind_and_its_key_kept_apart(test_set):
    exported = _export(test_set)
    text = exported["sheet"].read_text(encoding="utf-8")
    assert exported["key"].parent != exported["sheet"].parent
    for system in SYSTEMS:
        assert system not in text
        assert str(test_set["outputs"][system]) not in text
    references = test_set["reference"].read_text(encoding="utf-8").splitlines()
    assert not any(ref in text for ref in references)
    rows = _rows(exported["sheet"])
    assert list(rows[0]) == list(COLUMNS)
    assert all(row["adequacy"] == row["fluency"] == "" for row in rows)
    # each item shows its own source once per system, every system's output of that line
    systems = _systems_of(exported["key"])
    for row in rows:
        system, line = systems[row["item"], row["label"]]
        assert row["source"] == f'原文 {line - 1}, "です"'
        assert row["output"] == f"译文 {line - 1} 号 {SYSTEMS.index(system)}"
    assert len(rows) == 12 * len(SYSTEMS) == len(systems)


def test_each_sentence_draws_its_own_order_from_the_seed(test_set, tmp_path):
    first = _export(test_set, seed=7, n=20)
    orders = {}
    for (item, label), (system, _) in _systems_of(first["key"]).items():
        orders.setdefault(item, {})[label] = system
    assert len({tuple(order.values()) for order in orders.values()}) > 5
    assert {order["A"] for order in orders.values()} == set(SYSTEMS)
    # the same seed (systems named in another order, another folder): the same files
    again = _export(test_set, tag="-again", seed=7, n=20, order=SYSTEMS[::-1])
    for name in ("sheet", "key"):
        assert again[name].read_bytes() == first[name].read_bytes()
    other = _export(test_set, tag="-other", seed=8, n=20)
    assert other["sheet"].read_bytes() != first["sheet"].read_bytes()


def test_unreturned_sheets_read_awaiting_in_the_table_then_the_scores(test_set, tmp_path):
    exported = _export(test_set)
    results = tmp_path / "results"
    assert _aggregate(exported, [exported["sheet"]], results) == 0
    waiting = read(results / CHAPTER / "human/ja-zh/jass/seed1/metrics.json")
    assert waiting.metrics == {}
    assert waiting.pending == {"adequacy_ja-zh": AWAITING, "fluency_ja-zh": AWAITING}

    published = reference.load_all(REPO / "reports" / "reference")["thesis-table-4.8"]
    # rows keep their default keys (the claims' "4-jass"); a run is named by the model
    spec = {
        "cells": {f"{c.title()} Ja-Zh": f"human/ja-zh/{{Model}}:{c}_ja-zh" for c in human.CRITERIA}
    }
    definition = tables.build("thesis-table-4.8", CHAPTER, spec, published)

    def cells() -> dict[str, str]:
        table = fill(definition, published, collect(results, "tiny"))
        return {
            column: measured_text(table.cell("4-jass", column), 0.05)
            for column in ("Adequacy Ja-Zh", "Fluency Ja-Zh", "Adequacy Zh-Ja", "BLEU Ja-Zh")
        }

    assert cells() == {
        "Adequacy Ja-Zh": AWAITING,
        "Fluency Ja-Zh": AWAITING,
        "Adequacy Zh-Ja": "not run",
        "BLEU Ja-Zh": "not run",
    }
    table = fill(definition, published, collect(results, "tiny"))
    assert f"{AWAITING}" in csv_text(table)

    returned = _judge(exported, lambda system, line: (3, 4), tmp_path / "back.csv")
    assert _aggregate(exported, [returned], results) == 0
    # the judged seed's numbers, while another seed's outputs still wait for their judges
    assert _aggregate(exported, [exported["sheet"]], results, seed=2) == 0
    assert cells()["Adequacy Ja-Zh"] == "3.00"
    assert cells()["Fluency Ja-Zh"] == "4.00"
    long = csv_text(fill(definition, published, collect(results, "tiny")))
    assert AWAITING not in long and ",measured" in long


# --- bad input: each names the file, the line and the fix --------------------------------------
def _edit_first(rows, **values):
    rows[0].update(values)
    return rows


BAD_SHEETS = {
    "missing score": (lambda rows: _edit_first(rows, fluency=" "), 2, "no fluency score"),
    "above 5": (lambda rows: _edit_first(rows, adequacy="6"), 2, "adequacy 6 is outside 1-5"),
    "below 1": (lambda rows: _edit_first(rows, fluency="0"), 2, "fluency 0 is outside 1-5"),
    "fraction": (lambda rows: _edit_first(rows, adequacy="3.5"), 2, "not a whole number"),
    "word": (lambda rows: _edit_first(rows, adequacy="good"), 2, "'good' is not a whole"),
    "unknown label": (lambda rows: _edit_first(rows, label="Z"), 2, "unknown label 'Z'"),
    "unknown item": (lambda rows: _edit_first(rows, item="999"), 2, "item '999' is not in the"),
    "duplicate": (lambda rows: [*rows, dict(rows[3])], len(SYSTEMS) * 12 + 2, "duplicate row"),
    "row deleted": (lambda rows: rows[1:], None, "1 rows of the key"),
    "source edited": (lambda rows: _edit_first(rows, source="x"), 2, "is not the one the key"),
    "output edited": (lambda rows: _edit_first(rows, output="x"), 2, "the output of item"),
}


@pytest.mark.parametrize("case", BAD_SHEETS)
def test_a_broken_sheet_names_its_file_line_and_fix(test_set, tmp_path, case):
    exported = _export(test_set)
    returned = _judge(exported, judge_one, tmp_path / "returned.csv")
    edit, line, message = BAD_SHEETS[case]
    _write(returned, edit(_rows(returned)))
    with pytest.raises(HumanEvalError) as error:
        human.aggregate([returned], exported["key"])
    text = str(error.value)
    assert message in text
    assert text.startswith(f"{returned}:{line}:" if line else f"{returned}:")
    assert any(fix in text for fix in ("1 (worst) to 5 (best)", "restore", "delete one"))


def test_a_partly_scored_sheet_is_not_taken_for_an_unreturned_one(test_set, tmp_path):
    exported = _export(test_set)
    rows = _rows(exported["sheet"])
    rows[4]["adequacy"] = "3"
    partly = tmp_path / "partly.csv"
    _write(partly, rows)
    with pytest.raises(HumanEvalError, match=rf"{partly}:\d+: no adequacy score; write a whole"):
        human.aggregate([partly], exported["key"])
    # a returned sheet beside one still blank: the blank one is named
    returned = _judge(exported, judge_one, tmp_path / "returned.csv")
    with pytest.raises(HumanEvalError, match=f"{exported['sheet']}: no scores, while other"):
        human.aggregate([returned, exported["sheet"]], exported["key"])


def test_a_sheet_of_another_export_does_not_match_the_key(test_set, tmp_path):
    exported = _export(test_set)
    other = _export(test_set, tag="-other", seed=2)
    returned = _judge(other, judge_one, tmp_path / "other.csv")
    with pytest.raises(HumanEvalError, match="belongs to another export"):
        human.aggregate([returned], exported["key"])
    # a sheet of fewer systems: its item/label rows are missing from the key's
    rows = [row for row in _rows(exported["sheet"]) if row["label"] != "E"]
    fewer = tmp_path / "fewer.csv"
    _write(fewer, rows)
    with pytest.raises(HumanEvalError, match=r"12 rows of the key .* missing \(item/label 1/E"):
        human.aggregate([fewer], exported["key"])
    header = tmp_path / "header.csv"
    header.write_text("item,label,source,output,adequacy\n", encoding="utf-8")
    with pytest.raises(HumanEvalError, match=rf"{header}:1: no column fluency; keep"):
        human.aggregate([header], exported["key"])


def test_a_sheet_exported_before_a_system_changed_is_refused(test_set, tmp_path):
    """A retrained system re-exports the same sentences and labels with new outputs: scores of
    the old outputs must not become the new system's."""
    exported = _export(test_set)
    returned = _judge(exported, judge_one, tmp_path / "returned.csv")
    retrained = test_set["outputs"]["bmass"]
    retrained.write_text("".join(f"新译文 {i}\n" for i in range(LINES)), encoding="utf-8")
    again = _export(test_set, tag="-again")
    assert _systems_of(again["key"]) == _systems_of(exported["key"])
    with pytest.raises(HumanEvalError, match="output changed after this sheet was exported"):
        human.aggregate([returned], again["key"])
    assert human.aggregate([returned], exported["key"]).judges == 1


def test_an_edited_key_is_refused(test_set):
    exported = _export(test_set)
    data = json.loads(exported["key"].read_text(encoding="utf-8"))
    data["items"][2]["labels"]["A"] = data["items"][2]["labels"]["B"]
    exported["key"].write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(HumanEvalError, match=f"{exported['key']}: item 3 labels .* export again"):
        human.aggregate([exported["sheet"]], exported["key"])
    exported["key"].write_text("{}", encoding="utf-8")
    with pytest.raises(HumanEvalError, match="not a key written by"):
        human.aggregate([exported["sheet"]], exported["key"])


def test_export_refuses_what_cannot_make_a_blind_sheet(test_set, tmp_path, capsys):
    source, outputs = test_set["source"], test_set["outputs"]
    settings = HumanSettings(sentences=5, seed=1)
    sheet, key = tmp_path / "s.csv", tmp_path / "k.json"
    with pytest.raises(HumanEvalError, match="one path; the key is kept apart"):
        human.export(source, outputs, "ja-zh", settings, sheet, tmp_path / "." / "s.csv")
    short = tmp_path / "short.hyp"
    short.write_text("one line\n", encoding="utf-8")
    with pytest.raises(HumanEvalError, match=rf"{short}: 1 lines, but the test source"):
        human.export(source, {**outputs, "mass": short}, "ja-zh", settings, sheet, key)
    with pytest.raises(HumanEvalError, match="fewer than the 31 to draw; lower --sentences"):
        human.export(source, outputs, "ja-zh", HumanSettings(31, 1), sheet, key)
    with pytest.raises(HumanEvalError, match="'ja_zh' is not <src>-<tgt>"):
        human.export(source, outputs, "ja_zh", settings, sheet, key)
    with pytest.raises(HumanEvalError, match="'a/b' names its run folder"):
        human.export(source, {"a/b": outputs["mass"]}, "ja-zh", settings, sheet, key)
    many = {f"s{k}": outputs["mass"] for k in range(27)}
    with pytest.raises(HumanEvalError, match="27 systems; a sheet labels at most 26"):
        human.export(source, many, "ja-zh", settings, sheet, key)
    assert not sheet.exists() and not key.exists()
    argv = ["eval", "human-export", "--source", str(source), "--direction", "ja-zh"]
    argv += ["--sheet", str(sheet), "--key", str(key), "--sentences", "5", "--seed", "1"]
    assert main([*argv, "--systems", f"mass={outputs['mass']}", f"mass={outputs['jass']}"]) == 2
    assert "'mass' is given twice" in capsys.readouterr().err
    assert main([*argv, "--systems", str(outputs["mass"])]) == 2
    assert "write NAME=FILE" in capsys.readouterr().err


def test_the_settings_come_from_params(test_set, tmp_path):
    """`--sentences`/`--seed` left out: params.yaml ``evaluate.human`` (tiny: 20)."""
    sheet, key = tmp_path / "s.csv", tmp_path / "k.json"
    argv = ["eval", "human-export", "--source", str(test_set["source"]), "--direction", "ja-zh"]
    argv += ["--systems", f"mass={test_set['outputs']['mass']}", "--sheet", str(sheet)]
    assert main([*argv, "--key", str(key), "--params", str(REPO / "params.yaml")]) == 0
    assert json.loads(key.read_text())["sentences"] == len(_rows(sheet)) == 20


# --- the metrics contract's ``pending`` ----------------------------------------------------------
def test_pending_is_checked_and_never_a_floor(tmp_path):
    path = tmp_path / CHAPTER / "r" / "seed1" / "metrics.json"
    document = {"chapter": CHAPTER, "run": "r", "seed": 1, "scale": "tiny", "metrics": {"a": 1}}
    path.parent.mkdir(parents=True)
    for pending, message in (({"a": AWAITING}, "a both measured and pending"), ({"b": ""}, "")):
        path.write_text(json.dumps(document | {"pending": pending}))
        with pytest.raises(MetricsFileError, match=message or "map metric names to the reason"):
            read(path)
    path.write_text(json.dumps(document | {"pending": {"b": AWAITING}}))
    found = collect(tmp_path, "tiny")
    assert found.seeds(CHAPTER, "r")[0].pending == {"b": AWAITING}
    assert found.floors().seeds(CHAPTER, "r")[0].pending == {}
