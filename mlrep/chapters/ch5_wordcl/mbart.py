"""Where Chapter 5's mBART FT starts from, for the rules: an mBART release's files (the
stand-in `mlrep nmt mbart-pretrain` writes at tiny scale, or mBART-25 fetched from the data
registry at full scale), converted by `mlrep nmt mbart-init` into the init of every mBART FT
run, and the SentencePiece model the stand-in is pre-trained with.

The file names are those of the release layout and of mbart-init's output
(`mlrep.nmt.mbart_pretrain`, `mlrep.nmt.mbart_init`, which import fairseq: the rules read
them here, and tests/test_ch5_mbart.py holds the two in step).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.chapters.ch5_wordcl.runs import Ch5RunError
from mlrep.paths import Paths
from mlrep.text import plan

# mbart-init's option -> the file of the release layout it reads
RELEASE_FILES = {"checkpoint": "model.pt", "dict": "dict.txt", "spm": "sentence.bpe.model"}
INIT_CHECKPOINT = "checkpoint.pt"  # what `mlrep nmt train --init` reads
INIT_DICT = "dict.txt"  # what `mlrep nmt prepare --dictionary` binarises with
SPM_MODEL = "spm.model"  # a SentencePiece setting's model file (`mlrep text train-subwords`)


def init_input(init: str, pretrained: bool) -> list[str]:
    """The input of a job on the mbart-init folder `init`: the folder where the job binarises
    with mBART's dictionary or fine-tunes mBART (`pretrained`), else none. The folder, not
    the files in it: a rule cannot depend on a file inside another's directory output."""
    return [init] if pretrained else []


def release(section: Mapping[str, Any]) -> str:
    """The data registry key of the mBART release mBART FT fine-tunes (``mbart.release``), ""
    where the stand-in is pre-trained instead (tiny scale)."""
    return section["mbart"]["release"]


def release_files(extracted: str, archive: str) -> str:
    """The folder of the release's files in the folder `extracted` its `archive` (the registry
    file's name) was extracted into: fairseq's mBART archives hold one folder named as the
    archive (``mbart.cc25.v2.tar.gz``: ``mbart.cc25.v2/``)."""
    suffix = ".tar.gz"
    if not archive.endswith(suffix):
        raise Ch5RunError(
            f"{archive}: not a {suffix} archive; the data registry's mBART release "
            f"(ch5_wordcl.mbart.release) is fairseq's {suffix} of model.pt, dict.txt and "
            "sentence.bpe.model"
        )
    return str(Path(extracted) / archive.removesuffix(suffix))


def subword_model(section: Mapping[str, Any], pre: Mapping[str, Any], paths: Paths) -> Path:
    """The folder of the SentencePiece model (`SPM_MODEL` in it) the stand-in is pre-trained
    with: the one joint model every
    system's data is cut with, so that the stand-in's dictionary (every piece of that model)
    covers every system's pieces and `prepare --dictionary` reads no piece as <unk>. `pre`:
    params.yaml ``preprocess``."""
    settings = sorted({spec["subwords"] for spec in section["datasets"].values()})
    if len(settings) != 1:
        raise Ch5RunError(
            f"params.yaml ch5_wordcl.datasets: the systems are cut with subword settings "
            f"{settings}; mBART FT's stand-in is pre-trained with one SentencePiece model: "
            "give every system the same `subwords`"
        )
    setting = plan.subword_setting(pre, settings[0])
    if setting["method"] != "sentencepiece" or setting["joint"] != "all":
        raise Ch5RunError(
            f"params.yaml preprocess.subwords.settings.{settings[0]}: mBART FT's stand-in "
            "needs one joint SentencePiece model of every pair; set method: sentencepiece "
            "and joint: all"
        )
    return paths.subword_model(setting["dataset"], settings[0], plan.JOINT_MODEL)
