"""Chapter 5's alignments: word2word lexicons (CPE), their disjoint links with phrase merging,
the 1-to-1 filter, units, and the lexicon file format. Every expected value is worked out by
hand in the comments."""

from pathlib import Path

import pytest

from mlrep.align import lexicon
from mlrep.align.lexicon import LexiconSettings, build, extract
from mlrep.align.pharaoh import AlignmentFormatError
from mlrep.align.runs import link_counts
from mlrep.align.units import one_to_one, units

# "a" translates as Ab (or its synonym Aa) and nearly always comes with "b" (B): B co-occurs
# with "a" more often (3) than Ab does (2), so plain co-occurrence ranks the confounder B first.
CONFOUNDED = [
    ("a b", "Ab B"),
    ("a b", "Aa B"),
    ("a b", "Ab B"),
    ("b", "B"),
    ("b", "B"),
]


def pairs(lines):
    return [(s.split(), t.split()) for s, t in lines]


def scores(table, word):
    return [(y, pytest.approx(score)) for y, score in table[word]]


def test_cpe_demotes_the_translation_of_a_collocate_that_co_occurrence_ranks_first():
    # c(a) = 3, c(b) = 5, c(a, b) = c(b, a) = 3; c(a, ·): Ab 2, Aa 1, B 3; c(b, ·): B 5, Ab 2, Aa 1.
    # CPE(y|a) = c(a,y)/3 - 3/3 * c(b,y)/5: Ab 2/3 - 2/5 = 4/15, Aa 1/3 - 1/5 = 2/15, B 1 - 1 = 0.
    # CPE(y|b) = c(b,y)/5 - 3/5 * c(a,y)/3: B 1 - 3/5 = 2/5, Ab 2/5 - 2/5 = 0, Aa 1/5 - 1/5 = 0
    # (Ab before Aa on the tie: it co-occurs more, though Aa comes first in code-point order).
    table = build(pairs(CONFOUNDED), LexiconSettings())
    assert scores(table, "a") == [("Ab", 4 / 15), ("Aa", 2 / 15), ("B", 0)]
    assert scores(table, "b") == [("B", 2 / 5), ("Ab", 0), ("Aa", 0)]


def test_settings_keep_top_k_rerank_width_candidates_and_limit_collocates():
    # translations 1: each word's best entry only.
    assert scores(build(pairs(CONFOUNDED), LexiconSettings(translations=1)), "a") == [
        ("Ab", 4 / 15)
    ]
    # width 1: only the top co-occurring candidate of "a" (the confounder B) is re-ranked.
    assert scores(build(pairs(CONFOUNDED), LexiconSettings(width=1)), "a") == [("B", 0)]
    # collocates 1: only the most frequent source word (b) corrects others; b itself is
    # left uncorrected, CPE(y|b) = c(b,y)/5.
    table = build(pairs(CONFOUNDED), LexiconSettings(collocates=1))
    assert scores(table, "a") == [("Ab", 4 / 15), ("Aa", 2 / 15), ("B", 0)]
    assert scores(table, "b") == [("B", 1), ("Ab", 2 / 5), ("Aa", 1 / 5)]


def test_counts_are_over_token_occurrences():
    # "x x ||| X": c(x) = 2, c(x, X) = 2; "x" is no collocate of itself: CPE(X|x) = 1.
    table = build(pairs([("x x", "X"), ("z", "Z")]), LexiconSettings())
    assert scores(table, "x") == [("X", 1)]


LEXICON = {
    "n": [("N", 0.9)],
    "y": [("Y", 0.8)],
    "c": [("C", 0.7)],
    "q": [("Q", 0.1)],
}


def links(source, target, table=None):
    return extract(LEXICON if table is None else table, source.split(), target.split())


