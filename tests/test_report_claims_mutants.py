"""The claims ledger as the report prints it: `Verdict.as_dict` (claims.json), the markdown
table's rows against the verdict's fields written out by hand, the scale note, and the checks
`claims.load` makes on claims.yaml. The report-build tests reach these only through a whole
build; here each field is checked on its own."""

from __future__ import annotations

import pytest
import yaml

from mlrep.report import claims

CLAIM = {
    "id": "x-beats-y",
    "chapter": 8,
    "claim": "X beats Y",
    "a": {"table": "t", "row": "x", "columns": ["c"]},
    "b": {"table": "t", "row": "y", "columns": ["c"]},
    "direction": "higher",
    "statistic": "sign_test",
    "margin": 0.5,
    "alpha": 0.1,
}


def judged() -> claims.Verdict:
    return claims.Verdict(
        claim=CLAIM,
        citation="Table 8.2",
        published_a=12.345,
        published_b=3.0,
        published_holds=True,
        measured_a=7.891,
        measured_b=2.5,
        outcome=claims.INCONCLUSIVE,
        statistic="sign test over 2 seeds",
        p_value=0.25,
        seeds=[1, 2],
        floor_a=0.5,
        floor_b=0.25,
        floor_p=0.0123456,
    )


def test_as_dict_carries_every_field_under_its_name():
    assert judged().as_dict() == {
        "id": "x-beats-y",
        "chapter": 8,
        "claim": "X beats Y",
        "citation": "Table 8.2",
        "direction": "higher",
        "margin": 0.5,
        "alpha": 0.1,
        "published": {"a": 12.345, "b": 3.0, "holds": True},
        "measured": {"a": 7.891, "b": 2.5, "seeds": [1, 2]},
        "floor": {"a": 0.5, "b": 0.25, "p": 0.0123456},
        "cited": {},
        "correlation": None,
        "outcome": "inconclusive",
        "statistic": "sign test over 2 seeds",
        "p_value": 0.25,
    }


def test_as_dict_defaults_margin_0_and_alpha_5_percent():
    bare = {k: v for k, v in CLAIM.items() if k not in {"margin", "alpha"}}
    verdict = claims.Verdict(bare, "Table 8.2", None, None, None)
    found = verdict.as_dict()
    assert (found["margin"], found["alpha"]) == (0, 0.05)
    assert found["outcome"] == "not run at this scale" and found["p_value"] is None
    assert found["measured"] == {"a": None, "b": None, "seeds": []}
    assert found["floor"] == {"a": None, "b": None, "p": None}


def rows(text: str) -> list[list[str]]:
    """The table's cells, one list per line that starts with a pipe."""
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]


def test_a_ledger_row_shows_the_verdicts_fields():
    text = claims.markdown([judged()], "full")
    header, rule, row = rows(text)
    assert header == [
        "id",
        "claim",
        "source",
        "published a / b",
        "measured a / b",
        "floor a / b (p)",
        "outcome",
        "statistic",
        "p",
    ]
    assert rule == ["---"] * 9
    assert row == [
        "x-beats-y",
        "X beats Y",
        "Table 8.2",
        "12.35 / 3.00",
        "7.89 / 2.50",
        "0.50 / 0.25 (0.0123)",
        "inconclusive",
        "sign test over 2 seeds",
        "0.25",
    ]
    lines = text.split("\n")
    assert lines[:4] == ["**Claims ledger at scale full**", "", claims.FLOOR_NOTE, ""]
    assert text.endswith(" |\n") and lines[-1] == ""


def test_a_claim_not_run_shows_dashes():
    verdict = claims.Verdict(CLAIM, "Table 8.2", None, 3.0, None)
    (row,) = rows(claims.markdown([verdict], "tiny"))[2:]
    assert row[3:] == ["– / 3.00", "– / –", "–", "not run at this scale", "–", "–"]


def test_a_cited_side_is_marked_in_measured_and_floor():
    verdict = judged()
    verdict.cited = {"b": "OneAligner"}
    verdict.floor_b, verdict.floor_p = None, None
    assert claims.measured_text(verdict) == "7.89 / 2.50 (cited: OneAligner)"
    assert claims.floor_text(verdict) == "0.50 / cited"
    verdict.cited = {"a": "VECO"}
    verdict.floor_a, verdict.floor_b = None, 0.25
    assert claims.measured_text(verdict) == "7.89 (cited: VECO) / 2.50"
    assert claims.floor_text(verdict) == "cited / 0.25"


def test_one_missing_floor_is_a_dash_of_its_own():
    verdict = judged()
    verdict.floor_b = None
    assert claims.floor_text(verdict) == "0.50 / – (0.0123)"
    verdict.floor_a, verdict.floor_b = None, 0.25
    assert claims.floor_text(verdict) == "– / 0.25 (0.0123)"


def test_numbers_have_two_decimals():
    assert [claims.number(v) for v in (None, 0.0, 1.005e3, -2.5)] == [
        "–",
        "0.00",
        "1005.00",
        "-2.50",
    ]


def test_below_full_the_note_says_the_models_are_toys_then_the_floor_rule():
    assert claims.scale_note("full") == claims.FLOOR_NOTE
    note = claims.scale_note("tiny")
    assert note.startswith("At scale tiny the models are toy-sized")
    assert "(that needs scale full), and below floor is the expected outcome." in note
    assert note.endswith(" " + claims.FLOOR_NOTE)
    text = claims.markdown([], "small")
    assert text.split("\n")[:3] == [
        "**Claims ledger at scale small**",
        "",
        claims.scale_note("small"),
    ]


def write(tmp_path, entries) -> object:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(entries), encoding="utf-8")
    return path


def test_load_reads_a_well_formed_file(tmp_path):
    within = dict(CLAIM, id="close", direction="within", margin=0.1, cite="Paper, Table 1")
    assert claims.load(write(tmp_path, [CLAIM, within])) == [CLAIM, within]


def test_an_empty_file_has_no_claims(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text("", encoding="utf-8")
    assert claims.load(path) == []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"direction": None}, r"claim 2 \(x-beats-y\): missing \['direction'\] / unknown \[\]"),
        ({"seeds": 3}, r"claim 2 \(x-beats-y\): missing \[\] / unknown \['seeds'\]"),
        ({"statistic": "t_test"}, "statistic one of"),
        ({"id": "first"}, r"claim 2 \(first\): duplicate id"),
    ],
)
def test_a_malformed_claim_is_named_with_its_position(tmp_path, changes, message):
    first = dict(CLAIM, id="first")
    bad = {k: v for k, v in dict(CLAIM, **changes).items() if v is not None}
    with pytest.raises(claims.ClaimDefinitionError, match=message):
        claims.load(write(tmp_path, [first, bad]))


def test_a_claim_without_id_is_named_by_a_question_mark(tmp_path):
    bad = {k: v for k, v in CLAIM.items() if k != "id"}
    with pytest.raises(claims.ClaimDefinitionError, match=r"claim 1 \(\?\): missing \['id'\]"):
        claims.load(write(tmp_path, [bad]))


def test_a_within_claim_without_margin_is_refused(tmp_path):
    bad = {k: v for k, v in CLAIM.items() if k != "margin"}
    with pytest.raises(claims.ClaimDefinitionError, match="within needs a positive margin"):
        claims.load(write(tmp_path, [dict(bad, direction="within")]))
