"""Cited rows: baselines a table quotes from prior work show their source and ``cited``, are
never looked up, bold or ranked; a row another chapter measures reads that chapter's runs; a
claim may compare a measured side with a cited one (one-sample statistics, no floor of its own,
judged at scale full only)."""

import csv
import io
import json
import statistics

import numpy as np
import pytest

from mlrep.report import claims, fill, render, summary, tables
from mlrep.report.metrics import Results, collect
from mlrep.report.reference import load_all
from mlrep.report.references import references
from mlrep.report.stats import (
    SentenceSet,
    bleu_from_stats,
    corpus_bleu,
    corpus_mean,
    paired_differences,
)
from tests.conftest import REPO
from tests.report_helpers import write_metrics

REFERENCE = REPO / "reports" / "reference"
PUBLISHED = load_all(REFERENCE)
DEFINITIONS = tables.load(PUBLISHED)
CLAIMS = {c["id"]: c for c in claims.load()}
LASER = "Artetxe and Schwenk (2019)"


def filled(table_id, results):
    return fill.fill(DEFINITIONS[table_id], PUBLISHED[table_id], results, (300, 1))


def fill_all(results):
    return {t: filled(t, results) for t in DEFINITIONS}


def test_the_quoted_baselines_are_cited_with_their_sources():
    cited = {
        table_id: {key: row.cited for key, row in d.rows.items() if row.cited}
        for table_id, d in DEFINITIONS.items()
        if any(row.cited for row in d.rows.values())
    }
    assert cited["thesis-table-3.3"] == {
        "laser-12": LASER,
        "sbert-173": "Reimers and Gurevych (2020)",
    }  # m-USE is released: Chapter 3 measures it (its run m-use)
    assert DEFINITIONS["thesis-table-3.3"].chapter_of("m-use") == "ch3_lealla"
    assert cited["onealigner-table-3"] == {
        "veco": "Luo et al. (2021)",
        "ernie-m": "Ouyang et al. (2021)",
    }
    assert set(cited["onealigner-table-8"]) == {"xlm-r-large", "veco"}
    assert cited["thesis-table-2.9"] == {"labse-bilingual": "Yang et al. (2019)"}  # unreleased
    literature = cited["mrasp2-table-1"]
    run = {f"unified-multilingual-{r}" for r in ("m-transformer", "mrasp-w-o-finetune", "mrasp2")}
    assert len(literature) == 8 and not run & set(literature)
    # EMS in Table 3.3 is Chapter 2's model: measured there, not cited
    assert DEFINITIONS["thesis-table-3.3"].chapter_of("ems") == "ch2_ems"


def test_a_cited_row_shows_its_source_never_not_run_in_every_format():
    t33 = filled("thesis-table-3.3", Results("tiny"))
    laser = t33.cells[t33.row_keys.index("laser-12")]
    assert {c.status for c in laser} == {fill.CITED} and all(c.cited == LASER for c in laser)
    md = render.markdown(t33)
    line = next(x for x in md.splitlines() if x.startswith("| LASER [12]"))
    assert line.startswith("| LASER [12] | cited / 93 | cited / 1024 |") and "not run" not in line
    note = "Cited rows, quoted from prior work and never run or ranked here: LASER [12] ("
    assert f"{note}{LASER}); SBERT [173] (" in md
    html = render.html_table(t33)
    assert html.count(f'class="meas cited" title="{LASER}"') == len(laser)
    assert f"LASER [12] ({LASER})" in html
    tex = render.latex(t33)
    assert r"LASER [12] & cited / 93 & cited / 1024" in tex and LASER in tex
    rows = list(csv.DictReader(io.StringIO(render.csv_text(t33))))
    assert {r["status"] for r in rows if r["row"] == "laser-12"} == {f"cited: {LASER}"}
    # the measured rows still read "not run" until they run
    assert {r["status"] for r in rows if r["row"] == "lealla-small"} == {fill.NOT_RUN}


