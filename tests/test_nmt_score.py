"""`mlrep nmt score` against sacrebleu's own corpus BLEU on hand-made hypotheses (Chinese
targets with sacrebleu's ``zh`` tokenizer, the others with ``13a``), and one Table 8.2 cell
traced from a run's hypotheses through ``nmt score``, ``nmt metrics`` and ``report build``."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
import sacrebleu

from mlrep.cli import main
from mlrep.nmt.data import Direction, directions
from mlrep.nmt.score import score
from mlrep.paths import Paths
from tests.report_helpers import build_report

LANGUAGES = ["de", "en", "zh"]
REFERENCES = {
    "en": [
        "the cat sat on the mat near the door",
        "we will meet again tomorrow at noon in the park",
        "she reads a long book every evening before bed",
        "the weather is cold and rainy today in the city",
    ],
    "de": [
        "die Katze saß auf der Matte neben der Tür",
        "wir treffen uns morgen um zwölf Uhr wieder im Park",
        "sie liest jeden Abend vor dem Schlafen ein langes Buch",
        "das Wetter ist heute in der Stadt kalt und regnerisch",
    ],
    "zh": [
        "猫坐在门边的垫子上。",
        "我们明天中午在公园再见面。",
        "她每天晚上睡觉前读一本很长的书。",
        "今天城里的天气又冷又多雨。",
    ],
}
# Partial translations, different per source so that directions differ.
HYPOTHESES = {
    "en-de": [
        "die Katze saß auf der Matte",
        "wir treffen uns morgen im Park wieder",
        "sie liest jeden Abend ein Buch",
        "das Wetter ist heute kalt",
    ],
    "zh-de": [
        "die Katze sitzt neben der Tür",
        "wir sehen uns morgen im Park",
        "sie liest ein langes Buch",
        "das Wetter ist kalt und regnerisch",
    ],
    "de-en": [
        "the cat sat on the mat",
        "we meet tomorrow at noon",
        "she reads a book every evening",
        "the weather is cold today",
    ],
    "zh-en": [
        "a cat sat near the door",
        "we will meet in the park",
        "she reads a long book",
        "today the weather is cold",
    ],
    "en-zh": ["猫坐在垫子上。", "我们明天在公园见面。", "她每天晚上读书。", "今天天气很冷。"],
    "de-zh": ["猫在门边。", "我们中午再见。", "她睡觉前读一本书。", "城里的天气又冷又多雨。"],
}
SYSTEM = "postnorm-s-enc-t-dec-w"


def tokenize(lang: str) -> str:
    """The thesis's protocol, written out here rather than imported: zh for Chinese."""
    return {"zh": "zh"}.get(lang, "13a")


def expected_bleu(name: str, hypotheses: dict[str, list[str]]) -> float:
    d = Direction.parse(name)
    refs = REFERENCES[d.tgt]
    return sacrebleu.corpus_bleu(hypotheses[name], [refs], tokenize=tokenize(d.tgt)).score


def write_dataset(text: Path) -> None:
    """A prepared dataset's text folder: stats.json and every test direction's two sides."""
    text.mkdir(parents=True)
    (text / "stats.json").write_text(json.dumps({"languages": LANGUAGES}))
    for d in directions(LANGUAGES):
        for lang in (d.src, d.tgt):
            lines = "".join(f"{line}\n" for line in REFERENCES[lang])
            (text / f"test.{d.name}.{lang}").write_text(lines, encoding="utf-8")


def write_hypotheses(folder: Path, hypotheses: dict[str, list[str]]) -> None:
    folder.mkdir(parents=True)
    for name, lines in hypotheses.items():
        (folder / f"{name}.hyp").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def test_bleu_of_each_direction_is_sacrebleus_corpus_bleu(tmp_path):
    write_dataset(tmp_path / "text")
    write_hypotheses(tmp_path / "hyp", HYPOTHESES)
    result = score(tmp_path / "hyp", tmp_path / "text", directions(LANGUAGES))
    metrics = result["metrics"]
    for name in HYPOTHESES:
        assert metrics[f"bleu_{name}"] == pytest.approx(expected_bleu(name, HYPOTHESES), abs=1e-9)
        tok = tokenize(Direction.parse(name).tgt)
        assert f"tok:{tok}" in result["directions"][name]["signature"]
    zero_shot = [expected_bleu(n, HYPOTHESES) for n in ("zh-de", "de-zh")]
    supervised = [expected_bleu(n, HYPOTHESES) for n in ("en-de", "de-en", "zh-en", "en-zh")]
    assert metrics["zst_bleu"] == pytest.approx(statistics.fmean(zero_shot), abs=1e-9)
    assert metrics["sup_bleu"] == pytest.approx(statistics.fmean(supervised), abs=1e-9)


