"""The claims ledger: every outcome (holds, fails, inconclusive, not run, floor not measured,
below floor), one- and two-sided, on runs whose values and statistics both come from the
hypotheses they score (`nmt_run`), and its published sanity check."""

import random
import statistics
from collections import Counter

import pytest
import yaml
from sacrebleu.metrics import BLEU, CHRF

from mlrep.report import claims, figures, fill, tables
from mlrep.report.metrics import Results, collect, write
from mlrep.report.reference import load_all
from mlrep.report.stats import chrf_sentence_stats
from mlrep.report.tables import CellKey
from tests.conftest import REPO
from tests.report_helpers import (
    REFERENCES,
    SUPERVISED,
    ZERO_SHOT,
    ch8_results,
    copy_source,
    degrade,
    drop,
    nmt_run,
    write_metrics,
)

PUBLISHED = load_all(REPO / "reports" / "reference")
DEFINITIONS = tables.load(PUBLISHED)
CLAIMS = {c["id"]: c for c in claims.load()}


def fill_all(results):
    return {t: fill.fill(d, PUBLISHED[t], results, (300, 1)) for t, d in DEFINITIONS.items()}


def test_every_chapter_has_at_least_three_claims():
    counts = Counter(c["chapter"] for c in CLAIMS.values())
    assert set(counts) == {
        "ch2_ems",
        "ch3_lealla",
        "ch4_jass",
        "ch5_wordcl",
        "ch6_aligninstruct",
        "ch7_interlingua",
        "ch8_layernorm",
        "mrasp2",
        "onealigner",
    }
    assert min(counts.values()) >= 3


def test_every_claim_holds_on_the_published_numbers():
    # a claim that the thesis's own numbers contradict is a mis-encoded claim; a figure claim
    # reads a figure that prints none, so it cites the text that states it instead
    verdicts = claims.ledger(list(CLAIMS.values()), fill_all(Results("tiny")), (300, 1))
    printed = [v for v in verdicts if not claims.figure_claim(v.claim)]
    assert [v.claim["id"] for v in printed if v.published_holds is not True] == []
    figure = [v for v in verdicts if claims.figure_claim(v.claim)]
    assert [(v.published_holds, "cite" in v.claim) for v in figure] == [(None, True)]
    assert {v.outcome for v in verdicts} == {claims.NOT_RUN}


POST, PRE = "opus/postnorm-s-enc-t-dec-w", "opus/prenorm-s-enc-t-dec-w"
ZST = "ch8-postnorm-beats-prenorm-zst-bleu"
SUP = "ch8-supervised-unaffected"


def fixed(rate: float, nudge: int = 0, nudge_rate: float = 0.2):
    """A system independent of run and seed: references with words dropped at `rate`, the
    first `nudge` sentences losing a further share `nudge_rate` of their words."""

    def system(sources, references, rng):
        drops = random.Random(0)
        out = [degrade(r, rate, drops) for r in references]
        return [
            degrade(o, nudge_rate, random.Random(1)) if i < nudge else o for i, o in enumerate(out)
        ]

    return system


def verdict(results, claim_id, **changes):
    return claims.evaluate(
        dict(CLAIMS[claim_id], **changes), fill_all(collect(results, "tiny")), (300, 1)
    )


def corpus_bleus(results, run, seed, directions):
    """Each direction's BLEU straight from the run's hypothesis and reference files."""
    text, hyps = results.parent / f"{results.name}-t", results.parent / f"{results.name}-h"
    return [
        BLEU(tokenize="zh" if d.tgt == "zh" else "13a")
        .corpus_score(
            (hyps / run / str(seed) / f"{d.name}.hyp").read_text().splitlines(),
            [(text / f"test.{d.name}.{d.tgt}").read_text().splitlines()],
        )
        .score
        for d in directions
    ]


