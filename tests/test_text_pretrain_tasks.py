"""Chapter 4's pre-training tasks, one property at a time, on many seeded draws."""

import math
import random
from collections import Counter

import pytest

from mlrep.text import pretrain_tasks as tasks
from mlrep.text.pretrain_tasks import MASK, Masked, Pair, TaskSettings
from mlrep.text.tree import pmass_plural
from tests.test_text_tree import COMMITTEE, WORDS

SETTINGS = TaskSettings()
PURE = TaskSettings(mask_token_prob=1.0, random_word_prob=0.0)  # every masked word is [M]
VOCABULARY = [f"w{i}" for i in range(50)]
# the worked example: 「ラブライブ！は」「３つの」「プロジェクトから」「なる。」
JA = ["ラブライブ", "！", "は", "３", "つ", "の", "プロジェクト", "から", "なる", "。"]
JA_BUNSETSU = [(0, 3), (3, 6), (6, 8), (8, 10)]


def chosen(pair: Pair) -> list[int]:
    """The words a masking pair asks the decoder for: the target's unmasked ones."""
    return [item for item in pair.target if isinstance(item, int)]


def check_inverse(pair: Pair, n_words: int) -> None:
    """Source keeps every unchosen word; the target masks exactly the unchosen words."""
    picked = set(chosen(pair))
    assert len(pair.source) == len(pair.target) == n_words
    for index, (src, tgt) in enumerate(zip(pair.source, pair.target, strict=True)):
        if index in picked:
            assert tgt == index
        else:
            assert src == index and tgt == Masked(index)


def bunsetsu_of(rng: random.Random, n: int) -> list[tuple[int, int]]:
    spans, start = [], 0
    for _ in range(n):
        end = start + rng.randint(1, 4)
        spans.append((start, end))
        start = end
    return spans


