"""Correlation claims (statistic ``pearson``): every outcome on a hand-built results set, the
checks `claims.load` makes on their YAML, and the thesis's r reproduced from the published
Tables C.3 and C.6."""

import pytest
import yaml

from mlrep.report import claims, fill, page, summary, tables
from mlrep.report.metrics import collect
from mlrep.report.reference import load_all
from tests.conftest import REPO
from tests.report_helpers import write_metrics

PUBLISHED = load_all(REPO / "reports" / "reference")
BLEU, P1 = "thesis-table-C.3", "thesis-table-C.6"
DEFINITIONS = {t: d for t, d in tables.load(PUBLISHED).items() if t in (BLEU, P1)}
CLAIMS = {c["id"]: c for c in claims.load()}
PAIRS = ["en-tr", "en-ro", "en-et", "en-kk", "en-my"]
SEEDS = (1, 2, 3, 4, 5)  # five seeds: the sign test that tests the floors can reach 1/32
SYSTEM = "626_en-tr-ro-et-my-kk"  # the 626.II runs Tables C.3 and C.6 read
CLAIM = {
    "id": "gains-correlate",
    "chapter": "ch5_wordcl",
    "claim": "BLEU gains of +w2w over mBART FT track P@1 gains of +w2w over MLSC",
    "a": {
        "table": BLEU,
        "row": "mbart-ft-w2w",
        "baseline": "mbart-ft",
        "columns": [[f"{p} →", f"{p} ←"] for p in PAIRS],
    },
    "b": {"table": P1, "row": "mlsc-w2w", "baseline": "mlsc", "columns": PAIRS},
    "direction": "higher",
    "statistic": "pearson",
}
RISING = [1.0, 2.0, 3.0, 4.0, 5.0]


def _run(results, run, values, seeds=SEEDS, floor: float | None = 0.0):
    """One 626.II run whose pairs score `values`: both BLEU directions and the P@1 of a pair
    (Tables C.3 and C.6 read their own metrics of the same run)."""
    per_pair = dict(zip(PAIRS, values, strict=True))
    metrics = {}
    for pair, value in per_pair.items():
        xx = pair.split("-")[1]
        for name in (f"bleu_en-{xx}", f"bleu_{xx}-en", f"sent_p_at_1_{pair}"):
            metrics[name] = value
            if floor is not None:
                metrics[f"floor_{name}"] = floor
    for seed in seeds:
        write_metrics(results, "ch5_wordcl", f"{SYSTEM}/{run}", seed, metrics)


def _gains(results, a_gains, b_gains, **run):
    """Baselines at 10 everywhere, each system row at 10 + its gains."""
    for system, gains in (("mbart-ft-w2w", a_gains), ("mlsc-w2w", b_gains)):
        _run(results, system, [10 + g for g in gains], **run)
    for baseline in ("mbart-ft", "mlsc"):
        _run(results, baseline, [10.0] * len(PAIRS), **run)


def _verdict(results, **changes):
    filled = {
        t: fill.fill(d, PUBLISHED[t], collect(results, "tiny"), (300, 1))
        for t, d in DEFINITIONS.items()
    }
    return claims.evaluate(dict(CLAIM, **changes), filled, (300, 1))


def test_correlated_gains_hold_by_the_one_sided_exact_permutation_test(tmp_path):
    """P@1 gains 0.2 × (1, 2, 3, 5, 4): r = 0.9, one-sided p = 5/120 ≤ 0.05 (two-sided 10/120
    would be inconclusive)."""
    _gains(tmp_path, RISING, [0.2, 0.4, 0.6, 1.0, 0.8])
    found = _verdict(tmp_path)
    assert found.correlation["measured_r"] == pytest.approx(0.9)
    assert found.correlation["n"] == 5 and found.seeds == list(SEEDS)
    assert found.statistic == (
        "one-sided permutation test of Pearson's r over 5 points (all 120 orderings)"
    )
    assert found.floor_p == pytest.approx(1 / 32) and found.floor_a == found.floor_b == 0.0
    assert (found.outcome, found.p_value) == (claims.HOLDS, pytest.approx(5 / 120))
    assert "| r = 0.90 over 5 points | 0.00 / 0.00 (0.0312) | holds |" in claims.markdown(
        [found], "tiny"
    )
    assert "<td>r = 0.90 over 5 points</td>" in page._ledger([found])
    assert summary.verdicts([found]) == {"gains-correlate": {"r": 0.9, "verdict": "holds"}}
    assert found.as_dict()["correlation"] == found.correlation


def test_gains_that_move_apart_fail_and_hold_a_lower_claim(tmp_path):
    _gains(tmp_path, RISING, [3.0, 2.5, 2.0, 0.5, 1.0])
    found = _verdict(tmp_path)
    assert found.correlation["measured_r"] < -0.9 and found.outcome == claims.FAILS
    assert found.p_value > 0.9  # p of r > 0
    lower = _verdict(tmp_path, direction="lower")  # the same r, its other tail
    assert (lower.outcome, lower.p_value) == (claims.HOLDS, pytest.approx(4 / 120))


def test_a_weak_correlation_is_inconclusive(tmp_path):
    _gains(tmp_path, RISING, [2.0, 1.0, 3.0, 0.5, 2.5])
    found = _verdict(tmp_path)
    assert found.correlation["measured_r"] > 0 and found.p_value > 0.05
    assert found.outcome == claims.INCONCLUSIVE