def test_a_bootstrapped_verdict_tests_the_printed_mean_over_directions_and_seeds(tmp_path):
    """The side's value is the mean over seeds of the mean over directions of each
    direction's BLEU (its own tokenizer, zh included); the bootstrap recomputes exactly that."""
    for seed in (1, 10, 20):
        nmt_run(tmp_path, POST, seed, drop(0.1))
        nmt_run(tmp_path, PRE, seed, drop(0.5))
    found = verdict(tmp_path, ZST)
    per_seed = [statistics.fmean(corpus_bleus(tmp_path, POST, s, ZERO_SHOT)) for s in (1, 10, 20)]
    assert found.measured_a == pytest.approx(statistics.fmean(per_seed), abs=1e-9)
    assert (found.outcome, found.seeds) == (claims.HOLDS, [1, 10, 20])
    assert found.statistic == "paired bootstrap over 104 sentences in 3 test sets × 3 seeds"
    assert found.p_value < 0.01 and found.floor_p < 0.01
    # the floor is the copy-the-source BLEU of the same directions
    copied = nmt_run(tmp_path / "copy", POST, 1, copy_source())["metrics"]["zst_bleu"]
    assert found.floor_a == found.floor_b == pytest.approx(copied)


def test_a_cells_test_sets_are_its_directions_the_same_at_every_seed():
    rows = [[float(i)] * 10 for i in range(3)]
    groups = {1: [("de-fr", 2), ("fr-de", 1)], 2: [("de-fr", 1), ("fr-de", 2)]}
    cell = fill.Cell(published="", bleu_stats={1: rows, 2: rows}, groups=groups)
    assert cell.test_sets([1, 2], "bleu_stats") is None  # seeds disagree on the directions
    cell.groups[2] = cell.groups[1]
    sets = cell.test_sets([1, 2], "bleu_stats")
    assert [(s.data.shape, s.weight) for s in sets] == [((2, 2, 10), 0.5), ((2, 1, 10), 0.5)]
    assert sets[1].data[1, 0, 0] == 2.0  # the second direction holds the third sentence
    assert cell.test_sets([1, 3], "bleu_stats") is None  # seed 3 has no statistics
    assert cell.test_sets([1, 2], "sentence_scores") is None


def test_chrf_cells_are_bootstrapped_from_their_chrf_stats(tmp_path):
    """chrF++ values and their statistics written by two runs reach the cells and the ledger
    (the metric's name is any the chapter declares)."""
    rng = random.Random(5)
    sides = []
    for run, rate in (("good", 0.05), ("bad", 0.5)):
        for seed in (1, 2):
            hyps = [degrade(r, rate, rng) for r in REFERENCES]
            write(
                tmp_path / "ch8_layernorm" / run / f"seed{seed}" / "metrics.json",
                *("ch8_layernorm", run, seed, "tiny"),
                {"zst_bleu": CHRF(word_order=2).corpus_score(hyps, [REFERENCES]).score},
                chrf_stats={"zst_bleu": chrf_sentence_stats(hyps, REFERENCES)},
            )
        cell = fill.Cell(published="")
        fill._measure(
            [CellKey(run, ("zst_bleu",))], collect(tmp_path, "tiny"), "ch8_layernorm", cell
        )
        assert sorted(cell.chrf_stats) == [1, 2]
        sides.append(claims._Side([cell]))
    higher = claims._Hypothesis(within=False, margin=0.0)
    p, described, seeds = claims._compare(*sides, "paired_bootstrap", higher, (300, 1))
    assert described.startswith("paired bootstrap over") and seeds == [1, 2] and p < 0.01
    sides[0].cells[0].seeds[1] += 1.0  # statistics that no longer give the printed chrF++
    _, described, _ = claims._compare(*sides, "paired_bootstrap", higher, (300, 1))
    assert described == "sign test over 2 seeds (chrf_stats do not reproduce the printed values)"


def test_statistics_that_do_not_reproduce_the_printed_value_are_not_bootstrapped(tmp_path):
    """`ch8_results` types its BLEU in beside unrelated statistics: the ledger says so and
    falls back to the sign test over seeds, rather than test a number it does not print."""
    ch8_results(tmp_path, post_better=True)
    found = verdict(tmp_path, ZST)
    assert found.statistic == (
        "sign test over 3 seeds (bleu_stats do not reproduce the printed values)"
    )
    assert (found.p_value, found.outcome) == (0.125, claims.NO_FLOOR)


