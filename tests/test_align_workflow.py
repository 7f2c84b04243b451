"""The alignment rules through Snakemake itself, on a cipher corpus laid out like a dataset."""

import pytest
import yaml

from mlrep.align import cipher
from mlrep.align.pharaoh import GoldLine, read_alignments
from mlrep.align.score import score
from tests.conftest import REPO, copy_workflow, snakemake

ALIGN_RULES = ["align_bitext", "align_direction", "align_symmetrize", "align_gather", "alignments"]


@pytest.fixture
def workdir(tmp_path):
    copy_workflow(tmp_path)
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["align"].update({"pairs": ["en-de"], "shards": 2})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    return tmp_path


def test_rules_align_shards_both_directions_and_gather(workdir):
    pairs = cipher.generate(cipher.CipherSettings(sentences=400, seed=5))
    corpus = workdir / "results/data/tiny_corpus"
    corpus.mkdir(parents=True)
    (corpus / "train.en-de.en").write_text("".join(" ".join(p.source) + "\n" for p in pairs))
    (corpus / "train.en-de.de").write_text("".join(" ".join(p.target) + "\n" for p in pairs))
    out = workdir / "results/align/tiny_corpus/en-de"
    eflomal = "results/align/tiny_corpus/en-de/eflomal.intersect.txt"
    result = snakemake(
        workdir, "--cores", "2", "--allowed-rules", *ALIGN_RULES, "--", "alignments", eflomal
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for name in (eflomal, out / "fast_align.grow-diag-final-and.txt"):
        links = read_alignments(workdir / name)
        assert len(links) == len(pairs)
        gold = [GoldLine(p.links, p.links) for p in pairs]
        # 200-pair shards train weak models; misordered shards would score AER ≈ 0.9.
        assert score(gold, links).aer < 0.5
    assert sorted(p.name for p in out.glob("bitext.*")) == ["bitext.0.txt", "bitext.1.txt"]
    assert (out / "fast_align.rev.1.json").exists()
    # A rerun has nothing to do.
    again = snakemake(workdir, "--cores", "2", "--allowed-rules", *ALIGN_RULES, "-n", "alignments")
    assert "Nothing to be done" in again.stdout + again.stderr
