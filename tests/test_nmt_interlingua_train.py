"""The interlingua trainer and decoder on real fairseq runs (the tiny real dataset of
`tests.nmt_helpers`): it learns, its validation log carries the criterion's losses, and
decoding writes the interlingua lengths, predicted or gold."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from mlrep.io import read_lines
from mlrep.nmt import valid_log
from mlrep.nmt.data import directions
from mlrep.nmt.decode import Translator
from mlrep.nmt.prepare import read_subwords
from mlrep.nmt.score import score
from mlrep.nmt.train import BEST, LAST, SUMMARY
from mlrep.nmt.translate import translate
from tests.learning import assert_improves, assert_loss_falls
from tests.nmt_helpers import (  # noqa: F401
    BEAM,
    LANGUAGES,
    ONE_BATCH_TOKENS,
    TEST_LINES,
    corpus,
    encoded,
    fairseq_losses,
    one_batch,
    prepared,
    run,
    settings,
    train_command,
)

pytestmark = [pytest.mark.network, pytest.mark.slow]  # pinned wheels; real fairseq training

VAR = ["--interlingua", "var", "--max-interlingua-length", "128"]


def test_the_var_interlingua_overfits_a_fixed_batch(one_batch, tmp_path):  # noqa: F811
    s = settings(max_update=30, save_interval_updates=30)
    s = dataclasses.replace(s, lr=0.01, max_tokens=ONE_BATCH_TOKENS)  # an epoch: one update
    result = run([*train_command(one_batch, tmp_path, s=s), *VAR])
    assert result.returncode == 0, result.stderr[-3000:]
    losses = fairseq_losses(result.stderr, "train")
    assert len(losses) == 30  # one logged epoch per update
    # the total loss (NMT + IA + LP), measured: first-5 mean 8.74, last-5 mean 4.17 (ratio
    # 0.48); the no-update mutant (lr 0): flat, ratio 0.998
    assert_loss_falls(losses, window=5, below=0.7)


@pytest.fixture(scope="module")
def var_run(prepared, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("interlingua-run")
    result = run([*train_command(prepared, out, s=settings(max_update=8)), *VAR])
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_validation_logs_the_losses_and_selects_on_the_nmt_loss(var_run):
    rows = valid_log.read(var_run / valid_log.VALID_LOG)
    assert rows and {"nmt_loss", "ia_loss", "lp_loss", "length_acc"} <= set(rows[0])
    summary = json.loads((var_run / SUMMARY).read_text())
    assert summary["model"] == "mlrep_interlingua"
    assert summary["best_valid_loss"] == min(r["nmt_loss"] for r in rows)
    # fairseq validates first after 4 updates, standing in for the untrained model; measured:
    # 9.71 after 4 updates, 9.18 after 8
    losses = [r["nmt_loss"] for r in rows]
    assert_improves(losses[-1], losses[0], by=0.3, higher_is_better=False, what="valid nmt_loss")


def test_decoding_writes_predicted_and_gold_lengths(var_run, prepared, tmp_path):  # noqa: F811
    translator = Translator(var_run / BEST, prepared / "s-enc-t-dec/bin", "s-enc-t-dec")
    assert translator.variable_length
    translate(translator, prepared, tmp_path / "hyp", BEAM)
    translate(translator, prepared, tmp_path / "gold", BEAM, gold_length=True)
    to_english = [d for d in directions(LANGUAGES) if d.tgt == "en"]
    assert sorted(p.stem for p in (tmp_path / "gold").glob("*.hyp")) == [d.name for d in to_english]
    for d in directions(LANGUAGES):
        used = [int(x) for x in read_lines(tmp_path / f"hyp/{d.name}.len", ValueError)]
        sources, references = read_subwords(prepared, "test", d)
        assert len(used) == TEST_LINES
        if d.src == "en":  # an English source keeps its own length
            assert used == [len(s.split()) for s in sources]
        if d in to_english:
            gold = read_lines(tmp_path / f"gold/{d.name}.len", ValueError)
            assert [int(x) for x in gold] == [len(r.split()) for r in references]
    # scoring takes the gold decode's few directions
    scores = score(tmp_path / "gold", prepared / "text", to_english)
    assert set(scores["metrics"]) >= {"to_en_bleu", "bleu_it-en"}
    assert "zst_bleu" not in scores["metrics"] and "from_en_bleu" not in scores["metrics"]


def test_metrics_add_gold_bleu_and_length_accuracy(var_run, prepared, tmp_path):  # noqa: F811
    from mlrep.cli import main

    translator = Translator(var_run / BEST, prepared / "s-enc-t-dec/bin", "s-enc-t-dec")
    translate(translator, prepared, tmp_path / "hyp", BEAM)
    translate(translator, prepared, tmp_path / "gold", BEAM, gold_length=True)
    common = ["--section", "ch8_layernorm", "--scale", "tiny", "--data", str(prepared)]
    for name in ("hyp", "gold"):
        scored = [*common, "--hyp", str(tmp_path / name), "--out", str(tmp_path / f"{name}.json")]
        assert main(["nmt", "score", *scored]) == 0
    out = tmp_path / "run/seed1/metrics.json"
    argv = ["nmt", "metrics", *common, "--hyp", str(tmp_path / "hyp"), "--run", "iwslt/var"]
    argv += ["--scores", str(tmp_path / "hyp.json"), "--gold-scores", str(tmp_path / "gold.json")]
    assert main([*argv, "--seed", "1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    sources = ("it", "nl", "ro")
    expected = {"gold_to_en_bleu", "len_acc", "len_diff", "from_en_bleu", "to_en_bleu"}
    expected |= {f"gold_bleu_{x}-en" for x in sources} | {f"len_acc_{x}" for x in sources}
    assert expected <= set(doc["metrics"])
    gold = json.loads((tmp_path / "gold.json").read_text())
    assert doc["metrics"]["gold_to_en_bleu"] == gold["metrics"]["to_en_bleu"]
    assert doc["groups"]["gold_to_en_bleu"] == [[f"{x}-en", TEST_LINES] for x in sources]
    assert 0 <= doc["metrics"]["len_acc"] <= 100


def test_resuming_a_checkpoint_of_the_other_model_is_refused(var_run, prepared, tmp_path):  # noqa: F811
    shutil.copy(var_run / LAST, tmp_path / LAST)
    result = run(train_command(prepared, tmp_path, s=settings(max_update=8)))  # no interlingua
    assert result.returncode != 0
    assert "a checkpoint of mlrep_interlingua_tiny, but this run trains mlrep_transformer_tiny" in (
        result.stderr
    )