def test_claim_fails_when_the_measured_direction_is_reversed(tmp_path):
    nmt_run(tmp_path, POST, 1, drop(0.5))
    nmt_run(tmp_path, PRE, 1, drop(0.1))
    found = verdict(tmp_path, ZST)
    assert found.outcome == claims.FAILS and found.p_value > 0.9


def test_a_point_estimate_without_significance_is_inconclusive(tmp_path):
    nmt_run(tmp_path, POST, 1, fixed(0.1))
    nmt_run(
        tmp_path, PRE, 1, {"de-fr": fixed(0.1, nudge=1), "fr-de": fixed(0.1), "de-zh": fixed(0.1)}
    )
    found = verdict(tmp_path, ZST)
    assert 0 < found.measured_a - found.measured_b < 0.5
    assert found.outcome == claims.INCONCLUSIVE and found.p_value > 0.05


@pytest.mark.parametrize(
    ("margin", "outcome"), [(60.0, claims.HOLDS), (69.0, claims.INCONCLUSIVE), (75.0, claims.FAILS)]
)
def test_a_difference_that_misses_a_one_sided_margin_fails(tmp_path, margin, outcome):
    """A gain of about 69.4 BLEU holds against a margin of 60, is too close to 69 to tell, and
    fails against 75."""
    nmt_run(tmp_path, POST, 1, drop(0.05))
    nmt_run(tmp_path, PRE, 1, drop(0.5))
    found = verdict(tmp_path, ZST, margin=margin)
    assert 69 < found.measured_a - found.measured_b < 70
    assert found.outcome == outcome


@pytest.mark.parametrize(
    ("pre", "outcome"),
    [
        ({"en-de": fixed(0.1), "de-en": fixed(0.1)}, claims.HOLDS),  # the same outputs
        ({"en-de": fixed(0.1, nudge=1), "de-en": fixed(0.1)}, claims.INCONCLUSIVE),  # 0.4 apart
        ({"en-de": fixed(0.1, 1, 0.3), "de-en": fixed(0.1)}, claims.FAILS),  # 0.9 apart
        ({"en-de": fixed(0.6), "de-en": fixed(0.6)}, claims.FAILS),  # PostNorm far better
        ({"en-de": fixed(0.0), "de-en": fixed(0.0)}, claims.FAILS),  # PostNorm far worse
    ],
)
def test_barely_moves_is_two_sided(tmp_path, pre, outcome):
    """ "Within 0.5 BLEU": holds only where the bootstrap puts the gap inside ±0.5 either way;
    a gap beyond the margin fails in both directions (one-sided, a gain would hold)."""
    nmt_run(tmp_path, POST, 1, fixed(0.1), SUPERVISED)
    nmt_run(tmp_path, PRE, 1, pre, SUPERVISED)
    found = verdict(tmp_path, SUP)
    assert found.outcome == outcome, found
    assert (abs(found.measured_a - found.measured_b) < 0.5) == (outcome != claims.FAILS)


def test_a_claim_is_not_run_until_both_sides_ran(tmp_path):
    nmt_run(tmp_path, POST, 1, drop(0.1))
    found = verdict(tmp_path, ZST)
    assert (found.outcome, found.measured_b, found.p_value) == (claims.NOT_RUN, None, None)


def test_a_claim_without_floors_is_not_judged(tmp_path):
    nmt_run(tmp_path, POST, 1, drop(0.1), floor=False)
    nmt_run(tmp_path, PRE, 1, drop(0.5))
    found = verdict(tmp_path, ZST)
    assert found.outcome == claims.NO_FLOOR and found.p_value < 0.01  # it would hold
    assert found.floor_a is None and found.floor_b is not None