def test_each_metric_keeps_the_signatures_that_scored_it(tmp_path):
    """A direction's metric has its own signature; a mean has its directions' distinct ones
    (zh-de by 13a, de-zh by zh), and a floor those of its copied sources' directions."""
    write_dataset(tmp_path / "text")
    write_hypotheses(tmp_path / "hyp", HYPOTHESES)
    result = score(tmp_path / "hyp", tmp_path / "text", directions(LANGUAGES))
    signatures, per_direction = result["signatures"], result["directions"]
    assert set(signatures) == set(result["metrics"])
    for name in HYPOTHESES:
        assert signatures[f"bleu_{name}"] == per_direction[name]["signature"]
        assert signatures[f"floor_bleu_{name}"] == per_direction[name]["signature"]
    zst = signatures["zst_bleu"].split(" + ")
    assert sorted(zst) == sorted(per_direction[n]["signature"] for n in ("zh-de", "de-zh"))
    assert [s for s in zst if "tok:13a" in s] and [s for s in zst if "tok:zh" in s]
    from_en = {per_direction[n]["signature"] for n in ("en-de", "en-zh")}
    assert signatures["from_en_bleu"] == " + ".join(sorted(from_en))
    assert signatures["floor_zst_bleu"] == signatures["zst_bleu"]


def test_chinese_targets_are_scored_on_characters():
    """The fixture has teeth: scored with 13a, an unsegmented Chinese line is one word."""
    refs = REFERENCES["zh"]
    for name in ("en-zh", "de-zh"):
        as_words = sacrebleu.corpus_bleu(HYPOTHESES[name], [refs], tokenize="13a").score
        assert expected_bleu(name, HYPOTHESES) > as_words + 20


def runaway(line: str, lang: str) -> str:
    """A decoder that translates perfectly and then does not stop: the reference, then its
    last word (character, in Chinese) repeated twice the reference's length."""
    if lang == "zh":
        return line + line[-2] * (2 * len(line))
    words = line.split()
    return " ".join(words + words[-1:] * (2 * len(words)))


def test_hypotheses_are_scored_against_references_not_the_reverse(tmp_path):
    """BLEU is asymmetric: three times too long, the output keeps every reference n-gram (BLEU
    ≈ 30 from precision alone); scored the other way round, the brevity penalty (e^(1-3))
    would leave ≈ 13."""
    write_dataset(tmp_path / "text")
    hypotheses = {
        name: [runaway(line, tgt) for line in REFERENCES[tgt]]
        for name, tgt in ((n, Direction.parse(n).tgt) for n in HYPOTHESES)
    }
    write_hypotheses(tmp_path / "hyp", hypotheses)
    result = score(tmp_path / "hyp", tmp_path / "text", directions(LANGUAGES))
    for name, hyps in hypotheses.items():
        d = Direction.parse(name)
        refs = REFERENCES[d.tgt]
        swapped = sacrebleu.corpus_bleu(refs, [hyps], tokenize=tokenize(d.tgt)).score
        assert expected_bleu(name, hypotheses) > swapped + 10, name
        assert result["metrics"][f"bleu_{name}"] == pytest.approx(
            expected_bleu(name, hypotheses), abs=1e-9
        )


def test_bleu_stats_are_each_directions_sentence_statistics(tmp_path):
    """The bootstrap's rows: [hyp_len, ref_len, 4 matches, 4 totals] per sentence, in the
    order of the directions, summing to sacrebleu's corpus statistics of each direction."""
    write_dataset(tmp_path / "text")
    write_hypotheses(tmp_path / "hyp", HYPOTHESES)
    wanted = directions(LANGUAGES)
    stats = score(tmp_path / "hyp", tmp_path / "text", wanted)["bleu_stats"]
    for key, zero_shot in (("zst_bleu", True), ("sup_bleu", False)):
        rows = stats[key]
        for d in [d for d in wanted if d.zero_shot == zero_shot]:
            block, rows = rows[:4], rows[4:]
            corpus = sacrebleu.corpus_bleu(
                HYPOTHESES[d.name], [REFERENCES[d.tgt]], tokenize=tokenize(d.tgt)
            )
            sums = [sum(column) for column in zip(*block, strict=True)]
            assert sums == [corpus.sys_len, corpus.ref_len, *corpus.counts, *corpus.totals]
        assert rows == []


def worse(hypotheses: dict[str, list[str]]) -> dict[str, list[str]]:
    """Another seed's output: each line without its last word (or character, in Chinese)."""
    return {
        name: [line[:-2] if name.endswith("zh") else line.rsplit(" ", 1)[0] for line in lines]
        for name, lines in hypotheses.items()
    }


