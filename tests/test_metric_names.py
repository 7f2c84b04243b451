"""The metric-names contract: each built chapter declares the names its runs write
(``mlrep/chapters/<id>/metrics.py``), `mlrep.report.metrics.write` refuses any other, and
every name a chapter's tables, claims and figures read is declared, so a misspelt name fails
here instead of showing as "not run" in the report."""

from __future__ import annotations

import functools
import json
import re

import pytest

from mlrep import chapters
from mlrep.nmt.metrics import layer_metrics
from mlrep.nmt.score import _metrics as direction_metrics
from mlrep.report.metrics import (
    FLOOR,
    MetricNameError,
    MetricsFileError,
    collect,
    compile_template,
    declared,
    read,
    write,
)
from mlrep.report.references import references
from tests.conftest import REPO

REFERENCE = REPO / "reports" / "reference"


@pytest.mark.parametrize("chapter", [c.id for c in chapters.built()])
def test_every_metric_the_report_reads_is_declared(chapter):
    declaration = declared(chapter)
    found = references(chapter, REFERENCE)
    assert found, f"{chapter}: its tables, claims and figures read no metric"
    wrong: dict[str, list[str]] = {}
    for ref in found:
        if not declaration.declares(ref.metric):
            wrong.setdefault(ref.metric, []).append(ref.where)
    assert not wrong, "\n".join(
        f"{name!r} is read by {', '.join(where[:3])}{' …' if len(where) > 3 else ''} but no "
        f"pattern of {declaration.source} produces it"
        for name, where in sorted(wrong.items())
    )


def test_claims_and_figures_resolve_through_their_tables():
    where = {ref.where.split(" ")[0] for ref in references("ch8_layernorm", REFERENCE)}
    assert {"claim", "figure", "thesis-table-8.2"} <= where


def test_templates_name_placeholders_and_alternatives():
    regex = re.compile(compile_template("llr_{sup|zst}_{src|tgt}_{enc|dec}{k}"))
    assert all(regex.fullmatch(name) for name in ("llr_sup_src_enc1", "llr_zst_tgt_dec12"))
    for wrong in ("llr_sup_src_enc0", "llr_all_src_enc1", "llr_sup_src_enc", "llr_sup_src_enc1x"):
        assert not regex.fullmatch(wrong)
    with pytest.raises(MetricNameError, match=r"unknown placeholder \{language\}"):
        compile_template("bleu_{language}")


def test_write_refuses_an_undeclared_name_and_writes_nothing(tmp_path):
    out = tmp_path / "seed1" / "metrics.json"
    with pytest.raises(MetricNameError) as error:
        write(out, "ch8_layernorm", "opus/pivot", 1, "tiny", {"zst_bleu": 3.0, "zst_bleuu": 1.0})
    assert "zst_bleuu" in str(error.value) and "zst_bleu," not in str(error.value)
    assert "mlrep/chapters/ch8_layernorm/metrics.py" in str(error.value)
    with pytest.raises(MetricNameError, match="off_target_rate"):
        write(out, "ch8_layernorm", "r", 1, "tiny", {}, sentence_scores={"off_target_rate": [0]})
    assert not out.exists()


def test_a_placeholder_chapter_declares_nothing_so_writes_nothing(tmp_path):
    placeholder = chapters.placeholders()[0].id
    with pytest.raises(MetricNameError, match=f"chapters/{placeholder}/metrics.py"):
        write(tmp_path / "metrics.json", placeholder, "r", 1, "tiny", {"bleu": 1.0})


def test_what_write_writes_read_reads_back(tmp_path):
    out = tmp_path / "metrics.json"
    write(
        out,
        "ch2_ems",
        "ems",
        1,
        "tiny",
        {"tatoeba_deu": 91.5, "flores_de-fr": 80.0, "amazon_cls_books_en-de": 70.0},
        checkpoint={"stand_in": True},
    )
    result = read(out)
    assert (result.chapter, result.run, result.seed, result.scale) == ("ch2_ems", "ems", 1, "tiny")
    assert result.metrics["tatoeba_deu"] == 91.5
    assert json.loads(out.read_text())["checkpoint"] == {"stand_in": True}


def test_nmt_writers_name_only_declared_metrics(tmp_path):
    """The f-strings of `mlrep nmt score` and the probe / SVCCA metrics, checked without a
    model: synthetic per-direction scores, probe and SVCCA results."""
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps({"n_encoder_layers": 2, "src": [50, 60, None], "tgt": [1, 2, 3]}))
    svcca = tmp_path / "svcca.json"
    svcca.write_text(json.dumps({"svcca": [0.5, 0.6]}))
    per_direction = {
        "en-de": {"bleu": 30.0, "bleurt": 60.0, "zero_shot": False},
        "de-fr": {"bleu": 10.0, "bleurt": 40.0, "zero_shot": True},
    }
    names = [
        *layer_metrics({"sup": probe, "zst": probe}, svcca),
        *direction_metrics(per_direction, "bleu"),
        *direction_metrics(per_direction, "bleurt"),
    ]
    # probes, SVCCA, BLEU and BLEURT (2 directions; zst, sup and from_en means)
    assert len(names) == 2 * (2 + 3) + 2 + 2 * (2 + 3)
    assert declared("ch8_layernorm").undeclared(names) == []


