"""Alignment runs trained on in-domain text plus out-of-domain (OD) corpora (Chapter 5's +FA).

fast_align learns its model from the lines it aligns, so more text gives less noisy links;
the thesis trains it on each pair's in-domain training split followed by OD corpora and keeps
the links of the in-domain lines only. The run reuses the plain alignment layer: its bitext is
the in-domain lines, then each OD corpus's lines (`write_bitext`), and its gathered links are
cut back to the first N lines (`cut`), N being the in-domain line count, after checking that
the links cover exactly the lines that were aligned.

Such a run lives beside the plain one, under the alignment dataset `with_od(dataset)`; the OD
corpora of a pair are preprocess datasets (params.yaml ``align.od_corpora``), whose ``train``
tokens went through the same tokenizer and steps as the in-domain ones. A pair without OD
corpora gives links identical to the plain run's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from mlrep.align.bitext import joined_lines, write_shards
from mlrep.align.runs import RunError
from mlrep.io import count_lines, decode_line
from mlrep.paths import Paths
from mlrep.text import plan

OD_SUFFIX = "+od"  # preprocess dataset names are [a-z0-9_]+: no dataset can end in it
OD_SPLIT = "train"  # the OD corpora's lines aligned with the in-domain ones


def with_od(dataset: str) -> str:
    """The alignment dataset of `dataset`'s in-domain text plus its pairs' OD corpora."""
    return f"{dataset}{OD_SUFFIX}"


def in_domain(align_dataset: str) -> str:
    """The preprocess dataset whose tokens an alignment dataset's links belong to."""
    return align_dataset.removesuffix(OD_SUFFIX)


def in_domain_tokens(
    config: Mapping[str, Any], paths: Paths, align_dataset: str, pair: str
) -> tuple[Path, Path]:
    """The token files of `pair`'s ``align.split``: the lines whose links a run keeps."""
    return paths.pair_tokens(in_domain(align_dataset), config["align"]["split"], pair)


def od_tokens(config: Mapping[str, Any], paths: Paths, align_dataset: str, pair: str) -> list[Path]:
    """The OD token files appended to `pair`'s in-domain lines, source then target of each
    corpus in ``align.od_corpora`` order: none for a plain run or a pair without OD corpora.
    A name that is no preprocess dataset with the pair is an error naming the fix."""
    if not align_dataset.endswith(OD_SUFFIX):
        return []
    files: list[Path] = []
    for name in config["align"]["od_corpora"].get(pair, []):
        spec = plan.dataset(config["preprocess"], name)
        if pair not in spec["pairs"] or OD_SPLIT not in plan.splits_of(
            config["preprocess"], name, pair
        ):
            raise plan.PlanError(
                f"align.od_corpora.{pair} names {name!r}, whose preprocess dataset has no "
                f"{OD_SPLIT} split of {pair}; add {pair} to preprocess.datasets.{name}.pairs "
                "(and its corpora) or drop it here"
            )
        files.extend(paths.pair_tokens(name, OD_SPLIT, pair))
    return files


def token_pairs(files: Sequence[Path], option: str) -> list[tuple[Path, Path]]:
    """(source, target) token files from a flat list given as `option` SOURCE TARGET ..."""
    if len(files) % 2:
        raise RunError(
            f"{option} takes source and target token files in pairs; got {len(files)} files"
        )
    return list(zip(files[::2], files[1::2], strict=True))


def write_bitext(
    in_domain_tokens: tuple[Path, Path], od: Sequence[tuple[Path, Path]], outs: list[Path]
) -> None:
    """The aligner's ``src ||| tgt`` shards: the in-domain pair first, so that its links are
    the first lines of the run's, then each OD corpus in order; streamed (OD corpora have
    millions of lines)."""
    pairs = [in_domain_tokens, *od]
    total = sum(count_lines(source, RunError) for source, _ in pairs)
    write_shards((line for pair in pairs for line in joined_lines(*pair)), total, outs)


def lines_of(paths: Sequence[Path]) -> Iterator[str]:
    """The lines of files in order, streamed (a run's symmetrized shards)."""
    for path in paths:
        if not path.is_file():
            raise RunError(f"{path}: file not found")
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                yield decode_line(raw, path, number, RunError).rstrip("\r\n")


def od_line_count(od: Sequence[tuple[Path, Path]]) -> int:
    """The OD lines a run aligned after the in-domain ones."""
    return sum(count_lines(source, RunError) for source, _ in od)


def cut(links: Iterable[str], in_domain_lines: int, od_lines: int, where: str) -> list[str]:
    """The links of the first `in_domain_lines` lines, once the links are known to cover the
    in-domain and OD lines exactly (one line per aligned pair, in bitext order); only the
    kept lines are held in memory."""
    kept: list[str] = []
    total = 0
    for total, line in enumerate(links, start=1):
        if total <= in_domain_lines:
            kept.append(line)
    if total != in_domain_lines + od_lines:
        raise RunError(
            f"{where}: {total} link lines, but the aligner was given {in_domain_lines} "
            f"in-domain + {od_lines} out-of-domain lines; the shards and token files are from "
            "different runs: rerun the bitext, align and symmetrize steps of this run"
        )
    return kept
