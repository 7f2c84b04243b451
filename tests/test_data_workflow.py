"""A Tatoeba-format benchmark through the real Snakemake rules (fetch, normalise) and a mirror.

The benchmark is the tests' look-alike (tests/tatoeba_helpers.py), registered through
params.yaml's ``data.registry`` with its files' sha256 pinned, as a site registers its own.
"""

from __future__ import annotations

import json

import yaml

from mlrep.io import sha256_file
from tests.conftest import snakemake
from tests.tatoeba_helpers import KEY, LANGUAGES
from tests.test_data_download import serve

TARGET = f"results/data/{KEY}"


def _override(workdir, registry, url: str):
    path = workdir / "mirror.yaml"
    data = {
        "registry": str(registry),
        "download": {"mirrors": {KEY: url}, "backoff": 0},
        "datasets": {KEY: {"languages": list(LANGUAGES)}},
    }
    path.write_text(yaml.safe_dump({"data": data}))
    return str(path)


def test_a_benchmark_reaches_the_workflow_through_the_download_rule(
    workdir, tatoeba_raw, tatoeba_registry
):
    with serve(tatoeba_raw) as server:
        server.faults["tatoeba.jpn-eng.jpn"] = [500, ("drop", 20_000)]
        args = [TARGET, "--cores", "2", "--resources", "network=1", "--configfile"]
        override = _override(workdir, tatoeba_registry, server.url)
        result = snakemake(workdir, *args, override)
        assert result.returncode == 0, result.stderr[-3000:]
        fetched = {path for path, _ in server.requests}
        assert ("tatoeba.jpn-eng.jpn", "bytes=20000-") in server.requests
        again = snakemake(workdir, *args, override)
    assert fetched == {f"tatoeba.{lang}-eng.{side}" for lang in LANGUAGES for side in (lang, "eng")}
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    out = workdir / TARGET
    meta = json.loads((out / "metadata.json").read_text())
    frozen = yaml.safe_load((out / "config.yaml").read_text())
    assert frozen["data"]["datasets"][KEY]["languages"] == list(LANGUAGES)
    assert json.loads((out / "provenance.json").read_text())["step"].startswith("data normalize")
    assert sorted(meta["pairs"]) == sorted(f"test.{lang}-eng" for lang in LANGUAGES)
    for lang in LANGUAGES:
        for side in (lang, "eng"):
            name = f"test.{lang}-eng.{side}"
            assert sha256_file(out / name) == sha256_file(
                tatoeba_raw / f"tatoeba.{lang}-eng.{side}"
            )
            assert meta["pairs"][f"test.{lang}-eng"]["files"][name] == sha256_file(out / name)
    raw = workdir / "resources/datasets" / KEY
    assert json.loads((raw / "fetched.json").read_text())["source"] == server.url


def test_an_unreachable_mirror_fails_the_rule_with_the_reason_in_its_log(
    workdir, tmp_path, tatoeba_registry
):
    with serve(tmp_path / "empty") as server:
        override = _override(workdir, tatoeba_registry, server.url)
        result = snakemake(workdir, "--cores", "1", TARGET, "--configfile", override)
    assert result.returncode != 0
    log = (workdir / f"results/logs/data/fetch_{KEY}.log").read_text()
    assert "HTTP 404" in log and "mirror" in log
    assert not (workdir / f"resources/datasets/{KEY}/fetched.json").exists()
