"""English trees: head finalization and PMASS on worked examples, spaCy and Enju alike."""

import json
import random

import pytest

from mlrep.text import english
from mlrep.text.enju import read_enju
from mlrep.text.head_final import Argument, arguments_from_json, head_finalize
from mlrep.text.lines import TextInputError
from mlrep.text.tree import (
    Cons,
    Tok,
    bracketed,
    from_json,
    head_final_order,
    pmass_plural,
    pmass_single,
    to_json,
)

# worked example: S[NP(the committee) VP[VP(approved NP(the new budget)) ADVP(yesterday)]]
WORDS = ["the", "committee", "approved", "the", "new", "budget", "yesterday"]
NP_SUBJ = Cons(Tok(0), Tok(1), head_left=False)
NP_OBJ = Cons(Tok(3), Cons(Tok(4), Tok(5), head_left=False), head_left=False)
COMMITTEE = Cons(
    NP_SUBJ,
    Cons(Cons(Tok(2), NP_OBJ, head_left=True), Tok(6), head_left=True),
    head_left=False,
)

ENJU_XML = """<?xml version="1.0"?>
<sentence id="s0" parse_status="success">
<cons id="c0" cat="S" xcat="" head="c3" sem_head="c3" schema="subj_head">
 <cons id="c1" cat="NP" xcat="" head="c2" sem_head="c2" schema="spec_head">
  <cons id="c4" cat="D" xcat="" head="t0" sem_head="t0"><tok id="t0" cat="D" pos="DT"
   base="the">the</tok></cons>
  <cons id="c2" cat="NX" xcat="" head="t1" sem_head="t1"><tok id="t1" cat="N" pos="NN"
   base="committee">committee</tok></cons>
 </cons>
 <cons id="c3" cat="VP" xcat="" head="c5" sem_head="c5" schema="head_mod">
  <cons id="c5" cat="VP" xcat="" head="c6" sem_head="c6" schema="head_comp">
   <cons id="c6" cat="VX" xcat="" head="t2" sem_head="t2"><tok id="t2" cat="V" pos="VBD"
    base="approve" pred="verb_arg12" arg1="c1" arg2="c7">approved</tok></cons>
   <cons id="c7" cat="NP" xcat="" head="c9" sem_head="c9" schema="spec_head">
    <cons id="c8" cat="D" xcat="" head="t3" sem_head="t3"><tok id="t3" cat="D" pos="DT"
     base="the">the</tok></cons>
    <cons id="c9" cat="NX" xcat="" head="c11" sem_head="c11" schema="mod_head">
     <cons id="c10" cat="ADJP" xcat="" head="t4" sem_head="t4"><tok id="t4" cat="ADJ" pos="JJ"
      base="new">new</tok></cons>
     <cons id="c11" cat="NX" xcat="" head="t5" sem_head="t5"><tok id="t5" cat="N" pos="NN"
      base="budget">budget</tok></cons>
    </cons>
   </cons>
  </cons>
  <cons id="c12" cat="NP" xcat="" head="t6" sem_head="t6"><tok id="t6" cat="N" pos="NN"
   base="yesterday">yesterday</tok></cons>
 </cons>
</cons>
</sentence>
<sentence id="s1" parse_status="success">
<cons id="c20" cat="NP" xcat="COOD" head="c21" sem_head="c21" schema="coord_left">
 <tok id="t20" cat="N" pos="NNS" base="cat">cats</tok>
 <cons id="c21" cat="COOD" xcat="" head="t21" sem_head="t21" schema="coord_right">
  <tok id="t21" cat="CONJ" pos="CC" base="and">and</tok>
  <tok id="t22" cat="N" pos="NNS" base="dog">dogs</tok>
 </cons>
</cons>
</sentence>
<sentence id="s2" parse_status="fragmental parse"><tok id="t30" pos="UH">Hmm</tok></sentence>
<sentence id="s3" parse_status="success">
<cons id="c40" cat="S" head="c42" sem_head="c42" schema="subj_head">
 <cons id="c41" cat="NP" head="t40" sem_head="t40"><tok id="t40" cat="N" pos="NNP"
  pred="noun_arg0">John</tok></cons>
 <cons id="c42" cat="VP" head="t41" sem_head="c43" schema="head_comp">
  <tok id="t41" cat="V" pos="VBZ" pred="aux_arg12" arg1="c41" arg2="c43">has</tok>
  <cons id="c43" cat="VP" head="t42" sem_head="t42"><tok id="t42" cat="V" pos="VBN"
   pred="verb_arg1" arg1="c41">come</tok></cons>
 </cons>
</cons>
</sentence>
"""
# the worked example's subject and object (spec: "committee va0 yesterday new budget va2 approved")
COMMITTEE_ARGS = [Argument(0, 2, "va0"), Argument(3, 6, "va2")]


def words_in_order(order, words=WORDS):
    return " ".join(words[i] for i in order)


def test_head_finalization_of_the_worked_example():
    assert words_in_order(head_final_order(COMMITTEE)) == (
        "the committee yesterday the new budget approved"
    )


def test_pmass_single_masks_the_object_phrase():
    # root 7 > 3 -> VP (5) -> inner VP (4) -> NP "the new budget" (3 <= 7 // 2)
    assert pmass_single(COMMITTEE) == [3, 4, 5]


def test_pmass_plural_follows_the_spec_run_with_two_heads():
    rng = random.Random(4)  # first two draws 0.24 and 0.10: "heads" twice, as in the spec
    assert pmass_plural(COMMITTEE, rng) == [0, 1, 6]


