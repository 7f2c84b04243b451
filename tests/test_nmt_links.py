"""`mlrep nmt links` on a real cut dataset (Moses tokens + BPE of the tiny corpus): each cut
line finds its preprocessed line, and every unit of its subword links spells the words its
word links join, in the training and both validation directions."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlrep.align.pharaoh import parse_links
from mlrep.io import atomic_write_text, read_lines
from tests.nmt_helpers import ENV, LANGUAGES, corpus, encoded, one_batch  # noqa: F401

PAIR = "en-it"  # the pair checked line by line
PAIRS = [f"en-{xx}" for xx in LANGUAGES if xx != "en"]


def word_links(en: str, it: str) -> frozenset[tuple[int, int]]:
    """Made-up but line-dependent links: a diagonal, and the first two English words as one
    phrase unit with the first Italian word where the line is long enough."""
    n = min(len(en.split()), len(it.split()))
    links = {(i, i) for i in range(2, n)}
    if n >= 2:
        links |= {(0, 0), (1, 0)}
    return frozenset(links)


def components(links) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    groups: list[tuple[set[int], set[int]]] = []
    for s, t in sorted(links):
        hit = [g for g in groups if s in g[0] or t in g[1]]
        merged = (
            {s}.union(*(g[0] for g in hit)),
            {t}.union(*(g[1] for g in hit)),
        )
        groups = [g for g in groups if g not in hit] + [merged]
    return sorted((tuple(sorted(a)), tuple(sorted(b))) for a, b in groups)


def debpe(pieces: list[str], indices: tuple[int, ...]) -> list[str]:
    """Words spelt by the given pieces of a BPE line (``@@`` continues a word)."""
    words, current = [], ""
    for i in indices:
        current += pieces[i].removesuffix("@@")
        if not pieces[i].endswith("@@"):
            words.append(current)
            current = ""
    return words


@pytest.fixture(scope="module")
def linked(encoded, one_batch, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("links")
    tok = encoded[0][1].parent.parent / "tok"
    spec = []
    for split, pair in itertools.product(("train", "valid"), PAIRS):
        en = read_lines(tok / f"{split}.{pair}.en", ValueError)
        it = read_lines(tok / f"{split}.{pair}.{pair[3:]}", ValueError)
        path = root / f"{split}.{pair}.links"
        lines = [
            " ".join(f"{i}-{j}" for i, j in sorted(word_links(a, b)))
            for a, b in zip(en, it, strict=True)
        ]
        atomic_write_text(path, "".join(x + "\n" for x in lines))
        spec.append(f"{split}.{pair}={path}")
    subs = [str(sub) for _, sub in encoded]
    toks = [str(tok / Path(s).name) for s in subs]
    out = root / "linked"
    argv = [sys.executable, "-m", "mlrep.cli", "nmt", "links", "--data", str(one_batch)]
    argv += ["--encoded", *subs, "--tokens", *toks, "--links", *spec, "--out", str(out)]
    result = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, tok, json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", ["train.en-it", "valid.en-it", "valid.it-en"])
def test_every_unit_spells_the_words_its_word_links_join(linked, one_batch, name):  # noqa: F811
    out, tok, units = linked
    split, direction = name.split(".")
    src, tgt = direction.split("-")
    sub_src = read_lines(one_batch / "sub" / f"{name}.{src}", ValueError)
    sub_tgt = read_lines(one_batch / "sub" / f"{name}.{tgt}", ValueError)
    links = read_lines(out / "align" / name, ValueError)
    assert len(links) == len(sub_src) > 0
    pre_en = read_lines(tok.parent / "sub" / f"{split}.{PAIR}.en", ValueError)
    pre_it = read_lines(tok.parent / "sub" / f"{split}.{PAIR}.it", ValueError)
    tok_en = read_lines(tok / f"{split}.{PAIR}.en", ValueError)
    tok_it = read_lines(tok / f"{split}.{PAIR}.it", ValueError)
    for a, b, line in zip(sub_src, sub_tgt, links, strict=True):
        en, it = (a, b) if src == "en" else (b, a)
        row = list(zip(pre_en, pre_it, strict=True)).index((en, it))
        words_en, words_it = tok_en[row].split(), tok_it[row].split()
        expected = sorted(
            ([words_en[i] for i in s], [words_it[j] for j in t])
            for s, t in components(word_links(tok_en[row], tok_it[row]))
        )
        found = []
        for s, t in components(parse_links(line)):
            if src == "en":
                found.append((debpe(a.split(), s), debpe(b.split(), t)))
            else:
                found.append((debpe(b.split(), t), debpe(a.split(), s)))
        assert sorted(found) == expected, (name, a, b)
    assert units[name] > 1


def test_the_data_bins_carry_the_links_and_share_the_dictionary(linked, one_batch):  # noqa: F811
    out, _, _ = linked
    for tag_format in ("s-enc-t-dec", "t-enc"):
        folder = out / tag_format / "bin"
        assert (folder / "train.align.src-tgt.bin").exists()
        assert (folder / "valid.align.src-tgt.bin").exists()
        own = one_batch / tag_format / "bin" / "dict.src.txt"
        assert (folder / "dict.src.txt").read_bytes() == own.read_bytes()
    assert (out / "provenance.json").exists()


def test_a_cut_line_missing_from_the_given_files_is_refused(encoded, one_batch, tmp_path):  # noqa: F811
    from mlrep.nmt.alignments import AlignmentDataError, attach

    tok = encoded[0][1].parent.parent / "tok"
    lines = read_lines(tok / f"train.{PAIR}.en", ValueError)
    links = tmp_path / "links"
    atomic_write_text(links, "\n" * len(lines))
    # the encoded files of another preprocessing: the cut's lines are not among them
    other = tmp_path / "sub"
    for lang in ("en", "it"):
        atomic_write_text(other / f"train.{PAIR}.{lang}", "x\n" * len(lines))
    encoded_files = [other / f"train.{PAIR}.{lang}" for lang in ("en", "it")]
    tokens = [tok / f"train.{PAIR}.{lang}" for lang in ("en", "it")]
    with pytest.raises(AlignmentDataError, match=r"sub/train\.en-it:1: this line pair is not"):
        attach(
            one_batch, ["en", "it"], encoded_files, tokens, {f"train.{PAIR}": links}, tmp_path / "o"
        )
