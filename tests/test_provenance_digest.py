"""`source_digest`: the code version a rule passes as a param, so code changes rerun jobs."""

import shutil

import pytest

import mlrep
from mlrep import provenance


def test_digest_is_stable_and_differs_between_areas():
    assert provenance.source_digest("report") == provenance.source_digest("report")
    assert provenance.source_digest("report") != provenance.source_digest("data")
    assert provenance.source_digest("io", "report") == provenance.source_digest("report", "io")
    assert provenance.source_digest("data/wheels") != provenance.source_digest("data")
    assert provenance.source_digest("data/tiny_sources.yaml")


def test_digest_changes_when_a_source_file_changes(tmp_path, monkeypatch):
    copy = tmp_path / "mlrep"
    shutil.copytree(mlrep.__path__[0], copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(provenance, "__file__", str(copy / "provenance.py"))
    before = {area: provenance.source_digest(area) for area in ("report", "data")}
    with (copy / "report" / "summary.py").open("a") as handle:
        handle.write("\n# a change\n")
    assert provenance.source_digest("report") != before["report"]
    assert provenance.source_digest("data") == before["data"]  # other areas are untouched


def test_an_unknown_area_is_an_error():
    with pytest.raises(ValueError, match="no area 'nope'"):
        provenance.source_digest("nope")
