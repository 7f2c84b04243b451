"""The Tatoeba benchmark for the tiny languages through the real Snakemake rules and a mirror."""

from __future__ import annotations

import json

import yaml

from mlrep import config as cfg
from mlrep.io import sha256_file
from tests.conftest import REPO, snakemake
from tests.test_data_download import TATOEBA, serve, tatoeba_root

TARGET = "results/data/laser_tatoeba_v1"


def _override(workdir, url: str):
    path = workdir / "mirror.yaml"
    path.write_text(
        yaml.safe_dump({"data": {"download": {"mirrors": {"laser_tatoeba_v1": url}, "backoff": 0}}})
    )
    return str(path)


def test_tiny_tatoeba_reaches_the_workflow_through_the_download_rule(workdir):
    tiny = cfg.load_yaml(REPO / "params.yaml")["data"]["datasets"]["laser_tatoeba_v1"]
    languages = tiny["languages"]
    with serve(tatoeba_root()) as server:
        server.faults["tatoeba.jpn-eng.jpn"] = [500, ("drop", 20_000)]
        args = [TARGET, "--cores", "2", "--resources", "network=1", "--configfile"]
        result = snakemake(workdir, *args, _override(workdir, server.url))
        assert result.returncode == 0, result.stderr[-3000:]
        fetched = {path for path, _ in server.requests}
        assert ("tatoeba.jpn-eng.jpn", "bytes=20000-") in server.requests
        again = snakemake(workdir, *args, _override(workdir, server.url))
    assert fetched == {f"tatoeba.{lang}-eng.{side}" for lang in languages for side in (lang, "eng")}
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    out = workdir / TARGET
    meta = json.loads((out / "metadata.json").read_text())
    frozen = yaml.safe_load((out / "config.yaml").read_text())
    assert frozen["data"]["datasets"]["laser_tatoeba_v1"]["languages"] == languages
    assert json.loads((out / "provenance.json").read_text())["step"].startswith("data normalize")
    assert sorted(meta["pairs"]) == sorted(f"test.{lang}-eng" for lang in languages)
    for lang in languages:
        for side in (lang, "eng"):
            name = f"test.{lang}-eng.{side}"
            assert sha256_file(out / name) == sha256_file(TATOEBA / f"tatoeba.{lang}-eng.{side}")
            assert meta["pairs"][f"test.{lang}-eng"]["files"][name] == sha256_file(out / name)
    raw = workdir / "resources/datasets/laser_tatoeba_v1"
    assert json.loads((raw / "fetched.json").read_text())["source"] == server.url


def test_an_unreachable_mirror_fails_the_rule_with_the_reason_in_its_log(workdir, tmp_path):
    with serve(tmp_path / "empty") as server:
        result = snakemake(
            workdir, "--cores", "1", TARGET, "--configfile", _override(workdir, server.url)
        )
    assert result.returncode != 0
    log = (workdir / "results/logs/data/fetch_laser_tatoeba_v1.log").read_text()
    assert "HTTP 404" in log and "mirror" in log
    assert not (workdir / "resources/datasets/laser_tatoeba_v1/fetched.json").exists()
