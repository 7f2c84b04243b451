"""OneAligner's Figure 2: the per-language points (`mlrep.chapters.onealigner.languages`), the
sizes each scale gives them, and the figure's binding to the runs they are written as."""

from __future__ import annotations

import json

import pytest

from mlrep import cli
from mlrep.chapters.onealigner import languages, runs
from mlrep.config import load_yaml, resolve
from mlrep.report import figures
from mlrep.report.metrics import collect, write
from tests.conftest import REPO

FIG = "onealigner-fig-2"
# a Top1 (Eng) run's New-Tatoeba scores: per pair, with floors and the group means beside
TOP1 = {
    "tatoeba_avg": 50.0,
    "new_tatoeba_en-de": 90.0,
    "floor_new_tatoeba_en-de": 2.0,
    "new_tatoeba_de-fr": 70.0,
    "new_tatoeba_en-fr": 60.0,
    "new_tatoeba_fr-ja": 20.0,
    "new_tatoeba_eng": 75.0,
    "new_tatoeba_not_eng": 45.0,
}


def load(scale: str) -> dict:
    return resolve(load_yaml(REPO / "params.yaml"), scale, ["full"])["onealigner"]


def top1_run(results, seed: int, scores: dict[str, float] = TOP1):
    path = results / "onealigner" / "en-es" / f"seed{seed}" / "metrics.json"
    write(path, "onealigner", "en-es", seed, "tiny", scores)
    return path


def test_a_languages_accuracy_is_the_mean_over_its_pairs_and_it_needs_a_size():
    found = languages.points(TOP1, {"en": 300.8, "de": 66.6, "fr": 56.8})
    assert found == {
        "de": {"cc100_gb": 66.6, "new_tatoeba_acc": 80.0},  # en-de, de-fr
        "en": {"cc100_gb": 300.8, "new_tatoeba_acc": 75.0},  # en-de, en-fr
        "fr": {"cc100_gb": 56.8, "new_tatoeba_acc": 50.0},  # de-fr, en-fr, fr-ja
    }  # ja: no size, no point


def test_the_figure_draws_one_point_per_language_from_the_written_runs(tmp_path):
    results = tmp_path / "results"
    metrics = [top1_run(results, 1), top1_run(results, 2, {**TOP1, "new_tatoeba_en-de": 70.0})]
    out = results / "onealigner" / languages.RUN
    languages.write_points(metrics, {"en": 300.8, "de": 66.6, "ja": 69.3}, out)
    assert json.loads((out / "de/seed2/metrics.json").read_text())["run"] == "top1-eng/de"
    spec = figures.definitions()[FIG]
    (panel,) = figures.scatter_panels(FIG, spec, {}, collect(results, "tiny"))
    # seed means: de (80 + 70) / 2, en (75 + 65) / 2; ja 20 at both seeds
    assert sorted(panel.clouds[0].points) == [
        (66.6, 75.0, "de"),
        (69.3, 20.0, "ja"),
        (300.8, 70.0, "en"),
    ]


def test_the_figure_binds_the_runs_the_step_writes():
    series = figures.definitions()[FIG]["panels"][0]["series"][0]
    assert series["runs_under"] == f"{languages.RUN}/"
    assert (series["x"], series["y"]) == ("cc100_gb", "new_tatoeba_acc")
    for scale in ("tiny", "full"):
        assert languages.RUN in runs.aliases(load(scale))  # Top1 (Eng) is a run at each scale


def test_tiny_measures_the_pretraining_text_and_full_reads_cc100s_table(tmp_path):
    tiny, full = load("tiny"), load("full")
    assert runs.cc100_languages(tiny) == tiny["monolingual"]["languages"]
    assert runs.size_flags(tiny, "mono") == "--text mono"
    published = full["cc100_gb"]
    assert runs.cc100_languages(full) == list(published) and len(published) == 91
    assert (published["eng"], published["zho"], published["hbs"]) == (300.8, 63.5, 29.7)
    assert runs.size_flags(full, "mono").startswith("--cc100-gb eng=300.8 vie=137.3 ")
    assert runs.new_tatoeba_values(full)["languages"] == list(published)
    assert runs.new_tatoeba_values(full)["splits"] == ["dev", "test"]


def test_the_cli_measures_text_in_gib_or_takes_published_sizes(tmp_path):
    text = tmp_path / "mono"
    text.mkdir()
    (text / "de.txt").write_bytes(b"x" * 2**20)  # 1 MiB: 1/1024 GiB
    (text / "en.txt").write_bytes(b"y" * 2**19)
    (text / "metadata.json").write_text("{}")
    metrics = top1_run(tmp_path / "results", 1)
    out = tmp_path / "points"
    args = ["onealigner", "language-points", "--metrics", str(metrics), "--out", str(out)]
    assert cli.main([*args, "--text", str(text)]) == 0
    de = json.loads((out / "de/seed1/metrics.json").read_text())["metrics"]
    assert de == {"cc100_gb": 2**-10, "new_tatoeba_acc": 80.0}
    assert sorted(p.name for p in out.iterdir()) == ["de", "en"]
    assert cli.main([*args, "--cc100-gb", "fr=56.8", "ja=69.3"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["fr", "ja"]  # the folder is replaced
    assert cli.main(args) == 2  # neither source of sizes
    with pytest.raises(languages.LanguagePointsError, match=r"no <lang>\.txt"):
        languages.text_sizes(tmp_path / "results")