def test_a_cited_row_is_never_looked_up_bold_or_ranked(tmp_path):
    """A run whose name happens to match a cited row is not that baseline."""
    scores = {"laser-12": 99.0, "teacher": 80.0, "lealla-small": 70.0, "lealla-base": 75.0}
    scores["lealla-large"] = 78.0
    for run, value in scores.items():
        write_metrics(tmp_path, "ch3_lealla", run, 1, {"tatoeba_avg": value, "bucc_de": value})
    t33 = filled("thesis-table-3.3", collect(tmp_path, "tiny"))
    laser = t33.cell("laser-12", "Ttb.")
    assert (laser.measured, laser.status, laser.bold_measured) == (None, fill.CITED, False)
    assert ("ch3_lealla", "laser-12") not in t33.runs_used
    bold = {k for k in t33.row_keys if t33.cell(k, "Ttb.").bold_measured}
    assert bold == {"teacher", "lealla-large", "lealla-base"}  # the top 3 of the measured rows
    # the published side keeps the thesis's marks: LASER's printed 95.4 is BUCC de's best
    assert t33.cell("laser-12", "BUCC de").bold_published


def _ems(results, seed, tatoeba, bucc, chapter="ch2_ems"):
    languages = [
        t.split(":")[1]
        for t in DEFINITIONS["thesis-table-3.3"].rows["ems"].cells["Ttb."]  # 112 languages
    ]
    metrics = {name: tatoeba + i / 100 for i, name in enumerate(languages)}
    metrics |= {f"bucc_{lang}": bucc for lang in ("de", "fr", "ru", "zh")}
    metrics |= {"languages": 62, "parameters": 147e6}
    write_metrics(results, chapter, "ems", seed, metrics)
    return statistics.fmean(metrics[name] for name in languages)


def test_a_row_another_chapter_measures_reads_that_chapters_results(tmp_path):
    ttb = statistics.fmean([_ems(tmp_path, 1, 60.0, 90.0), _ems(tmp_path, 2, 62.0, 92.0)])
    _ems(tmp_path, 1, 10.0, 10.0, chapter="ch3_lealla")  # Chapter 3's own run of that name
    t33 = filled("thesis-table-3.3", collect(tmp_path, "tiny"))
    assert t33.cell("ems", "Ttb.").measured == pytest.approx(ttb)  # all 112 languages
    assert t33.cell("ems", "BUCC de").measured == 91.0
    assert t33.cell("ems", "BUCC avg.").measured == 91.0
    assert (t33.cell("ems", "La.").measured, t33.cell("ems", "P").measured) == (62, 147e6)
    assert {t33.cell("ems", c).status for c in ("d", "UN es", "UN avg.")} == {fill.PUBLISHED_ONLY}
    assert ("ch2_ems", "ems") in t33.runs_used and ("ch3_lealla", "ems") not in t33.runs_used
    assert "cited" not in next(x for x in render.markdown(t33).splitlines() if "EMS" in x)


def test_a_cross_chapter_row_is_held_against_that_chapters_metric_names():
    ems = [r for r in references("ch2_ems", REFERENCE) if r.where.startswith("thesis-table-3.3")]
    assert {r.metric for r in ems} >= {"bucc_de", "tatoeba_zsm", "languages", "parameters"}
    ch3 = [r.where for r in references("ch3_lealla", REFERENCE)]
    assert not any("'ems'" in w or "'laser-12'" in w for w in ch3)  # cited rows read nothing


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ({"laser-12": {"cited": {"source": LASER}, "cells": {"Ttb.": "laser:ttb"}}}, "no runs"),
        ({"laser-12": {"cited": {"source": LASER}, "chapter": "ch2_ems"}}, "no runs"),
        ({"laser-12": {"cited": LASER}}, r"cited must be \{source: <citation>\}"),
        ({"laser-12": {"cited": {"source": ""}}}, r"cited must be \{source"),
        ({"laser": {"cited": {"source": LASER}}}, "row 'laser' is not a row"),
        ({"ems-115": {"chapter": "ch9"}}, "no chapter 'ch9'"),
        ({"ems-115": {"chapter": "ch2_ems", "cells": {"UN avg.": "x:y"}}}, "'UN avg.' is not a"),
        ({"ems-115": {"runs": "ems"}}, "allowed keys"),
    ],
)
def test_a_malformed_row_binding_is_refused(tmp_path, rows, message):
    (tmp_path / "ch3_lealla.yaml").write_text(json.dumps({"thesis-table-3.3": {"rows": rows}}))
    with pytest.raises(tables.TableDefinitionError, match=message):
        tables.load(PUBLISHED, tmp_path)


