"""Which word links each of Chapter 5's data-bins reads, and which data a run trains on (used
by the rules; the paths are the alignment layer's, `mlrep.paths`).

A system's data is binarised again once per kind of links (``w2w``, ``fa``): its training
lines carry that kind's links, the word2word lexicon's or the 1-to-1 links of the fast_align
run trained with the pair's out-of-domain corpora (`mlrep.align.od`), and its validation lines
always carry the w2w links, the ones Appendix C.3's word retrieval reads, so every linked
run's validation log and `mlrep nmt retrieval` read the same units.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.align import od
from mlrep.chapters.ch5_wordcl.runs import Method
from mlrep.paths import Paths

KINDS = ("w2w", "fa")
RETRIEVAL = "w2w"  # the links of the validation lines (the word retrieval's)


def pairs(section: Mapping[str, Any], system: str) -> list[str]:
    """The English-centric pairs of a system (``en-xx`` for each of its other languages)."""
    return [f"en-{lang}" for lang in section["datasets"][system]["languages"] if lang != "en"]


def link_files(
    section: Mapping[str, Any], align: Mapping[str, Any], paths: Paths, system: str, kind: str
) -> dict[str, str]:
    """``<split>.<pair>`` -> links file, what `mlrep nmt links --links` takes: the training
    lines' links of `kind` and the validation lines' w2w links, for every pair of `system`."""
    dataset = align["dataset"]

    def training(pair: str) -> str:
        if kind == "w2w":
            return str(paths.w2w_run(dataset, pair, align["split"]) / "links.txt")
        run = paths.one_to_one_run(
            od.with_od(dataset), pair, align["aligner"]["backend"], align["symmetrize"]
        )
        return str(run / "links.txt")

    out = {}
    for pair in pairs(section, system):
        out[f"train.{pair}"] = training(pair)
        out[f"valid.{pair}"] = str(paths.w2w_run(dataset, pair, "valid") / "links.txt")
    return out


def training_data(plain: str, linked: str, system: str, method: str) -> str:
    """The data a run of `method` trains on: the system's data in the method's dictionary
    (`Method.dictionary`), linked with the method's links, or without links for a method
    without (`plain`/`linked`: the rules' path patterns)."""
    kind = Method.parse(method).links
    return linked_data(linked, system, method, kind) if kind else prepared(plain, system, method)


def prepared(plain: str, system: str, method: str) -> str:
    """The system's data in the dictionary of `method`, without links: what its runs are
    decoded and scored on (`plain`: the rules' path pattern)."""
    return plain.format(dataset=system, dictionary=Method.parse(method).dictionary)


def linked_data(linked: str, system: str, method: str, kind: str) -> str:
    """The system's data in the dictionary of `method` with the links of `kind` (`linked`: the
    rules' path pattern): the training data of a linked method, and, with `RETRIEVAL`, what
    every run's word retrieval reads."""
    return linked.format(dataset=system, dictionary=Method.parse(method).dictionary, links=kind)
