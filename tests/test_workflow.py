"""The workflow through Snakemake itself, in a temporary copy of the repository's workflow."""

import json

import pytest

from mlrep.io import sha256_file
from tests.conftest import snakemake

REQUIRED = ["ja", "zh", "ko", "de", "fr", "nl", "ru", "es", "it", "ar", "tr", "ro", "vi", "et"]


def test_full_scale_plans_with_no_data_present(workdir):
    result = snakemake(workdir, "-n", "all", "--config", "scale=full")
    assert result.returncode == 0, result.stderr
    assert "tiny_corpus" in result.stdout


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("scale=huge", "scale: 'huge' is not allowed; allowed values: tiny, full"),
        ("chapters=[ch2_ems,ch10]", "chapters[1]: 'ch10' is not allowed"),
        (  # valid for the schema; the ch8 rule file used to fail on it with a bare KeyError
            "ch8_layernorm={run_datasets: [wmt]}",
            "--config ch8_layernorm=... (scale tiny) is invalid:\n  - ch8_layernorm."
            "run_datasets[0]: 'wmt' is not in ch8_layernorm.datasets; allowed values: opus, ",
        ),
    ],
)
def test_bad_config_stops_before_any_job_is_planned(workdir, override, message):
    result = snakemake(workdir, "-n", "all", "--config", override)
    output = result.stdout + result.stderr  # Snakemake reports workflow errors on stdout
    assert result.returncode != 0
    assert message in output
    assert "Building DAG" not in output


def test_a_bad_value_is_blamed_on_the_configfile_or_config_that_set_it(workdir):
    extra = workdir / "extra.yaml"
    extra.write_text("ch8_layernorm:\n  pivot: bogus\n  decode: {beam: 0}\n")
    args = ["--configfile", "extra.yaml", "--config", "report={bootstrap_samples: 5}"]
    result = snakemake(workdir, "-n", *args, "scale=tiny")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Building DAG" not in output
    configfile = output.index("--configfile extra.yaml (scale tiny) is invalid:")
    config = output.index("--config report=... (scale tiny) is invalid:")
    assert configfile < output.index("ch8_layernorm.decode.beam: 0 is out of range") < config
    assert configfile < output.index("ch8_layernorm.pivot: 'bogus' does not match") < config
    assert config < output.index("report.bootstrap_samples: 5 is out of range")
    assert "params.yaml" not in output[configfile:] and "scale=tiny" not in output


@pytest.mark.network
@pytest.mark.slow
def test_corpus_target_builds_the_tiny_corpus_from_the_pinned_wheels(tiny_project):
    """The session's shared project built the target with the default corpus settings."""
    corpus = tiny_project.root / "results/data/tiny_corpus"
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert {s["package"]: s["version"] for s in manifest["sources"]} == {
        "django": "5.2.8",
        "sphinx": "9.0.4",
        "wagtail": "8.0.1",
        "weblate": "5.14.3",
        "pretix": "2026.8.0",
    }
    for lang in REQUIRED:
        counts = manifest["languages"][lang]
        assert counts["train"] + counts["valid"] + counts["test"] >= 2000, lang
        assert counts["meets_target"] and lang not in manifest["short_languages"]
    for name, digest in manifest["files"].items():
        assert sha256_file(corpus / name) == digest
    provenance = json.loads((corpus / "provenance.json").read_text())
    assert provenance["config_hash"] and provenance["packages"]["snakemake"]
    assert "Nothing to be done" in tiny_project.snakemake("-n", "results/data/tiny_corpus")