def _tatoeba36(results, seed, value, scale, floor=0.1):
    """OneAligner (All)'s Tatoeba-36 cells and floors, under the run and metric names Table 3
    binds its row and columns to (``runs``, ``cells``)."""
    definition = DEFINITIONS["onealigner-table-3"]
    run = definition.runs["onealigner-all"]
    names = [definition.cells[lang][0].split(":")[1] for lang in definition.aggregates["Average"]]
    metrics = {name: value for name in names} | {f"floor_{name}": floor for name in names}
    write_metrics(results, "onealigner", run, seed, metrics, scale=scale)


VECO = "onealigner-beats-veco"


def test_a_measured_side_is_sign_tested_against_the_cited_number(tmp_path):
    for seed in (1, 2, 3, 4, 5):
        _tatoeba36(tmp_path, seed, 90.0 + seed / 10, "full")
    found = claims.evaluate(CLAIMS[VECO], fill_all(collect(tmp_path, "full")), (300, 1))
    assert (found.outcome, found.p_value) == (claims.HOLDS, pytest.approx(1 / 32))
    assert (found.measured_b, found.published_b, found.cited) == (
        86.9,
        86.9,
        {"b": "Luo et al. (2021)"},
    )
    assert found.statistic == "sign test over 5 seeds against the cited 86.9"
    # a cited side has no floor: only the measured one must clear its own
    assert (found.floor_a, found.floor_b, found.floor_p) == (0.1, None, pytest.approx(1 / 32))
    assert claims.floor_text(found) == "0.10 / cited (0.0312)"
    assert "90.30 / 86.90 (cited: Luo et al. (2021))" in claims.markdown([found], "full")
    # the chapter's DVC summary lists the measured side only: the cited one never ran
    assert summary.verdicts([found])[VECO] == {"a": 90.3, "verdict": claims.HOLDS}


@pytest.mark.parametrize(
    ("values", "outcome", "p"),
    [
        ([86.0] * 5, claims.FAILS, 1.0),  # every seed below 86.9
        ([86.0, 86.5, 88.0, 88.5, 90.0], claims.INCONCLUSIVE, 0.5),  # mean above, 3 of 5 seeds
        ([87.0] * 5, claims.HOLDS, 1 / 32),
    ],
)
def test_the_cited_number_is_the_constant_each_seed_is_compared_with(tmp_path, values, outcome, p):
    for seed, value in enumerate(values, start=1):
        _tatoeba36(tmp_path, seed, value, "full")
    found = claims.evaluate(CLAIMS[VECO], fill_all(collect(tmp_path, "full")), (300, 1))
    assert (found.outcome, found.p_value) == (outcome, pytest.approx(p))


def test_below_full_scale_a_cited_comparison_is_not_judged(tmp_path):
    """At tiny the measured side ran on a stand-in, the cited number on the real benchmark."""
    for seed in (1, 2, 3, 4, 5):
        _tatoeba36(tmp_path, seed, 95.0, "tiny")
    found = claims.evaluate(CLAIMS[VECO], fill_all(collect(tmp_path, "tiny")), (300, 1))
    assert found.outcome == claims.NOT_COMPARABLE and found.p_value == pytest.approx(1 / 32)
    for seed in (1, 2, 3, 4, 5):
        _tatoeba36(tmp_path, seed, 0.1, "tiny")  # at its floor: that is still said first
    found = claims.evaluate(CLAIMS[VECO], fill_all(collect(tmp_path, "tiny")), (300, 1))
    assert found.outcome == claims.BELOW_FLOOR


