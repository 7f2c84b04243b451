"""Chapter 3's run vocabulary: every run the report names parses into the settings the thesis
states (shapes of Tables 3.1/A.3, LEALLA's sizes and weights of Sec. 3.3), and the built
students have the published parameter counts."""

from __future__ import annotations

import csv
import re

import pytest
import torch
import yaml

from mlrep.chapters.ch3_lealla import runs
from mlrep.embed.settings import DistillConfig, StudentConfig
from mlrep.embed.student import Student, parameter_counts
from mlrep.report import tables
from mlrep.report.metrics import declared
from mlrep.report.reference import load_all
from mlrep.report.references import references
from tests.conftest import REPO

REFERENCE = REPO / "reports" / "reference"
PUBLISHED = load_all(REFERENCE)
DEFINITIONS = tables.load(PUBLISHED)
LABSE_VOCAB = 501_153  # LaBSE's vocabulary, kept whole by every student
STUDENT_FIELDS = ("layers", "heads", "dim", "ffn_dim")


def rows(table: str) -> list[dict[str, str]]:
    with (REFERENCE / f"{table}.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def millions(text: str) -> int:
    return int(text.removesuffix("M"))


def counts(layers: int, dim: int, ffn_dim: int, heads: int) -> dict[str, float]:
    """P and P_E in millions of a student of this shape, built on the meta device (no memory)."""
    config = StudentConfig(LABSE_VOCAB, 127, layers=layers, heads=heads, dim=dim, ffn_dim=ffn_dim)
    with torch.device("meta"):
        student = Student(config)
    return {k: v / 1e6 for k, v in parameter_counts(student.bert).items()}


CHAPTER_TABLES = [
    table_id
    for table_id, definition in DEFINITIONS.items()
    if definition.chapter == runs.SECTION and not definition.descriptive
]


def table_runs() -> dict[str, list[str]]:
    """Table → the runs its bound definition reads (this chapter's measured rows only), as
    `mlrep.report.fill` resolves them: cell templates formatted per row, then `runs`."""
    out: dict[str, list[str]] = {}
    for table_id in CHAPTER_TABLES:
        definition, published = DEFINITIONS[table_id], PUBLISHED[table_id]
        header = published.header
        keys = definition.row_keys(header, published.rows)
        computed = {*definition.aggregates, *definition.deltas}
        out[table_id] = list(
            dict.fromkeys(
                key.run
                for row, row_key in zip(published.rows, keys, strict=True)
                if definition.chapter_of(row_key) == runs.SECTION and not definition.cited(row_key)
                for column in header[definition.labels :]
                if column not in computed and not definition.published_only_in(row_key, column)
                for key in definition.cell_key(header, row, row_key, column)
            )
        )
    return out


def figure_runs() -> list[str]:
    figures = yaml.safe_load((REPO / "mlrep/report/figures.yaml").read_text(encoding="utf-8"))
    out = []
    for figure in ("fig-3.1", "fig-3.3"):
        for panel in figures[figure]["panels"]:
            for series in panel["series"]:
                out += series.get("rows") or series["measured"]["runs"]
    return out


def test_every_run_the_report_names_parses_into_valid_settings():
    found = table_runs()
    assert set(found) == {
        f"thesis-table-{n}" for n in ("3.1", "3.3", "3.4", "A.1", "A.2", "A.3", "A.4")
    }
    named = [run for runs_ in found.values() for run in runs_] + figure_runs()
    assert {"lealla-small-ams", "lealla-large", "arch-12", "reduce-16", "teacher"} <= set(named)
    assert found["thesis-table-3.1"] == ["teacher", *(f"arch-{n}" for n in range(1, 9))]
    assert found["thesis-table-A.2"] == ["teacher", *(f"reduce-{d}" for d in runs.reduce_dims(768))]
    assert "m-use" in found["thesis-table-3.3"]  # measured, a baseline run
    for name in named:
        run = runs.Run.parse(name)
        assert run.name == name
        if run.kind in ("arch", "lealla"):
            student = {k: v for k, v in run.settings.items() if k in STUDENT_FIELDS}
            StudentConfig(LABSE_VOCAB, 127, **student)  # field names and dim % heads
            DistillConfig(768, **{k: v for k, v in run.settings.items() if k not in student})
    assert set(named) <= set(runs.run_names(768)) | set(runs.run_names(512))


def test_tables_read_a_shared_training_from_the_run_that_trained_it():
    """lealla-<size>-ams is trained once, as arch-<#> (`Run.trained_as`): Tables 3.4, A.1 and
    A.4 read that folder, and Fig 3.3 (A.4's rows) with them; no table reads a run under a
    name whose training is another's."""
    for table_id, named in table_runs().items():
        for name in named:
            assert runs.Run.parse(name).trained_as == name, (table_id, name)
    for table_id in ("thesis-table-3.4", "thesis-table-A.1", "thesis-table-A.4"):
        aliases = DEFINITIONS[table_id].runs
        for size in runs.SIZES:
            ams = runs.lealla_run(size, "ams")
            assert aliases[ams] == runs.Run.parse(ams).trained_as, (table_id, size)
    assert "arch-8" in table_runs()["thesis-table-A.4"]
    assert "lealla-small-ams" not in table_runs()["thesis-table-3.4"]


def test_the_pattern_is_a_wildcard_constraint():
    path = re.compile(rf"results/ch3_lealla/(?P<run>{runs.PATTERN})/seed0/metrics.json")
    for name in runs.run_names(768):
        assert path.fullmatch(f"results/ch3_lealla/{name}/seed0/metrics.json")["run"] == name


@pytest.mark.parametrize(
    "name",
    ["lealla-tiny", "lealla-small-ams+fd", "lealla-small-fd-ld", "arch-0", "arch-13", "reduce-0",
     "reduce-", "Teacher", "lealla-small-", "labse-0"],
)  # fmt: skip
def test_an_unknown_name_is_refused(name):
    with pytest.raises(runs.RunNameError, match=f"not a {runs.SECTION} run"):
        runs.Run.parse(name)


def test_architectures_are_the_published_rows():
    published = {int(row["#"]): row for row in rows("thesis-table-A.3") if row["#"] != "0"}
    assert set(published) == set(runs.ARCHITECTURES)
    for number, row in published.items():
        settings = runs.Run.parse(f"{runs.ARCH_PREFIX}{number}").settings
        shape = {k: settings[k] for k in STUDENT_FIELDS}
        assert shape == {
            "layers": int(row["L"]),
            "dim": int(row["d_h"]),
            "ffn_dim": int(row["d_ff"]),
            "heads": int(row["H"]),
        }, number
        assert settings["loss"] == "ams"  # no distillation in the architecture search
    for row in rows("thesis-table-3.1"):  # Table 3.1 repeats #0-#8 of A.3
        if row["#"] != "0":
            shape = runs.ARCHITECTURES[int(row["#"])]
            assert (shape.layers, shape.dim, shape.heads) == tuple(
                int(row[c]) for c in ("L", "d_h", "H")
            )


@pytest.mark.parametrize("size", list(runs.SIZES))
def test_lealla_sizes_have_the_published_shapes_weights_and_parameters(size):
    published = {row["Model"]: row for row in rows("thesis-table-3.3")}[f"LEALLA-{size}"]
    settings = runs.Run.parse(runs.lealla_run(size)).settings
    assert settings["dim"] == int(published["d"])
    built = counts(*(settings[k] for k in ("layers", "dim", "ffn_dim", "heads")))
    assert round(built["parameters"]) == millions(published["P"])
    architecture = {row["#"]: row for row in rows("thesis-table-A.3")}[
        str(runs.SIZES[size].architecture)
    ]
    assert round(built["encoder_parameters"]) == millions(architecture["P_E"])
    beta = {"small": 1e3, "base": 1e3, "large": 1e4}[size]  # Sec. 3.3.2
    assert settings == {
        **{k: settings[k] for k in STUDENT_FIELDS},
        "loss": runs.FULL_LOSS,
        "alpha": 1.0,
        "beta": beta,
        "gamma": 1e-2,
        "ld_temperature": 100.0,
    }


def test_every_architecture_builds_to_its_published_size():
    """P and P_E of Table A.3 (LaBSE's row too) within the table's 1M rounding: the thesis
    rounds some P_E up (#4 and #11 print 6M for 5.3M), so a shape is checked to ±1M."""
    for row in rows("thesis-table-A.3"):
        built = counts(int(row["L"]), int(row["d_h"]), int(row["d_ff"]), int(row["H"]))
        assert abs(built["parameters"] - millions(row["P"])) <= 1, row["#"]
        assert abs(built["encoder_parameters"] - millions(row["P_E"])) <= 1, row["#"]


def test_an_ams_only_ablation_is_its_architecture_run():
    for size, spec in runs.SIZES.items():
        ams = runs.Run.parse(runs.lealla_run(size, "ams"))
        arch = runs.Run.parse(f"{runs.ARCH_PREFIX}{spec.architecture}")
        assert ams.settings == arch.settings and ams.trained_as == arch.name
    # the full model and each other ablation train on their own; weights only for their terms
    assert runs.Run.parse("lealla-large-fd").settings["beta"] == 1e4
    # a dropped term keeps its place with weight 0 (the full model's other weights kept)
    ablated = runs.Run.parse("lealla-large-ams-fd").settings
    assert (ablated["alpha"], ablated["beta"], ablated["gamma"]) == (1.0, 1e4, 0.0)
    assert runs.Run.parse("arch-8").settings["beta"] == 0.0
    assert runs.Run.parse("lealla-base-ld").settings["loss"] == "ld"
    # the teacher, m-USE and 40 trainings (7 widths, 12 shapes, 3 sizes x 7 other losses)
    distinct = {runs.Run.parse(name).trained_as for name in runs.run_names(768)}
    assert len(distinct) == 2 + 7 + 12 + 3 * 7


def test_the_reduction_ladder_follows_the_teacher_width():
    published = [int(r["Dimension"]) for r in rows("thesis-table-A.2") if r["Dimension"].isdigit()]
    assert runs.reduce_dims(768) == published
    assert runs.reduce_dims(512) == [384, 256, 192, 128, 64, 32, 16]
    reduced = [runs.Run.parse(f"{runs.REDUCE_PREFIX}{d}").settings["dims"] for d in published]
    assert reduced == [(d,) for d in published]


def test_the_metrics_the_bound_tables_and_fig_3_1_read_are_declared():
    """Every table, claim and figure of the chapter reads metric names its runs declare
    (test_metric_names checks every chapter; here: that the shape and size columns do)."""
    declaration = declared(runs.SECTION)
    read = {ref.metric for ref in references(runs.SECTION, REFERENCE)}
    figures = yaml.safe_load((REPO / "mlrep/report/figures.yaml").read_text(encoding="utf-8"))
    for series in figures["fig-3.1"]["panels"][0]["series"]:
        read |= {series["measured"]["metric"], series["measured"]["x_metric"]}
    shape = {"layers", "dim", "ffn_dim", "heads", "parameters", "encoder_parameters"}
    assert shape | {"tatoeba_avg", "un_avg", "bucc_avg", "un_zh", "bucc_de", "languages"} <= read
    assert [name for name in sorted(read) if not declaration.declares(name)] == []