def test_values_at_the_copy_source_floor_are_below_floor(tmp_path):
    """The tiny IWSLT case: 0.36 against 0 BLEU is significant, but PostNorm only copies the
    source, so the difference says nothing about LayerNorm."""
    nmt_run(tmp_path, POST, 1, copy_source())
    nmt_run(tmp_path, PRE, 1, lambda sources, references, rng: ["x"] * len(references))
    found = verdict(tmp_path, ZST)
    assert found.measured_a == pytest.approx(found.floor_a) and found.measured_b == 0
    assert found.p_value < 0.05 and found.floor_p == 1.0
    assert found.outcome == claims.BELOW_FLOOR


def test_one_side_below_its_floor_is_enough(tmp_path):
    nmt_run(tmp_path, POST, 1, copy_source())
    nmt_run(tmp_path, PRE, 1, drop(0.1))
    found = verdict(tmp_path, ZST)
    assert found.outcome == claims.BELOW_FLOOR and found.p_value > 0.99


def test_off_target_rates_bootstrap_per_direction_against_a_lower_is_better_floor(tmp_path):
    """Directions of unequal size: the rate is the mean of the directions' rates, and the
    bootstrap recomputes that mean (a pooled rate would be 14/56 and 38/56); the floor, every
    sentence off target, is beaten from below."""
    flags = {
        "postnorm": {"de-fr": [1] * 2 + [0] * 38, "de-zh": [1] * 12 + [0] * 4},
        "prenorm": {"de-fr": [1] * 30 + [0] * 10, "de-zh": [1] * 8 + [0] * 8},
    }
    for system, found in flags.items():
        run = f"iwslt/{system}-s-enc-t-dec-w"
        nmt_run(tmp_path, run, 1, drop(0.1), off_target=found)
    found = verdict(tmp_path, "ch8-iwslt-postnorm-lower-off-target")
    assert found.measured_a == pytest.approx((5 + 75) / 2)
    assert found.measured_b == pytest.approx((75 + 50) / 2)
    assert found.floor_a == found.floor_b == 100.0 and found.floor_p < 0.01
    assert found.statistic == "paired bootstrap over 56 sentences in 2 test sets × 1 seed"
    assert found.outcome == claims.HOLDS and found.p_value < 0.05


def test_a_side_mixing_higher_and_lower_is_better_columns_has_no_floor_direction(tmp_path):
    nmt_run(tmp_path, POST, 1, drop(0.1), off_target={"de-fr": [0] * 40})
    nmt_run(tmp_path, PRE, 1, drop(0.5), off_target={"de-fr": [1] * 40})
    columns = ["Zero-shot OPUS BLEU", "Zero-shot OPUS off-target rate"]
    mixed = {"table": "thesis-table-8.2", "row": "postnorm-s-enc-t-dec-w", "columns": columns}
    with pytest.raises(claims.ClaimDefinitionError, match="mixes higher- and lower-is-better"):
        verdict(tmp_path, ZST, a=mixed)


def _tatoeba(results, run, seed, value, floor=0.1):
    languages = PUBLISHED["thesis-table-2.4"].header[1:-1]  # Table 2.14's Avg. (58) averages them
    metrics = {f"tatoeba_{lang}": value for lang in languages}
    metrics |= {f"floor_tatoeba_{lang}": floor for lang in languages}  # chance: 1/1000
    write_metrics(results, "ch2_ems", run, seed, metrics)


def test_sign_test_over_seeds_decides_without_sentence_data(tmp_path):
    for seed in (1, 2, 3, 4, 5):
        _tatoeba(tmp_path, "ems", seed, 80.0 + seed)
        _tatoeba(tmp_path, "no-xtr", seed, 70.0)
    found = verdict(tmp_path, "ch2-ems-beats-contrastive-only")
    assert (found.outcome, found.p_value) == (claims.HOLDS, pytest.approx(1 / 32))
    assert found.seeds == [1, 2, 3, 4, 5] and found.floor_p == pytest.approx(1 / 32)