MRASP2 = "unified-multilingual-mrasp2"
MRASP = "pre-train-fine-tuned-mrasp-lin-et-al.-2020"  # cited: 44.3 En-Fr →


def _bleu_run(results, seed, rate, floor_rate):
    """mRASP2's En-Fr → BLEU with its sentence statistics, the value recomputed from them."""
    path = write_metrics(
        results,
        "mrasp2",
        MRASP2,
        seed,
        {"en-fr": 0.0, "floor_en-fr": 0.0},
        scale="full",
        bleu_drop={"en-fr": rate, "floor_en-fr": floor_rate},
    )
    data = json.loads(path.read_text())
    for name, stats in data["bleu_stats"].items():
        data["metrics"][name] = bleu_from_stats(np.asarray(stats).sum(axis=0))
    path.write_text(json.dumps(data))
    return data["metrics"]["en-fr"], np.asarray(data["bleu_stats"]["en-fr"])


def test_a_measured_side_is_bootstrapped_alone_against_the_cited_number(tmp_path):
    values = [_bleu_run(tmp_path, seed, 0.1, 0.9) for seed in (1, 2)]
    measured = statistics.fmean(v for v, _ in values)
    margin = measured - 44.3 - 0.5  # agrees by half a point: the bootstrap cannot tell
    claim = {
        "id": "mrasp2-beats-finetuned-mrasp",
        "chapter": "mrasp2",
        "claim": "mRASP2 beats fine-tuned mRASP on En-Fr",
        "a": {"table": "mrasp2-table-1", "row": MRASP2, "columns": ["En-Fr →"]},
        "b": {"table": "mrasp2-table-1", "row": MRASP, "columns": ["En-Fr →"]},
        "direction": "higher",
        "statistic": "paired_bootstrap",
        "margin": margin,
    }
    found = claims.evaluate(claim, fill_all(collect(tmp_path, "full")), (300, 1))
    assert found.statistic == (
        "one-sample bootstrap over 40 sentences in 1 test set × 2 seeds against the cited 44.3"
    )
    # the same replicates by hand: the measured quantity resampled, minus the constant
    test_set = SentenceSet(np.stack([stats for _, stats in values]))
    alone = paired_differences([test_set], [], corpus_bleu, 300, 1) - 44.3
    assert found.p_value == pytest.approx((np.sum(alone <= margin) + 1) / 301)
    assert found.p_value > 0.05 and found.outcome == claims.INCONCLUSIVE
    found = claims.evaluate(dict(claim, margin=0), fill_all(collect(tmp_path, "full")), (300, 1))
    assert (found.outcome, found.p_value) == (claims.HOLDS, pytest.approx(1 / 301))


def test_a_one_sample_bootstrap_resamples_one_side():
    scores = SentenceSet(np.arange(10, dtype=float).reshape(1, 10, 1))
    alone = paired_differences([scores], [], corpus_mean, 200, 3)
    against = paired_differences([], [scores], corpus_mean, 200, 3)
    assert np.allclose(alone, -against) and alone.std() > 0 and abs(alone.mean() - 4.5) < 0.5
    with pytest.raises(ValueError, match="equal-length"):
        paired_differences([], [], corpus_mean, 10, 3)


@pytest.mark.parametrize(
    ("b", "message"),
    [
        ({"table": "onealigner-table-3", "row": "ernie-m", "columns": ["Average"]}, "both sides"),
        ({"table": "onealigner-table-3", "rows": ["veco", "onealigner"], "column": "af"}, "mixes"),
    ],
)
def test_a_claim_needs_one_measured_side_of_measured_cells(b, message):
    claim = dict(CLAIMS[VECO], b=b)
    if message == "both sides":
        claim["a"] = {"table": "onealigner-table-3", "row": "veco", "columns": ["Average"]}
    with pytest.raises(claims.ClaimDefinitionError, match=message):
        claims.evaluate(claim, fill_all(Results("tiny")))
