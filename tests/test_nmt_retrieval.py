"""Chapter 5's validation retrieval (`mlrep.nmt.retrieval`, `mlrep nmt retrieval`): P@1 on
hand-sized data read through a stub encoder whose states are fixed per token, against a plain
numpy re-implementation on random states, and end to end on a trained tiny model."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from mlrep import cli
from mlrep.align.pharaoh import format_links, parse_links
from mlrep.io import atomic_write_text
from mlrep.nmt import prepare
from mlrep.nmt.alignments import AlignmentDataError, subword_links
from mlrep.nmt.contrastive import encode_sides, tag_lookup, units
from mlrep.nmt.data import TAGS, Direction, tag, write_stats
from mlrep.nmt.retrieval import RetrievalError, analyse, dataset
from tests.nmt_helpers import run, settings, train_command, word_dictionary
from tests.test_nmt_alignments import PIECES, cut_dataset
from tests.test_nmt_alignments import WORDS as PAIR_WORDS

torch.set_num_threads(1)
TAG_FORMAT = "s-enc-t-dec"
# Two content dimensions. a = x and c = z (a hub, four times as long); b and y differ.
# EOS is 0, so a sentence's mean points where its words' sum points. Tags and padding are
# long vectors that would change the retrievals if they were pooled.
VECTORS = {
    "a": (1.0, 0.0),
    "x": (1.0, 0.0),
    "b": (0.0, 1.0),
    "y": (2.0, 1.0),
    "c": (4.0, 4.0),
    "z": (4.0, 4.0),
    "__en__": (30.0, 0.0),
    "__ja__": (0.0, 30.0),
}
PAD_VECTOR = (-20.0, 30.0)
DICT = word_dictionary(list(VECTORS))


class TableEncoder(nn.Module):
    """An encoder whose top-layer state at a position is its token's fixed vector (fairseq's
    encoder interface: ``encoder_out`` T×B×C)."""

    def __init__(self, table: torch.Tensor) -> None:
        super().__init__()
        self.table = nn.Embedding.from_pretrained(table)

    def forward(self, src_tokens: torch.Tensor, src_lengths: torch.Tensor) -> dict:
        return {"encoder_out": [self.table(src_tokens).transpose(0, 1)]}


def hand_encoder() -> TableEncoder:
    table = torch.zeros(len(DICT), 2)
    for word, vector in VECTORS.items():
        table[DICT.index(word)] = torch.tensor(vector)
    table[DICT.pad()] = torch.tensor(PAD_VECTOR)
    return TableEncoder(table)


Lines = list[tuple[str, str, str]]  # source subwords, target subwords, untagged links


def write_valid(root: Path, per_direction: dict[str, Lines], linked: bool = True) -> Path:
    """A prepared en-ja dataset's valid directions (`mlrep.nmt.data.cut`'s layout), which is
    also its own links folder (``align/valid.<direction>``)."""
    write_stats(root / "text", {"languages": ["en", "ja"]})
    for name, lines in per_direction.items():
        d = Direction.parse(name)
        for side, k in ((d.src, 0), (d.tgt, 1)):
            atomic_write_text(
                root / "sub" / f"valid.{name}.{side}", "".join(x[k] + "\n" for x in lines)
            )
        if linked:
            atomic_write_text(root / "align" / f"valid.{name}", "".join(x[2] + "\n" for x in lines))
    return root


# en→ja: sentence/unit directions (1,0) (0,1) (1,1) retrieve among (1,0) (2,1) (1,1):
#   a→x (cos 1 > .89); b b→z (.71 > .45: wrong); c→z (1); x→a (1); y→c (.95 > .89: wrong); z→c
# ja→en: (2,1) (1,1) among (0,1) (1,1): y→c (.95 > .45: wrong); z→c; b b→z (.71 > .45: wrong); c→z
HAND = {
    "en-ja": [("a", "x", "0-0"), ("b b", "y", "0-0 1-0"), ("c", "z", "0-0")],
    "ja-en": [("y", "b b", "0-0 0-1"), ("z", "c", "0-0")],
}


def test_hand_computed_sentence_and_word_precision(tmp_path):
    root = write_valid(tmp_path, HAND)
    result = analyse(hand_encoder(), DICT, root, root, TAG_FORMAT, batch_tokens=512)
    directions = result["directions"]
    # sources first, then targets; en-ja's and ja-en's differ, so swapped directions show
    assert directions["en-ja"]["sentence_hits"] == [1, 0, 1, 1, 0, 1]
    assert directions["ja-en"]["sentence_hits"] == [0, 1, 0, 1]
    # one batch per direction: the units are the sentences' words, so the same hits (in the
    # collater's row order)
    assert sorted(directions["en-ja"]["word_hits"]) == [0, 0, 1, 1, 1, 1]
    assert sorted(directions["ja-en"]["word_hits"]) == [0, 0, 1, 1]
    # chance: 1 of 3 sentences (units) for en-ja's 6 retrievals, 1 of 2 for ja-en's 4
    assert result["metrics"] == {
        "sent_p_at_1_en-ja": pytest.approx(60.0),
        "floor_sent_p_at_1_en-ja": pytest.approx(40.0),
        "word_p_at_1_en-ja": pytest.approx(60.0),
        "floor_word_p_at_1_en-ja": pytest.approx(40.0),
        "sent_p_at_1": pytest.approx(60.0),
        "floor_sent_p_at_1": pytest.approx(40.0),
        "word_p_at_1": pytest.approx(60.0),
        "floor_word_p_at_1": pytest.approx(40.0),
    }
    assert result["pairs"]["en-ja"] == {"sentences": 5, "units": 5, "batches": 2}
    # what the claims' paired bootstrap resamples: each retrieval's score; a pair's metric is
    # one test set, a mean over pairs one group per pair
    for name, value in result["metrics"].items():
        scores = result["sentence_scores"][name]
        assert np.mean(scores) == pytest.approx(value) and len(scores) == 10, name
        pair = name.removesuffix("_en-ja")
        assert [list(g) for g in result["groups"].get(name, [])] == (
            [] if pair != name else [[f"{name.removeprefix('floor_')}_en-ja", 10]]
        ), name
    assert sorted(result["sentence_scores"]["sent_p_at_1"]) == [0.0] * 4 + [100.0] * 6
    # each retrieval's own chance: 1 of en-ja's 3 units, 1 of ja-en's 2
    chance = sorted(result["sentence_scores"]["floor_word_p_at_1_en-ja"])
    assert chance == pytest.approx([100 / 3] * 6 + [50.0] * 4)


@pytest.mark.parametrize("tag_format", TAGS)
def test_a_unit_lands_on_its_subwords_after_tagging(tmp_path, tag_format):
    """Links to the second and third words: a missing or wrong tag offset moves them onto
    another word (or onto the tag, which the criterion's check refuses)."""
    lines = {
        "en-ja": [("a b c", "x y z", "1-2 2-0")],
        "ja-en": [("x y z", "a b c", "0-2 2-1")],
    }
    write_valid(tmp_path, lines)
    for name, expected in (
        ("en-ja", [("b", "z"), ("c", "x")]),
        ("ja-en", [("x", "c"), ("z", "b")]),
    ):
        d = Direction.parse(name)
        src, tgt, links = lines[name][0]
        tagged = prepare.tag_lines(d, [src], [tgt], [parse_links(links, name)], tag_format, False)
        data = dataset(tagged, DICT, linked=True)
        sample = data.collater([data[0]])
        found = units(sample["alignments"], sample["target"].size(1))
        pieces = {}
        for side, members, unit in (
            (0, found.source, found.source_unit),
            (1, found.target, found.target_unit),
        ):
            table = sample["net_input"]["src_tokens"] if side == 0 else sample["target"]
            for (row, position), u in zip(members.tolist(), unit.tolist(), strict=True):
                pieces.setdefault(u, ["", ""])[side] = DICT[table[row, position]]
        assert sorted(tuple(p) for p in pieces.values()) == expected, (tag_format, name)
        source_tag = tag(d.src if tag_format == TAG_FORMAT else d.tgt)
        assert DICT[sample["net_input"]["src_tokens"][0, 0]] == source_tag


def test_padding_and_tags_stay_out_of_the_means():
    """Pooled tags or padding (long vectors) would change the hand-computed hits above; here
    the means themselves: a sentence is its words' and EOS's mean, whatever its padding."""
    sources = [x for x, _, _ in HAND["en-ja"]]
    targets = [y for _, y, _ in HAND["en-ja"]]
    tagged = prepare.tag_lines(Direction("en", "ja"), sources, targets, [], TAG_FORMAT, False)
    data = dataset(tagged, DICT, linked=False)
    sample = data.collater([data[i] for i in range(len(data))])
    assert (sample["net_input"]["src_tokens"] == DICT.pad()).any()  # the batch is padded
    sides = encode_sides(hand_encoder(), sample, DICT.pad(), tag_lookup(DICT.symbols))
    source, _ = sides.sentences()
    by_line = dict(zip(sample["id"].tolist(), source.tolist(), strict=True))
    assert by_line == {0: [0.5, 0.0], 1: [0.0, pytest.approx(2 / 3)], 2: [2.0, 2.0]}


def test_words_retrieve_within_their_batch_and_sentences_within_the_set(tmp_path):
    """Lines 3-4 repeat lines 1-2, and a batch of 6 tokens holds two lines (tag, word, EOS):
    within a batch each a/x and b/y has one candidate of its kind; over the whole set a
    repeat ties with its first copy, and the lower index wins."""
    twice = [("a", "x", "0-0"), ("b", "y", "0-0")] * 2
    root = write_valid(tmp_path, {"en-ja": twice, "ja-en": [(t, s, a) for s, t, a in twice]})
    result = analyse(hand_encoder(), DICT, root, root, TAG_FORMAT, batch_tokens=6)
    # in a batch: a→x, b→y, x→a right; y→a (.89 > .45) wrong: 3 of 4 per batch
    assert sorted(result["directions"]["en-ja"]["word_hits"]) == [0, 0, 1, 1, 1, 1, 1, 1]
    assert result["pairs"]["en-ja"]["batches"] == 4
    # the whole set: only the first copies find themselves, y never
    assert result["directions"]["en-ja"]["sentence_hits"] == [1, 1, 0, 0, 1, 0, 0, 0]
    assert result["metrics"]["word_p_at_1_en-ja"] == pytest.approx(75.0)
    assert result["metrics"]["sent_p_at_1_en-ja"] == pytest.approx(37.5)


def test_a_pair_without_valid_links_gets_no_word_metric(tmp_path):
    root = write_valid(tmp_path, HAND, linked=False)
    result = analyse(hand_encoder(), DICT, root, root, TAG_FORMAT, batch_tokens=512)
    names = {"sent_p_at_1_en-ja", "sent_p_at_1"}
    assert set(result["metrics"]) == names | {f"floor_{name}" for name in names}
    assert "valid.en-ja=<links file>" in result["pairs"]["en-ja"]["no_word_metric"]
    assert result["directions"]["en-ja"]["word_hits"] is None


def test_links_that_do_not_fit_and_lines_no_batch_holds_are_refused(tmp_path):
    root = write_valid(tmp_path, HAND)
    atomic_write_text(root / "align" / "valid.ja-en", "0-0\n0-5\n")
    with pytest.raises(AlignmentDataError, match=r"align/valid\.ja-en:2: link 0-5 outside"):
        analyse(hand_encoder(), DICT, root, root, TAG_FORMAT, batch_tokens=512)
    atomic_write_text(root / "align" / "valid.ja-en", "0-0\n")
    with pytest.raises(AlignmentDataError, match=r"valid\.ja-en: 1 lines of links for 2"):
        analyse(hand_encoder(), DICT, root, root, TAG_FORMAT, batch_tokens=512)
    write_valid(root, HAND)
    with pytest.raises(RetrievalError, match=r"sub/valid\.en-ja\.en:2: 4 tokens .*--batch-tokens"):
        analyse(hand_encoder(), DICT, root, root, TAG_FORMAT, batch_tokens=3)


# --- against a plain re-implementation on random states --------------------------------

WORDS = {"en": [f"e{k}" for k in range(12)], "ja": [f"j{k}" for k in range(12)]}
LENGTHS = {"en": 5, "ja": 4}  # equal lines: fairseq's batches are then file-order chunks


def random_lines(rng: random.Random, d: Direction, n: int) -> tuple[Lines, list[list]]:
    """`n` random lines of `d` and, per line, its units as (source positions, target
    positions): up to three disjoint spans of one or two words each side."""
    lines, spans = [], []
    for _ in range(n):
        src = [rng.choice(WORDS[d.src]) for _ in range(LENGTHS[d.src])]
        tgt = [rng.choice(WORDS[d.tgt]) for _ in range(LENGTHS[d.tgt])]
        starts = rng.sample(range(0, LENGTHS[d.tgt] - 1, 2), rng.randint(0, 2))
        line_units = [
            ([2 * k, 2 * k + 1][: rng.randint(1, 2)], [s, s + 1][: rng.randint(1, 2)])
            for k, s in enumerate(starts)
        ]
        links = " ".join(f"{i}-{j}" for a, b in line_units for i in a for j in b)
        lines.append((" ".join(src), " ".join(tgt), links))
        spans.append(line_units)
    return lines, spans


def naive_hits(queries: list[np.ndarray], candidates: list[np.ndarray]) -> list[int]:
    def cos(u, v):
        return float(u @ v) / float(np.sqrt(u @ u) * np.sqrt(v @ v))

    out = []
    for a, b in ((queries, candidates), (candidates, queries)):
        for i, q in enumerate(a):
            scores = [cos(q, c) for c in b]
            out.append(int(max(range(len(b)), key=lambda j: (scores[j], -j)) == i))
    return out


def test_the_same_precision_as_a_plain_numpy_loop_on_random_states(tmp_path):
    rng = random.Random(3)
    words = [*WORDS["en"], *WORDS["ja"], "__en__", "__ja__"]
    dictionary = word_dictionary(words)
    table = torch.randn(len(dictionary), 8, generator=torch.Generator().manual_seed(3))
    encoder = TableEncoder(table)
    per_direction, spans = {}, {}
    for name in ("en-ja", "ja-en"):
        per_direction[name], spans[name] = random_lines(rng, Direction.parse(name), 20)
    root = write_valid(tmp_path, per_direction)
    per_line = 3  # lines of 7 (en + tag + EOS) and 6 tokens: 3 a batch of 21
    result = analyse(encoder, dictionary, root, root, TAG_FORMAT, batch_tokens=7 * per_line)

    def vector(word: str) -> np.ndarray:
        return table[dictionary.index(word)].double().numpy()

    eos = table[dictionary.eos()].double().numpy()
    sent, word = [], []
    for name, lines in per_direction.items():
        pooled = [
            [np.mean([vector(w) for w in line[k].split()] + [eos], axis=0) for line in lines]
            for k in (0, 1)
        ]
        hits = naive_hits(*pooled)
        assert result["directions"][name]["sentence_hits"] == hits, name
        sent += hits
        direction_words = []
        for start in range(0, len(lines), per_line):
            stop = min(start + per_line, len(lines))
            batch = [(lines[i], spans[name][i]) for i in range(start, stop)]
            sides = [[], []]
            for line, line_units in batch:
                for positions in line_units:
                    for k in (0, 1):
                        pieces = line[k].split()
                        sides[k].append(np.mean([vector(pieces[p]) for p in positions[k]], axis=0))
            if len(sides[0]) >= 2:
                direction_words += naive_hits(*sides)
        assert sorted(result["directions"][name]["word_hits"]) == sorted(direction_words), name
        word += direction_words
    assert result["metrics"]["sent_p_at_1_en-ja"] == pytest.approx(100 * np.mean(sent))
    assert result["metrics"]["word_p_at_1_en-ja"] == pytest.approx(100 * np.mean(word))
    assert 0 < np.mean(sent) < 1 and 0 < np.mean(word) < 1  # neither trivial


# --- end to end ------------------------------------------------------------------------


def test_the_verb_on_a_trained_tiny_model(tmp_path):
    out = cut_dataset(tmp_path)
    write_stats(out / "text", {"languages": ["en", "ja"]})
    links = [
        subword_links(ew, jw, wl, ep, jp)
        for (ew, jw, wl), (ep, jp) in zip(PAIR_WORDS, PIECES, strict=True)
    ]
    pieces = [(" ".join(e), " ".join(j), x) for (e, j), x in zip(PIECES, links, strict=True)]
    valid = {
        "en-ja": [(e, j, format_links(x)) for e, j, x in pieces],
        "ja-en": [(j, e, format_links({(t, s) for s, t in x})) for e, j, x in pieces],
    }
    write_valid(out, valid)
    prepare.binarise(out, ["en", "ja"], TAG_FORMAT, out / TAG_FORMAT, links=out / "align")
    s = dataclasses.replace(settings(max_update=2, save_interval_updates=2), lr=0.01)
    result = run(train_command(out, tmp_path / "model", s=s))
    assert result.returncode == 0, result.stderr[-3000:]
    argv = ["nmt", "retrieval", "--section", "ch5_wordcl", "--scale", "tiny", "--data", str(out)]
    argv += ["--prepared", str(out), "--model", str(tmp_path / "model"), "--tag-format", TAG_FORMAT]
    argv += ["--out", str(tmp_path / "r" / "retrieval.json"), "--batch-tokens", "512"]
    assert cli.main(argv) == 0
    doc = json.loads((tmp_path / "r" / "retrieval.json").read_text(encoding="utf-8"))
    names = {"sent_p_at_1_en-ja", "word_p_at_1_en-ja", "sent_p_at_1", "word_p_at_1"}
    assert set(doc["metrics"]) == names | {f"floor_{name}" for name in names}
    assert doc["metrics"]["floor_sent_p_at_1"] == pytest.approx(50.0)  # 1 of a direction's 2
    assert all(0 <= v <= 100 for v in doc["metrics"].values())
    assert doc["pairs"]["en-ja"] == {"sentences": 4, "units": 10, "batches": 2}
    assert doc["settings"] == {"batch_tokens": 512, "tag_format": TAG_FORMAT}
    assert len(doc["directions"]["ja-en"]["sentence_hits"]) == 4
    assert (tmp_path / "r" / "provenance.json").exists()
