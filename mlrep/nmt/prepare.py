"""Dictionary and fairseq binarisation of a cut dataset (`mlrep.nmt.data.cut`).

The subwords come from the shared preprocessing (tokenizer + one joint subword model per
dataset, `mlrep.text.plan`), so a cut dataset already holds what the model reads under
``sub/``. One dictionary, shared by encoder and decoder (``--share-all-embeddings`` needs
it), holds every subword of the training text, most frequent first, then every language
tag. Both tag formats are binarised from the same subwords, so the TAG factor changes
nothing but the tags. fairseq's valid subset holds the supervised directions (the thesis
selects checkpoints by supervised validation loss); every direction of every split
(`mlrep.nmt.data.split_directions`) stays as subword text under ``sub/`` for decoding and the
probes. ``detokenize.json`` says how the subwords were made, so decoded output can be turned
back into plain text (`mlrep.text.detokenize`).

Fine-tuning a pre-trained model (Chapter 5's mBART FT) binarises with the model's dictionary
instead (``dictionary``: the ``dict.txt`` `mlrep.nmt.mbart_init` wrote), copied as the
dataset's, and tags with its language tokens (`mlrep.nmt.data.TAG_STYLES`): the text's pieces
must be the rows the model learned, and a piece the dictionary lacks is read as ``<unk>``, as
fairseq reads it; ``binarise.json`` records the dictionary, the tag style (`tag_style`: what
``mlrep nmt links`` binarises again and decoding tags with) and each split's share of pieces
read as ``<unk>``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from mlrep.align.pharaoh import Link
from mlrep.io import atomic_write_text
from mlrep.nmt import alignments
from mlrep.nmt.data import (
    FAIRSEQ,
    MBART,
    SUBWORDS,
    TAGS,
    Direction,
    NmtDataError,
    read_pair,
    split_directions,
    tag,
    tag_source,
    tag_target,
)

DICT = "dict.txt"
BIN_DICT = "dict.src.txt"  # the dictionary fairseq-preprocess copies into a data-bin
DETOKENIZE = "detokenize.json"
BINARISE = "binarise.json"  # the dictionary given, the tag style, the <unk> rates


def prepare(
    out: Path, languages: list[str], detokenize: dict, dictionary: Path | None = None
) -> dict:
    """The dictionary (its own, or the given `dictionary` with mBART's tags) and both tag
    formats' binarised data of the cut dataset in `out`; `detokenize`
    (`mlrep.text.detokenize.detokenize`'s method, backend and segmented languages) is kept
    for decoding. Returns the ``binarise.json`` record."""
    if dictionary is None:
        _write_dictionary(out, languages)
    else:
        _take_dictionary(dictionary, out / DICT, languages)
    record = {
        "dictionary": dictionary and str(dictionary),
        "tags": FAIRSEQ if dictionary is None else MBART,
        "unk_rate": unk_rates(out, languages),
    }
    atomic_write_text(out / BINARISE, json.dumps(record, indent=1) + "\n")
    atomic_write_text(out / DETOKENIZE, json.dumps(detokenize, indent=1) + "\n")
    for tag_format in TAGS:
        binarise(out, languages, tag_format, out / tag_format, tags=record["tags"])
    return record


def tag_style(prepared: Path) -> str:
    """The tag style (`mlrep.nmt.data.TAG_STYLES`) a prepared dataset was binarised with; a
    dataset without ``binarise.json`` (cut by hand) has its own dictionary's fairseq tags."""
    record = prepared / BINARISE
    if not record.exists():
        return FAIRSEQ
    return json.loads(record.read_text(encoding="utf-8"))["tags"]


def _take_dictionary(given: Path, dest: Path, languages: list[str]) -> None:
    """Copy a pre-trained model's dictionary to `dest`, once every language's mBART token is
    found in it (`tag` refuses a language mBART has none of)."""
    from fairseq.data import Dictionary

    if not given.exists():
        raise NmtDataError(f"{given}: no such dictionary; run `mlrep nmt mbart-init` first")
    symbols = set(Dictionary.load(str(given)).symbols)
    missing = [tag(lang, MBART) for lang in languages if tag(lang, MBART) not in symbols]
    if missing:
        raise NmtDataError(
            f"{given} has no language token {', '.join(missing)}: it is not the fine-tuning "
            "dictionary of an mBART model; give the dict.txt `mlrep nmt mbart-init` wrote"
        )
    atomic_write_text(dest, given.read_text(encoding="utf-8"))


def unk_rates(out: Path, languages: list[str]) -> dict[str, float]:
    """Per split, the share of the binarised pieces the dataset's dictionary lacks, which
    fairseq reads as ``<unk>`` (0 for the training text of a dataset's own dictionary)."""
    from fairseq.data import Dictionary

    symbols = set(Dictionary.load(str(out / DICT)).symbols)
    rates = {}
    for split in ("train", "valid"):
        counts = Counter(
            piece in symbols
            for d in split_directions(languages, split)
            for side in read_subwords(out, split, d)
            for line in side
            for piece in line.split()
        )
        rates[split] = counts[False] / max(1, counts.total())
    return rates


def read_detokenize(prepared: Path) -> dict:
    return json.loads((prepared / DETOKENIZE).read_text(encoding="utf-8"))


def _write_dictionary(out: Path, languages: list[str]) -> None:
    """fairseq dictionary: the training subwords, then the language tags."""
    counts: Counter[str] = Counter()
    for d in split_directions(languages, "train"):
        for side in read_subwords(out, "train", d):
            for line in side:
                counts.update(line.split())
    write_dictionary(out / DICT, counts, [tag(lang) for lang in languages])


def write_dictionary(path: Path, counts: Counter[str], reserved: list[str]) -> None:
    """A fairseq dictionary (``token count`` lines): the counted tokens, most frequent first
    (ties by token, so the file depends on the text only), then the `reserved` tokens the
    text may lack (tags), each once, at the end."""
    ranked = sorted(
        ((t, n) for t, n in counts.items() if t not in reserved),
        key=lambda item: (-item[1], item[0]),
    )
    lines = [f"{token} {n}" for token, n in ranked]
    lines += [f"{token} {counts.get(token, 1)}" for token in dict.fromkeys(reserved)]
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def read_subwords(prepared: Path, split: str, d: Direction) -> tuple[list[str], list[str]]:
    return read_pair(prepared / SUBWORDS, split, d)


def binarise(
    out: Path,
    languages: list[str],
    tag_format: str,
    dest: Path,
    links: Path | None = None,
    tags: str = FAIRSEQ,
) -> None:
    """The cut dataset `out` in `tag_format` as text under ``dest/raw`` and a data-bin under
    ``dest/bin``; with `links` (a folder of ``<split>.<src>-<tgt>`` subword links,
    `mlrep.nmt.alignments`), each line's links too, tag-shifted and oriented like the line:
    every training pair's, and the validation pairs' where the folder has every valid
    direction (the word retrieval the validation log reports). `tags`: the tag style
    (`tag_style` of a prepared dataset)."""
    raw = dest / "raw"
    for split in ("train", "valid"):
        sources: list[str] = []
        targets: list[str] = []
        split_dirs = split_directions(languages, split)
        folder = links if _has_links(links, split, split_dirs) else None
        aligned: list[list[Link]] = []
        for d in split_dirs:
            src, tgt = read_subwords(out, split, d)
            line_links = (
                alignments.check_lines(folder / f"{split}.{d.name}", src, tgt)
                if folder is not None
                else []
            )
            pairs = [(d, src, tgt, False)]
            if split == "train":
                pairs.append((Direction(d.tgt, d.src), tgt, src, True))
            for pd, s, t, reverse in pairs:
                lines = tag_lines(pd, s, t, line_links, tag_format, reverse, tags)
                sources += lines.sources
                targets += lines.targets
                aligned += lines.links
        atomic_write_text(raw / f"{split}.src-tgt.src", "".join(x + "\n" for x in sources))
        atomic_write_text(raw / f"{split}.src-tgt.tgt", "".join(y + "\n" for y in targets))
        align_file = raw / f"{split}.src-tgt.{alignments.ALIGN}"
        if folder is not None:
            atomic_write_text(align_file, alignments.format_lines(aligned))
        else:
            align_file.unlink(missing_ok=True)
    fairseq_preprocess(raw, dest / "bin", out / DICT, align=links is not None)


@dataclass(frozen=True)
class Tagged:
    """Subword lines of one direction as the model reads them, with their links."""

    sources: list[str]
    targets: list[str]
    links: list[list[Link]]


def tag_lines(
    d: Direction,
    sources: list[str],
    targets: list[str],
    line_links: list[frozenset[Link]],
    tag_format: str,
    reverse: bool,
    tags: str = FAIRSEQ,
) -> Tagged:
    """The lines of direction `d` tagged by `tag_format` in the tag style `tags`, and their
    untagged subword links (`alignments.check_lines`; `reverse`: written for the lines' en-xx
    orientation, `d` being xx→en) as positions in the tagged lines. The one tagging of a
    direction's lines: the data-bin's (`binarise`) and Chapter 5's retrieval analyses'
    (`mlrep.nmt.retrieval`)."""
    return Tagged(
        [tag_source(x, d.src, d.tgt, tag_format, tags) for x in sources],
        [tag_target(y, d.tgt, tag_format, tags) for y in targets],
        [alignments.tagged(x, tag_format, reverse) for x in line_links],
    )


def _has_links(links: Path | None, split: str, split_dirs: list[Direction]) -> bool:
    """Whether `links` aligns `split`: training must be, validation may be."""
    if links is None:
        return False
    if split == "train":
        return True
    return all((links / f"{split}.{d.name}").exists() for d in split_dirs)


def fairseq_preprocess(raw: Path, dest: Path, dictionary: Path, align: bool = False) -> None:
    """fairseq-preprocess (in-process) of ``train``/``valid.src-tgt.{src,tgt}`` under `raw`
    into the data-bin `dest`, both sides with the one `dictionary`, and with `align` the
    ``.align`` link files beside them."""
    run_preprocess(
        [
            "--source-lang=src",
            "--target-lang=tgt",
            f"--trainpref={raw / 'train.src-tgt'}",
            f"--validpref={raw / 'valid.src-tgt'}",
            f"--tgtdict={dictionary}",
            *([f"--align-suffix={alignments.ALIGN}"] if align else []),
        ],
        dest,
        dictionary,
        "train.src-tgt.src.bin",
    )


def run_preprocess(flags: list[str], dest: Path, dictionary: Path, written: str) -> None:
    """fairseq-preprocess (in-process, quiet) with `flags` into `dest`, the source side (and
    any side `flags` gives no other dictionary) with `dictionary`; refuses a run that did not
    write `dest`/`written`."""
    from fairseq import options
    from fairseq_cli.preprocess import main

    args = options.get_preprocessing_parser().parse_args(
        [*flags, f"--destdir={dest}", f"--srcdict={dictionary}", "--workers=1"]
    )
    with contextlib.redirect_stdout(io.StringIO()):
        main(args)
    if not (dest / written).exists():
        raise NmtDataError(f"fairseq-preprocess wrote no {written} into {dest}")


def dictionary_sha256(data_bin: Path) -> str:
    """The hash of a data-bin's dictionary: equal for two data-bins binarised with one
    dictionary file (fairseq-preprocess rewrites it the same way), whatever their text."""
    return hashlib.sha256((data_bin / BIN_DICT).read_bytes()).hexdigest()
