"""mRASP2's aligned augmentation (`mlrep.text.augment`, ``mlrep text augment`` and
``induce-dictionary``): substitution with hand-computed draws, its rate and choice over many
tokens, the three dictionary sources and their refusals, and both verbs on temporary files."""

import json
import math
import random
from collections import Counter
from unittest.mock import ANY

import pytest

from mlrep.cli import main
from mlrep.text import augment
from mlrep.text.lines import TextInputError

DICTIONARY = {"a": ["A1", "A2"], "b": ["B1"]}


class Scripted:
    """A generator whose draws are given: `random` returns the next number, `choice` takes
    the next index, so a test states by hand what each draw is."""

    def __init__(self, numbers, indices):
        self.numbers, self.indices = list(numbers), list(indices)

    def random(self):
        return self.numbers.pop(0)

    def choice(self, items):
        return items[self.indices.pop(0)]


def test_each_dictionary_word_draws_once_and_is_replaced_below_p():
    # the draws go to a, b, a only (x and y are not in the dictionary): 0.4 < 0.5 replaces a
    # by A2 (index 1); 0.5 is not below 0.5, so b stays; 0.1 replaces a by A1 (index 0)
    rng = Scripted([0.4, 0.5, 0.1], [1, 0])
    out, replaced = augment.substitute(["a", "x", "b", "y", "a"], DICTIONARY, 0.5, rng)
    assert out == ["A2", "x", "b", "y", "A1"]
    assert replaced == 2
    assert rng.numbers == [] and rng.indices == []


def test_p_zero_is_the_identity_and_p_one_replaces_every_dictionary_word():
    tokens = ["a", "x", "b", "a", "y", "b", "b"]
    same, none = augment.substitute(tokens, DICTIONARY, 0.0, random.Random(1))
    assert same == tokens and none == 0
    out, replaced = augment.substitute(tokens, DICTIONARY, 1.0, random.Random(1))
    assert replaced == 5
    for old, new in zip(tokens, out, strict=True):
        if old in DICTIONARY:
            assert new in DICTIONARY[old]
        else:
            assert new == old


@pytest.mark.parametrize("p", [0.9, 0.3])
def test_the_share_of_replaced_words_is_close_to_p(p):
    # 10,000 dictionary words: the share's standard deviation is at most 0.005
    out, replaced = augment.substitute(["a"] * 10_000, DICTIONARY, p, random.Random(7))
    assert abs(replaced / 10_000 - p) < 0.02
    assert sum(1 for token in out if token != "a") == replaced


def test_the_translation_is_chosen_uniformly():
    three = {"a": ["A1", "A2", "A3"]}
    out, _ = augment.substitute(["a"] * 3000, three, 1.0, random.Random(3))
    counts = Counter(out)
    assert set(counts) == {"A1", "A2", "A3"}
    assert all(abs(n - 1000) < 120 for n in counts.values())  # sd 26


def test_a_seed_fixes_the_output_and_another_seed_changes_it():
    text = ["a b x a b a"] * 50
    first, _ = augment.augment(text, {"d": DICTIONARY}, 0.5, seed=11)
    assert len(set(first)) > 1  # one generator for the whole text, not one per line
    assert augment.augment(text, {"d": DICTIONARY}, 0.5, seed=11)[0] == first
    assert augment.augment(text, {"d": DICTIONARY}, 0.5, seed=12)[0] != first


def test_augment_counts_tokens_dictionary_words_and_replacements():
    out, stats = augment.augment(["a  x a", "", "y"], {"d": {"a": ["b"]}}, 1.0, seed=0)
    assert out == ["b x b", "", "y"]
    assert (stats.tokens, stats.in_dictionary, stats.replaced) == (4, 2, 2)
    assert stats.replaced_share == 0.5
    assert augment.Stats().replaced_share is None


def test_muse_lines_add_translations_in_order_once_each(tmp_path):
    path = tmp_path / "en-de.txt"
    path.write_text("the der\nthe die\ncat Katze\n\nthe der\nthe\tdas\n")
    assert augment.read_muse(path) == {"the": ["der", "die", "das"], "cat": ["Katze"]}


