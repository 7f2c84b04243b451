"""KNP-style bunsetsu rules over real GiNZA analyses: each rule on its examples (the KNP
convention it reproduces) and counter-examples (what it must leave alone), and each rule
needed: without it, an example of its class comes out as GiNZA had it."""

from __future__ import annotations

from itertools import pairwise

import pytest

from mlrep.text import bunsetsu, segment

# rule -> (sentence, KNP-style bunsetsu after all the rules)
EXAMPLES = {
    bunsetsu.compound_particle: [
        ("病気に対して薬を飲む。", ["病気に", "対して", "薬を", "飲む。"]),
        ("私たちにとって大切だ。", ["私たちに", "とって", "大切だ。"]),
        ("会長として発言した。", ["会長と", "して", "発言した。"]),
    ],
    bunsetsu.numeral: [
        ("平成２１年５月に開催された。", ["平成", "２１年", "５月に", "開催された。"]),
    ],
    bunsetsu.opening_bracket: [
        ("東京（とうきょう）に行く。", ["東京", "（とうきょう）に", "行く。"]),
        # GiNZA's sentence split leaves 「 alone: it joins the bunsetsu it opens
        ("彼は言った。「行こう。」", ["彼は", "言った。", "「行こう。」"]),
    ],
    bunsetsu.auxiliary_verb: [
        ("雨が降ってきた。", ["雨が", "降ってきた。"]),
        ("持ってきてくれた。", ["持ってきてくれた。"]),
    ],
    bunsetsu.punctuation: [
        ("また、この機能を使う。", ["また、", "この", "機能を", "使う。"]),
    ],
}
COUNTER_EXAMPLES = {
    bunsetsu.compound_particle: [
        # が + 出来る is no compound particle: one bunsetsu, as in KNP
        ("それをすることが出来る。", ["それを", "することが出来る。"]),
        # 対して after を is not split off (only に/と head a compound particle)
        ("彼を対して、見た。", ["彼を対して、", "見た。"]),
    ],
    bunsetsu.numeral: [
        ("３つの案がある。", ["３つの", "案が", "ある。"]),  # a number alone
        ("第２章を読む。", ["第２章を", "読む。"]),  # after a prefix
        ("約５年かかった。", ["約５年", "かかった。"]),
        ("１０万円を払う。", ["１０万円を", "払う。"]),
        ("A4用紙とi18nextを使う。", ["A4", "用紙と", "i18nextを", "使う。"]),  # Latin names
    ],
    bunsetsu.opening_bracket: [
        ("「はい」と答えた。", ["「はい」と", "答えた。"]),  # at the sentence start
        ("これは「『本』」だ。", ["これは", "「『本』」だ。"]),  # brackets in a row
    ],
    bunsetsu.auxiliary_verb: [
        ("行っていただきます。", ["行っていただきます。"]),  # GiNZA's one bunsetsu stays
        ("行かなくなる。", ["行かなく", "なる。"]),  # after an adverbial form: KNP splits
        ("有効になっています。", ["有効に", "なっています。"]),
        ("ゲストとして続ける", ["ゲストと", "して", "続ける"]),  # a compound particle's て
    ],
    bunsetsu.punctuation: [
        ("。はい", ["。", "はい"]),  # punctuation that begins the line stays
        ("はい、そうです。", ["はい、", "そうです。"]),
    ],
}
CASES = [
    (rule, *case)
    for table in (EXAMPLES, COUNTER_EXAMPLES)
    for rule in table
    for case in table[rule]
]


@pytest.fixture(scope="module")
def analysed():
    """sentence -> (GiNZA tokens, GiNZA's bunsetsu starts): one GiNZA pass for the module."""
    import ginza

    sentences = [sentence for _, sentence, _ in CASES]
    docs = segment._ginza().pipe(sentences)
    return {
        sentence: (list(doc), frozenset(span.start for span in ginza.bunsetu_spans(doc)))
        for sentence, doc in zip(sentences, docs, strict=True)
    }


def texts(tokens, starts) -> list[str]:
    edges = [*sorted(starts), len(tokens)]
    return ["".join(t.text.strip() for t in tokens[a:b]) for a, b in pairwise(edges)]


@pytest.mark.parametrize(
    ("rule", "sentence", "expected"), CASES, ids=lambda v: getattr(v, "__name__", None)
)
def test_rules_give_knp_style_bunsetsu(analysed, rule, sentence, expected):
    tokens, starts = analysed[sentence]
    assert texts(tokens, bunsetsu.apply(tokens, starts)) == expected
    assert 0 in rule(tokens, starts)  # each rule alone keeps the line's first bunsetsu


@pytest.mark.parametrize(
    ("rule", "sentence"),
    [(rule, sentence) for rule in EXAMPLES for sentence, _ in EXAMPLES[rule]],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_each_example_needs_its_rule(analysed, rule, sentence):
    """Without the rule its example is segmented otherwise (GiNZA's way): each rule does work."""
    tokens, starts = analysed[sentence]
    others = [r for r in bunsetsu.RULES if r is not rule]
    assert bunsetsu.apply(tokens, starts, others) != bunsetsu.apply(tokens, starts)


def test_japanese_applies_the_rules_to_bunsetsu_only():
    """The setting changes the bunsetsu, not the words, and the spans still tile the words."""
    line = "平成２１年５月に病気に対して薬を飲む。"
    (plain,), (ruled,) = segment.japanese([line], knp_rules=False), segment.japanese([line])
    assert ruled.words == plain.words
    assert len(ruled.bunsetsu) > len(plain.bunsetsu)
    edges = [0] + [end for _, end in ruled.bunsetsu]
    assert [start for start, _ in ruled.bunsetsu] == edges[:-1]
    assert edges[-1] == len(ruled.words)


def test_the_tool_names_the_rules_version():
    """Bunsetsu made with the rules say so, with a digest of the rules' module, so a file
    made by other rules names other ones; the words' tool (WAT BLEU) does not change."""
    plain, ruled = segment.tool_version("ja"), segment.tool_version("ja", knp_rules=True)
    assert ruled == f"{plain} + {bunsetsu.version()}"
    assert segment.tool_version("zh", knp_rules=True) == segment.tool_version("zh")
