"""Data checksums in provenance: recorded by each step, traced through earlier steps, shown
in the report's per-table provenance blocks."""

import json
import sys

from mlrep.io import sha256_file
from mlrep.provenance import data_checksums, record
from mlrep.report import page
from mlrep.report import provenance as report_provenance
from mlrep.report.metrics import collect
from tests.report_helpers import build_report, write_metrics

CORPUS = "results/data/tiny_corpus"
PREPARED = "results/ch8_layernorm/data/iwslt"
RUN = "results/ch8_layernorm/iwslt/prenorm-s-enc-t-dec-w/seed1"


def provenance(folder, command, **extra):
    folder.mkdir(parents=True, exist_ok=True)
    info = {"config_hash": "abc", "git": {"commit": "c0ffee"}, "command": command, **extra}
    (folder / "provenance.json").write_text(json.dumps(info))


def project(root):
    """A tiny corpus and the chain of steps that leads from it to one run's metrics.json,
    recorded the way steps did before provenance held data checksums (commands only)."""
    corpus = root / CORPUS
    corpus.mkdir(parents=True)
    (corpus / "manifest.json").write_text('{"files": {"train.en-it.en": "00ff"}}')
    provenance(corpus, ["mlrep", "corpus", "tiny", "--wheels", "resources/wheels", "--out", CORPUS])
    provenance(root / PREPARED, ["mlrep", "nmt", "prepare", "--corpora", CORPUS, "--out", PREPARED])
    provenance(
        root / RUN / "hyp",
        ["mlrep", "nmt", "translate", "--data", PREPARED, "--out", f"{RUN}/hyp"],
    )
    write_metrics(root / "results", "ch8_layernorm", "iwslt/prenorm-s-enc-t-dec-w", 1, {})
    (root / RUN / "scores.json").write_text("{}")
    metrics = ["mlrep", "nmt", "metrics", "--scores", f"{RUN}/scores.json", "--hyp", f"{RUN}/hyp"]
    provenance(root / RUN, [*metrics, "--out", f"{RUN}/metrics.json"])
    return corpus / "manifest.json"


def test_checksums_trace_from_a_run_through_its_inputs_to_the_corpus(tmp_path):
    manifest = project(tmp_path)
    command = ["mlrep", "nmt", "metrics", "--hyp", f"{RUN}/hyp", "--out", f"{RUN}/metrics.json"]
    expected = {CORPUS: {"file": "manifest.json", "sha256": sha256_file(manifest)}}
    assert data_checksums(command, tmp_path, own=tmp_path / RUN) == expected
    # a step's outputs are not its inputs: the corpus build reads only the wheels
    corpus_build = ["mlrep", "corpus", "tiny", "--wheels", "resources/wheels", "--out", CORPUS]
    assert data_checksums(corpus_build, tmp_path) == {}
    # odd arguments (not paths, too long to be one) are skipped, not errors
    assert data_checksums(["mlrep", "x", "--settings", "{" * 5000, "iwslt"], tmp_path) == {}


def test_record_stores_the_checksums_and_later_steps_inherit_them(tmp_path, monkeypatch):
    manifest = project(tmp_path)
    recorded = sha256_file(manifest)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["mlrep", "nmt", "prepare", "--corpora", CORPUS])
    info = record(tmp_path / PREPARED, "nmt prepare", {"scale": "tiny"})
    assert info["data"] == {CORPUS: {"file": "manifest.json", "sha256": recorded}}
    # what a step recorded is what later steps inherit, even if the file changed since
    manifest.write_text('{"files": {}}')
    command = ["mlrep", "nmt", "train", "--data", PREPARED, "--out", "elsewhere"]
    assert data_checksums(command, tmp_path)[CORPUS]["sha256"] == recorded


def test_table_provenance_lists_the_data_checksums_of_its_runs(tmp_path, monkeypatch):
    manifest = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    results = collect(tmp_path / "results", "tiny")
    used = {("ch8_layernorm", "iwslt/prenorm-s-enc-t-dec-w")}
    (entry,) = report_provenance.runs(used, results, tmp_path / "results")
    digest = sha256_file(manifest)
    assert entry["data"] == {CORPUS: {"file": "manifest.json", "sha256": digest}}
    assert entry["data_traced"] and entry["config_hash"] == "abc"
    table = page.TableEntry("thesis-table-8.2", "ch8_layernorm", "<table></table>", {}, [entry])
    build = {"config_hash": "h", "commit": "c", "when": "now"}
    block = page._provenance(table, "tiny", build)
    assert f"data checksums: {CORPUS} (manifest.json {digest})" in block
    assert "traced from its command at report time" in block
    # a run that recorded its checksums is shown as recorded
    provenance(tmp_path / RUN, ["mlrep"], data={"x": {"file": "metadata.json", "sha256": "d1"}})
    (entry,) = report_provenance.runs(used, results, tmp_path / "results")
    assert entry["data"] == {"x": {"file": "metadata.json", "sha256": "d1"}}
    assert not entry["data_traced"]
    empty = page._provenance(page.TableEntry("t", "ch8_layernorm", "", {}, []), "tiny", build)
    assert "data checksums: none recorded" in empty


def test_tables_measured_on_a_stand_in_say_so_in_caption_and_provenance(tmp_path, monkeypatch):
    label = "stand-in for laser_tatoeba_v1, cut from tiny_corpus test"
    folder = tmp_path / "results/data/stand_ins/laser_tatoeba_v1"
    folder.mkdir(parents=True)
    info = {"benchmark": "laser_tatoeba_v1", "corpus": "tiny_corpus", "split": "test", "seed": 1}
    (folder / "metadata.json").write_text(json.dumps({"stand_in": info}))
    run = write_metrics(tmp_path / "results", "ch2_ems", "ems", 1, {"tatoeba_deu": 50.0}).parent
    monkeypatch.chdir(tmp_path)
    tatoeba = "results/data/stand_ins/laser_tatoeba_v1"
    argv = ["mlrep", "ch2", "evaluate", "--tatoeba", tatoeba, "--out", f"{run}/metrics.json"]
    monkeypatch.setattr(sys, "argv", argv)
    recorded = record(run, "embed evaluate", {"scale": "tiny"})["data"][tatoeba]
    assert recorded["stand_in"] == {k: info[k] for k in ("benchmark", "corpus", "split")}
    reports = build_report(tmp_path / "results", tmp_path / "reports")
    markdown = (reports / "tables" / "thesis-table-2.4.md").read_text(encoding="utf-8")
    assert label in markdown.splitlines()[0]
    page_html = (reports / "index.html").read_text(encoding="utf-8")
    table = page_html[page_html.index('id="thesis-table-2.4"') :]
    assert label in table[: table.index("</caption>")]
    block = table[table.index("<details>") : table.index("</details>")]
    assert f"{tatoeba} (metadata.json {sha256_file(folder / 'metadata.json')}, <b>{label}" in block
    assert label not in (reports / "tables" / "thesis-table-8.2.md").read_text(encoding="utf-8")
