"""Per-direction scores → the columns of Chapter 6's tables, as pure functions.

The thesis reports, per metric (BLEU, chrF++, COMET), means of corpus-level scores over
directions, never pooled corpora:

* BLOOMZ+24 (Tables 6.2-6.5, D.3, D.5-D.7): per test set (OPUS-100, Flores-200) the mean over
  the languages of en→xx and of xx→en;
* BLOOMZ+3 (Tables 6.6, D.1, D.4, D.8-D.12): the 30 zero-shot directions among the six
  languages (``overall``) and their groups by BLOOMZ's pre-training coverage (seen = ar, fr,
  zh; unseen = de, nl, ru: ``seen-seen``, ``seen-unseen``, ``unseen-seen``,
  ``unseen-unseen``), the 12 supervised ones (``en-xx``, ``xx-en``) and theirs (``en-seen``,
  ``en-unseen``, ``seen-en``, ``unseen-en``). A group's value is the mean over its
  directions (Table D.8's group rows are, within the rounding of its per-direction rows).

Metric names: ``<test>_<metric>_<src>-<tgt>`` per direction, ``<test>_<metric>_<group>`` per
group (the group as the tables' labels slug it: "en→xx" is ``en-xx``), and ``comet_avg``, the
mean of a BLOOMZ+24 run's four COMET columns that Figure 6.1 plots (the thesis does not say
which average the figure shows: a project decision).
"""

from __future__ import annotations

from collections.abc import Mapping

from mlrep.chapters.ch6_aligninstruct.runs import B3, B24, PIVOT_LANGUAGE, SEEN, UNSEEN
from mlrep.errors import MlrepError

METRICS = ("bleu", "chrf", "comet")  # chrf: chrF++ (sacreBLEU chrF, word order 2)
TESTS = ("opus", "flores")
ENGLISH_GROUPS = ("en-xx", "xx-en")
ZERO_SHOT_GROUPS = ("overall", "seen-seen", "seen-unseen", "unseen-seen", "unseen-unseen")
SUPERVISED_GROUPS = ("en-seen", "en-unseen", "seen-en", "unseen-en")
COMET_AVG = "comet_avg"

Direction = tuple[str, str]


class ScoresError(MlrepError):
    """Scores that do not fit Chapter 6's groups (a language of no group, a missing set)."""


def _coverage(lang: str) -> str:
    if lang in SEEN:
        return "seen"
    if lang in UNSEEN:
        return "unseen"
    raise ScoresError(
        f"{lang!r} is in neither BLOOMZ+3 group (seen {', '.join(SEEN)}; unseen "
        f"{', '.join(UNSEEN)}): score only the six languages' directions"
    )


def groups_of(direction: Direction, setting: str) -> tuple[str, ...]:
    """The groups whose mean a direction enters."""
    src, tgt = direction
    if src == tgt:
        raise ScoresError(f"{src}-{tgt} is no translation direction")
    supervised = "en-xx" if src == PIVOT_LANGUAGE else "xx-en" if tgt == PIVOT_LANGUAGE else None
    if setting == B24:
        if supervised is None:
            raise ScoresError(f"{src}-{tgt}: BLOOMZ+24 has English-centric directions only")
        return (supervised,)
    if setting != B3:
        raise ScoresError(f"no Chapter 6 setting {setting!r}; settings: {B24}, {B3}")
    if supervised == "en-xx":
        return supervised, f"en-{_coverage(tgt)}"
    if supervised == "xx-en":
        return supervised, f"{_coverage(src)}-en"
    return "overall", f"{_coverage(src)}-{_coverage(tgt)}"


def group_means(scores: Mapping[Direction, float], setting: str) -> dict[str, float]:
    """The mean of each group that has directions in `scores` (one test set, one metric)."""
    members: dict[str, list[float]] = {}
    for direction, value in scores.items():
        for group in groups_of(direction, setting):
            members.setdefault(group, []).append(value)
    return {group: sum(values) / len(values) for group, values in members.items()}


def run_metrics(
    scores: Mapping[str, Mapping[str, Mapping[Direction, float]]], setting: str
) -> dict[str, float]:
    """A run's metrics from its per-direction scores, ``scores[test][metric][(src, tgt)]``:
    every direction and every group under their names, and, for a BLOOMZ+24 run scored on both
    test sets, ``comet_avg``."""
    out: dict[str, float] = {}
    for test, by_metric in scores.items():
        if test not in TESTS:
            raise ScoresError(f"no Chapter 6 test set {test!r}; test sets: {', '.join(TESTS)}")
        for metric, by_direction in by_metric.items():
            if metric not in METRICS:
                raise ScoresError(f"no Chapter 6 metric {metric!r}; metrics: {', '.join(METRICS)}")
            for (src, tgt), value in by_direction.items():
                out[f"{test}_{metric}_{src}-{tgt}"] = value
            for group, value in group_means(by_direction, setting).items():
                out[f"{test}_{metric}_{group}"] = value
    columns = [f"{test}_comet_{group}" for test in TESTS for group in ENGLISH_GROUPS]
    if setting == B24 and all(name in out for name in columns):
        out[COMET_AVG] = sum(out[name] for name in columns) / len(columns)
    return out