def test_a_table_8_2_cell_is_traced_from_the_runs_hypotheses(tmp_path, capsys):
    """Two seeds of one system: hypotheses → `nmt score` → `nmt metrics` → `report build`;
    the cell is the mean over seeds of the mean zero-shot (supervised) BLEU of each seed."""
    paths = Paths(tmp_path / "results", tmp_path / "reports", tmp_path / "resources")
    data = paths.chapter_data("ch8_layernorm", "opus")
    write_dataset(data / "text")
    seeds = {1: HYPOTHESES, 2: worse(HYPOTHESES)}
    for seed, hypotheses in seeds.items():
        run = paths.run("ch8_layernorm", SYSTEM, seed, dataset="opus")
        write_hypotheses(run / "hyp", hypotheses)
        common = ["--section", "ch8_layernorm", "--scale", "tiny", "--hyp", str(run / "hyp")]
        scores = str(run / "scores.json")
        assert main(["nmt", "score", *common, "--data", str(data), "--out", scores]) == 0
        metrics = ["nmt", "metrics", *common, "--scores", scores, "--seed", str(seed)]
        metrics += ["--data", str(data)]
        out = ["--run", f"opus/{SYSTEM}", "--out", str(run / "metrics.json")]
        assert main([*metrics, *out]) == 0
        written = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        assert written["signatures"] == json.loads(Path(scores).read_text())["signatures"]
    build_report(paths.results, paths.reports)
    capsys.readouterr()
    with open(paths.reports / "tables" / "thesis-table-8.2.csv", encoding="utf-8") as handle:
        cells = {(r["row"], r["column"]): r for r in csv.DictReader(handle)}

    def mean_over_seeds(names: tuple[str, ...]) -> float:
        return statistics.fmean(
            statistics.fmean(expected_bleu(n, hypotheses) for n in names)
            for hypotheses in seeds.values()
        )

    for column, names in (
        ("Zero-shot OPUS BLEU", ("zh-de", "de-zh")),
        ("Supervised OPUS", ("en-de", "de-en", "zh-en", "en-zh")),
    ):
        cell = cells[(SYSTEM, column)]
        assert cell["status"] == "measured" and cell["seeds"] == "1 2"
        assert float(cell["measured"]) == pytest.approx(mean_over_seeds(names), rel=1e-5)


def test_each_metrics_floor_is_sacrebleu_of_the_copied_sources(tmp_path):
    """The copy-the-source floor: each direction's source lines scored as the hypothesis
    against its references with that direction's tokenizer, whatever the system output."""
    write_dataset(tmp_path / "text")
    write_hypotheses(tmp_path / "hyp", HYPOTHESES)
    result = score(tmp_path / "hyp", tmp_path / "text", directions(LANGUAGES))
    metrics, stats, groups = result["metrics"], result["bleu_stats"], result["groups"]
    copied = {
        name: expected_bleu(name, {name: REFERENCES[Direction.parse(name).src]})
        for name in HYPOTHESES
    }
    assert 0 < copied["en-de"] < 100 and copied["de-zh"] == 0  # shared words, other script
    for name, value in copied.items():
        assert metrics[f"floor_bleu_{name}"] == pytest.approx(value, abs=1e-9)
    zero_shot, supervised = ("zh-de", "de-zh"), ("en-de", "de-en", "zh-en", "en-zh")
    for key, names in (("zst_bleu", zero_shot), ("sup_bleu", supervised)):
        floor = f"floor_{key}"
        assert metrics[floor] == pytest.approx(statistics.fmean(copied[n] for n in names))
        assert groups[floor] == groups[key] and sorted(n for n, _ in groups[floor]) == sorted(names)
        sums = [sum(column) for column in zip(*stats[floor][:4], strict=True)]
        first = Direction.parse(groups[floor][0][0])
        corpus = sacrebleu.corpus_bleu(
            REFERENCES[first.src], [REFERENCES[first.tgt]], tokenize=tokenize(first.tgt)
        )
        assert sums == [corpus.sys_len, corpus.ref_len, *corpus.counts, *corpus.totals]


def run_near_the_floor(paths: Paths, system: str, hypotheses: dict[str, list[str]]) -> Path:
    """One IWSLT run scored by `nmt score` and `nmt metrics`, as the workflow scores it."""
    data = paths.chapter_data("ch8_layernorm", "iwslt")
    if not data.exists():
        write_dataset(data / "text")
    run = paths.run("ch8_layernorm", system, 1, dataset="iwslt")
    write_hypotheses(run / "hyp", hypotheses)
    common = ["--section", "ch8_layernorm", "--scale", "tiny", "--hyp", str(run / "hyp")]
    scores = str(run / "scores.json")
    assert main(["nmt", "score", *common, "--data", str(data), "--out", scores]) == 0
    metrics = ["nmt", "metrics", *common, "--scores", scores, "--seed", "1", "--data", str(data)]
    assert main([*metrics, "--run", f"iwslt/{system}", "--out", str(run / "metrics.json")]) == 0
    return run / "metrics.json"


