"""The whole report: `mlrep report build` and the Snakemake `report` rule on fixture results."""

import json
import re
import shutil

import pytest

from mlrep.cli import main
from mlrep.report import claims
from mlrep.report.figures import definitions as figure_definitions
from mlrep.report.reference import load_sources
from tests.conftest import copy_workflow, snakemake
from tests.report_helpers import REFERENCE, build_report, ch8_results, write_metrics


def build(tmp_path, results):
    return build_report(results, tmp_path / "reports")


def test_build_from_partial_results_writes_every_table_figure_and_the_ledger(tmp_path, capsys):
    ch8_results(tmp_path / "results")
    svcca = {"svcca_l1": 0.4}  # the tiny grid's one SVCCA: IWSLT, seed 1
    write_metrics(tmp_path / "results", "ch8_layernorm", "iwslt/prenorm-s-enc-t-dec-w", 1, svcca)
    # a 4-layer stand-in's Fig 6.3 analysis, which a figure claim reads (Δ1 > 0 at every layer)
    cosine = {f"delta{d}_l{k}": 0.01 * k for d in (1, 2) for k in range(1, 5)}
    write_metrics(tmp_path / "results", "ch6_aligninstruct", "bloomz-24/7b1-cosine", 1, cosine)
    out = build(tmp_path, tmp_path / "results")
    summary = json.loads(capsys.readouterr().out)
    assert summary["tables"] == len(load_sources(REFERENCE)) and summary["result_files"] == 8
    page = (out / "index.html").read_text()
    for table_id in load_sources(REFERENCE):
        assert f'id="{table_id}"' in page
        for fmt in ("md", "tex", "csv", "html"):
            assert (out / "tables" / f"{table_id}.{fmt}").stat().st_size > 0
    for figure_id in figure_definitions():
        assert f'<figure id="{figure_id}">' in page
        assert (out / "figures" / f"{figure_id}.pdf").read_bytes().startswith(b"%PDF")
        assert (out / "figures" / f"{figure_id}.png").read_bytes().startswith(b"\x89PNG")
    # a figure that picks its dataset and seed says which it drew
    e1 = page.split('<figure id="fig-E.1">')[1].split("</figcaption>")[0]
    assert "drawn from dataset iwslt, seed 1" in e1 and "the thesis draws dataset opus" in e1
    # offline: images inline, no reference to any other host
    assert re.findall(r'src="(?!data:image/png;base64,)', page) == []
    assert "http://" not in page and "https://" not in page
    ledger = {v["id"]: v for v in json.loads((out / "claims.json").read_text())}
    assert ledger["ch8-postnorm-beats-prenorm-zst-bleu"]["outcome"] == "floor not measured"
    assert ledger["ch2-ems-beats-contrastive-only"]["outcome"] == "not run at this scale"
    cosine_claim = ledger["ch6-mtinstruct-raises-cosine"]  # 4 of 4 layers: p = 1/16
    assert (cosine_claim["outcome"], cosine_claim["p_value"]) == ("inconclusive", 1 / 16)
    assert "| no numbers printed | 0.03 / 0.00 |" in (out / "claims.md").read_text()
    # provenance of a measured table names the files that fed it, with their checksums
    assert page.count("metrics sha256") >= 1 and "ch8_layernorm/opus/postnorm-s-enc-t-dec-w" in page


def test_build_with_no_results_at_all(tmp_path):
    out = build(tmp_path, tmp_path / "missing")
    page = (out / "index.html").read_text()
    not_run = f"{len(claims.load())} not run at this scale"
    assert "0 metrics files at this scale" in page and not_run in page.replace("claims (", "")
    assert "measured" not in json.loads((out / "claims.json").read_text())[0]["outcome"]
    # at tiny the ledger says what its verdicts can and cannot show
    assert claims.scale_note("tiny") in page.replace("\n", " ")
    assert claims.scale_note("tiny") in (out / "claims.md").read_text()
    e1 = page.split('<figure id="fig-E.1">')[1].split("</figcaption>")[0]
    assert "no results for any of (dataset: opus, iwslt, europarl; seed: 10, 1, 20)" in e1


def test_report_check_accepts_the_shipped_definitions(capsys):
    assert main(["report", "check", "--reference", str(REFERENCE)]) == 0
    assert "0 contradicted by the published numbers" in capsys.readouterr().out


@pytest.mark.slow
def test_snakemake_report_rule_rebuilds_from_whatever_results_exist(tmp_path):
    copy_workflow(tmp_path)
    shutil.copytree(REFERENCE, tmp_path / "reports" / "reference")
    plan = snakemake(tmp_path, "-n", "all")
    assert plan.returncode == 0, plan.stderr
    assert re.search(r"^report\s+1$", plan.stdout, re.MULTILINE)
    # a chapter target renders its report after its own runs, and only those
    chapter = snakemake(tmp_path, "-n", "ch8_layernorm").stdout
    assert re.search(r"^ch8_metrics\s+\d+$", chapter, re.MULTILINE) and "ch2_train" not in chapter
    alone = snakemake(tmp_path, "-n", "report").stdout
    assert re.search(r"^total\s+1$", alone, re.MULTILINE), alone
    done = snakemake(tmp_path, "--cores", "1", "report", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not run" in (tmp_path / "reports" / "tables" / "thesis-table-8.2.md").read_text()
    ch8_results(tmp_path / "results")  # a chapter lands: the report is out of date
    again = snakemake(tmp_path, "-n", "report")
    assert again.returncode == 0 and "rule report" in again.stdout


def snakemake_report_entries(html: str) -> dict:
    """The file entries Snakemake embeds in its report page (``var results = {...}``)."""
    marker = "var results = "
    start = html.index(marker, html.index('<script id="results">')) + len(marker)
    entries, _ = json.JSONDecoder().raw_decode(html, start)
    return entries


@pytest.mark.slow
def test_snakemake_report_captions_each_output_marked_for_it(tmp_path):
    copy_workflow(tmp_path)
    shutil.copytree(REFERENCE, tmp_path / "reports" / "reference")
    done = snakemake(tmp_path, "--cores", "1", "report", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    made = snakemake(tmp_path, "--report", str(tmp_path / "report.html"), "report", timeout=300)
    assert made.returncode == 0, (made.stdout + made.stderr)[-3000:]
    entries = snakemake_report_entries((tmp_path / "report.html").read_text())
    index = entries["reports/index.html"]
    assert "offline HTML page" in index["caption"] and "scale" in index["caption"]
    figures = {e["labels"]["figure"]: e for e in entries.values() if e["labels"]}
    assert set(figures) == set(figure_definitions())
    for figure_id, entry in figures.items():
        spec = figure_definitions()[figure_id]
        assert entry["name"] == f"{figure_id}.png" and entry["labels"]["title"] == spec["title"]
        # the shared caption describes the figure without naming another output of the rule
        assert "greyscale-safe" in entry["caption"] and "<tt" in entry["caption"]
        assert "index.html" not in entry["caption"] and "tiny" in entry["caption"]