def test_mass_masks_one_contiguous_span_of_half_the_words():
    rng = random.Random(0)
    starts = Counter()
    for n_words in range(1, 40):
        for _ in range(200 if n_words == 20 else 20):
            pair = tasks.mass(n_words, rng, VOCABULARY, SETTINGS)
            check_inverse(pair, n_words)
            span = chosen(pair)
            assert len(span) == max(1, n_words // 2)
            assert span == list(range(span[0], span[0] + len(span)))
            if n_words == 20:
                starts[span[0]] += 1
    assert set(starts) == set(range(11))  # every start of a 10-word span in 20 words


@pytest.mark.parametrize(
    "settings, shares",
    [
        (SETTINGS, (0.8, 0.1, 0.1)),  # MASS's 80/10/10
        (TaskSettings(mask_token_prob=0.6, random_word_prob=0.3), (0.6, 0.3, 0.1)),
    ],
)
def test_masked_words_are_replaced_by_mask_random_or_kept(settings, shares):
    rng = random.Random(1)
    kinds = Counter()
    for _ in range(1000):
        pair = tasks.mass(40, rng, VOCABULARY, settings)
        for index in chosen(pair):
            item = pair.source[index]
            kinds["mask" if item == Masked(index) else "kept" if item == index else "random"] += 1
            if isinstance(item, str):
                assert item in VOCABULARY
    total = sum(kinds.values())
    assert total == 20_000
    for kind, share in zip(("mask", "random", "kept"), shares, strict=True):
        assert abs(kinds[kind] / total - share) < 0.015, kind


def test_multimass_masks_half_the_words_anywhere():
    rng = random.Random(2)
    contiguous = 0
    for _ in range(200):
        pair = tasks.multimass(20, rng, VOCABULARY, SETTINGS)
        check_inverse(pair, 20)
        picked = chosen(pair)
        assert len(picked) == 10
        contiguous += picked == list(range(picked[0], picked[0] + 10))
    assert contiguous < 5  # scattered, unlike MASS


def test_bmass_masks_half_the_bunsetsu_wholly():
    rng = random.Random(3)
    for n_bunsetsu in range(1, 12):
        for _ in range(20):
            spans = bunsetsu_of(rng, n_bunsetsu)
            pair = tasks.bmass(spans, rng, VOCABULARY, SETTINGS)
            check_inverse(pair, spans[-1][1])
            picked = set(chosen(pair))
            whole = [s for s in spans if set(range(*s)) <= picked]
            assert picked == {i for s in whole for i in range(*s)}, "a bunsetsu masked in part"
            assert len(whole) == max(1, n_bunsetsu // 2)


def test_bmass_on_the_worked_example():
    pair = tasks.bmass(JA_BUNSETSU, random.Random(0), VOCABULARY, PURE)
    source, target = tasks.render(pair, JA, "ja", lambda w: [w])
    masked = {i for i, item in enumerate(pair.source) if isinstance(item, Masked)}
    assert len(masked) == len(chosen(pair))
    assert source.split()[2:] == [MASK if i in masked else w for i, w in enumerate(JA)]
    assert target.split() == [w if i in masked else MASK for i, w in enumerate(JA)]


def test_brss_on_the_worked_example():
    pair = tasks.brss(JA, JA_BUNSETSU, forward=True)
    source, target = tasks.render(pair, JA, "ja", lambda w: [w])
    assert source == "[BRSS] [Ja] ラブライブ ！ は なる プロジェクト から ３ つ の 。"
    assert target == " ".join(JA)
    reverse = tasks.brss(JA, JA_BUNSETSU, forward=False)
    assert (reverse.source, reverse.target) == (pair.target, pair.source)


def signal(words, span):
    return any(tasks.is_punctuation(w) or w == "は" for w in words[span[0] : span[1]])


def test_brss_reverses_bunsetsu_between_signal_words():
    for seed in range(300):
        check_brss(random.Random(seed))


def check_brss(rng: random.Random) -> None:
    """A permutation of whole bunsetsu: sentence-final punctuation stays last, each bunsetsu
    holding は or punctuation keeps its place, the runs between them are reversed."""
    spans = bunsetsu_of(rng, rng.randint(1, 9))
    words = [rng.choice(["x", "y", "は", "、", "の"]) for _ in range(spans[-1][1])]
    if rng.random() < 0.7:
        words[-1] = "。"
    order = tasks.bunsetsu_order(words, spans)
    assert sorted(order) == list(range(len(words)))
    final = len(words)
    while final and tasks.is_punctuation(words[final - 1]):
        final -= 1
    assert order[final:] == list(range(final, len(words)))
    units = [(s, min(e, final)) for s, e in spans if s < final]
    # the output cut into the (trimmed) bunsetsu, each kept whole and in its inner order
    placed, at = [], 0
    while at < final:
        unit = next(u for u in units if u[0] == order[at])
        assert order[at : at + unit[1] - unit[0]] == list(range(*unit))
        placed.append(unit)
        at += unit[1] - unit[0]
    expected, run = [], []
    for unit in units:
        if signal(words, unit):
            expected += [*run[::-1], unit]
            run = []
        else:
            run.append(unit)
    assert placed == expected + run[::-1]


def test_hfss_is_the_head_final_order_to_the_original():
    pair = tasks.hfss(COMMITTEE)
    source, target = tasks.render(pair, WORDS, "en", lambda w: [w])
    assert source == "[BRSS] [En] the committee yesterday the new budget approved"
    assert target == " ".join(WORDS)


def test_pmass_single_on_the_worked_example():
    pair = tasks.pmass(COMMITTEE, True, random.Random(0), VOCABULARY, PURE)
    source, target = tasks.render(pair, WORDS, "en", lambda w: [w])
    assert source == "[MASS] [En] the committee approved [M] [M] [M] yesterday"
    assert target == "[M] [M] [M] the new budget [M]"


def test_pmass_plural_masks_algorithm_2s_phrases():
    seen = set()
    for seed in range(50):
        pair = tasks.pmass(COMMITTEE, False, random.Random(seed), VOCABULARY, SETTINGS)
        check_inverse(pair, len(WORDS))
        assert chosen(pair) == pmass_plural(COMMITTEE, random.Random(seed))
        assert 1 <= len(chosen(pair)) <= len(WORDS) // 2
        seen.add(tuple(chosen(pair)))
    assert (0, 1, 6) in seen  # the worked run: "the committee" and "yesterday"


def test_deshuffling_permutes_uniformly():
    rng = random.Random(4)
    seen = Counter()
    for _ in range(600):
        pair = tasks.deshuffle(3, rng)
        assert sorted(pair.source) == [0, 1, 2] and pair.target == (0, 1, 2)
        seen[pair.source] += 1
    assert len(seen) == 6 and min(seen.values()) > 70


def bart_spans(pair: Pair) -> tuple[int, int]:
    """(spans, masked words) of a BART source: its [M]s, and the words it lacks."""
    kept = [item for item in pair.source if isinstance(item, int)]
    assert kept == sorted(kept)
    return sum(1 for item in pair.source if item == MASK), len(pair.target) - len(kept)


def test_bart_infills_poisson_spans_of_30_percent():
    rng = random.Random(5)
    spans = 0
    for n_words in range(1, 60):
        pair = tasks.bart(n_words, rng, SETTINGS)
        assert pair.target == tuple(range(n_words))
        count, masked = bart_spans(pair)
        assert masked == math.ceil(0.3 * n_words)
        assert count >= 1
    for _ in range(500):
        count, masked = bart_spans(tasks.bart(100, rng, SETTINGS))
        spans += count
    # 30 words in spans of mean 3 (the last one cut to fit, zero-length ones inserting)
    assert 10 < spans / 500 < 12.5


def test_poisson_draws_have_their_mean():
    rng = random.Random(6)
    draws = [tasks.poisson(rng, 3.0) for _ in range(20_000)]
    assert abs(sum(draws) / len(draws) - 3.0) < 0.05
    assert draws.count(0) / len(draws) == pytest.approx(math.exp(-3), abs=0.01)


def three_pieces(word: str) -> list[str]:
    return [f"{word}@@", f"{word}@@", word]


@pytest.mark.parametrize("make", ["mass", "multimass", "bmass"])
def test_a_masked_word_is_one_mask_per_piece(make):
    rng = random.Random(7)
    words = [f"v{i}" for i in range(12)]
    spans = [(0, 3), (3, 4), (4, 8), (8, 12)]
    for _ in range(50):
        if make == "bmass":
            pair = tasks.bmass(spans, rng, VOCABULARY, SETTINGS)
        else:
            pair = getattr(tasks, make)(len(words), rng, VOCABULARY, SETTINGS)
        source, target = tasks.render(pair, words, "ja", three_pieces)
        masked = sum(isinstance(item, Masked) for item in pair.source)
        assert source.split().count(MASK) == 3 * masked
        assert target.split().count(MASK) == 3 * (len(words) - len(chosen(pair)))
        assert len(target.split()) == 3 * len(words)


def test_bart_spans_are_one_mask_whatever_their_pieces():
    pair = tasks.bart(30, random.Random(8), SETTINGS)
    words = [f"v{i}" for i in range(30)]
    source, target = tasks.render(pair, words, "en", three_pieces)
    assert source.split().count(MASK) == bart_spans(pair)[0]
    assert target.split() == [p for w in words for p in three_pieces(w)]


@pytest.mark.parametrize(
    "task, tag",
    [
        *[(task, "[MASS]") for task in ("mass", "bmass", "pmass.s", "pmass.p", "multimass")],
        *[(task, "[BRSS]") for task in ("brss.f", "brss.r", "hfss", "deshuffle")],
        ("bart", "[BART]"),
    ],
)
def test_sources_lead_with_the_group_tag_and_the_language_tag(task, tag):
    assert tasks.TASK_TAGS[task] == tag
    pair = Pair(task, (0, 1), (0, 1))
    for lang, lang_tag in (("ja", "[Ja]"), ("en", "[En]"), ("zh", "[Zh]"), ("ko", "[Ko]")):
        source, target = tasks.render(pair, ["a", "b"], lang, lambda w: [w])
        assert source == f"{tag} {lang_tag} a b"
        assert target == "a b"  # no tags on the target


def test_fine_tuning_sources_carry_only_the_target_language_tag():
    assert tasks.finetune_source("今日 は 晴れ", "en") == "[En] 今日 は 晴れ"
    assert tasks.finetune_source("it is sunny", "ja") == "[Ja] it is sunny"


def test_composites_are_the_thesis_objectives():
    assert tasks.expand_tasks(["jass"]) == ["bmass", "brss.f"]
    assert tasks.expand_tasks(["enss"]) == ["mass", "hfss"]  # MASS + HFSS, as run
    assert tasks.expand_tasks(["mass", "jass", "bmass"]) == ["mass", "bmass", "brss.f"]
    with pytest.raises(tasks.TaskError, match="unknown pre-training task 'hfs'"):
        tasks.expand_tasks(["hfs"])


def test_settings_refuse_replacements_over_one():
    with pytest.raises(tasks.TaskError, match="exceed 1"):
        TaskSettings(mask_token_prob=0.95, random_word_prob=0.1)


def test_a_seed_gives_the_same_pairs():
    def draw(seed):
        rng = random.Random(seed)
        return [tasks.mass(15, rng, VOCABULARY, SETTINGS) for _ in range(10)]

    assert draw(9) == draw(9)
    assert draw(9) != draw(10)