@pytest.mark.parametrize("line", ["the der die", "lonely"])
def test_a_muse_line_without_two_words_names_file_and_line(tmp_path, line):
    path = tmp_path / "en-de.txt"
    path.write_text(f"the der\n{line}\n")
    with pytest.raises(TextInputError, match=rf"{path}:2: expected 'source target'.*fix"):
        augment.read_muse(path)


SYNONYMS = (
    "EN__cat\tDE__Katze__1\tFR__chat__2\tES__gato__3\n"
    "DE__Katze\tEN__cat__1\n"
    "EN__dog\tFR__chien__2\n"
)


def test_synonym_headwords_of_the_language_with_nearer_entries_weighted(tmp_path):
    path = tmp_path / "synonym_dict_raw_dep3"
    path.write_text(SYNONYMS)
    assert augment.read_synonyms(path, "en") == {"cat": ["Katze"]}  # depth 1 only
    assert augment.read_synonyms(path, "EN", max_depth=2) == {
        "cat": ["Katze", "Katze", "chat"],
        "dog": ["chien"],
    }
    assert augment.read_synonyms(path, "en", targets=["fr", "es"], max_depth=3) == {
        "cat": ["chat", "chat", "gato"],
        "dog": ["chien", "chien"],
    }
    assert augment.read_synonyms(path, "de") == {"Katze": ["cat"]}


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ("cat\tDE__Katze__1", "the headword 'cat' is not 'XX__word'"),
        ("EN__cat\tDE__Katze", r"the entry 'DE__Katze' is not 'YY__word__d'"),
        ("EN__cat DE__Katze__1", r"the headword 'EN__cat DE__Katze__1'"),
    ],
)
def test_a_malformed_synonym_line_names_file_line_and_fix(tmp_path, line, complaint):
    path = tmp_path / "synonym_dict_raw_dep1"
    path.write_text(f"DE__Katze\tEN__cat__1\n{line}\n")
    with pytest.raises(TextInputError, match=rf"{path}:2: {complaint}.*fix"):
        augment.read_synonyms(path, "de")


