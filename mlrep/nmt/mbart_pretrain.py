"""A tiny mBART stand-in, denoising-pre-trained on the chapter's monolingual text (Chapter 5).

At full scale mBART FT fine-tunes the released mBART-25 (`mlrep.nmt.mbart_init`). At tiny
scale there is no release that small, and a randomly initialised "mBART" would make "mBART FT
beats a system trained from scratch" test nothing; so a tiny model of mBART's class is
pre-trained as mBART was, briefly, on the leak-free monolingual text (`mlrep data
monolingual`'s ``<lang>.txt``), and written in the release's layout, which `mbart-init` then
checks and converts exactly as it converts the release:

* ``model.pt``: fairseq's ``bart`` model under ``mbart_large`` (PreNorm, as mBART was
  trained) at the size of the ``mlrep_transformer_mbart_*`` arch named, trained by fairseq's
  own multilingual denoising: sentences packed into instances of whole sentences, their order
  permuted, 35% of the pieces masked in spans of Poisson(λ=3.5) lengths (one ``<mask>`` per
  span, 10% of them random tokens), each instance ending with its language's ``[xx_YY]`` token
  (spans of pieces, not of whole words: fairseq 0.12's multilingual task cannot build its
  word-boundary mask from a SentencePiece model);
* ``dict.txt``: every piece of the SentencePiece model but its control and unknown pieces, as
  mBART's lists its pieces (fairseq's specials stand for those);
* ``sentence.bpe.model``: the SentencePiece model the text was cut with.

The embedding holds all 25 mBART-25 language tokens in mBART's order, whatever languages the
text has (`MbartDenoisingTask`), so its rows are the fine-tuning dictionary's, as the
release's are. ``pretrain.json`` keeps the loss curve (``valid.jsonl``: the held-out lines'
denoising loss at each validation) and its first and last values. The run is not resumed: it
trains inside the output folder's staging copy, published whole (`mlrep.io.atomic_directory`),
so an interrupted run leaves nothing and starts again (a few hundred updates at tiny scale).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from fairseq.tasks import register_task
from fairseq.tasks.multilingual_denoising import (
    MultilingualDenoisingConfig,
    MultilingualDenoisingTask,
)

from mlrep.device import visible
from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt import valid_log
from mlrep.nmt.data import MBART25_LANGUAGES, mbart_language
from mlrep.nmt.mbart import MBART_ARCHITECTURES
from mlrep.nmt.mbart_init import finetuning_dictionary
from mlrep.nmt.model import USER_DIR, ArchitectureMismatch
from mlrep.nmt.prepare import run_preprocess
from mlrep.nmt.settings import MbartPretrainSettings
from mlrep.nmt.train import LAST, call_fairseq

TASK = "mlrep_mbart_denoising"
MODEL = "model.pt"
DICT = "dict.txt"
SPM = "sentence.bpe.model"
SUMMARY = "pretrain.json"
TRAINING = "training"  # fairseq's data-bin and checkpoints, removed once model.pt is out
BIN = "bin"
SPLITS = ("train", "valid")
MASK_RANDOM = 0.1  # mBART's share of masked spans replaced by a random token


class MbartPretrainError(MlrepError):
    """Monolingual text that cannot be pre-trained on as given."""


@dataclass
class MbartDenoisingConfig(MultilingualDenoisingConfig):
    """fairseq's ``multilingual_denoising`` options; ``langs`` names the text's languages."""


@register_task(TASK, dataclass=MbartDenoisingConfig)
class MbartDenoisingTask(MultilingualDenoisingTask):
    """fairseq's multilingual denoising with the dictionary of a release: ``dict.txt``, then
    every mBART-25 language token in mBART's order (fairseq's own task adds only those of the
    languages trained on, and expects text for each), then ``<mask>``."""

    @classmethod
    def setup_task(cls, cfg: MbartDenoisingConfig, **kwargs) -> MbartDenoisingTask:
        data = Path(cfg.data.split(":")[0])
        return cls(cfg, finetuning_dictionary(data / DICT, MBART25_LANGUAGES))


def pieces_dictionary(spm_model: Path, path: Path) -> None:
    """Write mBART's ``dict.txt`` of `spm_model` to `path`: each piece in the model's order,
    less the control and unknown pieces."""
    import sentencepiece

    spm = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
    pieces = [
        spm.id_to_piece(i)
        for i in range(spm.get_piece_size())
        if not (spm.is_control(i) or spm.is_unknown(i))
    ]
    atomic_write_text(path, "".join(f"{piece} 1\n" for piece in pieces))


def _encode(text: Path, languages: Sequence[str], spm_model: Path, raw: Path, valid: int) -> dict:
    """Each language's ``<lang>.txt`` of `text` as pieces, its last `valid` lines held out:
    ``raw/<code>.{train,valid}``; returns the lines of each split by language."""
    import sentencepiece

    spm = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
    lines = {}
    for lang in languages:
        path = text / f"{lang}.txt"
        if not path.exists():
            raise MbartPretrainError(
                f"{path}: no monolingual text of {lang}; give the folder `mlrep data "
                "monolingual` wrote, or drop the language"
            )
        found = [line for line in read_lines(path, MbartPretrainError) if line.strip()]
        if len(found) <= valid:
            raise MbartPretrainError(
                f"{path}: {len(found)} lines, not more than valid-lines {valid}: lower "
                "valid-lines or give more text"
            )
        code = mbart_language(lang)
        splits = dict(zip(SPLITS, (found[:-valid], found[-valid:]), strict=True))
        for split, part in splits.items():
            encoded = (" ".join(spm.encode(line, out_type=str)) for line in part)
            atomic_write_text(raw / f"{code}.{split}", "".join(e + "\n" for e in encoded))
        lines[lang] = {split: len(part) for split, part in splits.items()}
    return lines


def binarise(
    text: Path, languages: Sequence[str], spm_model: Path, out: Path, work: Path, valid: int
) -> dict:
    """The release's ``sentence.bpe.model`` and ``dict.txt`` in `out`, and the text cut and
    binarised with them as fairseq's multilingual denoising reads it: ``work/bin/dict.txt``
    and ``work/bin/<xx_YY>/{train,valid}``; returns the lines of each split by language."""
    lines = _encode(text, languages, spm_model, work / "raw", valid)
    shutil.copyfile(spm_model, out / SPM)
    pieces_dictionary(spm_model, out / DICT)
    for code in map(mbart_language, languages):
        splits = [f"--{split}pref={work / 'raw' / f'{code}.{split}'}" for split in SPLITS]
        run_preprocess(["--only-source", *splits], work / BIN / code, out / DICT, "train.bin")
    shutil.copyfile(out / DICT, work / BIN / DICT)
    return lines


def fairseq_args(
    data: Path, save_dir: Path, codes: Sequence[str], s: MbartPretrainSettings
) -> list[str]:
    """The fairseq-train command line of the denoising pre-training (mBART-25's recipe, §2.2
    and its fairseq README, at `s`'s size and length)."""
    embed, ffn, heads, layers = MBART_ARCHITECTURES[s.arch]
    size = [
        f"--{stack}-{name}={value}"
        for stack in ("encoder", "decoder")
        for name, value in (
            ("embed-dim", embed),
            ("ffn-embed-dim", ffn),
            ("attention-heads", heads),
            ("layers", layers),
        )
    ]
    return [
        str(data),
        f"--user-dir={USER_DIR}",
        f"--task={TASK}",
        f"--langs={','.join(codes)}",
        "--add-lang-token",
        "--arch=mbart_large",
        *size,
        "--encoder-normalize-before",
        "--decoder-normalize-before",
        "--dropout=0.1",
        "--criterion=cross_entropy",
        f"--tokens-per-sample={s.tokens_per_sample}",
        "--sample-break-mode=complete",
        f"--mask={s.mask}",
        f"--mask-random={MASK_RANDOM}",
        "--mask-length=span-poisson",
        f"--poisson-lambda={s.poisson_lambda}",
        "--replace-length=1",
        "--permute-sentences=1",
        "--rotate=0",
        "--insert=0",
        "--multilang-sampling-alpha=0.7",
        "--optimizer=adam",
        "--adam-betas=(0.9, 0.98)",
        "--adam-eps=1e-06",
        "--lr-scheduler=polynomial_decay",
        f"--lr={s.lr}",
        f"--warmup-updates={s.warmup_updates}",
        f"--total-num-update={s.updates}",
        f"--max-update={s.updates}",
        f"--max-tokens={s.max_tokens}",
        "--required-batch-size-multiple=1",
        f"--seed={s.seed}",
        f"--save-dir={save_dir}",
        "--no-epoch-checkpoints",
        "--no-save-optimizer-state",
        "--save-interval=1000000",  # saved at the end only: the output is written whole
        "--validate-interval=1000000",
        f"--validate-interval-updates={s.validate_interval_updates}",
        "--num-workers=0",
        "--log-format=simple",
        "--log-interval=50",
    ]


def pretrain(
    text: Path,
    languages: Sequence[str],
    spm_model: Path,
    out: Path,
    s: MbartPretrainSettings,
    threads: int,
) -> dict:
    """Pre-train the stand-in on `languages`' text in the folder `text`, cut by `spm_model`,
    into `out` (a fresh folder: the verb's staging one) in the release layout; returns the
    summary also written there."""
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    import torch
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    if s.arch not in MBART_ARCHITECTURES:
        raise ArchitectureMismatch(
            f"unknown mBART arch {s.arch!r}; choose one of {', '.join(MBART_ARCHITECTURES)}"
        )
    codes = [mbart_language(lang) for lang in languages]  # each language refused first
    work = out / TRAINING
    lines = binarise(text, languages, spm_model, out, work, s.valid_lines)
    argv = fairseq_args(work / BIN, work, codes, s)
    if not visible().gpus:
        argv.append("--cpu")
        torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)
    parser = options.get_training_parser()
    call_fairseq(
        convert_namespace_to_omegaconf(options.parse_args_and_arch(parser, argv)), threads, 1
    )
    os.replace(work / LAST, out / MODEL)  # fairseq's checkpoint, less its optimiser state
    state = torch.load(out / MODEL, map_location="cpu", weights_only=False)
    curve = [
        {"updates": r["updates"], "loss": r["loss"]}
        for r in valid_log.read(work / valid_log.VALID_LOG)
        if r["subset"] == "valid"
    ]
    atomic_write_text(out / valid_log.VALID_LOG, "".join(json.dumps(r) + "\n" for r in curve))
    shutil.rmtree(work)
    summary = {
        "settings": asdict(s),
        "languages": dict(zip(languages, codes, strict=True)),
        "lines": lines,
        "updates": int(state["optimizer_history"][-1]["num_updates"]),
        "first_valid_loss": curve[0]["loss"],
        "last_valid_loss": curve[-1]["loss"],
        "valid_log": valid_log.VALID_LOG,
    }
    atomic_write_text(out / SUMMARY, json.dumps(summary, indent=2) + "\n")
    return summary
