import hashlib
import json
import shutil
import subprocess
import sys

import pytest

from mlrep import cli
from mlrep.cliutil import flags_from
from mlrep.data import wheels
from tests.conftest import REPO, make_wheel, po_text


def test_flags_from_renders_config_keys_as_flags():
    section = {
        "packages": ["django", "sphinx"],
        "languages": "all",
        "max_chars": 400,
        "valid_fraction": 0.05,
    }
    assert flags_from(section) == (
        "--packages django sphinx --languages all --max-chars 400 --valid-fraction 0.05"
    )
    assert flags_from({"name": "it's"}) == "--name 'it'\"'\"'s'"
    # an empty list is left out: no option takes zero values, the verb reads [] from params
    assert flags_from({"languages": [], "max_chars": 400}) == "--max-chars 400"


def test_config_check(capsys):
    assert cli.main(["config", "check", "--params", str(REPO / "params.yaml")]) == 0
    assert "valid for every scale" in capsys.readouterr().out


def test_config_error_is_one_clear_line_and_exit_2(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text((REPO / "params.yaml").read_text().replace("scale: tiny", "scale: big"))
    assert cli.main(["config", "check", "--params", str(params)]) == 2
    err = capsys.readouterr().err
    assert "scale: 'big' is not allowed; allowed values: tiny, full" in err


def test_bad_flag_value_is_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        cli.main(["corpus", "tiny", "--out", "x", "--valid-fraction", "2"])
    assert "2.0 is not strictly between 0 and 1" in capsys.readouterr().err


def test_corpus_tiny_end_to_end_on_a_pinned_wheel(tmp_path, monkeypatch, capsys):
    # a synthetic wheel pinned under the name "django": the CLI verifies it like a real one
    wheel = make_wheel(
        tmp_path / "django-5.2.8-py3-none-any.whl",
        "django",
        {
            "de": po_text(
                "de", "".join(f'msgid "Item {i}"\nmsgstr "Ding {i}"\n\n' for i in range(300))
            ),
        },
    )
    pin = wheels.WheelPin(
        "django",
        "5.2.8",
        wheel.name,
        hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "BSD-3-Clause",
    )
    monkeypatch.setattr(wheels, "pinned_wheels", lambda: [pin])
    out = tmp_path / "corpus"
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    code = cli.main(
        [
            "corpus",
            "tiny",
            "--params",
            str(tmp_path / "params.yaml"),
            "--wheels",
            str(tmp_path),
            "--out",
            str(out),
            "--packages",
            "django",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["languages"] == {"de": 300}
    assert "ja" in summary["required_languages_short"]
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["step"] == "corpus tiny"
    assert provenance["packages"]["mlrep"]
    assert "tiny_corpus" in (out / "config.yaml").read_text()
    assert not list(tmp_path.glob(".corpus.*"))  # no staging folder left behind


def test_the_parser_and_the_snakefiles_imports_load_no_model_library():
    """Every Snakefile parse builds the parser (code digests) and applies the stop signals;
    torch there cost seconds per parse, in every dry run and every SLURM job step."""
    code = (
        "import sys\n"
        "from mlrep.cli import build_parser\n"
        "from mlrep.train.signals import leave_stop_signals_to_trainers\n"
        "build_parser()\n"
        "print(sorted({'torch', 'fairseq', 'transformers'} & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"


def test_the_cli_imports_on_a_compute_image_without_the_reporting_tools():
    """A GPU image carries the training stack but not DVC, vl-convert or polib; its job steps
    still run `mlrep …`, so the CLI must import (and parse) with those three missing."""
    code = (
        "import sys\n"
        "for name in ('dvc', 'vl_convert', 'polib'):\n"
        "    sys.modules[name] = None  # import raises ImportError\n"
        "from mlrep.cli import build_parser\n"
        "build_parser().parse_args(['embed', '--help'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "usage: mlrep embed" in out.stdout
