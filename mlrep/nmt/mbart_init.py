"""A released mBART checkpoint as the init of a fine-tuning run (Chapter 5's mBART FT).

fairseq releases mBART as a ``bart`` model: ``model.pt``, ``dict.txt`` (the SentencePiece
pieces, less SentencePiece's own ``<unk>``, ``<s>`` and ``</s>``) and ``sentence.bpe.model``.
Its embedding has one row per symbol of the dictionary fairseq's
``translation_from_pretrained_bart`` fine-tunes with: fairseq's 4 special symbols, ``dict.txt``,
one ``[xx_YY]`` token per pre-training language in ``--langs`` order, then ``<mask>``
(`finetuning_dictionary`). `convert` checks the three files agree before a fine-tuning starts,
since fairseq would load a checkpoint into any dictionary of its size, and the text would be cut
into pieces the embedding rows do not stand for:

* every ``dict.txt`` symbol is a piece of the SentencePiece model;
* the checkpoint's embedding rows are the fine-tuning dictionary's size.

It then writes, into one folder, what ``mlrep nmt train``'s fine-tuning (`mlrep.nmt.train`) reads:
``checkpoint.pt``, the weights under our ``mlrep_transformer_mbart_*`` architecture
(`mlrep.nmt.mbart`: the same parameter names, so no key is renamed; fairseq's own upgrade of
older checkpoint layouts is applied), ``dict.txt``, the
fine-tuning dictionary to binarise the data with, and ``train.json``, the dictionary's hash as a
pre-training run records it. The translation model drops BART's classification heads
(``classification_heads.*``: sentence-classification fine-tuning, no part of translation).
"""

from __future__ import annotations

import json
from argparse import Namespace
from collections.abc import Sequence
from pathlib import Path

import torch
from fairseq.data import Dictionary

from mlrep.io import atomic_directory, sha256_file
from mlrep.nmt.data import MBART25_LANGUAGES, language_token
from mlrep.nmt.mbart import MBART_ARCHITECTURES
from mlrep.nmt.model import MODEL, ArchitectureMismatch, VariantTransformer
from mlrep.nmt.train import SUMMARY, DictionaryMismatch

MASK = "<mask>"
CHECKPOINT = "checkpoint.pt"
DICT = "dict.txt"
DROPPED = "classification_heads."  # BART's sentence-classification heads
_FIX = "give the model.pt, dict.txt and sentence.bpe.model of one mBART release"


def finetuning_dictionary(dict_txt: Path, languages: Sequence[str]) -> Dictionary:
    """``dict.txt`` with the language tokens and ``<mask>`` added as fairseq's
    ``translation_from_pretrained_bart`` adds them."""
    dictionary = Dictionary.load(str(dict_txt))
    for language in languages:
        dictionary.add_symbol(language_token(language))
    dictionary.add_symbol(MASK)
    return dictionary


def _check_pieces(dict_txt: Path, spm_model: Path) -> None:
    """Every ``dict.txt`` symbol is a piece of `spm_model` (SentencePiece's control pieces are
    fairseq's specials and are not in ``dict.txt``)."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
    pieces = {processor.id_to_piece(i) for i in range(processor.get_piece_size())}
    words = Dictionary.load(str(dict_txt))
    symbols = words.symbols[words.nspecial :]
    missing = [s for s in symbols if s not in pieces]
    if missing:
        raise DictionaryMismatch(
            f"{dict_txt} has {len(symbols)} symbols, {len(missing)} of them (first: "
            f"{missing[0]!r}) not among the {len(pieces)} pieces of {spm_model}: the text would "
            f"be cut into pieces the checkpoint has no rows for; {_FIX}"
        )


def convert(
    checkpoint: Path,
    dict_txt: Path,
    spm_model: Path,
    out: Path,
    arch: str,
    languages: Sequence[str] = MBART25_LANGUAGES,
) -> Path:
    """Check the released mBART `checkpoint` against its `dict_txt` and `spm_model` and write
    the fine-tuning init of architecture `arch` into `out` (module docstring); returns the
    checkpoint written. `languages`: the pre-training languages, in their token order."""
    if arch not in MBART_ARCHITECTURES:
        raise ArchitectureMismatch(
            f"unknown mBART arch {arch!r}; choose one of {', '.join(MBART_ARCHITECTURES)}"
        )
    _check_pieces(dict_txt, spm_model)
    dictionary = finetuning_dictionary(dict_txt, languages)
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    weights = {k: v for k, v in state["model"].items() if not k.startswith(DROPPED)}
    rows = weights["encoder.embed_tokens.weight"].shape[0]
    if rows != len(dictionary):
        raise DictionaryMismatch(
            f"{checkpoint} embeds {rows} tokens, but {dict_txt} with fairseq's 4 specials, "
            f"{len(languages)} language tokens and {MASK} makes {len(dictionary)}: {_FIX} (and "
            "its pre-training languages)"
        )
    args = _fit_to_arch(checkpoint, arch, dictionary, weights)
    with atomic_directory(out) as staging:  # the three files agree, or none is there
        torch.save(_training_state(args, weights), staging / CHECKPOINT)
        dictionary.save(str(staging / DICT))
        summary = {
            "model": MODEL,
            "arch": arch,
            "init": str(checkpoint),
            "dictionary": sha256_file(staging / DICT),
        }
        (staging / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return out / CHECKPOINT


def _fit_to_arch(checkpoint: Path, arch: str, dictionary: Dictionary, weights: dict) -> Namespace:
    """Upgrade `weights` in place as fairseq upgrades an older checkpoint on loading (e.g. the
    output projection, tied to the embedding, that older checkpoints do not store), then check
    they are exactly the parameters of `arch` on `dictionary`, of the same shapes (a shape-only
    model on the meta device: mBART-25's size costs nothing), so another release or
    architecture is refused here rather than by the fine-tuning; returns the model's options."""
    from fairseq.models import ARCH_CONFIG_REGISTRY

    args = Namespace(arch=arch)
    ARCH_CONFIG_REGISTRY[arch](args)
    task = Namespace(source_dictionary=dictionary, target_dictionary=dictionary)
    with torch.device("meta"):
        model = VariantTransformer.build_model(args, task)
    model.upgrade_state_dict(weights)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    found = {k: tuple(v.shape) for k, v in weights.items()}
    differing = sorted(k for k in expected.keys() | found.keys() if expected.get(k) != found.get(k))
    if differing:
        key = differing[0]
        raise ArchitectureMismatch(
            f"{checkpoint} is not a {arch} model: {len(differing)} weights differ, first "
            f"{key} ({found.get(key, 'missing')} in the checkpoint, {expected.get(key, 'none')} "
            f"in {arch}); convert it with the arch of its size "
            f"({', '.join(MBART_ARCHITECTURES)})"
        )
    return args


def _training_state(args: Namespace, weights: dict) -> dict:
    """A fairseq checkpoint of `weights` with no training history: fine-tuning resets the
    optimiser, lr schedule and data iterator, but fairseq's reader upgrades a checkpoint
    without these entries as an old layout. The criterion's state is empty: mBART was
    pre-trained without the fine-tuning's criterion, and fairseq reads this entry whenever
    that criterion has weights (the word loss's projection head, which then starts fresh:
    `mlrep.nmt.contrastive.ContrastiveCriterion.load_state_dict`)."""
    return {
        "cfg": {"model": args},
        "model": weights,
        "criterion": {},
        "optimizer_history": [{"num_updates": 0, "optimizer_name": None, "lr_scheduler_state": {}}],
        "extra_state": {"train_iterator": {"epoch": 1}},
        "last_optimizer_state": None,
    }
