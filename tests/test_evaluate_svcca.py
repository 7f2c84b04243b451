"""SVCCA against known cases and a naive CCA (the generalized eigenproblem, solved directly)."""

import json

import numpy as np
import pytest

from mlrep.cli import main
from mlrep.evaluate.states import open_states, write_states
from mlrep.evaluate.svcca import (
    SvccaError,
    cca_correlations,
    encoder_svcca,
    mean_pool,
    svcca,
    svd_reduce,
)

RNG = np.random.default_rng(0)


def rotation(d, rng=RNG):
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return q


def naive_cca(a, b):
    """Canonical correlations from Σaa⁻¹ Σab Σbb⁻¹ Σba w = ρ² w (eigenvalues), largest first."""
    a, b = a - a.mean(0), b - b.mean(0)
    saa, sbb, sab = a.T @ a, b.T @ b, a.T @ b
    m = np.linalg.solve(saa, sab) @ np.linalg.solve(sbb, sab.T)
    rho2 = np.sort(np.linalg.eigvals(m).real)[::-1][: min(a.shape[1], b.shape[1])]
    return np.sqrt(np.clip(rho2, 0, 1))


def test_cca_matches_the_generalized_eigenproblem():
    n, shared = 400, RNG.normal(size=(400, 3))
    a = np.hstack([shared, RNG.normal(size=(n, 3))]) @ rotation(6)
    b = np.hstack([shared + 0.5 * RNG.normal(size=(n, 3)), RNG.normal(size=(n, 2))])
    ours = cca_correlations(a, b)
    assert ours == pytest.approx(naive_cca(a, b), abs=1e-8)
    assert ours[:3].min() > 0.8 and ours[3:].max() < 0.3  # 3 shared directions, then noise


def test_identical_rotated_and_affine_views_give_one():
    view = RNG.normal(size=(300, 8)) @ np.diag([5, 4, 3, 2, 1, 0.5, 0.3, 0.1])
    assert svcca(view, view)[0] == pytest.approx(1.0)
    assert svcca(view, view @ rotation(8))[0] == pytest.approx(1.0)
    assert svcca(view, 3.0 * view @ rotation(8) + 7.0)[0] == pytest.approx(1.0)


def test_independent_views_score_low():
    value, k_a, k_b = svcca(RNG.normal(size=(1000, 8)), RNG.normal(size=(1000, 8)))
    assert value < 0.15 and k_a == k_b == 8


def test_svd_reduction_keeps_the_fewest_directions_holding_the_variance():
    centred = RNG.normal(size=(200, 4))
    basis, _ = np.linalg.qr(centred - centred.mean(0))
    view = (
        basis * np.sqrt([80.0, 15.0, 4.5, 0.5]) @ rotation(4)
    )  # variance shares .80 .15 .045 .005
    assert svd_reduce(view, 0.9).shape == (200, 2)
    assert svd_reduce(view, 0.99).shape == (200, 3)
    assert svd_reduce(view, 0.999).shape == (200, 4)
    kept = svd_reduce(view, 0.9)
    assert np.linalg.svd(kept, compute_uv=False) == pytest.approx(np.sqrt([80.0, 15.0]))


def test_too_few_sentences_for_the_kept_dimensions_is_an_error():
    with pytest.raises(
        SvccaError, match=r"12 sentences for \d \+ \d kept dimensions.*give at least 1\d sentences"
    ):
        svcca(RNG.normal(size=(12, 8)), RNG.normal(size=(12, 8)))


def test_mean_pool_by_sentence_index():
    states = np.array([[1.0, 0.0], [3.0, 2.0], [5.0, 5.0]])
    assert mean_pool(states, np.array([0, 0, 1]), 2).tolist() == [[2.0, 1.0], [5.0, 5.0]]
    with pytest.raises(SvccaError, match="sentence 1 has no rows"):
        mean_pool(states, np.array([0, 0, 2]), 3)


def _pair(tmp_path, n=120, d=6):
    """en→xx and xx→en states of the same sentences: layer 1 related, layer 2 independent."""
    rng = np.random.default_rng(1)
    sentence = np.repeat(np.arange(2 * n), rng.integers(1, 5, size=2 * n))
    tokens_a = rng.normal(size=(len(sentence), d))
    pooled_b = mean_pool(tokens_a, sentence, 2 * n) @ rotation(d, rng)
    src = ["en"] * n + ["en"] * n
    tgt = ["de"] * n + ["fr"] * n
    a = tmp_path / "a.npz"
    b = tmp_path / "b.npz"
    write_states(a, [tokens_a, rng.normal(size=(len(sentence), d))], 2, sentence, src, tgt)
    # b: one row per sentence (its pooled state), so pooling b gives back a's pool, rotated
    write_states(b, [pooled_b, rng.normal(size=(2 * n, d))], 2, np.arange(2 * n), tgt, src)
    return a, b


def test_encoder_svcca_per_layer_and_direction_pair(tmp_path):
    a, b = (open_states(p) for p in _pair(tmp_path))
    result = encoder_svcca(a, b)
    assert set(result["pairs"]) == {"en-de|de-en", "en-fr|fr-en"}
    assert result["svcca"][0] == pytest.approx(1.0) and result["svcca"][1] < 0.4
    assert result["n_sentences"] == {"en-de|de-en": 120, "en-fr|fr-en": 120}
    pair = result["pairs"]["en-de|de-en"]
    assert result["svcca"][1] == pytest.approx((pair[1] + result["pairs"]["en-fr|fr-en"][1]) / 2)


def test_pooled_groups_compare_all_sentences_at_once(tmp_path):
    a, b = (open_states(p) for p in _pair(tmp_path, n=40, d=24))
    with pytest.raises(SvccaError, match="en-de\\|de-en: 40 sentences for"):
        encoder_svcca(a, b, groups="direction", variance=0.999999)
    result = encoder_svcca(a, b, groups="pooled", variance=0.999999)
    assert result["n_sentences"] == {"en-de+en-fr|de-en+fr-en": 80}
    assert result["svcca"][0] == pytest.approx(1.0)


def test_cli_writes_the_contract_json(tmp_path, capsys):
    a, b = _pair(tmp_path)
    out = tmp_path / "svcca.json"
    assert main(["eval", "svcca", "--a", str(a), "--b", str(b), "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == {"svcca": json.loads(out.read_text())["svcca"]}


def test_cli_reports_mismatched_files_as_one_line(tmp_path, capsys):
    a, _ = _pair(tmp_path)
    short = tmp_path / "short.npz"
    write_states(short, [np.ones((3, 6))] * 2, 2, np.arange(3), ["en"] * 3, ["de"] * 3)
    out = tmp_path / "x.json"
    assert main(["eval", "svcca", "--a", str(a), "--b", str(short), "--out", str(out)]) == 2
    assert "has 240 sentences but" in capsys.readouterr().err and not out.exists()
