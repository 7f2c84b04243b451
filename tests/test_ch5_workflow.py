"""Chapter 5 (landing) through Snakemake: the 222_en-ja system trimmed, its baseline and a run
of each addition that reads word links, end to end (SentencePiece data → w2w and FA links →
train → decode → tokenized BLEU → validation retrieval P@1 → metrics.json), and mBART FT and
its +w2w from the tiny stand-in (monolingual text → denoising pre-training → mbart-init → the
data in mBART's dictionary → fine-tuning)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlrep.nmt import prepare
from mlrep.nmt.data import FAIRSEQ, MBART
from mlrep.nmt.valid_log import read
from tests.conftest import snakemake
from tests.tiny_runs import PROJECT_FILES, PROJECT_TREES, jobs_run, set_params

CORPUS = "results/data/tiny_corpus"
SYSTEM = "222_en-ja"
METHODS = ["mlsc", "mlsc-align", "mlsc-w2w", "mlsc-fa", "mbart-ft", "mbart-ft-w2w"]
# a handful of updates on a few hundred pairs: every rule runs for real
TRIM = {
    "preprocess.subwords.settings.ch5_wordcl.pairs": ["en-ja"],
    "preprocess.subwords.settings.ch5_wordcl.vocab_size": 1000,  # what en-ja's lines hold
    "ch5_wordcl.run_systems": [SYSTEM],
    "ch5_wordcl.methods": METHODS,
    "ch5_wordcl.data": {
        "max_train": 200,
        "max_valid": 20,
        "max_test": 20,
        "max_length": 256,
        "sampling_temperature": 1.5,
    },
    "ch5_wordcl.train.max_update": 8,
    "ch5_wordcl.train.warmup_updates": 2,
    "ch5_wordcl.train.save_interval_updates": 4,
    "ch5_wordcl.decode.max_len_b": 4,
    # the stand-in: the system's two languages, a few dozen updates
    "ch5_wordcl.monolingual.languages": ["en", "ja"],
    "ch5_wordcl.mbart_pretrain.updates": 60,
    "ch5_wordcl.mbart_pretrain.warmup_updates": 5,
    "ch5_wordcl.mbart_pretrain.validate_interval_updates": 20,
}
RULES = {
    "tokenize_shard",
    "segment_ja_shard",
    "train_subwords",
    "encode_subwords",
    "align_bitext",
    "align_direction",
    "align_symmetrize",
    "align_gather",
    "align_one_to_one",
    "align_lexicon",
    "align_w2w",
    "monolingual",
    "ch5_mbart_pretrain",
    "ch5_mbart_init",
    "ch5_prepare",
    "ch5_links",
    "ch5_train",
    "ch5_translate",
    "ch5_score",
    "ch5_retrieval",
    "ch5_metrics",
    "ch5_runs",
}


@pytest.fixture(scope="module")
def ch5(tiny_project, tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """A project of the session's workflow and tiny corpus, trimmed to the 222 system, with
    `ch5_runs` built; returns it and the jobs each rule ran."""
    root = tmp_path_factory.mktemp("ch5")
    for name in PROJECT_FILES:
        shutil.copy2(tiny_project.root / name, root / name)
    for name in PROJECT_TREES:
        shutil.copytree(tiny_project.root / name, root / name)
    shutil.copytree(tiny_project.root / CORPUS, root / CORPUS, symlinks=True)
    set_params(root, TRIM)
    result = snakemake(root, "--cores", "2", "ch5_runs", timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-4000:]
    return root, jobs_run(result.stdout + result.stderr)


def run_folder(root: Path, method: str) -> Path:
    return root / "results" / "ch5_wordcl" / SYSTEM / method / "seed1"


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
def test_each_run_writes_tokenized_bleu_and_validation_retrieval(ch5):
    root, ran = ch5
    assert set(ran) <= RULES, ran
    assert ran["ch5_train"] == len(METHODS)
    # the data in each dictionary; w2w and FA links in the own, w2w in mBART's
    assert ran["ch5_prepare"] == 2 and ran["ch5_links"] == 3
    for method in METHODS:
        doc = json.loads((run_folder(root, method) / "metrics.json").read_text())
        assert doc["run"] == f"{SYSTEM}/{method}" and doc["scale"] == "tiny"
        metrics = doc["metrics"]
        for name in ("bleu_en-ja", "bleu_ja-en", "sup_bleu"):
            assert 0 <= metrics[name] <= 100, (method, name)
        assert doc["signatures"]["bleu_en-ja"].startswith("wat:ja:")
        assert doc["signatures"]["bleu_ja-en"].startswith("wat:en:moses")
        for kind in ("sent", "word"):
            value = metrics[f"{kind}_p_at_1_en-ja"]
            assert 0 <= value <= 100 and metrics[f"{kind}_p_at_1"] == value, (method, kind)
        assert len(doc["bleu_stats"]["sup_bleu"]) == 2 * 20  # both directions' test lines


@pytest.mark.slow
@pytest.mark.network
def test_each_method_trains_what_the_thesis_says_on_its_links(ch5):
    root, _ = ch5

    def trained(method: str) -> dict:
        return json.loads((run_folder(root, method) / "model" / "train.json").read_text())

    base, w2w, fa, align = map(trained, ("mlsc", "mlsc-w2w", "mlsc-fa", "mlsc-align"))
    assert base["settings"]["contrastive"] and base["settings"]["word_weight"] == 0
    assert base["settings"]["dropout"] == 0.3 and w2w["settings"]["dropout"] == 0.2
    assert w2w["settings"]["word_weight"] == fa["settings"]["word_weight"] == 0.1
    assert align["settings"]["alignment_weight"] == 0.05 and not align["settings"]["contrastive"]
    assert align["model"] != base["model"]
    # the baseline logs in-batch sentence retrieval at each validation (Figure 5.1); the runs
    # on linked data also their word retrieval, on the valid lines' w2w links
    base_log = read(run_folder(root, "mlsc") / "model" / "valid.jsonl")
    assert base_log and all("sent_p_at_1" in row for row in base_log)
    w2w_log = read(run_folder(root, "mlsc-w2w") / "model" / "valid.jsonl")
    assert all("word_p_at_1" in row for row in w2w_log)
    # the two kinds of links are two alignments of the same training lines
    data = root / "results" / "ch5_wordcl" / "data" / "own" / "links" / SYSTEM
    w2w_links = (data / "w2w" / "align" / "train.en-ja").read_text().splitlines()
    fa_links = (data / "fa" / "align" / "train.en-ja").read_text().splitlines()
    assert len(w2w_links) == len(fa_links) > 0 and w2w_links != fa_links
    assert (data / "w2w" / "align" / "valid.en-ja").read_text() == (
        data / "fa" / "align" / "valid.en-ja"
    ).read_text()


@pytest.mark.slow
@pytest.mark.network
def test_mbart_ft_fine_tunes_the_stand_in_on_data_with_mbart_language_tokens(ch5):
    """The mBART FT runs start from mbart-init's conversion of the stand-in: their record names
    it, and their first validation loss is far below MLSC's at the same update; their data is
    binarised with the stand-in's dictionary and mBART's language tokens, MLSC's with its own
    and fairseq's tags."""
    root, _ = ch5
    chapter = root / "results" / "ch5_wordcl"
    init = chapter / "mbart" / "init"
    for method in ("mbart-ft", "mbart-ft-w2w"):
        record = json.loads((run_folder(root, method) / "model" / "train.json").read_text())
        assert record["init"] == str(Path("results/ch5_wordcl/mbart/init/checkpoint.pt"))
        assert record["settings"]["arch"] == "mlrep_transformer_mbart_tiny"
    mlsc = read(run_folder(root, "mlsc") / "model" / "valid.jsonl")
    tuned = read(run_folder(root, "mbart-ft") / "model" / "valid.jsonl")
    assert tuned[0]["updates"] == mlsc[0]["updates"]
    assert tuned[0]["loss"] < mlsc[0]["loss"] - 1, (tuned[0], mlsc[0])
    # the stand-in was pre-trained on the leak-free text of the system's languages
    pretrained = json.loads((chapter / "mbart" / "release" / "pretrain.json").read_text())
    assert pretrained["last_valid_loss"] < pretrained["first_valid_loss"]
    mbart = chapter / "data" / "mbart"
    assert prepare.tag_style(mbart / SYSTEM) == MBART
    assert prepare.tag_style(chapter / "data" / "own" / SYSTEM) == FAIRSEQ
    for data in (mbart / SYSTEM, mbart / "links" / SYSTEM / "w2w"):
        raw = (data / "s-enc-t-dec" / "raw" / "train.src-tgt.src").read_text().splitlines()
        assert {line.split()[0] for line in raw} == {"[en_XX]", "[ja_XX]"}
        bin_dict = data / "s-enc-t-dec" / "bin" / prepare.BIN_DICT
        assert bin_dict.read_bytes() == (init / "dict.txt").read_bytes()
