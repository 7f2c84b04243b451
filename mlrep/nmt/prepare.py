"""Subwords and fairseq binarisation of a cut dataset (`mlrep.nmt.data.cut`).

One joint SentencePiece model over every language's training text (each English line once,
so English does not dominate the vocabulary through its repetition across pairs) and one
dictionary shared by encoder and decoder (``--share-all-embeddings`` needs it), with every
language tag in it. Both tag formats are binarised from the same subwords, so the TAG factor
changes nothing but the tags. fairseq's valid subset holds the supervised directions (the
thesis selects checkpoints by supervised validation loss); every direction of every split
(`mlrep.nmt.data.split_directions`) is also kept as subword text under ``sp/`` for decoding,
scoring and the probes.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from mlrep.io import atomic_write_text
from mlrep.nmt.data import (
    SPLITS,
    TAGS,
    Direction,
    NmtDataError,
    read_pair,
    read_stats,
    split_directions,
    tag,
    tag_source,
    tag_target,
)
from mlrep.text.subwords import encode_sentencepiece, train_sentencepiece

SPM = "spm.model"
DICT = "dict.txt"
_SPECIALS = {"<unk>", "<s>", "</s>", "<pad>"}


def prepare(
    text: Path,
    out: Path,
    model_type: str,
    vocab_size: int,
    character_coverage: float,
    threads: int = 1,
) -> None:
    """SentencePiece, subword text under ``out/sp``, binarised data under ``out/<tag>``."""
    languages = read_stats(text)["languages"]
    train_subwords(text, out, model_type, vocab_size, character_coverage, threads)
    _write_dictionary(out / "spm.vocab", languages, out / DICT)
    for split in SPLITS:
        for d in split_directions(languages, split):
            for lang, lines in zip((d.src, d.tgt), read_pair(text, split, d), strict=True):
                pieces = encode_sentencepiece(out / SPM, lines)
                atomic_write_text(
                    out / "sp" / f"{split}.{d.name}.{lang}", "".join(p + "\n" for p in pieces)
                )
    for tag_format in TAGS:
        _binarise(out, languages, tag_format)


def train_subwords(
    text: Path,
    out: Path,
    model_type: str,
    vocab_size: int,
    character_coverage: float,
    threads: int = 1,
) -> None:
    """The joint SentencePiece model ``out/spm.model`` over every distinct training line."""
    out.mkdir(parents=True, exist_ok=True)
    unique: dict[str, None] = {}
    for d in split_directions(read_stats(text)["languages"], "train"):
        for side in read_pair(text, "train", d):
            unique.update(dict.fromkeys(line for line in side if line.strip()))
    joint = out / "spm.train.txt"
    atomic_write_text(joint, "".join(line + "\n" for line in unique))
    train_sentencepiece(
        [joint], out / "spm", model_type, vocab_size, character_coverage, threads=threads
    )
    joint.unlink()


def _write_dictionary(vocab: Path, languages: list[str], dest: Path) -> None:
    """fairseq dictionary (``token count``): the SentencePiece pieces, then the language tags."""
    pieces = [line.split("\t")[0] for line in vocab.read_text(encoding="utf-8").splitlines()]
    tokens = [p for p in pieces if p not in _SPECIALS] + [tag(lang) for lang in languages]
    atomic_write_text(dest, "".join(f"{token} 1\n" for token in tokens))


def read_subwords(prepared: Path, split: str, d: Direction) -> tuple[list[str], list[str]]:
    return read_pair(prepared / "sp", split, d)


def _binarise(out: Path, languages: list[str], tag_format: str) -> None:
    raw = out / tag_format / "raw"
    for split in ("train", "valid"):
        sources: list[str] = []
        targets: list[str] = []
        for d in split_directions(languages, split):
            src, tgt = read_subwords(out, split, d)
            pairs = [(d, src, tgt)]
            if split == "train":
                pairs.append((Direction(d.tgt, d.src), tgt, src))
            for pd, s, t in pairs:
                sources.extend(tag_source(x, pd.src, pd.tgt, tag_format) for x in s)
                targets.extend(tag_target(y, pd.tgt, tag_format) for y in t)
        atomic_write_text(raw / f"{split}.src-tgt.src", "".join(x + "\n" for x in sources))
        atomic_write_text(raw / f"{split}.src-tgt.tgt", "".join(y + "\n" for y in targets))
    _fairseq_preprocess(raw, out / tag_format / "bin", out / DICT)


def _fairseq_preprocess(raw: Path, dest: Path, dictionary: Path) -> None:
    from fairseq import options
    from fairseq_cli.preprocess import main

    args = options.get_preprocessing_parser().parse_args(
        [
            "--source-lang=src",
            "--target-lang=tgt",
            f"--trainpref={raw / 'train.src-tgt'}",
            f"--validpref={raw / 'valid.src-tgt'}",
            f"--destdir={dest}",
            f"--srcdict={dictionary}",
            f"--tgtdict={dictionary}",
            "--workers=1",
        ]
    )
    with contextlib.redirect_stdout(io.StringIO()):
        main(args)
    if not (dest / "train.src-tgt.src.bin").exists():
        raise NmtDataError(f"fairseq-preprocess wrote no training data into {dest}")
