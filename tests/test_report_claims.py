"""The claims ledger: holds, fails, inconclusive and not run, and its published sanity check."""

from collections import Counter

import pytest
import yaml

from mlrep.report import claims, fill, tables
from mlrep.report.metrics import Results, collect
from mlrep.report.reference import load_all
from tests.conftest import REPO
from tests.report_helpers import ch8_results, write_metrics

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
    # a claim that the thesis's own numbers contradict is a mis-encoded claim
    verdicts = claims.ledger(list(CLAIMS.values()), fill_all(Results("tiny")), (300, 1))
    assert [v.claim["id"] for v in verdicts if v.published_holds is not True] == []
    assert {v.outcome for v in verdicts} == {claims.NOT_RUN}


def test_claim_holds_with_a_paired_bootstrap_when_bleu_stats_exist(tmp_path):
    ch8_results(tmp_path, post_better=True)
    tables_ = fill_all(collect(tmp_path, "tiny"))
    bleu = claims.evaluate(CLAIMS["ch8-postnorm-beats-prenorm-zst-bleu"], tables_, (300, 1))
    assert bleu.outcome == claims.HOLDS
    assert bleu.statistic == "paired bootstrap over 120 sentences" and bleu.p_value < 0.01
    off = claims.evaluate(CLAIMS["ch8-postnorm-lower-off-target"], tables_, (300, 1))
    assert (off.outcome, off.statistic, off.p_value) == (
        claims.INCONCLUSIVE,
        "sign test over 3 seeds",
        0.125,
    )
    # the three-dataset claim needs IWSLT and Europarl too
    assert (
        claims.evaluate(CLAIMS["ch8-postnorm-beats-prenorm-all-datasets"], tables_).outcome
        == claims.NOT_RUN
    )


def test_off_target_claim_bootstraps_per_sentence_scores(tmp_path):
    """One seed, as at tiny: the off-target rates' sentences decide, not a sign test."""
    flags = {"postnorm": [100.0] * 10 + [0.0] * 50, "prenorm": [100.0] * 40 + [0.0] * 20}
    for system, flagged in flags.items():
        rate = sum(flagged) / len(flagged)
        write_metrics(
            tmp_path,
            "ch8_layernorm",
            f"iwslt/{system}-s-enc-t-dec-w",
            1,
            {"zst_off_target": rate},
            sentence_scores={"zst_off_target": flagged},
        )
    verdict = claims.evaluate(
        CLAIMS["ch8-iwslt-postnorm-lower-off-target"], fill_all(collect(tmp_path, "tiny")), (300, 1)
    )
    assert verdict.measured_a == pytest.approx(100 / 6) and verdict.measured_b == pytest.approx(
        200 / 3
    )
    assert verdict.statistic == "paired bootstrap over 60 sentences"
    assert (verdict.outcome, verdict.p_value) == (claims.HOLDS, pytest.approx(1 / 301))


def test_claim_fails_when_the_measured_direction_is_reversed(tmp_path):
    ch8_results(tmp_path, post_better=False)
    verdict = claims.evaluate(
        CLAIMS["ch8-postnorm-beats-prenorm-zst-bleu"], fill_all(collect(tmp_path, "tiny")), (300, 1)
    )
    assert verdict.outcome == claims.FAILS
    assert verdict.measured_a == pytest.approx(9.0) and verdict.p_value > 0.9


def test_sign_test_over_seeds_decides_without_bleu_stats(tmp_path):
    languages = PUBLISHED["thesis-table-2.4"].header[1:-1]  # Table 2.14's Avg. (58) averages them
    for seed in (1, 2, 3, 4, 5):
        ems = {f"tatoeba_{lang}": 80.0 + seed for lang in languages}
        write_metrics(tmp_path, "ch2_ems", "ems", seed, ems)
        no_xtr = {f"tatoeba_{lang}": 70.0 for lang in languages}
        write_metrics(tmp_path, "ch2_ems", "no-xtr", seed, no_xtr)
    verdict = claims.evaluate(
        CLAIMS["ch2-ems-beats-contrastive-only"], fill_all(collect(tmp_path, "tiny"))
    )
    assert (verdict.outcome, verdict.p_value) == (claims.HOLDS, pytest.approx(1 / 32))
    assert verdict.seeds == [1, 2, 3, 4, 5]


def test_margins_are_part_of_the_check(tmp_path):
    write_metrics(tmp_path, "ch8_layernorm", "opus/postnorm-s-enc-t-dec-w", 1, {"sup_bleu": 30.0})
    write_metrics(tmp_path, "ch8_layernorm", "opus/prenorm-s-enc-t-dec-w", 1, {"sup_bleu": 30.4})
    verdict = claims.evaluate(
        CLAIMS["ch8-supervised-unaffected"], fill_all(collect(tmp_path, "tiny"))
    )
    assert verdict.outcome == claims.INCONCLUSIVE  # within 0.5: direction holds, one seed


def test_a_claim_naming_a_missing_cell_fails_clearly():
    bad = dict(
        CLAIMS["ch8-postnorm-lower-off-target"],
        a={"table": "thesis-table-8.2", "row": "nope", "columns": ["Supervised OPUS"]},
    )
    with pytest.raises(claims.ClaimDefinitionError, match="has no cell"):
        claims.evaluate(bad, fill_all(Results("tiny")))


def test_a_margin_with_a_bootstrap_is_refused(tmp_path):
    bad = dict(CLAIMS["ch8-supervised-unaffected"], statistic="paired_bootstrap")
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump([bad]), encoding="utf-8")
    with pytest.raises(claims.ClaimDefinitionError, match="a margin needs statistic: sign_test"):
        claims.load(path)


def test_every_claim_names_measurable_cells_of_its_own_chapter():
    for claim in CLAIMS.values():
        for side in ("a", "b"):
            spec = claim[side]
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


def test_the_jass_claim_reads_table_43_bleu():
    sides = CLAIMS["ch4-jass-beats-mass-aspec-ja-en"]
    assert sides["a"]["table"] == sides["b"]["table"] == "thesis-table-4.3"
    assert sides["a"]["row"].endswith("4-jass") and sides["b"]["row"].endswith("1-mass")


def test_no_claim_text_is_cut_short_by_a_yaml_comment():
    """An unquoted ` #2 vs #1` starts a YAML comment and silently truncates the claim."""
    raw = (REPO / "mlrep/report/claims.yaml").read_text(encoding="utf-8")
    written = [
        line.split("claim:", 1)[1].strip().strip('"')
        for line in raw.splitlines()
        if line.startswith("  claim:")
    ]
    assert written == [c["claim"] for c in CLAIMS.values()]
