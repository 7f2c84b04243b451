"""Every Table 2.14 / LaBSE-EMS-* run of params.yaml is a real change of losses or parameters."""

import pytest
import torch

from mlrep import config as cfg
from mlrep.chapters.ch2_ems import runs
from mlrep.cliutil import option_names
from mlrep.embed.model import Batch, EmsConfig, EmsModel
from mlrep.embed.objectives import margin_softmax
from mlrep.embed.settings import FROM_DATA, EmsConfigError
from tests.conftest import REPO

SECTION = cfg.load(cfg.load_yaml(REPO / "params.yaml"))[runs.SECTION]
VOCAB = 50


def build(run: str) -> tuple[EmsModel, dict]:
    values = runs.run_values(SECTION, run)
    config = EmsConfig(
        vocab_size=VOCAB,
        languages=3,
        max_tokens=8,
        **{k: values[k] for k in option_names(EmsConfig, FROM_DATA)},
    )
    torch.manual_seed(0)
    return EmsModel(config), values


def batch() -> Batch:
    generator = torch.Generator().manual_seed(3)
    src = torch.randint(3, 20, (4, 6), generator=generator)
    tgt = torch.randint(3, 20, (4, 5), generator=generator)
    src[0, 4:] = 0  # padding
    return Batch(src, tgt, torch.zeros(4, dtype=torch.long), torch.tensor([1, 2, 1, 2]))


def signature(model: EmsModel, values: dict) -> tuple:
    """What a run changes: its loss terms, parameter shapes, objective and batch settings."""
    model.eval()
    terms = model.loss_terms(batch(), torch.Generator().manual_seed(1))
    shapes = tuple((name, tuple(p.shape)) for name, p in model.named_parameters())
    settings = tuple(values[k] for k in ("margin", "temperature", "batch_size"))
    return tuple(sorted(terms)), shapes, settings, round(terms["loss"].item(), 6)


def test_every_run_differs_from_ems_and_from_each_other():
    seen = {}
    for run in runs.run_names(SECTION):
        key = signature(*build(run))
        assert key not in seen, f"{run} trains exactly what {seen.get(key)} trains"
        seen[key] = run
    assert "ems" in seen.values() and len(seen) == len(SECTION["runs"]) >= 12


def test_ablations_remove_or_add_the_right_parts():
    model, _ = build("ems")
    assert set(model.loss_terms(batch())) == {"xtr", "cntrs", "loss"}
    assert model.generative.languages is not None and model.projection is not None
    no_langtok, _ = build("no-langtok")
    assert no_langtok.generative.languages is None
    assert no_langtok.generative.fc.in_features == no_langtok.config.dim
    no_cntrs, _ = build("no-cntrs")
    assert set(no_cntrs.loss_terms(batch())) == {"xtr", "loss"} and no_cntrs.projection is None
    no_xtr, _ = build("no-xtr")
    assert set(no_xtr.loss_terms(batch())) == {"cntrs", "loss"} and no_xtr.generative is None
    no_mlp, _ = build("no-cntrs-mlp")
    assert "cntrs" in no_mlp.loss_terms(batch()) and no_mlp.projection is None
    ugt, _ = build("ugt")
    assert set(ugt.loss_terms(batch(), torch.Generator().manual_seed(1))) == {
        "xtr",
        "mlm",
        "cntrs",
        "loss",
    }


def test_shared_embeddings_send_xtr_gradients_into_the_token_matrix():
    for run, reaches_unseen_rows in (("share-emb", True), ("ems", False)):
        model, _ = build(run)
        model.eval()
        model.loss_terms(batch())["xtr"].backward()
        grad = model.encoder.tokens.weight.grad
        unseen = torch.ones(VOCAB, dtype=torch.bool)
        unseen[torch.cat([batch().src.flatten(), batch().tgt.flatten()])] = False
        assert bool(grad[unseen].abs().sum() > 0) is reaches_unseen_rows, run
    tied, _ = build("share-emb")
    assert tied.generative.out is None
    assert tied.generative.fc.out_features == tied.config.dim


def test_ams_runs_use_margin_and_temperature_on_the_right_vectors():
    data = batch()
    for run, projected, temperature in (
        ("ams-vanilla", False, 1.0),  # thesis: no temperature, no MLP
        ("ams-vanilla-paper", False, 0.1),
        ("ams-scaled", True, 0.1),
    ):
        model, _ = build(run)
        model.eval()
        u, v = model.encoder(data.src), model.encoder(data.tgt)
        if projected:
            u, v = model.projection(u), model.projection(v)
        expected = margin_softmax(u, v, temperature, 0.3)
        assert model.loss_terms(data)["cntrs"].item() == pytest.approx(expected.item(), rel=1e-5)
        assert model.generative is None


def test_joint_loss_is_the_sum_over_pairs_divided_by_the_batch():
    model, _ = build("ams-joint")
    model.eval()
    terms = model.loss_terms(batch())
    assert terms["loss"].item() == pytest.approx((terms["xtr"] + terms["cntrs"]).item() / 4)


def test_a_variant_that_trains_nothing_is_refused():
    with pytest.raises(EmsConfigError, match="nothing to train"):
        EmsConfig(vocab_size=10, languages=2, generative="none", contrastive=False)


def test_unknown_runs_and_grid_points_name_what_exists():
    with pytest.raises(runs.UnknownRunError, match="runs: ems, "):
        runs.run_values(SECTION, "ems-typo")
    point = runs.grid_points(SECTION)[0]
    key, value = point.rsplit("-", 1)
    values = runs.run_values(SECTION, runs.GRID_PREFIX + point)
    assert str(values[key]) == value and values["steps"] == SECTION["grid"]["steps"]