def test_a_constant_series_leaves_r_undefined(tmp_path):
    _gains(tmp_path, RISING, [1.0] * 5)
    found = _verdict(tmp_path)
    assert (found.outcome, found.p_value, found.correlation["measured_r"]) == (
        claims.INCONCLUSIVE,
        None,
        None,
    )
    assert "constant" in found.statistic


def test_one_seed_cannot_clear_the_floors(tmp_path):
    _gains(tmp_path, RISING, RISING, seeds=(1,))
    found = _verdict(tmp_path)
    assert found.p_value == pytest.approx(1 / 120) and found.floor_p == 0.5
    assert found.outcome == claims.BELOW_FLOOR


def test_rows_at_their_floor_are_below_floor(tmp_path):
    _gains(tmp_path, RISING, RISING, floor=10.0)  # the baselines score their floor
    assert _verdict(tmp_path).outcome == claims.BELOW_FLOOR


def test_without_floors_a_correlation_is_not_judged(tmp_path):
    _gains(tmp_path, RISING, RISING, floor=None)
    found = _verdict(tmp_path)
    assert found.outcome == claims.NO_FLOOR and found.p_value == pytest.approx(1 / 120)


def test_a_correlation_is_not_run_until_every_row_ran(tmp_path):
    _run(tmp_path, "mbart-ft-w2w", RISING)
    _run(tmp_path, "mlsc-w2w", RISING)
    _run(tmp_path, "mbart-ft", [0.0] * 5)
    found = _verdict(tmp_path)
    assert (found.outcome, found.p_value, found.correlation["measured_r"]) == (
        claims.NOT_RUN,
        None,
        None,
    )


def test_a_cited_row_cannot_be_a_gain(tmp_path):
    filled = {
        t: fill.fill(d, PUBLISHED[t], collect(tmp_path, "tiny")) for t, d in DEFINITIONS.items()
    }
    filled[P1].cells[filled[P1].row_keys.index("mlsc")][0].cited = "someone (2020)"
    with pytest.raises(claims.ClaimDefinitionError, match=r"gains-correlate: .* is cited"):
        claims.evaluate(CLAIM, filled)


THESIS_R = {"align": 0.79, "w2w": 0.93, "fa": 0.90}  # seeds/000_cb6a70b2bb3d886f.txt:2044


@pytest.mark.parametrize("system", sorted(THESIS_R))
def test_the_published_tables_reproduce_the_thesis_r(system):
    filled = {
        t: fill.fill(d, PUBLISHED[t], collect(REPO / "nonexistent", "tiny"))
        for t, d in DEFINITIONS.items()
    }
    found = claims.evaluate(CLAIMS[f"ch5-bleu-gain-tracks-sentence-retrieval-{system}"], filled)
    assert round(found.correlation["published_r"], 2) == THESIS_R[system]
    assert found.published_holds is True and found.outcome == claims.NOT_RUN
    assert claims.published_text(found) == f"r = {THESIS_R[system]:.2f}"


def _results(table_id, side):
    """The (run, metric) pairs a plain side's cells read."""
    definition, table = DEFINITIONS[table_id], PUBLISHED[table_id]
    keys = definition.row_keys(table.header, table.rows)
    row = table.rows[keys.index(side["row"])]
    return {
        (key.run, key.metrics)
        for column in side["columns"]
        for key in definition.cell_key(table.header, row, side["row"], column)
    }


@pytest.mark.parametrize("system", sorted(THESIS_R))
def test_the_two_series_of_a_ch5_correlation_read_different_results(system):
    """Tables C.3 and C.6 name their metrics (BLEU per direction, P@1 per pair), so the two
    series of a correlation are two measurements, not one read twice."""
    claim = CLAIMS[f"ch5-bleu-gain-tracks-sentence-retrieval-{system}"]
    a_side, _, b_side, _ = claims.cell_sides(claim)
    assert not _results(BLEU, a_side) & _results(P1, b_side)


def _load(tmp_path, **changes):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump([dict(CLAIM, **changes)]), encoding="utf-8")
    return claims.load(path)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"direction": "within", "margin": 0.5}, "pearson tests r > 0 .* with no margin"),
        ({"margin": 0.2}, "pearson tests r > 0 .* with no margin"),
        ({"b": {"table": P1, "row": "mlsc-w2w", "columns": PAIRS}}, "side b .* baseline"),
        (
            {"b": dict(CLAIM["b"], columns=PAIRS[:4])},
            "as many columns in each, at least 3; got 5 and 4",
        ),
        (
            {"a": dict(CLAIM["a"], columns=PAIRS[:2]), "b": dict(CLAIM["b"], columns=PAIRS[:2])},
            "at least 3; got 2 and 2",
        ),
        ({"statistic": "sign_test"}, "a side with a baseline .* set statistic: pearson"),
    ],
)
def test_a_malformed_correlation_claim_is_refused_naming_it(tmp_path, changes, message):
    with pytest.raises(claims.ClaimDefinitionError, match=f"gains-correlate.*{message}"):
        _load(tmp_path, **changes)


def test_a_well_formed_correlation_claim_loads(tmp_path):
    assert _load(tmp_path) == [CLAIM]
