"""`mlrep.nmt.score` beyond the BLEU values: what each direction records (zero-shot or not, its
line count), where each direction's sentences lie in the bootstrap rows, which means exist when
only one kind of direction was decoded, the refusal of a hypothesis file of the wrong length,
and BLEURT's scale and averages, against hand counts and a stand-in scorer."""

from __future__ import annotations

import statistics

import pytest
import sacrebleu

from mlrep.nmt.data import Direction, NmtDataError, directions
from mlrep.nmt.score import bleurt, score
from mlrep.report.metrics import FLOOR
from tests.test_nmt_score import (
    HYPOTHESES,
    LANGUAGES,
    REFERENCES,
    tokenize,
    write_dataset,
    write_hypotheses,
)

ZERO_SHOT = ("de-zh", "zh-de")  # the pairs without English, in `directions`' order
SUPERVISED = ("de-en", "en-de", "en-zh", "zh-en")


@pytest.fixture
def folders(tmp_path):
    write_dataset(tmp_path / "text")
    write_hypotheses(tmp_path / "hyp", HYPOTHESES)
    return tmp_path / "hyp", tmp_path / "text"


def test_each_direction_records_whether_it_is_zero_shot_and_its_lines(folders):
    found = score(*folders, directions(LANGUAGES))["directions"]
    assert sorted(found) == sorted(HYPOTHESES)
    for name, entry in found.items():
        assert entry["zero_shot"] is (name in ZERO_SHOT)
        assert entry["lines"] == len(REFERENCES["en"]) == 4
        assert entry["signature"].startswith("nrefs:1|")
        assert set(entry) == {"bleu", "signature", "zero_shot", "lines"}


def own(found: dict) -> dict:
    """The system's own entries, without their copy-the-source floors."""
    return {k: v for k, v in found.items() if not k.startswith(FLOOR)}


def test_groups_say_where_each_directions_sentences_lie(folders):
    result = score(*folders, directions(LANGUAGES))
    groups = {
        "zst_bleu": [(n, 4) for n in ZERO_SHOT],
        "sup_bleu": [(n, 4) for n in SUPERVISED],
        "from_en_bleu": [(n, 4) for n in SUPERVISED if n.startswith("en-")],
        "to_en_bleu": [(n, 4) for n in SUPERVISED if n.endswith("-en")],
    }
    # the floors' sentences lie where the system's do
    assert result["groups"] == {**groups, **{FLOOR + k: v for k, v in groups.items()}}
    assert [len(result["bleu_stats"][k]) for k in ("zst_bleu", "sup_bleu")] == [8, 16]


def test_supervised_only_has_no_zero_shot_mean_rows_or_groups(folders):
    wanted = [Direction.parse(n) for n in ("en-de", "zh-en")]
    result = score(*folders, wanted)
    expected = {
        n: sacrebleu.corpus_bleu(
            HYPOTHESES[n], [REFERENCES[n[-2:]]], tokenize=tokenize(n[-2:])
        ).score
        for n in ("en-de", "zh-en")
    }
    assert own(result["metrics"]) == pytest.approx(
        {
            "bleu_en-de": expected["en-de"],
            "bleu_zh-en": expected["zh-en"],
            "sup_bleu": statistics.fmean(expected.values()),
            "from_en_bleu": expected["en-de"],
            "to_en_bleu": expected["zh-en"],
        },
        abs=1e-9,
    )
    assert list(own(result["bleu_stats"])) == ["sup_bleu", "from_en_bleu", "to_en_bleu"]
    assert own(result["groups"]) == {
        "sup_bleu": [("en-de", 4), ("zh-en", 4)],
        "from_en_bleu": [("en-de", 4)],
        "to_en_bleu": [("zh-en", 4)],
    }


def test_zero_shot_only_has_no_supervised_mean(folders):
    result = score(*folders, [Direction.parse("zh-de")])
    assert set(own(result["metrics"])) == {"bleu_zh-de", "zst_bleu"}
    assert result["metrics"]["zst_bleu"] == result["metrics"]["bleu_zh-de"]
    assert list(own(result["groups"])) == ["zst_bleu"]


def test_a_hypothesis_file_of_the_wrong_length_is_refused(folders):
    hyp, text = folders
    (hyp / "en-de.hyp").write_text("eins\nzwei\ndrei\n", encoding="utf-8")
    with pytest.raises(NmtDataError) as raised:
        score(hyp, text, [Direction.parse("en-de")])
    assert str(raised.value) == (
        f"{hyp / 'en-de.hyp'}: 3 hypotheses for 4 references; decode again"
    )


class LengthRatio:
    """A stand-in for BLEURT: candidate characters over reference characters, which tells
    the two arguments apart; it records each call's batch size."""

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def score(self, references, candidates, batch_size=64):
        self.batch_sizes.append(batch_size)
        return [len(c) / len(r) for r, c in zip(references, candidates, strict=True)]


def test_bleurt_is_100_times_the_mean_sentence_score_per_direction(folders):
    scorer = LengthRatio()
    wanted = directions(LANGUAGES)
    result = bleurt(*folders, wanted, scorer, 7)
    expected = {
        d.name: 100
        * statistics.fmean(
            len(h) / len(r) for h, r in zip(HYPOTHESES[d.name], REFERENCES[d.tgt], strict=True)
        )
        for d in wanted
    }
    assert scorer.batch_sizes == [7] * 6
    for name, value in expected.items():
        assert result["directions"][name] == pytest.approx(
            {"bleurt": value, "zero_shot": name in ZERO_SHOT, "lines": 4}
        )
        assert result["metrics"][f"bleurt_{name}"] == pytest.approx(value)
    assert result["metrics"]["zst_bleurt"] == pytest.approx(
        statistics.fmean(expected[n] for n in ZERO_SHOT)
    )
    assert result["metrics"]["sup_bleurt"] == pytest.approx(
        statistics.fmean(expected[n] for n in SUPERVISED)
    )
    assert result["metrics"]["to_en_bleurt"] == pytest.approx(
        statistics.fmean(expected[n] for n in ("de-en", "zh-en"))
    )
    assert len(result["metrics"]) == 10  # 6 directions, zst, sup, from_en, to_en


def test_a_direction_not_decoded_is_named_as_a_data_error(folders):
    hyp, text = folders
    (hyp / "zh-de.hyp").unlink()
    with pytest.raises(NmtDataError, match=r"zh-de\.hyp: file not found"):
        score(hyp, text, directions(LANGUAGES))