def test_links_consecutive_on_both_sides_merge_into_a_phrase_written_as_a_cross_product():
    # n-N and y-Y are consecutive on both sides: one phrase {0,1} x {0,1}; c-C (target 3)
    # is not next to Y (target 1): a unit of its own.
    got = links("n y c", "N Y Q C")
    assert got == {(0, 0), (0, 1), (1, 0), (1, 1), (2, 3)}
    assert units(got) == [((0, 1), (0, 1)), ((2,), (3,))]
    # runs merge transitively, and an inverted pair (Y N) is consecutive too
    assert links("n y c", "N Y C") == {(i, j) for i in range(3) for j in range(3)}
    assert links("n y", "Y N") == {(0, 0), (0, 1), (1, 0), (1, 1)}


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("n y", "N Q Y", {(0, 0), (1, 2)}),  # consecutive source words only
        ("n q y", "N Y", {(0, 0), (2, 1)}),  # consecutive target words only
    ],
)
def test_links_consecutive_on_one_side_only_stay_word_pairs(source, target, expected):
    assert links(source, target) == expected


def test_links_are_disjoint_and_chosen_by_descending_score():
    table = {"a": [("A", 0.5), ("A2", 0.4)], "b": [("A", 0.9)]}
    # b-A (0.9) is taken first; a-A (0.5) would reuse A, so a takes its next entry A2.
    assert links("a x b", "A A2", table) == {(2, 0), (0, 1)}
    # a repeated word or translation links once: the first position wins a tie
    assert links("a a", "A", table) == {(0, 0)}
    assert links("a", "A A", table) == {(0, 0)}
    # words the lexicon does not link get nothing, an empty side gives an empty line
    assert links("x", "A", table) == set() and links("", "A", table) == set()


def test_one_to_one_drops_every_link_of_a_word_with_two_links():
    # source 1 has two links (1-1, 1-2), target 3 has two (2-3, 3-3): only 0-0 is 1-to-1
    assert one_to_one({(0, 0), (1, 1), (1, 2), (2, 3), (3, 3)}) == {(0, 0)}
    assert one_to_one({(0, 1), (1, 0)}) == {(0, 1), (1, 0)}


def test_units_are_connected_components_and_runs_count_them():
    assert units({(0, 0), (0, 1), (1, 1), (3, 2)}) == [((0, 1), (0, 1)), ((3,), (2,))]
    assert units(set()) == []
    counts = link_counts(Path("run"), ["0-0 0-1 1-0 1-1 2-3", "", "0-0"])
    assert counts == {
        "pairs": 3,
        "links": 6,
        "links_per_pair": 2.0,
        "units": 3,
        "units_per_pair": 1.0,
    }


def test_a_lexicon_file_reads_back_exactly(tmp_path):
    table = build(pairs(CONFOUNDED), LexiconSettings())
    path = tmp_path / "lexicon.tsv"
    lexicon.save(table, path)
    assert path.read_text().splitlines()[0] == "a\tAb\t0.26666666666666666"
    assert lexicon.load(path) == table


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("a\tA\t0.5\nb\tB\n", "lexicon.tsv:2: expected 'source<TAB>target<TAB>score'"),
        ("a b\tA\t0.5\n", "lexicon.tsv:1: expected 'source<TAB>target<TAB>score'"),
        ("a\t\t0.5\n", "lexicon.tsv:1: expected 'source<TAB>target<TAB>score'"),
        ("a \tA\t0.5\n", "lexicon.tsv:1: expected 'source<TAB>target<TAB>score'"),
        ("a\tA\thigh\n", "lexicon.tsv:1: score 'high' is not a finite number"),
        ("a\tA\tnan\n", "lexicon.tsv:1: score 'nan' is not a finite number"),
        ("a\tA\t0.5\na\tA\t0.4\n", "lexicon.tsv:2: 'a' -> 'A' is listed twice"),
    ],
)
def test_a_malformed_lexicon_line_names_file_line_and_fix(tmp_path, content, message):
    path = tmp_path / "lexicon.tsv"
    path.write_text(content)
    with pytest.raises(AlignmentFormatError) as raised:
        lexicon.load(path)
    assert message in str(raised.value)
    assert "rebuild the lexicon with `mlrep align lexicon`" in str(raised.value)
