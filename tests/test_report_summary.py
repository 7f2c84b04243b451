"""`mlrep report summary`: a chapter's headline numbers (its tables' averages, its claims' sides
and verdicts) as the JSON DVC compares, on synthetic results trees."""

import json
import statistics

import pytest

from mlrep.cli import main
from mlrep.report import reference, tables
from mlrep.report.summary import count, label_name, table_name
from tests.report_helpers import REFERENCE, ch8_results, write_metrics

NOT_RUN, NO_FLOOR = "not run at this scale", "floor not measured"
DEFINITIONS = tables.load(reference.load_all(REFERENCE))


def summarise(results, tmp_path, chapter: str) -> dict:
    out = tmp_path / "metrics" / f"{chapter}.json"
    args = ["report", "summary", "--results", str(results), "--reference", str(REFERENCE)]
    args += ["--chapter", chapter, "--scale", "tiny", "--out", str(out)]
    assert main([*args, "--bootstrap-samples", "200", "--bootstrap-seed", "1"]) == 0
    return json.loads(out.read_text())


def tatoeba(languages: list[str], score: float) -> dict[str, float]:
    return {f"tatoeba_{lang}": score for lang in languages}


def test_names_have_no_dots_dvc_would_read_as_levels():
    assert table_name("thesis-table-E.5") == "table_E_5"
    assert table_name("ems-paper-table-14") == "ems_paper_table_14"
    assert label_name("Tatoeba Avg. (58)") == "tatoeba-avg-58"
    assert label_name("S-ENC-T-DEC w/ Res. seed 1") == "s-enc-t-dec-w-res-seed-1"


def test_ch2_summary_holds_averages_and_claims_but_no_language(tmp_path):
    results = tmp_path / "results"
    cells = DEFINITIONS["thesis-table-2.14"].cells
    every = [key.split("_", 1)[1] for key in cells["Tatoeba Avg. (58)"]]
    low = {key.split("_", 1)[1] for key in cells["Tatoeba <300k (15)"]}
    ems = {lang: 80.0 if lang in low else 90.0 for lang in every}
    bucc = {"bucc_de": 90.0, "bucc_fr": 80.0, "bucc_ru": 70.0, "bucc_zh": 60.0}
    for seed in (1, 2, 3):
        metrics = {f"tatoeba_{lang}": score + seed for lang, score in ems.items()}
        write_metrics(results, "ch2_ems", "ems", seed, {**metrics, **bucc})
        write_metrics(results, "ch2_ems", "no-xtr", seed, tatoeba(every, 50.0))
    write_metrics(results, "ch2_ems", "no-langtok", 1, tatoeba(every[:3], 99.0))  # a partial run
    write_metrics(results, "ch2_ems", "ems", 9, {"bucc_de": 0.0}, scale="full")
    write_metrics(results, "ch8_layernorm", "opus/pivot", 1, {"zst_bleu": 9.0})

    summary = summarise(results, tmp_path, "ch2_ems")

    ems_avg = round(statistics.fmean(ems.values()) + 2, 4)  # seeds 1..3 add 2 on average
    ems_low = round(80.0 + 2, 4)
    assert summary == {
        # Avg. columns that fill recomputes from the printed languages or pairs
        "table_2_4": {"avg": {"ems": ems_avg}},  # the same 58 languages
        "ems_paper_table_4": {"avg": {"ems": ems_avg}},
        "table_2_9": {"avg": {"ems": 75.0}},  # BUCC en-de … en-zh
        # columns defined as means of result keys whose header says "Avg." (2.14, paper 14)
        "table_2_14": {"tatoeba-avg-58": {"ems": ems_avg, "no-xtr": 50.0}},
        "ems_paper_table_14": {"tatoeba-avg-58": {"ems": ems_avg, "no-xtr": 50.0}},
        "claims": {
            # no floor_tatoeba_* written: not judged (tests/test_report_claims.py judges)
            "ch2-ems-beats-contrastive-only": {"a": ems_avg, "b": 50.0, "verdict": NO_FLOOR},
            "ch2-ems-beats-xtr-only": {"a": ems_avg, "verdict": NOT_RUN},
            "ch2-ems-beats-laser-bucc": {"a": 75.0, "verdict": NOT_RUN},
            "ch2-langs-token-helps-low-resource": {"a": ems_low, "verdict": NOT_RUN},
        },
    }
    assert count(summary) == 16


def test_ch8_summary_holds_direction_averages_and_tested_claims(tmp_path):
    results = tmp_path / "results"
    ch8_results(results)  # OPUS #1 and #2, seeds 1, 10, 20, with BLEU statistics
    e5 = reference.load_all(REFERENCE)["thesis-table-E.5"]
    directions = [row[1] for row in e5.rows if row[0] == "Pre." and row[1] != "avg."]
    scores = {f"bleu_{d}": float(i) for i, d in enumerate(directions)}
    write_metrics(results, "ch8_layernorm", "iwslt/prenorm-s-enc-t-dec-w", 1, scores)

    summary = summarise(results, tmp_path, "ch8_layernorm")

    # Table E.5's "Pre. avg." row at seed 1 (its avg. column needs seeds 10 and 20 too)
    assert summary["table_E_5"] == {
        "s-enc-t-dec-w-res-seed-1": {"prenorm-avg": statistics.fmean(scores.values())}
    }
    assert set(summary) == {"table_E_5", "claims"}  # Table 8.2 prints no average
    claims = summary["claims"]
    post = statistics.fmean(16.0 + seed / 10 for seed in (1, 10, 20))
    assert claims["ch8-postnorm-beats-prenorm-zst-bleu"] == {
        "a": round(post, 4),
        "b": 10.0,
        "verdict": NO_FLOOR,  # the fixture writes no copy-source floor
    }
    assert claims["ch8-iwslt-postnorm-beats-prenorm-zst-bleu"] == {"verdict": NOT_RUN}
    assert len(claims) == 6 and all("verdict" in c for c in claims.values())


@pytest.mark.parametrize("chapter", ["ch2_ems", "ch8_layernorm"])
def test_a_chapter_without_results_lists_only_its_verdicts(tmp_path, chapter):
    summary = summarise(tmp_path / "results", tmp_path, chapter)
    assert list(summary) == ["claims"]
    assert {c["verdict"] for c in summary["claims"].values()} == {NOT_RUN}
