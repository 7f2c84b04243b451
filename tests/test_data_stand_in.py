"""Stand-ins: a benchmark's layout and protocol, cut offline from a corpus's held-out split."""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml

from mlrep.cli import main
from mlrep.data import registry, stand_in
from mlrep.data.validate import Filters
from mlrep.evaluate import protocols
from mlrep.io import sha256_file
from mlrep.paths import Paths
from tests.conftest import REPO

TATOEBA = registry.get("laser_tatoeba_v1")
SETTINGS = stand_in.Settings(split="test", pairs=10, seed=1, codes={"jpn": "ja", "deu": "de"})


def corpus(root, sizes=None):
    """A corpus folder in the tiny corpus's layout: ja with 30 test pairs, de with 5."""
    folder = root / "tiny_corpus"
    folder.mkdir(parents=True)
    for lang, size in (sizes or {"ja": 30, "de": 5}).items():
        for split, n in (("train", 3), ("test", size)):
            english = [f"{split} sentence {i}" for i in range(n)]
            (folder / f"{split}.en-{lang}.en").write_text("".join(f"{e}\n" for e in english))
            side = "".join(f"{lang}: {e}\n" for e in english)
            (folder / f"{split}.en-{lang}.{lang}").write_text(side)
    (folder / "manifest.json").write_text('{"corpus": "tiny"}\n')
    return folder


def test_a_stand_in_has_the_benchmark_layout_and_says_what_it_stands_in_for(tmp_path):
    source = corpus(tmp_path)
    out = tmp_path / "stand_ins" / "laser_tatoeba_v1"
    wanted = ["jpn", "deu", "jav"]
    meta = stand_in.cut(TATOEBA, source, out, wanted, SETTINGS, Filters())
    assert sorted(p.name for p in out.iterdir()) == [
        "metadata.json",
        "test.deu-eng.deu",
        "test.deu-eng.eng",
        "test.jpn-eng.eng",
        "test.jpn-eng.jpn",
    ]
    assert json.loads((out / "metadata.json").read_text()) == meta
    assert meta["source_key"] == "laser_tatoeba_v1" and meta["name"].startswith("Stand-in for")
    info = meta[stand_in.STAND_IN]
    assert (info["benchmark"], info["corpus"], info["split"]) == (
        "laser_tatoeba_v1",
        "tiny_corpus",
        "test",
    )
    assert info["corpus_record"] == {
        "file": "manifest.json",
        "sha256": sha256_file(source / "manifest.json"),
    }
    assert info["codes"] == {"jpn": "ja", "deu": "de"}
    assert "no corpus code for it in data.stand_ins.laser_tatoeba_v1" in info["missing"]["jav"]
    # the held-out split only, aligned, in corpus order; a short language keeps every pair
    jpn = (out / "test.jpn-eng.jpn").read_text().splitlines()
    eng = (out / "test.jpn-eng.eng").read_text().splitlines()
    assert len(jpn) == meta["pairs"]["test.jpn-eng"]["lines"] == 10
    assert jpn == [f"ja: {e}" for e in eng] and all(e.startswith("test ") for e in eng)
    numbers = [int(e.rsplit(" ", 1)[1]) for e in eng]
    assert numbers == sorted(numbers) and numbers != list(range(10))
    assert (out / "test.deu-eng.eng").read_text().splitlines() == [
        f"test sentence {i}" for i in range(5)
    ]
    # a chapter reads it as it reads the benchmark
    assert protocols.tatoeba_languages(out) == ["deu", "jpn"]
    # the draw is a function of the seed
    again = stand_in.cut(TATOEBA, source, tmp_path / "again", wanted, SETTINGS, Filters())
    assert again["pairs"] == meta["pairs"]
    other = dataclasses.replace(SETTINGS, seed=2)
    redrawn = stand_in.cut(TATOEBA, source, tmp_path / "other", None, other, Filters())
    assert redrawn["pairs"]["test.jpn-eng"]["files"] != meta["pairs"]["test.jpn-eng"]["files"]


def test_the_benchmark_filters_apply_and_what_cannot_be_cut_is_a_clear_error(tmp_path):
    source = corpus(tmp_path)
    (source / "test.en-de.de").write_text("eins\n\nzwei\n drei\nvier\n")
    meta = stand_in.cut(TATOEBA, source, tmp_path / "out", ["deu"], SETTINGS, Filters())
    assert meta["pairs"]["test.deu-eng"]["filtered"]["empty"] == 1
    assert meta["pairs"]["test.deu-eng"]["lines"] == 4
    flores = registry.get("flores_flores200")
    with pytest.raises(stand_in.StandInError, match=r"no stand-in layout for its 'flores' format"):
        stand_in.cut(flores, source, tmp_path / "f", None, SETTINGS, Filters())
    with pytest.raises(stand_in.StandInError, match=r"no language of the laser_tatoeba_v1"):
        stand_in.cut(TATOEBA, source, tmp_path / "none", ["jav"], SETTINGS, Filters())
    (source / "manifest.json").unlink()
    with pytest.raises(stand_in.StandInError, match=r"no manifest.json or metadata.json"):
        stand_in.cut(TATOEBA, source, tmp_path / "x", None, SETTINGS, Filters())


def test_cli_cuts_the_params_stand_in_and_records_its_settings(tmp_path, capsys):
    source = corpus(tmp_path)
    out = tmp_path / "out"
    args = ["data", "stand-in", "laser_tatoeba_v1", "--corpus", str(source), "--out", str(out)]
    assert main([*args, "--params", str(REPO / "params.yaml")]) == 0, capsys.readouterr().err
    printed = json.loads(capsys.readouterr().out)
    assert printed["pairs"] == {"test.deu-eng": 5, "test.jpn-eng": 30}
    assert {"kor", "jav", "tgl"} <= set(printed["left_out"])
    frozen = yaml.safe_load((out / "config.yaml").read_text())
    params = yaml.safe_load((REPO / "params.yaml").read_text())["data"]["stand_ins"]
    recorded = frozen["data"]["stand_ins"]["laser_tatoeba_v1"]
    assert recorded == {**params["laser_tatoeba_v1"], "corpus": "tiny_corpus"}
    assert json.loads((out / "provenance.json").read_text())["step"] == (
        "data stand-in laser_tatoeba_v1"
    )
    # flags override the params file; a key without a stand-in block is named with the fix
    flags = ["--languages", "jpn", "--pairs", "4", "--codes", "jpn=ja", "--scale", "tiny"]
    assert main([*args, *flags, "--params", str(REPO / "params.yaml")]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == {"test.jpn-eng": 4}
    bad = ["data", "stand-in", "xtreme_tatoeba36", "--corpus", str(source), "--out", str(out)]
    assert main([*bad, "--params", str(REPO / "params.yaml")]) == 2
    assert "data.stand_ins has no xtreme_tatoeba36 block" in capsys.readouterr().err


def test_paths_resolve_a_benchmark_to_its_stand_in_only_when_selected():
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    key = "laser_tatoeba_v1"
    assert Paths.from_config(params).benchmark(key).as_posix() == f"results/data/stand_ins/{key}"
    params["data"]["use_stand_ins"] = False
    assert Paths.from_config(params).benchmark(key).as_posix() == f"results/data/{key}"
    assert Paths.from_config({"paths": params["paths"]}).benchmark(key) == Paths.from_config(
        params
    ).dataset(key)
