"""Chapter 6's instruction builders (`mlrep.llm.instruct`): the thesis's templates character
for character on hand-made sentences, the aligned spans, the True/False, Hint, Revise and Mono
rules, bad inputs, and determinism by seed."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from mlrep.llm.instruct import (
    PROMPTS,
    InstructionDataError,
    InstructSettings,
    Language,
    Record,
    SentencePair,
    Side,
    align_instruct,
    build,
    hint_instruct,
    hint_record,
    instructions,
    mix,
    mono_instruct,
    mono_record,
    mt_instruct,
    mt_prompt,
    phrase_pairs,
    read_jsonl,
    read_pairs,
    revise_instruct,
    revise_record,
    strip_terminal,
    token_offsets,
)

EN = Language("en", "English")
AF = Language("af", "Afrikaans")


def _pair(en: str, af: str, links: str, en_raw: str | None = None) -> SentencePair:
    return SentencePair(
        Side.of(EN, en.split(), en_raw),
        Side.of(AF, af.split()),
        frozenset(tuple(map(int, link.split("-"))) for link in links.split()),
    )


# I do n't like the red house / Ek hou nie van die rooi huis nie
HOUSE = _pair(
    "I do n't like the red house",
    "Ek hou nie van die rooi huis nie",
    "0-0 1-1 2-2 3-1 4-4 5-5 6-6 2-7",
    "I don't like the red house",
)
MORNING = _pair("Good morning", "Goeie môre", "0-0 1-1")
DOG = _pair("the dog sleeps", "die hond slaap", "0-0 1-1 2-2")


# ---- templates -----------------------------------------------------------------------------


def test_mt_template_both_directions():
    forward = mt_instruct(EN, AF, "Good morning", "Goeie môre")
    assert forward == Record(
        "Translate from English to Afrikaans.\nEnglish: Good morning.\nAfrikaans:",
        "Goeie môre.",
        "mt",
        "en-af",
    )
    backward = mt_instruct(AF, EN, "Goeie môre", "Good morning")
    assert (
        backward.input == "Translate from Afrikaans to English.\nAfrikaans: Goeie môre.\nEnglish:"
    )
    assert (backward.output, backward.direction) == ("Good morning.", "af-en")


def test_align_template():
    record = align_instruct(
        EN, AF, "the red house", "die rooi huis", "red house", "rooi huis", True
    )
    assert record.input == (
        "Given the following parallel sentence between English and Afrikaans, judge whether "
        "the assertion is True or False.\n"
        "English: the red house.\n"
        "Afrikaans: die rooi huis.\n"
        'Assertion: "red house" can be aligned with "rooi huis" statistically.'
    )
    assert record.output == "True"
    assert align_instruct(EN, AF, "a", "b", "a", "b", False).output == "False"


def test_hint_template_uses_the_en_dash_bullet_and_target_first():
    record = hint_instruct(
        EN, AF, "the red house", "die rooi huis", [("die", "the"), ("rooi huis", "red house")]
    )
    assert record.input == (
        "Use the following alignment hints and translate from English to Afrikaans.\n"
        "Alignments between Afrikaans and English:\n"
        "\u2013 (die, the),\n"
        "\u2013 (rooi huis, red house),\n"
        "English: the red house.\n"
        "Afrikaans:"
    )
    assert (record.output, record.type) == ("die rooi huis.", "hint")


def test_revise_template():
    record = revise_instruct(EN, AF, "the red house", "die hond huis", "hond", "rooi")
    assert record.input == (
        "Given the following translation of Afrikaans from English, output the incorrectly "
        "translated word and correct it.\n"
        "English: the red house.\n"
        "Afrikaans: die hond huis."
    )
    assert record.output == 'The incorrectly translated word is "hond". It should be "rooi".'


def test_mono_templates():
    half = mono_instruct(AF, "die rooi", "huis")
    assert half == Record(
        "Given the context, complete the following sentence: die rooi,", "huis.", "mono-half", "af"
    )
    full = mono_instruct(AF, "", "die rooi huis")
    assert full == Record(
        "Given the context, complete the following sentence:", "die rooi huis.", "mono-full", "af"
    )


def test_prompt_variants_of_table_d2():
    expected = {
        "default": "Translate from English to Afrikaans.\nEnglish: Hi.\nAfrikaans:",
        "p1": "English: Hi.\nAfrikaans:",
        "p2": "Hi.\nAfrikaans:",
        "p3": "Translate to Afrikaans.\nEnglish: Hi.\nAfrikaans:",
        "p4": "Translate from English to Afrikaans.\nHi.\nAfrikaans:",
        "p5": "Translate to Afrikaans.\nHi.\nAfrikaans:",
    }
    assert set(expected) == set(PROMPTS)
    for variant, prompt in expected.items():
        assert mt_prompt(EN, AF, "Hi", variant) == prompt
    assert mt_prompt(EN, AF, "Hi") == mt_instruct(EN, AF, "Hi", "x").input
    with pytest.raises(InstructionDataError, match="p1, p2"):
        mt_prompt(EN, AF, "Hi", "p6")


def test_strip_terminal_removes_the_template_period_once():
    assert strip_terminal(" Goeie môre. ") == "Goeie môre"
    assert strip_terminal("Dit is klaar..") == "Dit is klaar."
    assert strip_terminal("Geen punt") == "Geen punt"


# ---- text and spans ------------------------------------------------------------------------


def test_tokens_are_found_in_the_raw_text_and_spans_show_it():
    assert token_offsets("I don't", ["I", "do", "n't"]) == ((0, 1), (2, 4), (4, 7))
    assert token_offsets("a &amp; b-c", ["a", "&amp;amp;", "b"]) is None
    assert token_offsets("Tom & Jerry", ["Tom", "&amp;", "Jerry"]) == ((0, 3), (4, 5), (6, 11))
    assert token_offsets("well-known", ["well", "@-@", "known"]) == ((0, 4), (4, 5), (5, 10))
    assert token_offsets("a b", ["a", "c"]) is None
    assert token_offsets("a x b", ["a", "b"]) is None  # only spaces may lie between tokens
    side = HOUSE.source
    assert side.text == "I don't like the red house"
    assert side.surface((1, 3)) == "don't"
    assert side.replaced((4, 6), "a") == "I don't like a house"
    # tokens the raw text does not hold: the side shows its tokens, so spans still agree
    fallback = Side.of(EN, ["Hello", "world"], "Bonjour")
    assert fallback.text == "Hello world" and fallback.surface((1, 2)) == "world"
    # a fallback shows Moses-escaped tokens as the text they stand for
    escaped = Side.of(EN, ["Tom", "&amp;", "Jerry"], "Tom and Jerry")
    assert escaped.text == "Tom & Jerry" and escaped.surface((1, 2)) == "&"


def test_phrase_pairs_are_tight_consistent_and_bounded():
    # 1-1 and 3-1: "do" and "like" share "hou", so neither is a pair alone, and 1..3 maps to
    # targets {1, 2, 7} (2-7 via n't), wider than 3
    pairs = phrase_pairs(HOUSE.links, HOUSE.source.tokens, HOUSE.target.tokens, 3)
    assert pairs == [
        ((0, 1), (0, 1)),
        ((4, 5), (4, 5)),
        ((4, 6), (4, 6)),
        ((4, 7), (4, 7)),
        ((5, 6), (5, 6)),
        ((5, 7), (5, 7)),
        ((6, 7), (6, 7)),
    ]
    assert ((4, 7), (4, 7)) not in phrase_pairs(
        HOUSE.links, HOUSE.source.tokens, HOUSE.target.tokens, 2
    )
    # a many-to-one pair: 2 source words on 1 target word; an unaligned edge word is not
    # taken into a span (tight), punctuation-only pairs are left out
    links = {(0, 0), (1, 0), (3, 1)}
    assert phrase_pairs(links, ["New", "York", "x", ","], ["NY", ","], 3) == [((0, 2), (0, 1))]


# ---- instances -----------------------------------------------------------------------------


def _gold_texts(pair: SentencePair) -> set[tuple[str, str]]:
    pairs = phrase_pairs(pair.links, pair.source.tokens, pair.target.tokens, 3)
    return {(pair.source.surface(s), pair.target.surface(t)) for s, t in pairs}


def _assertion(record: Record) -> tuple[str, str]:
    last = record.input.rsplit("\n", 1)[1]
    _, first, _, second, _ = last.split('"')
    return first, second


def test_align_true_are_gold_pairs_and_false_never_are():
    pairs = [HOUSE, DOG, MORNING] * 50
    records, counts = instructions(pairs, ["align"], 7)
    assert counts["align"] == len(records) == 300  # one per pair and direction
    by_direction = {"en-af": pairs, "af-en": [p.reversed() for p in pairs]}
    position = {"en-af": 0, "af-en": 0}
    for record in records:
        pair = by_direction[record.direction][position[record.direction]]
        position[record.direction] += 1
        assert pair.source.text in record.input and pair.target.text in record.input
        aligned = _assertion(record) in _gold_texts(pair)
        assert aligned == (record.output == "True"), record.input
    labels = Counter(r.output for r in records)
    assert 120 <= labels["True"] <= 180  # 50/50 (binomial, n=300: ±3.5 sd)


def test_align_true_share_is_a_setting():
    pairs = [DOG] * 200
    only_true, _ = instructions(pairs, ["align"], 1, InstructSettings(true_share=1.0))
    assert {r.output for r in only_true} == {"True"}
    only_false, _ = instructions(pairs, ["align"], 1, InstructSettings(true_share=0.0))
    assert {r.output for r in only_false} == {"False"}
    twice, counts = instructions([DOG], ["align"], 1, InstructSettings(align_per_pair=2))
    assert counts["align"] == len(twice) == 4  # 2 per pair and direction


def test_align_false_avoids_a_repeated_word_that_would_be_gold_by_text():
    # "the" twice on each side: swapping one "die" for the other is still a true pair
    pair = _pair("the cat and the dog", "die kat en die hond", "0-0 1-1 2-2 3-3 4-4")
    for seed in range(40):
        records, _ = instructions([pair], ["align"], seed, InstructSettings(true_share=0.0))
        for record in records:
            assert _assertion(record) not in _gold_texts(pair) | {
                (b, a) for a, b in _gold_texts(pair)
            }


def test_hint_has_at_most_five_disjoint_gold_pairs_in_target_order():
    words = [f"w{k}" for k in range(9)]
    pair = _pair(
        " ".join(words), " ".join(w.upper() for w in words), " ".join(f"{k}-{k}" for k in range(9))
    )
    for seed in range(10):
        record = hint_record(pair, random.Random(seed), InstructSettings())
        assert record is not None
        hints = [line for line in record.input.split("\n") if line.startswith("\u2013 (")]
        assert len(hints) == 5
        found = [line[3:-2].split(", ") for line in hints]
        assert all(x == y.upper() for x, y in found)  # (target, source) of a gold pair
        positions = [int(x.split()[0][1:]) for x, _ in found]
        assert positions == sorted(positions)
        covered = [w for x, _ in found for w in x.split()]
        assert len(covered) == len(set(covered))  # no two hints overlap
    # fewer gold pairs than the limit: "Goeie môre" as one pair, or its two words
    for seed in range(10):
        few = hint_record(MORNING, random.Random(seed), InstructSettings())
        assert few is not None and few.input.count("\u2013") in (1, 2)


def test_revise_names_the_inserted_word_and_the_original_span():
    pool = [HOUSE.target, DOG.target, MORNING.target]
    for seed in range(30):
        record = revise_record(DOG, pool, 1, random.Random(seed), InstructSettings())
        assert record is not None
        corrupted = record.input.rsplit("\nAfrikaans: ", 1)[1][:-1]
        _, wrong, _, right, _ = record.output.split('"')
        assert wrong in corrupted.split() and wrong != right
        assert wrong in HOUSE.target.tokens + MORNING.target.tokens  # another sentence's word
        assert right in {"die", "hond", "slaap", "die hond", "hond slaap", "die hond slaap"}
        spans = [t for _, t in phrase_pairs(DOG.links, DOG.source.tokens, DOG.target.tokens, 3)]
        assert any(
            DOG.target.surface(t) == right and DOG.target.replaced(t, wrong) == corrupted
            for t in spans
        )
    # a corpus of one sentence has no other sentence to take a word from
    assert revise_record(DOG, [DOG.target], 0, random.Random(0), InstructSettings()) is None


def test_revise_inserts_whole_words_only():
    pool = [HOUSE.source, DOG.reversed().target]
    reversed_dog = DOG.reversed()
    for seed in range(30):
        record = revise_record(reversed_dog, pool, 1, random.Random(seed), InstructSettings())
        assert record is not None
        assert "n't" not in record.output and '"do"' not in record.output


def test_mono_half_splits_at_floor_half():
    five = Side.of(AF, ["een", "twee", "drie", "vier", "vyf"])
    assert mono_record(five, half=True).input.endswith("sentence: een twee,")
    assert mono_record(five, half=True).output == "drie vier vyf."
    four = Side.of(AF, ["een", "twee", "drie", "vier"])
    assert mono_record(four, half=True).output == "drie vier."
    assert mono_record(Side.of(AF, ["een"]), half=True) is None
    assert mono_record(five, half=False).output == "een twee drie vier vyf."
    # the raw text's characters: a prefix ends inside no word
    raw = Side.of(EN, ["I", "do", "n't", "know"], "I don't know")
    assert mono_record(raw, half=True).input.endswith("sentence: I do,")


def test_instructions_counts_directions_and_mono_side():
    records, counts = instructions([DOG, MORNING], ["mt", "mono-half"], 0)
    assert [r.direction for r in records] == ["en-af", "en-af", "af-en", "af-en", "af", "af"]
    assert counts["mt"] == 4 and counts["mono-half"] == 2
    src_mono, _ = instructions([DOG], ["mono-full"], 0, mono="source")
    assert src_mono[0].output == "the dog sleeps." and src_mono[0].direction == "en"
    forward, _ = instructions([DOG], ["mt"], 0, InstructSettings(both_directions=False))
    assert [r.direction for r in forward] == ["en-af"]
    with pytest.raises(InstructionDataError, match="unknown instruction type"):
        instructions([DOG], ["translate"], 0)  # type: ignore[list-item]


# ---- files ---------------------------------------------------------------------------------


def _corpus(tmp_path, links: str = "0-0 1-1 2-2\n0-0 1-1\n"):
    (tmp_path / "en.tok").write_text("the dog sleeps\nGood morning\n", encoding="utf-8")
    (tmp_path / "af.tok").write_text("die hond slaap\nGoeie môre\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("the dog sleeps\nGood morning\n", encoding="utf-8")
    (tmp_path / "links").write_text(links, encoding="utf-8")
    return dict(
        source=EN,
        target=AF,
        source_tokens=tmp_path / "en.tok",
        target_tokens=tmp_path / "af.tok",
        links=tmp_path / "links",
        source_text=tmp_path / "en.txt",
    )


def test_an_out_of_range_link_names_file_line_and_fix(tmp_path):
    inputs = _corpus(tmp_path, "0-0 1-1 2-2\n0-0 1-2\n")
    with pytest.raises(InstructionDataError) as error:
        read_pairs(**inputs)
    message = str(error.value)
    assert f"{tmp_path / 'links'}:2: link 1-2 is out of range" in message
    assert "2 source and 2 target words" in message and "align these token files again" in message


def test_line_count_mismatches_name_both_files(tmp_path):
    inputs = _corpus(tmp_path, "0-0 1-1 2-2\n")
    with pytest.raises(InstructionDataError, match=r"links has 1 lines but .*en.tok has 2"):
        read_pairs(**inputs)
    inputs = _corpus(tmp_path)
    (tmp_path / "en.txt").write_text("the dog sleeps\n", encoding="utf-8")
    with pytest.raises(InstructionDataError, match=r"en.txt has 1 lines but .*en.tok has 2"):
        read_pairs(**inputs)
    # raw text longer than its tokens: preprocessing tokenized its first lines (max_lines)
    (tmp_path / "en.txt").write_text("the dog sleeps\nGood  morning\nnot tokenized\n", "utf-8")
    pairs = read_pairs(**inputs)
    assert [p.source.text for p in pairs] == ["the dog sleeps", "Good  morning"]


def test_build_writes_jsonl_reproducibly_and_mix_shuffles_by_seed(tmp_path):
    inputs = _corpus(tmp_path)
    types = ["mt", "align", "hint", "revise", "mono-full", "mono-half"]
    first = build(tmp_path / "a.jsonl", types, seed=3, **inputs)
    again = build(tmp_path / "b.jsonl", types, seed=3, **inputs)
    assert first == again and first["mt"] == 4
    text = (tmp_path / "a.jsonl").read_text(encoding="utf-8")
    assert text == (tmp_path / "b.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    assert all(set(row) == {"input", "output", "type", "direction"} for row in rows)
    assert {row["type"] for row in rows} == set(types)
    assert not list(tmp_path.glob(".*partial"))  # published atomically
    build(tmp_path / "mt.jsonl", ["mt"], seed=3, **inputs)
    build(tmp_path / "align.jsonl", ["align"], seed=3, **inputs)
    inputs_mixed = [tmp_path / "mt.jsonl", tmp_path / "align.jsonl"]
    assert mix(inputs_mixed, tmp_path / "m1.jsonl", seed=5) == 8
    mix(inputs_mixed, tmp_path / "m2.jsonl", seed=5)
    mix(inputs_mixed, tmp_path / "m3.jsonl", seed=6)
    one, two, three = (read_jsonl(tmp_path / f"m{k}.jsonl") for k in (1, 2, 3))
    assert one == two and one != three and sorted(map(str, one)) == sorted(map(str, three))
    # a set does not change when another type joins the run (its own generator)
    alone = sorted(map(str, read_jsonl(tmp_path / "align.jsonl")))
    assert alone == sorted(str(r) for r in read_jsonl(tmp_path / "a.jsonl") if r.type == "align")


def test_other_seeds_give_other_sets(tmp_path):
    pairs = [HOUSE, DOG] * 20
    a, _ = instructions(pairs, ["align", "revise"], 1)
    b, _ = instructions(pairs, ["align", "revise"], 2)
    assert a != b and len(a) == len(b)


def test_read_jsonl_names_a_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"input": "a", "output": "b", "type": "mt", "direction": "en-af"}\n{"x": 1}\n')
    with pytest.raises(InstructionDataError, match=r"bad.jsonl:2: not an instruction record"):
        read_jsonl(path)


# ---- mlrep ch6 instructions / mix (registered once the chapter is built) -------------------


def _parser():
    import argparse

    from mlrep.chapters.ch6_aligninstruct import cli
    from mlrep.cliutil import common_options

    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command"), common_options())
    return parser


def test_the_chapter_verbs_build_and_mix(tmp_path, capsys):
    inputs = _corpus(tmp_path)
    parser = _parser()

    def run(*words: str) -> int:
        args = parser.parse_args(["ch6", *words])
        return args.func(args)

    files = ["--source-tokens", str(inputs["source_tokens"]), "--target-tokens"]
    files += [str(inputs["target_tokens"]), "--links", str(inputs["links"]), "--seed", "1"]
    pair = ["--source", "en", "--target", "af", *files]
    assert (
        run(
            "instructions",
            "--types",
            "align",
            *pair,
            "--true-share",
            "1",
            "--out",
            str(tmp_path / "align.jsonl"),
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["align"] == 4
    assert {r.output for r in read_jsonl(tmp_path / "align.jsonl")} == {"True"}
    run("instructions", "--types", "mt", *pair, "--out", str(tmp_path / "mt.jsonl"))
    mt = read_jsonl(tmp_path / "mt.jsonl")
    assert mt[0].input.startswith("Translate from English to Afrikaans.")
    sets = [str(tmp_path / "mt.jsonl"), str(tmp_path / "align.jsonl")]
    run("mix", "--inputs", *sets, "--seed", "2", "--out", str(tmp_path / "mixed.jsonl"))
    assert len(read_jsonl(tmp_path / "mixed.jsonl")) == 8
    with pytest.raises(InstructionDataError, match="no Chapter 6 language 'eng'"):
        run(
            "instructions",
            "--types",
            "mt",
            "--source",
            "eng",
            "--target",
            "af",
            *files,
            "--out",
            "x",
        )