def test_a_run_near_the_copy_floor_reads_below_floor_in_the_ledger(tmp_path, capsys):
    """The tiny IWSLT case: PostNorm copies the source, PreNorm copies it less a word, so
    PostNorm "wins" by noise; with the floors `nmt score` / `nmt metrics` now write, the
    claim reads below floor, not floor not measured."""
    from mlrep.report import claims, fill, tables
    from mlrep.report.metrics import collect
    from mlrep.report.reference import load_all
    from tests.report_helpers import REFERENCE

    paths = Paths(tmp_path / "results", tmp_path / "reports", tmp_path / "resources")
    copied = {n: REFERENCES[Direction.parse(n).src] for n in HYPOTHESES}
    shorter = {n: [line.rsplit(" ", 1)[0] for line in lines] for n, lines in copied.items()}
    written = run_near_the_floor(paths, SYSTEM, copied)
    run_near_the_floor(paths, "prenorm-s-enc-t-dec-w", shorter)
    capsys.readouterr()
    doc = json.loads(written.read_text(encoding="utf-8"))
    # copying German into Chinese (and back) is off target by the same language ID
    assert doc["metrics"]["floor_zst_off_target"] == 100.0
    assert doc["sentence_scores"]["floor_zst_off_target"] == [100.0] * 8
    assert doc["metrics"]["zst_bleu"] == doc["metrics"]["floor_zst_bleu"]

    published = load_all(REFERENCE)
    table = "thesis-table-8.2"
    filled = {
        table: fill.fill(
            tables.load(published)[table],
            published[table],
            collect(paths.results, "tiny"),
            (200, 1),
        )
    }
    claim = next(c for c in claims.load() if c["id"] == "ch8-iwslt-postnorm-beats-prenorm-zst-bleu")
    found = claims.evaluate(claim, filled, (200, 1))
    assert found.floor_a == pytest.approx(doc["metrics"]["floor_zst_bleu"])
    assert found.outcome == claims.BELOW_FLOOR


def test_the_chapters_protocol_scores_tokenized_bleu(tmp_path, capsys):
    """Chapter 5 scores tokenized BLEU (``--protocol wat``): both sides Moses-tokenized (Chinese
    by jieba), then BLEU over the tokens, not sacrebleu's 13a; sacremoses and jieba, called
    here directly, are the independent tokenizers. A protocol that is no BLEU is refused."""
    import jieba
    from sacremoses import MosesTokenizer

    write_dataset(tmp_path / "data" / "text")
    hyps = {**HYPOTHESES, "en-de": [line + "," for line in HYPOTHESES["en-de"]]}
    write_hypotheses(tmp_path / "hyp", hyps)
    common = ["nmt", "score", "--section", "ch5_wordcl", "--data", str(tmp_path / "data")]
    common += ["--hyp", str(tmp_path / "hyp")]
    out = tmp_path / "scores.json"
    assert main([*common, "--out", str(out), "--protocol", "wat"]) == 0
    scored = json.loads(out.read_text(encoding="utf-8"))

    def tokens(lines: list[str], lang: str) -> list[str]:
        if lang == "zh":
            return [" ".join(w for w in jieba.cut(line) if w.strip()) for line in lines]
        moses = MosesTokenizer(lang=lang)
        return [moses.tokenize(line, escape=False, return_str=True) for line in lines]

    for name, lines in hyps.items():
        d = Direction.parse(name)
        refs = tokens(REFERENCES[d.tgt], d.tgt)
        expected = sacrebleu.corpus_bleu(tokens(lines, d.tgt), [refs], tokenize="none").score
        assert scored["metrics"][f"bleu_{name}"] == pytest.approx(expected, abs=1e-6), name
        assert scored["directions"][name]["signature"].startswith(f"wat:{d.tgt}:")
    # the comma is a token of its own after Moses: 13a splits it too, but `none` on the raw
    # text would not, so tokenized BLEU differs from BLEU over untokenized words
    untokenized = sacrebleu.corpus_bleu(hyps["en-de"], [REFERENCES["de"]], tokenize="none")
    assert scored["metrics"]["bleu_en-de"] != pytest.approx(untokenized.score, abs=1e-6)
    assert main([*common, "--out", str(out), "--protocol", "chrf++"]) == 2
    assert "no BLEU protocol" in capsys.readouterr().err
