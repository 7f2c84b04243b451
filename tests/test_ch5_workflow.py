"""Chapter 5 through Snakemake: the 222_en-ja system trimmed (tests/tiny_runs.py), its baseline
and a run of each addition that reads word links, end to end (SentencePiece data → w2w and FA
links → train → decode → tokenized BLEU → validation retrieval P@1 → metrics.json), and mBART
FT and its +w2w from the tiny stand-in (monolingual text → denoising pre-training →
mbart-init → the data in mBART's dictionary → fine-tuning)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlrep.nmt import prepare
from mlrep.nmt.data import FAIRSEQ, MBART
from mlrep.nmt.valid_log import read
from tests.conftest import snakemake
from tests.tiny_runs import CHAPTER_TRIMS, jobs_run, set_params

TRIM = CHAPTER_TRIMS["ch5_wordcl"]
SYSTEM = "222_en-ja"
METHODS = TRIM["ch5_wordcl.methods"]
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
    "ch5_corpus",
    "ch5_wordcl",
    # the report the chapter target renders
    "report",
}


@pytest.fixture(scope="module")
def ch5(tiny_project, ch5_run) -> tuple[Path, dict[str, int]]:
    """The session's project with the chapter target built (trimmed to the 222 system,
    tests/tiny_runs.py); returns it and the jobs each rule of the target ran."""
    return tiny_project.root, tiny_project.ran["ch5_wordcl"]


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
            # what the claims test: each retrieval's score, and the chance floor beside it
            for name in (f"{kind}_p_at_1", f"floor_{kind}_p_at_1"):
                scores = doc["sentence_scores"][name]
                assert sum(scores) / len(scores) == pytest.approx(metrics[name]), (method, name)
            assert 0 < metrics[f"floor_{kind}_p_at_1"] < 100
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


def _units(line: str) -> int:
    """Connected components of one line's links, counted here afresh (no mlrep code)."""
    groups: list[set[str]] = []
    for link in line.split():
        i, j = link.split("-")
        nodes = {f"s{i}", f"t{j}"}
        touching = [g for g in groups if g & nodes]
        groups = [g for g in groups if not g & nodes] + [nodes.union(*touching)]
    return len(groups)


@pytest.mark.slow
@pytest.mark.network
def test_table_5_1_row_is_the_count_of_the_link_files_of_the_training_lines(ch5):
    root, ran = ch5
    assert ran["ch5_corpus"] == 1  # the one pair of the trimmed system
    row = root / "results" / "ch5_wordcl" / "corpora" / "en-ja" / "seed0" / "metrics.json"
    doc = json.loads(row.read_text())
    assert (doc["run"], doc["seed"], doc["scale"]) == ("corpora/en-ja", 0, "tiny")
    align = root / "results" / "align"
    train = (root / "results" / "preprocess" / "thesis" / "tok" / "train.en-ja.en").read_text()
    size = len(train.splitlines())
    w2w = (align / "thesis" / "en-ja" / "w2w" / "train" / "links.txt").read_text().splitlines()
    od = align / "thesis+od" / "en-ja"
    fa = (od / "fast_align.grow-diag-final-and.one-to-one" / "links.txt").read_text()
    fa_lines = fa.splitlines()
    aligned = sum(len(p.read_text().splitlines()) for p in od.glob("bitext.*.txt"))
    assert len(w2w) == len(fa_lines) == size > 0
    assert all(_units(line) == len(line.split()) for line in fa_lines)  # 1-to-1: a unit each
    expected = {
        "train_pairs": size,
        "od_pairs": aligned - size,  # none at tiny (align.od_corpora is empty)
        "n_w2w": sum(_units(line) for line in w2w),
        "n_fa": sum(len(line.split()) for line in fa_lines),
    }
    assert {k: doc["metrics"][k] for k in expected} == expected
    assert expected["n_w2w"] > 0 and expected["n_fa"] > 0
    assert doc["metrics"]["fa_per_sentence"] == round(expected["n_fa"] / size, 4)


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


@pytest.mark.slow
@pytest.mark.network
def test_a_changed_system_setting_plans_its_trainings_again(tiny_project, ch5_run, tmp_path):
    """The training's settings reach it through a param of the wildcards alone, which Snakemake
    records: one computed from the job's input would not be, and a changed setting would
    leave the old models in place."""
    root = tiny_project.copy(tmp_path)
    set_params(root, {f"ch5_wordcl.datasets.{SYSTEM}.lr": 0.001})
    result = snakemake(root, "-n", "ch5_wordcl")
    assert result.returncode == 0, result.stderr[-3000:]
    assert jobs_run(result.stdout + result.stderr)["ch5_train"] == len(METHODS)
