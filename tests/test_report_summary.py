"""`mlrep report summary`: one chapter's seed means as the flat JSON DVC compares."""

import json

from mlrep.cli import main
from tests.report_helpers import write_metrics


def test_summary_averages_seeds_of_one_chapter_at_one_scale(tmp_path):
    results = tmp_path / "results"
    write_metrics(results, "ch8_layernorm", "opus/pivot", 1, {"zst_bleu": 2.0})
    write_metrics(results, "ch8_layernorm", "opus/pivot", 10, {"zst_bleu": 3.0, "n": 7})
    write_metrics(results, "ch8_layernorm", "iwslt/pivot", 1, {"zst_bleu": 9.0}, scale="full")
    write_metrics(results, "ch2_ems", "ems", 1, {"p_at_1": 50.0})
    out = tmp_path / "metrics" / "ch8_layernorm.json"
    args = ["report", "summary", "--results", str(results), "--chapter", "ch8_layernorm"]
    assert main([*args, "--scale", "tiny", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == {
        "opus/pivot/n": 7.0,  # only the seed that has it
        "opus/pivot/seeds": 2,
        "opus/pivot/zst_bleu": 2.5,
    }