def _write(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return [tmp_path / name for name in files]


# Hand-made: "a" faces "x" one-to-one three times and "z" once; "b" faces "y" three times and,
# in the last line, two words at once (1-to-2: not counted); "c" faces "w" once and "v" once
# (a tie, broken by the word).
BITEXT = {
    "src": "a b\na b\na b c\na c\nb\n",
    "tgt": "x y\nx y\nx y w\nz v\nq r\n",
    "links": "0-0 1-1\n0-0 1-1\n0-0 1-1 2-2\n0-0 1-1\n0-0 0-1\n",
}


def test_an_induced_dictionary_counts_one_to_one_links(tmp_path):
    pairs, aligned = augment.read_aligned(*_write(tmp_path, **BITEXT))
    assert augment.induce(pairs, aligned, min_count=1, top=5) == {
        "a": ["x", "z"],
        "b": ["y"],
        "c": ["v", "w"],
    }
    assert augment.induce(pairs, aligned, min_count=1, top=1) == {
        "a": ["x"],
        "b": ["y"],
        "c": ["v"],
    }
    assert augment.induce(pairs, aligned, min_count=3, top=5) == {"a": ["x"], "b": ["y"]}


def test_induced_links_must_match_the_bitext(tmp_path):
    src, tgt, links = _write(tmp_path, src="a b\na\n", tgt="x y\nx\n", links="0-0 1-1\n")
    with pytest.raises(TextInputError, match=rf"{links} has 1 lines for 2 sentence pairs"):
        augment.read_aligned(src, tgt, links)
    links.write_text("0-0 1-1\n0-1\n")
    with pytest.raises(TextInputError, match=rf"{links}:2: link 0-1 is outside the line's 1 "):
        augment.read_aligned(src, tgt, links)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_augment_verb_writes_the_source_side_and_its_stats(tmp_path, capsys):
    src, tgt, muse, mono = _write(
        tmp_path, **{"in.en": "the cat\n\nthe dog\n", "in.de": "die Katze\n\nder Hund\n"},
        **{"en-de.txt": "the der\ncat Katze\n", "mono.en": "the cat sat\n" * 20},
    )  # fmt: skip

    def run(source, out, *options):
        return _run(capsys, "text", "augment", "--input", source, "--output", out,
                    "--dictionary", muse, "--format", "muse", "--seed", "5", *options)  # fmt: skip

    out = tmp_path / "aa/out.en"
    code, _, err = run(src, out, "--p", "1", "--target", tgt)
    assert code == 0, err
    assert out.read_text() == "der Katze\n\nder dog\n"
    meta = json.loads(out.with_name("out.en.meta.json").read_text())
    assert (meta["lines"], meta["processed"], meta["empty"]) == (3, 2, 1)
    extra = meta["extra"]
    assert extra["pair"] == {"source": str(out), "target": str(tgt)}
    assert (extra["tokens"], extra["in_dictionary"], extra["replaced"]) == (4, 3, 3)
    assert extra["replaced_share"] == 0.75
    assert (extra["format"], extra["p"], extra["seed"]) == ("muse", 1.0, 5)
    # monolingual: the pair is (C(x), x); the text is the library's for the seed given
    augmented = tmp_path / "aa/mono.en"
    assert run(mono, augmented, "--p", "0.5") == (0, ANY, "")
    expected, _ = augment.augment(
        ["the cat sat"] * 20, {"en-de": augment.read_muse(muse)}, 0.5, seed=5
    )
    assert augmented.read_text() == "".join(line + "\n" for line in expected)
    pair = json.loads(augmented.with_name("mono.en.meta.json").read_text())["extra"]["pair"]
    assert pair == {"source": str(augmented), "target": str(mono)}


def test_augment_verb_with_synonyms_and_its_refusals(tmp_path, capsys):
    src, syn, tgt = _write(
        tmp_path, **{"in.en": "the cat\n", "syn": SYNONYMS, "short.de": "a\nb\n"}
    )
    out = tmp_path / "out.en"
    base = ("text", "augment", "--input", src, "--output", out, "--dictionary", syn, "--seed", 1)
    code, _, err = _run(capsys, *base, "--format", "synonym", "--lang", "en", "--targets", "fr",
                        "--max-depth", "2", "--p", "1")  # fmt: skip
    assert code == 0, err
    assert out.read_text() == "the chat\n"
    syn.write_text("cat\tDE__Katze__1\n")  # no language code: still two MUSE words
    refusals = [
        (("--format", "synonym"), "--format synonym needs --lang"),
        (("--format", "muse", "--lang", "en"), "--lang, --targets and --max-depth are for"),
        (("--format", "muse", "--target", tgt), f"{src} and {tgt} must have the same number"),
        (("--format", "synonym", "--lang", "de"), f"{syn}:1: the headword 'cat'"),
    ]
    for options, complaint in refusals:
        code, _, err = _run(capsys, *base, *options)
        assert code == 2 and complaint in err, err


def test_induce_dictionary_verb_feeds_augment(tmp_path, capsys):
    src, tgt, links = _write(tmp_path, **BITEXT)
    dictionary = tmp_path / "induced.txt"
    code, out, err = _run(capsys, "text", "induce-dictionary", "--source", src, "--target", tgt,
                          "--alignment", links, "--min-count", "1", "--top", "1",
                          "--output", dictionary)  # fmt: skip
    assert code == 0, err
    assert dictionary.read_text() == "a x\nb y\nc v\n"
    assert json.loads(out) == {"output": str(dictionary), "words": 3, "entries": 3}
    augmented = tmp_path / "aa.src"
    code, _, err = _run(capsys, "text", "augment", "--input", src, "--output", augmented,
                        "--dictionary", dictionary, "--format", "muse", "--p", "1",
                        "--seed", "0")  # fmt: skip
    assert code == 0, err
    assert augmented.read_text() == "x y\nx y\nx y v\nx v\ny\n"
    _run(capsys, "text", "induce-dictionary", "--source", src, "--target", tgt,
         "--alignment", links, "--min-count", "2", "--output", dictionary)  # fmt: skip
    assert dictionary.read_text() == "a x\nb y\n"  # z and c's words were linked once


def _binomial_ok(successes: int, trials: int, p: float) -> bool:
    """Whether `successes` of `trials` lies within 4.5 standard deviations of p·trials (a
    correct sampler fails this about once in 150,000 runs; the seeds are fixed anyway)."""
    return abs(successes - p * trials) <= 4.5 * math.sqrt(trials * p * (1 - p)) + 1


# words w0..w99 with two translations each, u0..u99 in no dictionary
COVERED = {f"w{i}": [f"W{i}a", f"W{i}b"] for i in range(100)}


def _synthetic(lines: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = [*COVERED, *(f"u{i}" for i in range(100))]
    return [" ".join(rng.choice(words) for _ in range(20)) for _ in range(lines)]


@pytest.mark.parametrize("p", [0.9, 0.2])
def test_augmented_text_replaces_a_share_p_of_covered_words_and_nothing_else(p):
    text = _synthetic(2000, seed=1)
    out, stats = augment.augment(text, {"d": COVERED}, p, seed=3)
    assert stats.tokens == 40_000 and stats.in_dictionary == sum(
        token in COVERED for line in text for token in line.split()
    )
    assert _binomial_ok(stats.replaced, stats.in_dictionary, p)
    replaced = 0
    for before, after in zip(text, out, strict=True):
        for old, new in zip(before.split(), after.split(), strict=True):
            if old not in COVERED:
                assert new == old  # an uncovered word is never touched
            elif new != old:
                assert new in COVERED[old]  # a covered word only by one of its translations
                replaced += 1
    assert replaced == stats.replaced
    assert stats.replaced_share == round(stats.replaced / stats.tokens, 4)


def test_p_zero_leaves_text_unchanged_and_p_one_replaces_every_covered_word():
    text = _synthetic(200, seed=2)
    same, stats = augment.augment(text, {"d": COVERED}, 0.0, seed=1)
    assert same == text and stats.replaced == 0
    out, stats = augment.augment(text, {"d": COVERED}, 1.0, seed=1)
    assert stats.replaced == stats.in_dictionary > 0
    for before, after in zip(text, out, strict=True):
        for old, new in zip(before.split(), after.split(), strict=True):
            assert new in COVERED[old] if old in COVERED else new == old


# two replacement languages: "cat" in both, "dog" in German only, "house" in French only
EN_DE = {"cat": ["Katze"], "dog": ["Hund"]}
EN_FR = {"cat": ["chat", "matou"], "house": ["maison"]}


def test_per_sentence_a_line_switches_into_one_drawn_language():
    text = ["cat dog house"] * 3000
    out, stats = augment.augment(
        text, {"en-de": EN_DE, "en-fr": EN_FR}, 1.0, seed=4, per="sentence"
    )
    assert set(out) == {"Katze Hund house", "chat dog maison", "matou dog maison"}
    german = out.count("Katze Hund house")
    assert stats.lines_per_dictionary == {"en-de": german, "en-fr": 3000 - german}
    assert _binomial_ok(german, 3000, 0.5)  # the language is drawn uniformly per line
    # a line's covered words are those of its own dictionary: 2 per line either way
    assert stats.in_dictionary == stats.replaced == 6000


def test_per_word_each_word_draws_among_every_language_translation():
    text = ["cat dog house"] * 3000
    out, stats = augment.augment(text, {"en-de": EN_DE, "en-fr": EN_FR}, 1.0, seed=4, per="word")
    assert stats.lines_per_dictionary == {}
    cats = Counter(line.split()[0] for line in out)
    assert set(cats) == {"Katze", "chat", "matou"}  # pooled: 3 translations, 1/3 each
    assert all(_binomial_ok(n, 3000, 1 / 3) for n in cats.values())
    assert {line.split(maxsplit=1)[1] for line in out} == {"Hund maison"}
    mixed = sum(1 for line in out if line.startswith(("chat", "matou")))
    assert mixed > 0  # French and German words in one line: the paper's Figure 6
    assert stats.in_dictionary == stats.replaced == 9000


def test_one_dictionary_gives_the_same_text_per_sentence_and_per_word():
    text = _synthetic(100, seed=5)
    word, _ = augment.augment(text, {"d": COVERED}, 0.5, seed=6, per="word")
    sentence, stats = augment.augment(text, {"d": COVERED}, 0.5, seed=6, per="sentence")
    assert word == sentence and stats.lines_per_dictionary == {"d": 100}
    # and the text of `substitute` with one generator over the lines: no dictionary draw
    rng = random.Random(6)
    assert word == [" ".join(augment.substitute(t.split(), COVERED, 0.5, rng)[0]) for t in text]
    with pytest.raises(ValueError, match="at least one dictionary"):
        augment.augment(text, {}, 0.5, seed=6)


def test_merge_pools_translations_in_order():
    assert augment.merge([EN_DE, EN_FR]) == {
        "cat": ["Katze", "chat", "matou"],
        "dog": ["Hund"],
        "house": ["maison"],
    }
    assert EN_DE == {"cat": ["Katze"], "dog": ["Hund"]}  # the inputs stay as they were


def test_an_induced_dictionary_keeps_pairs_by_p_of_target_given_source(tmp_path):
    # hand count of BITEXT's 1-to-1 links: a→x 3/4, a→z 1/4; b→y 3/3; c→v 1/2, c→w 1/2
    pairs, aligned = augment.read_aligned(*_write(tmp_path, **BITEXT))
    assert augment.induce(pairs, aligned, min_count=1, top=5, min_prob=0.3) == {
        "a": ["x"],
        "b": ["y"],
        "c": ["v", "w"],
    }
    assert augment.induce(pairs, aligned, min_count=1, top=5, min_prob=0.25) == {
        "a": ["x", "z"],  # 1/4 is not below 0.25
        "b": ["y"],
        "c": ["v", "w"],
    }
    assert augment.induce(pairs, aligned, min_count=1, top=5, min_prob=0.51) == {
        "a": ["x"],
        "b": ["y"],
    }


def test_augment_verb_draws_a_muse_dictionary_per_line(tmp_path, capsys):
    src, de, fr = _write(
        tmp_path, **{"in.en": "cat dog house\n" * 400, "en-de.txt": "cat Katze\ndog Hund\n",
                     "en-fr.txt": "cat chat\nhouse maison\n"},
    )  # fmt: skip
    out = tmp_path / "out.en"
    code, _, err = _run(capsys, "text", "augment", "--input", src, "--output", out,
                        "--dictionary", de, fr, "--format", "muse", "--per", "sentence",
                        "--p", "1", "--seed", "2")  # fmt: skip
    assert code == 0, err
    assert set(out.read_text().splitlines()) == {"Katze Hund house", "chat dog maison"}
    extra = json.loads(out.with_name("out.en.meta.json").read_text())["extra"]
    assert extra["per"] == "sentence"
    assert extra["dictionary_words"] == {"en-de": 2, "en-fr": 2}
    assert sum(extra["lines_per_dictionary"].values()) == 400
    assert extra["lines_per_dictionary"]["en-de"] == out.read_text().count("Katze")
    syn = tmp_path / "syn"
    syn.write_text(SYNONYMS)
    base = ("text", "augment", "--input", src, "--output", out, "--seed", "1")
    for options, complaint in [
        (("--dictionary", de, tmp_path / "x" / "en-de.txt", "--format", "muse"), "distinct names"),
        (("--dictionary", syn, syn, "--format", "synonym", "--lang", "en"), "reads one file"),
    ]:
        code, _, err = _run(capsys, *base, *options)
        assert code == 2 and complaint in err, err


def test_induce_dictionary_verb_passes_min_prob_on(tmp_path, capsys):
    src, tgt, links = _write(tmp_path, **BITEXT)
    dictionary = tmp_path / "induced.txt"
    argv = ("text", "induce-dictionary", "--source", src, "--target", tgt, "--alignment", links,
            "--min-count", "1", "--output", dictionary)  # fmt: skip
    assert _run(capsys, *argv)[0] == 0  # default --min-prob 0.1 keeps z (1/4)
    assert dictionary.read_text() == "a x\na z\nb y\nc v\nc w\n"
    assert _run(capsys, *argv, "--min-prob", "0.3")[0] == 0
    assert dictionary.read_text() == "a x\nb y\nc v\nc w\n"


def test_a_synonym_graph_lists_words_within_the_depth_by_hand():
    dictionaries = {("en", "de"): EN_DE, ("en", "fr"): {"cat": ["chat"], "dog": ["chien"]}}
    # edges: EN__cat–DE__Katze, EN__dog–DE__Hund, EN__cat–FR__chat, EN__dog–FR__chien
    assert augment.synonym_graph(dictionaries, 1) == [
        "EN__cat\tDE__Katze__1\tFR__chat__1",
        "DE__Katze\tEN__cat__1",
        "EN__dog\tDE__Hund__1\tFR__chien__1",
        "DE__Hund\tEN__dog__1",
        "FR__chat\tEN__cat__1",
        "FR__chien\tEN__dog__1",
    ]
    deep = augment.synonym_graph(dictionaries, 2)
    assert deep[1] == "DE__Katze\tEN__cat__1\tFR__chat__2"  # German to French through English
    assert deep[0] == "EN__cat\tDE__Katze__1\tFR__chat__1"  # nothing new two steps away


def test_a_synonym_graph_reaches_same_language_synonyms_and_stops_at_its_depth():
    # a chain de:Wort – en:word – fr:mot – en:term: "term" is 3 steps from "Wort"
    dictionaries = {
        ("en", "de"): {"word": ["Wort"]},
        ("en", "fr"): {"word": ["mot"], "term": ["mot"]},
    }
    lines = augment.synonym_graph(dictionaries, 3)
    assert lines[1] == "DE__Wort\tEN__word__1\tFR__mot__2\tEN__term__3"
    assert augment.synonym_graph(dictionaries, 2)[1] == "DE__Wort\tEN__word__1\tFR__mot__2"
    assert lines[0] == "EN__word\tDE__Wort__1\tFR__mot__1\tEN__term__2"  # an English synonym
    for depth, complaint in [(0, "depth 0"), (10, "depth 10")]:
        with pytest.raises(TextInputError, match=complaint):
            augment.synonym_graph(dictionaries, depth)
    with pytest.raises(TextInputError, match=r"\['deu', 'en'\]: the synonym format has two"):
        augment.synonym_graph({("en", "deu"): {"word": ["Wort"]}}, 1)


def test_synonym_graph_verb_writes_what_augment_reads(tmp_path, capsys):
    de, fr = _write(tmp_path, **{"en-de.txt": "cat Katze\n", "en-fr.txt": "cat chat\n"})
    graph = tmp_path / "synonyms"
    code, out, err = _run(capsys, "text", "synonym-graph", "--dictionary", de, fr,
                          "--max-depth", "2", "--output", graph)  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == {"output": str(graph), "words": 3}
    # the graph reads back: German headwords reach French at depth 2, weighted below English
    assert augment.read_synonyms(graph, "de", max_depth=2) == {"Katze": ["cat", "cat", "chat"]}
    for files, complaint in [((de, de), "the pair en-de twice"), ((tmp_path / "x.txt",), "named")]:
        code, _, err = _run(capsys, "text", "synonym-graph", "--dictionary", *files,
                            "--output", graph)  # fmt: skip
        assert code == 2 and complaint in err, err


def test_a_muse_file_as_released_tab_separated_lower_case_with_identity_pairs(tmp_path):
    # the shape of MUSE's en-X files: tabs, lower case, a word's translations on adjacent
    # lines, the word itself among them (names, loans)
    path = tmp_path / "en-cs.txt"
    path.write_text("house\tdům\nhouse\thouse\nwas\tbyl\nwas\tbyla\nlondon\tlondýn\n")
    dictionary = augment.read_muse(path)
    assert dictionary == {"house": ["dům", "house"], "was": ["byl", "byla"], "london": ["londýn"]}
    # lookup is case-sensitive, as in mRASP: a capitalised word of the text is not replaced
    # (the paper's Figure 6 keeps "One", "EU", "Graves" and "BBC Radio Leeds")
    out, stats = augment.augment(["London was a house ."], {"en-cs": dictionary}, 1.0, seed=0)
    words = out[0].split()
    assert words[0] == "London" and words[1] in ("byl", "byla") and words[3] in ("dům", "house")
    assert (stats.in_dictionary, stats.replaced) == (2, 2)  # "house" for "house" counts
