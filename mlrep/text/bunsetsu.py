"""KNP-style bunsetsu from GiNZA's: five rules over GiNZA's tags (``preprocess.segment.knp_rules``).

JASS's units are the bunsetsu of KNP (over Juman++ words); the project segments with GiNZA
(`mlrep.text.segment`), whose rule-based bunsetsu follow other conventions. On KNP-annotated
web text GiNZA's boundaries score F1 94.2 (P 95.1, R 93.3) against KNP's; the disagreements
fall into a few classes, and each rule below reproduces KNP's convention for one of them:

* missed boundaries: a case particle に/と before a verb-derived compound particle
  (`compound_particle`), a numeral inside a noun run (`numeral`), an opening bracket
  (`opening_bracket`);
* spurious boundaries: before a non-independent verb after the te-form (`auxiliary_verb`),
  and before 読点/句点 (`punctuation`).

The rules read the Sudachi part of speech (``token.tag_``, e.g. ``助詞-格助詞``) and the
surface form only, so they change the bunsetsu and never the words. A rule takes the tokens of
one line and the token indices where a bunsetsu starts, and returns new starts; `apply` runs
them in `RULES` order (the boundaries they add first, then those they remove). No KNP-annotated
corpus is reachable from the project, so their effect on F1 is measured outside it (about 96 in
the issue's measurement); the tests check each rule on its examples and counter-examples.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Protocol


class Token(Protocol):
    """What the rules read of a spaCy/GiNZA token: its surface and Sudachi part of speech."""

    @property
    def text(self) -> str: ...

    @property
    def tag_(self) -> str: ...


Starts = frozenset[int]
Rule = Callable[[Sequence[Token], Starts], Starts]

CASE_PARTICLE = "助詞-格助詞"
CONJUNCTIVE_PARTICLE = "助詞-接続助詞"
NON_INDEPENDENT_VERB = "動詞-非自立可能"
NUMERAL = "名詞-数詞"
OPENING_BRACKET = "補助記号-括弧開"
PUNCTUATION = ("補助記号-読点", "補助記号-句点")
COMPOUND_PARTICLE_HEADS = ("に", "と")  # に対して, にとって, について, として, という
TE_FORM = ("て", "で")
LATIN = re.compile("[A-Za-zＡ-Ｚａ-ｚ]")  # half- and full-width


def _previous(tokens: Sequence[Token], i: int) -> int | None:
    """The index of the last token before `i` that is not whitespace (None at the start)."""
    for j in range(i - 1, -1, -1):
        if tokens[j].text.strip():
            return j
    return None


def _opens(token: Token) -> bool:
    """An opening bracket, or whitespace between brackets."""
    return token.tag_ == OPENING_BRACKET or not token.text.strip()


def _is_verb(token: Token) -> bool:
    return token.tag_.startswith("動詞")


def _compound_particle_verb(tokens: Sequence[Token], i: int) -> bool:
    """Token `i` is the verb of a compound particle: a verb right after case particle に/と."""
    j = _previous(tokens, i)
    return (
        j is not None
        and _is_verb(tokens[i])
        and tokens[j].tag_ == CASE_PARTICLE
        and tokens[j].text in COMPOUND_PARTICLE_HEADS
    )


def compound_particle(tokens: Sequence[Token], starts: Starts) -> Starts:
    """病気に|対して, 私たちに|とって, 会長と|して: KNP starts a bunsetsu at every verb, so it
    splits a case particle に/と from the verb of the compound particle that follows it; GiNZA
    reads the pair as one fixed particle and keeps it in one bunsetsu. Only に and と: a verb
    after が in ことが出来る, or 対して after を, is left where GiNZA put it."""
    return starts | {i for i in range(len(tokens)) if _compound_particle_verb(tokens, i)}


def numeral(tokens: Sequence[Token], starts: Starts) -> Starts:
    """平成|２１年|５月: KNP starts a bunsetsu at each numeral that follows a noun (a number
    with its counter is a quantity bunsetsu of its own); GiNZA keeps the whole noun run. A
    numeral after a prefix (第２章, 約５年) or another numeral stays where it is, and so does
    one after Latin letters, where Sudachi splits a name (i18next, A4)."""
    added = set()
    for i, token in enumerate(tokens):
        j = _previous(tokens, i)
        if token.tag_ != NUMERAL or j is None or LATIN.search(tokens[j].text):
            continue
        tag = tokens[j].tag_
        if (tag.startswith("名詞") and tag != NUMERAL) or tag.startswith("接尾辞-名詞的"):
            added.add(i)
    return starts | added


def opening_bracket(tokens: Sequence[Token], starts: Starts) -> Starts:
    """東京|（とうきょう）に: in KNP an opening bracket (「『（…) begins the bunsetsu it
    opens, so a bunsetsu starts at each one, and a bunsetsu of opening brackets alone joins
    the one they open: brackets in a row (「『本』」) start one bunsetsu, and so does GiNZA's
    「|行こう。」, where its sentence split falls after the bracket."""
    out = set(starts) | {i for i, token in enumerate(tokens) if token.tag_ == OPENING_BRACKET}
    ordered = [*sorted(out), len(tokens)]
    for start, end in pairwise(ordered):
        if end < len(tokens) and all(_opens(tokens[k]) for k in range(start, end)):
            out.discard(end)
    return frozenset(out)


def auxiliary_verb(tokens: Sequence[Token], starts: Starts) -> Starts:
    """降って|きた → 降ってきた, 持って|きてくれた → 持ってきてくれた: KNP keeps a
    non-independent verb (いる, くる, いく, いただく, くださる, あげる…) after the te-form
    (て/で, also after an auxiliary: 送らせて) in the bunsetsu of the verb it follows; GiNZA
    sometimes opens a new one. Not merged: a te-form that ends a compound particle
    (ゲストとして|続ける) and a verb after an adverbial form (有効に|なる, 食べたく|なる),
    which KNP also splits."""
    removed = set()
    for i in starts:
        te = _previous(tokens, i)
        if te is None or tokens[i].tag_ != NON_INDEPENDENT_VERB:
            continue
        if tokens[te].tag_ != CONJUNCTIVE_PARTICLE or tokens[te].text not in TE_FORM:
            continue
        verb = _previous(tokens, te)
        if verb is not None and not _compound_particle_verb(tokens, verb):
            removed.add(i)
    return starts - removed


def punctuation(tokens: Sequence[Token], starts: Starts) -> Starts:
    """また|、この → また、|この: KNP attaches 読点 and 句点 to the bunsetsu before them;
    where GiNZA starts a bunsetsu at one, the boundary moves past the punctuation (or goes,
    when only punctuation follows). Punctuation that begins the line stays a bunsetsu."""
    out = set(starts)
    ordered = [*sorted(starts), len(tokens)]
    for start, end in pairwise(ordered):
        if start == 0 or tokens[start].tag_ not in PUNCTUATION:
            continue
        out.discard(start)
        rest = [
            k
            for k in range(start, end)
            if tokens[k].tag_ not in PUNCTUATION and tokens[k].text.strip()
        ]
        if rest:
            out.add(rest[0])
    return frozenset(out)


RULES: tuple[Rule, ...] = (
    compound_particle,
    numeral,
    opening_bracket,
    auxiliary_verb,
    punctuation,
)


def apply(tokens: Sequence[Token], starts: Starts, rules: Sequence[Rule] = RULES) -> Starts:
    """The bunsetsu starts after `rules` (a line's first token always starts one)."""
    for rule in rules:
        starts = rule(tokens, starts)
    return (starts | {0}) if tokens else starts


@cache
def version() -> str:
    """Names the rules and a digest of this module, so outputs say which rules made them."""
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return f"KNP-style rules {digest} (mlrep.text.bunsetsu)"
