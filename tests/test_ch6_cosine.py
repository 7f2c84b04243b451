"""`mlrep ch6 cosine`: a cosine analysis's Δ1 and Δ2 per layer, written through the metrics
contract from its three models' `mlrep llm cosine` files, and read by Figs 6.3 and D.1."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from mlrep.chapters.ch6_aligninstruct import cli, cosine, runs
from mlrep.chapters.ch6_aligninstruct.cosine import CosineFileError
from mlrep.cliutil import common_options
from mlrep.report import figures
from mlrep.report.metrics import collect
from mlrep.report.metrics import read as read_metrics

B24 = "bloomz-24/7b1-cosine"


def _cli(*words: str) -> int:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command"), common_options())
    args = parser.parse_args(list(words))
    return args.func(args)


def _cosines(path: Path, values: list[float], pairs: int = 8) -> Path:
    layers = list(range(1, len(values) + 1))
    path.write_text(json.dumps({"layers": layers, "cosine": values, "pairs": pairs}))
    return path


def _files(tmp_path: Path) -> list[str]:
    """No FT, MTInstruct and MT+Align of a 3-layer model, numbers chosen by hand."""
    return [
        "--noft", str(_cosines(tmp_path / "noft.json", [0.50, 0.40, 0.30])),
        "--mt", str(_cosines(tmp_path / "mt.json", [0.55, 0.60, 0.25])),
        "--mt-align", str(_cosines(tmp_path / "align.json", [0.45, 0.70, 0.75])),
    ]  # fmt: skip


def test_deltas_per_layer_against_hand_numbers_and_fig_6_3_plots_them(tmp_path):
    out = tmp_path / "results" / "ch6_aligninstruct" / B24 / "seed1" / "metrics.json"
    common = ["--seed", "1", "--scale", "tiny", "--out", str(out)]
    assert _cli("ch6", "cosine", "--analysis", B24, *_files(tmp_path), *common) == 0
    result = read_metrics(out)
    assert result.run == B24 and result.chapter == "ch6_aligninstruct"
    assert result.metrics == pytest.approx(
        {
            "delta1_l1": 0.05,  # Δ1 = MT − no FT: 0.55 − 0.50
            "delta1_l2": 0.20,
            "delta1_l3": -0.05,
            "delta2_l1": -0.10,  # Δ2 = MT+Align − MT: 0.45 − 0.55
            "delta2_l2": 0.10,
            "delta2_l3": 0.50,
        }
    )
    written = json.loads(out.read_text(encoding="utf-8"))
    files = [tmp_path / name for name in ("noft.json", "mt.json", "align.json")]
    models = runs.analysis(B24).compared
    assert written["compared"] == {m: str(f) for m, f in zip(models, files, strict=True)}
    assert written["pairs"] == 8 and (out.parent / "provenance.json").exists()
    spec = figures.definitions()["fig-6.3"]
    (panel,) = figures.panels("fig-6.3", spec, {}, collect(tmp_path / "results", "tiny"))
    assert panel.x == ["1", "2", "3"]
    assert panel.series[0].measured == pytest.approx([0.05, 0.20, -0.05])


def test_files_of_other_layers_or_sentences_are_refused_naming_them(tmp_path):
    short = _cosines(tmp_path / "short.json", [0.1, 0.2])
    three = cosine.read(_cosines(tmp_path / "three.json", [0.1, 0.2, 0.3]))
    with pytest.raises(CosineFileError, match=r"differ in layers .*short\.json: layers 1\.\.2"):
        cosine.deltas(three, cosine.read(short), three)
    fewer = cosine.read(_cosines(tmp_path / "fewer.json", [0.1, 0.2, 0.3], pairs=5))
    with pytest.raises(CosineFileError, match=r"differ in sentence pairs .*fewer\.json: 5 pairs"):
        cosine.deltas(three, three, fewer)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a readable cosine JSON"),
        ({"layers": [0, 1], "cosine": [0.1, 0.2], "pairs": 2}, "`layers` must be 1..L"),
        ({"layers": [1, 2], "cosine": [0.1], "pairs": 2}, "`cosine` must be 2 finite numbers"),
        (
            {"layers": [1], "cosine": [float("nan")], "pairs": 2},
            "`cosine` must be 1 finite numbers",
        ),
        ({"layers": [1], "cosine": [0.1], "pairs": 0}, "`pairs` must be a positive integer"),
    ],
)
def test_a_file_that_is_not_a_cosine_file_is_refused(tmp_path, content, message):
    path = tmp_path / "c.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(CosineFileError, match=f"{path}: {message}"):
        cosine.read(path)


def test_an_unknown_analysis_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "metrics.json"
    with pytest.raises(runs.GridError, match="no Chapter 6 cosine analysis 'bloomz-24/7b1-mt'"):
        _cli("ch6", "cosine", "--analysis", "bloomz-24/7b1-mt", *_files(tmp_path),
             "--seed", "1", "--scale", "tiny", "--out", str(out))  # fmt: skip
    assert not out.exists()