def test_a_sign_test_over_one_seed_cannot_clear_the_floor(tmp_path):
    """The floor is tested by the claim's own statistic: one seed gives p = 0.5."""
    _tatoeba(tmp_path, "ems", 1, 90.0)
    _tatoeba(tmp_path, "no-xtr", 1, 70.0)
    found = verdict(tmp_path, "ch2-ems-beats-contrastive-only")
    assert (found.outcome, found.floor_p) == (claims.BELOW_FLOOR, 0.5)


def test_the_two_sided_claims_are_encoded_within():
    within = {c["id"]: c["margin"] for c in CLAIMS.values() if c["direction"] == "within"}
    assert within == {
        "ch3-lealla-small-close-to-labse": 3.5,
        "ch3-lealla-large-close-to-labse": 1,
        SUP: 0.5,
        "onealigner-one-pair-close-to-all": 2.5,
    }
    assert all(c.get("margin", 0) >= 0 for c in CLAIMS.values())


def test_a_claim_naming_a_missing_cell_fails_clearly():
    bad = dict(
        CLAIMS["ch8-postnorm-lower-off-target"],
        a={"table": "thesis-table-8.2", "row": "nope", "columns": ["Supervised OPUS"]},
    )
    with pytest.raises(claims.ClaimDefinitionError, match="has no cell"):
        claims.evaluate(bad, fill_all(Results("tiny")))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"margin": 0}, "direction within needs a positive margin"),
        ({"margin": -0.5}, "direction within needs a positive margin"),
        ({"direction": "about"}, "direction must be one of"),
    ],
)
def test_a_malformed_two_sided_claim_is_refused(tmp_path, changes, message):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump([dict(CLAIMS[SUP], **changes)]), encoding="utf-8")
    with pytest.raises(claims.ClaimDefinitionError, match=message):
        claims.load(path)


def test_every_claim_names_measurable_cells_of_its_own_chapter():
    for claim in CLAIMS.values():
        for spec in claims.cell_sides(claim):
            definition = DEFINITIONS[spec["table"]]  # a KeyError names an undefined table
            table = PUBLISHED[spec["table"]]
            assert definition.chapter == claim["chapter"] and not definition.descriptive, claim
            keys = definition.row_keys(table.header, table.rows)
            points = (
                [(spec["row"], c) for c in spec["columns"]]
                if "row" in spec
                else [(r, spec["column"]) for r in spec["rows"]]
            )
            for row_key, column in points:
                assert str(row_key) in keys, (claim["id"], row_key)
                assert column in table.header[definition.labels :], (claim["id"], column)
                if column in definition.aggregates or column in definition.deltas:
                    continue
                row = table.rows[keys.index(str(row_key))]
                result_keys = definition.cell_key(table.header, row, str(row_key), column)
                assert result_keys and all(k.run and k.metrics[0] for k in result_keys), claim


def test_every_figure_claim_reads_a_figure_of_its_own_chapter():
    found = [c for c in CLAIMS.values() if claims.figure_claim(c)]
    assert [c["id"] for c in found] == ["ch6-mtinstruct-raises-cosine"]
    for claim in found:
        assert figures.definitions()[claim["a"]["figure"]]["chapter"] == claim["chapter"]


def test_the_jass_claim_reads_table_43_bleu():
    sides = CLAIMS["ch4-jass-beats-mass-aspec-ja-en"]
    assert sides["a"]["table"] == sides["b"]["table"] == "thesis-table-4.3"
    assert (sides["a"]["row"], sides["b"]["row"]) == ("jaen-jass", "jaen-mass")


def test_no_claim_text_is_cut_short_by_a_yaml_comment():
    """An unquoted ` #2 vs #1` starts a YAML comment and silently truncates the claim."""
    raw = (REPO / "mlrep/report/claims.yaml").read_text(encoding="utf-8")
    written = [
        line.split("claim:", 1)[1].strip().strip('"')
        for line in raw.splitlines()
        if line.startswith("  claim:")
    ]
    assert written == [c["claim"] for c in CLAIMS.values()]