@pytest.mark.parametrize("seed", range(30))
def test_pmass_never_masks_more_than_half(seed):
    masked = pmass_plural(COMMITTEE, random.Random(seed))
    assert 0 < len(masked) <= len(WORDS) // 2
    assert len(set(masked)) == len(masked)


def test_tree_json_round_trip():
    assert from_json(to_json(COMMITTEE)) == COMMITTEE
    with pytest.raises(TextInputError, match="not a tree node"):
        from_json(["x"])


def test_enju_reader_gives_the_same_tree_as_the_worked_example(tmp_path):
    path = tmp_path / "enju.xml"
    path.write_text(ENJU_XML)
    (words, tree, arguments), coordinated, fragment, _ = list(read_enju(path))
    assert words == WORDS
    assert tree == COMMITTEE
    assert arguments == COMMITTEE_ARGS  # from approved's arg1 and arg2
    assert bracketed(tree, words) == (
        "((the committee*) ((approved* (the (new budget*)*))* yesterday)*)"
    )
    # coordination (coord_* schemas) is not reordered, as in Isozaki et al. (2010)
    assert words_in_order(head_final_order(coordinated.tree), coordinated.words) == (
        "cats and dogs"
    )
    assert fragment == (["Hmm"], None, [])


def test_head_finalization_with_isozakis_optional_steps():
    def final(**flags):
        return " ".join(head_finalize(WORDS, COMMITTEE, COMMITTEE_ARGS, **flags))

    assert final() == "the committee yesterday the new budget approved"  # thesis: reorder only
    assert final(drop_articles=True) == "committee yesterday new budget approved"
    assert final(pseudo_particles=True) == (
        "the committee va0 yesterday the new budget va2 approved"
    )
    assert final(drop_articles=True, pseudo_particles=True) == (
        "committee va0 yesterday new budget va2 approved"
    )
    # no tree (a failed parse): the order is kept, the lexical steps still apply
    unparsed = head_finalize(WORDS, None, COMMITTEE_ARGS, drop_articles=True, pseudo_particles=True)
    assert " ".join(unparsed) == "committee va0 approved new budget va2 yesterday"


def test_enju_sentence_head_follows_sem_head_past_the_auxiliary(tmp_path):
    path = tmp_path / "enju.xml"
    path.write_text(ENJU_XML)
    words, tree, arguments = list(read_enju(path))[3]
    # has: aux_arg12 (no particle); come, the semantic head, takes John as va0 (not va1)
    assert arguments == [Argument(0, 1, "va0")]
    assert head_finalize(words, tree, arguments, pseudo_particles=True) == [
        "John",
        "va0",
        "come",
        "has",
    ]


def test_argument_lists_are_checked():
    assert arguments_from_json(None) == []
    assert arguments_from_json([[0, 2, "va1"]]) == [Argument(0, 2, "va1")]
    for bad in ([[0, 2, "wa"]], [[2, 2, "va0"]], [["x"]]):
        with pytest.raises(TextInputError, match="not an argument list"):
            arguments_from_json(bad)


def test_enju_reader_rejects_broken_xml(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<sentence><cons id='c0' head='c9'><tok id='t0'>a</tok>")
    with pytest.raises(TextInputError, match="not well-formed XML"):
        list(read_enju(path))


def parse(text):
    return english.doc_tree(english._nlp()(text))


def test_spacy_substitute_builds_the_enju_tree_of_the_worked_example():
    doc = english._nlp()("the committee approved the new budget yesterday")
    words, tree = english.doc_tree(doc)
    assert words == WORDS
    assert to_json(tree) == to_json(COMMITTEE)
    assert english.doc_arguments(doc) == COMMITTEE_ARGS


@pytest.mark.parametrize(
    ("sentence", "full_method"),
    [
        # in the relative clause "who" is the object (va2) and "I" a subject not of the
        # sentence head (va1); the whole noun phrase is the sentence head's subject (va0)
        (
            "The man who I saw bought a car.",
            "who va2 I va1 saw man va0 car va2 bought .",
        ),
        # the shared subject of coordinated verbs is marked once, after the coordination
        (
            "John and Mary bought a car and sold it.",
            "John and Mary va0 car va2 bought and it va2 sold .",
        ),
    ],
)
def test_pseudo_particles_and_article_dropping_of_known_sentences(sentence, full_method):
    doc = english._nlp()(sentence)
    words, tree = english.doc_tree(doc)
    out = head_finalize(
        words, tree, english.doc_arguments(doc), drop_articles=True, pseudo_particles=True
    )
    assert " ".join(out) == full_method


@pytest.mark.parametrize(
    ("sentence", "head_final"),
    [
        # final punctuation stays last; the object precedes the verb
        (
            "The committee approved the new budget yesterday.",
            "The committee yesterday the new budget approved .",
        ),
        # functional heads (auxiliary, preposition): "three projects of made is", as HPSG
        ("LoveLive is made of three projects.", "LoveLive three projects of made is ."),
        # coordination keeps its order; each conjunct is head-final inside
        ("John and Mary bought a car and sold it.", "John and Mary a car bought and it sold ."),
        # subordinator heads its clause and follows it
        ("I left because he came.", "I he came because left ."),
    ],
)
def test_head_finalization_of_known_sentences(sentence, head_final):
    words, tree = parse(sentence)
    assert words_in_order(head_final_order(tree), words) == head_final


def test_parse_lines_count_words_one_to_one():
    lines = english.parse(["Show all", "You can set up possible filters."])
    for line in lines:
        record = json.loads(line)
        order = head_final_order(from_json(record["tree"]))
        assert sorted(order) == list(range(len(record["words"])))
        assert all(a.end <= len(record["words"]) for a in arguments_from_json(record["args"]))