def test_the_floor_of_a_declared_name_is_declared_and_nothing_else_is():
    declaration = declared("ch8_layernorm")
    assert declaration.declares(FLOOR + "zst_bleu") and declaration.declares("floor_bleu_de-fr")
    assert not declaration.declares("floor_zst_bleuu") and not declaration.declares("floorzst_bleu")
    assert not declaration.declares("floor_floor_zst_bleu")


def test_groups_split_a_metrics_sentences_and_floors_read_back_under_the_metrics_name(tmp_path):
    stats = [[3.0, 3.0, 3.0, 2.0, 1.0, 0.0, 3.0, 2.0, 1.0, 0.0]] * 3
    out = tmp_path / "ch8_layernorm" / "r" / "seed1" / "metrics.json"
    write(
        out,
        "ch8_layernorm",
        "r",
        1,
        "tiny",
        {"zst_bleu": 50.0, FLOOR + "zst_bleu": 1.0},
        bleu_stats={"zst_bleu": stats, FLOOR + "zst_bleu": stats},
        groups={"zst_bleu": [("de-fr", 2), ("fr-de", 1)], FLOOR + "zst_bleu": [("de-fr", 3)]},
    )
    result = read(out)
    assert result.groups["zst_bleu"] == [("de-fr", 2), ("fr-de", 1)]
    floor = collect(tmp_path, "tiny").floors().seeds("ch8_layernorm", "r")[0]
    assert (floor.metrics, floor.groups) == ({"zst_bleu": 1.0}, {"zst_bleu": [("de-fr", 3)]})
    assert floor.bleu_stats == {"zst_bleu": stats} and floor.seed == 1


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ({"zst_bleu": [["de-fr", 2]]}, r"groups hold 2 sentences, but .* hold \[3\]"),
        ({"zst_bleu": [["de-fr", 2], ["fr-de", 2]]}, "groups hold 4 sentences"),
        ({"sup_bleu": [["en-de", 3]]}, "groups hold 3 sentences, but .* hold \\[\\]"),
        ({"zst_bleu": [["de-fr", 0], ["fr-de", 3]]}, "positive sentences"),
        ({"zst_bleu": []}, "non-empty list"),
    ],
)
def test_groups_that_do_not_split_the_sentences_are_refused(tmp_path, groups, message):
    path = tmp_path / "metrics.json"
    document = {"chapter": "ch8_layernorm", "run": "r", "seed": 1, "scale": "tiny"}
    document |= {"metrics": {"zst_bleu": 1.0}, "bleu_stats": {"zst_bleu": [[1.0] * 10] * 3}}
    path.write_text(json.dumps(document | {"groups": groups}))
    with pytest.raises(MetricsFileError, match=message):
        read(path)


def test_chrf_stats_read_back_split_by_groups_and_are_checked(tmp_path):
    """chrF++'s 24 counts per sentence travel like bleu_stats (the name is any declared one)."""
    rows = [[float(i)] * 24 for i in range(3)]
    out = tmp_path / "ch8_layernorm" / "r" / "seed1" / "metrics.json"
    groups = {"zst_bleu": [("de-fr", 2), ("fr-de", 1)]}
    run = functools.partial(write, out, "ch8_layernorm", "r", 1, "tiny")
    run({"zst_bleu": 5.0}, chrf_stats={"zst_bleu": rows})
    assert read(out).chrf_stats == {"zst_bleu": rows}
    run({"zst_bleu": 5.0}, chrf_stats={"zst_bleu": rows}, groups=groups)
    assert read(out).groups == groups
    with pytest.raises(MetricsFileError, match="groups hold 2 sentences"):
        run({"zst_bleu": 5.0}, chrf_stats={"zst_bleu": rows}, groups={"zst_bleu": [("de-fr", 2)]})
    with pytest.raises(MetricsFileError, match=r"chrf_stats\.zst_bleu must be a list of 24-number"):
        write(out, "ch8_layernorm", "r", 1, "tiny", {}, chrf_stats={"zst_bleu": [[1.0] * 10]})
    with pytest.raises(MetricNameError):
        write(out, "ch8_layernorm", "r", 1, "tiny", {}, chrf_stats={"chrf_typo": rows})
