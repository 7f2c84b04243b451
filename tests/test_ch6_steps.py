"""Chapter 6's steps on a small fixture corpus: test sets (zero-shot pairs joined on English,
Flores's multi-way files), prompts (default, a Table D.2 variant, the pivot's two passes),
hypotheses split back, training-stage mixtures, the instruction cap, the COMET stand-in, and
scores → metrics.json checked against sacreBLEU computed here."""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from mlrep.chapters.ch6_aligninstruct import cli, decode, scoring, testsets, training
from mlrep.chapters.ch6_aligninstruct.runs import get
from mlrep.cliutil import common_options
from mlrep.evaluate import cli as evaluate_cli
from mlrep.evaluate import comet_stand_in, mt
from mlrep.evaluate.comet import STAND_IN
from mlrep.llm.instruct import Language, build, read_jsonl, read_pairs
from mlrep.report.metrics import declared, write
from mlrep.report.metrics import read as read_metrics
from mlrep.report.stats import (
    SentenceSet,
    corpus_bleu,
    corpus_chrf,
    corpus_mean,
    quantity,
    sentence_stats,
)

SIX = ("ar", "de", "fr", "nl", "ru", "zh")
ENGLISH = [f"sentence number {n} is here" for n in range(12)]


def _corpus(folder: Path, split: str, languages: tuple[str, ...]) -> list[Path]:
    """English-centric ``<split>.en-xx.{en,xx}`` files: each language has its own subset and
    order of the English sentences (so a join is no line-by-line pairing), its side the
    English tagged with the language (``de: sentence number 3 is here``)."""
    files = []
    for lang in languages:
        rng = random.Random(f"{split}:{lang}")
        chosen = rng.sample(ENGLISH, 9)
        stem = folder / f"{split}.en-{lang}"
        for suffix, lines in (("en", chosen), (lang, [f"{lang}: {e}" for e in chosen])):
            path = Path(f"{stem}.{suffix}")
            path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            files.append(path)
    return files


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    top = parser.add_subparsers(dest="command")
    cli.register(top, common_options())
    evaluate_cli.register(top, common_options())
    return parser


def _cli(*words: str) -> int:
    args = _parser().parse_args(list(words))
    return args.func(args)


@pytest.fixture(scope="module")
def b3(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("b3")
    testsets.write(_corpus(folder, "test", SIX), "test", "bloomz-3", (), 5, folder / "opus")
    return folder / "opus"


# ---- test sets --------------------------------------------------------------------------


def test_zero_shot_pairs_translate_the_same_english(tmp_path):
    raw = _corpus(tmp_path, "test", SIX)
    index = testsets.write(raw, "test", "bloomz-3", (), 5, tmp_path / "opus")
    assert len(index["directions"]) == 42
    for src in SIX:
        for tgt in SIX:
            if src == tgt:
                continue
            sources, refs = testsets.read(tmp_path / "opus", src, tgt)
            assert 0 < len(sources) <= 5
            for s, r in zip(sources, refs, strict=True):
                assert s.startswith(f"{src}: ") and r.startswith(f"{tgt}: ")
                assert s.removeprefix(f"{src}: ") == r.removeprefix(f"{tgt}: ")
            # the join keeps the source set's order: its first shared English sentences
            own = (tmp_path / f"test.en-{src}.en").read_text(encoding="utf-8").split("\n")
            other = set((tmp_path / f"test.en-{tgt}.en").read_text(encoding="utf-8").split("\n"))
            shared = [e for e in own if e and e in other][:5]
            assert [s.removeprefix(f"{src}: ") for s in sources] == shared
            assert "on English" in index["directions"][f"{src}-{tgt}"]["source"]
    sources, refs = testsets.read(tmp_path / "opus", "en", "de")
    first = (tmp_path / "test.en-de.en").read_text(encoding="utf-8").split("\n")[:5]
    assert sources == first and refs == [f"de: {e}" for e in first]
    sources, refs = testsets.read(tmp_path / "opus", "de", "en")
    assert refs == first and sources == [f"de: {e}" for e in first]


def test_the_cap_binds_exactly(tmp_path):
    raw = _corpus(tmp_path, "valid", ("af", "gd"))
    index = testsets.write(raw, "valid", "bloomz-24", ("af", "gd"), 4, tmp_path / "flores")
    assert sorted(index["directions"]) == ["af-en", "en-af", "en-gd", "gd-en"]
    assert {v["lines"] for v in index["directions"].values()} == {4}
    assert len(testsets.read(tmp_path / "flores", "en", "gd")[0]) == 4


def test_flores_multiway_files_make_english_centric_sets(tmp_path):
    lines = {"eng_Latn": ENGLISH[:6], "afr_Latn": [f"af {e}" for e in ENGLISH[:6]]}
    lines["gla_Latn"] = [f"gd {e}" for e in ENGLISH[:6]]
    raw = []
    for code, text in lines.items():
        path = tmp_path / f"devtest.multiway.{code}"
        path.write_text("".join(f"{line}\n" for line in text), encoding="utf-8")
        raw.append(path)
    testsets.write(raw, "devtest", "bloomz-24", ("af", "gd"), 5, tmp_path / "flores")
    sources, refs = testsets.read(tmp_path / "flores", "gd", "en")
    assert sources == lines["gla_Latn"][:5] and refs == ENGLISH[:5]
    bad = tmp_path / "devtest.multiway.xxx_Latn"
    bad.write_text("x\n", encoding="utf-8")
    with pytest.raises(testsets.EvaluationSetError, match=r"xxx_Latn.*FLORES_CODES"):
        testsets.corpus_sets([*raw, bad])


def test_bloomz24_needs_its_languages(tmp_path):
    with pytest.raises(testsets.EvaluationSetError, match="--languages"):
        testsets.write([], "test", "bloomz-24", (), 5, tmp_path / "opus")
    with pytest.raises(decode.DecodeError, match="--languages"):
        decode.prompts(get("bloomz-24/7b1-mt"), {}, (), tmp_path / "p", tmp_path / "i")
    with pytest.raises(scoring.ScoringError, match="--languages"):
        scoring.score(get("bloomz-24/7b1-mt"), {}, tmp_path, ())


def test_a_missing_test_file_names_the_step(tmp_path):
    with pytest.raises(testsets.EvaluationSetError, match="mlrep ch6 tests"):
        testsets.read(tmp_path, "en", "af")


# ---- prompts, the pivot's second pass, hypotheses split back -----------------------------


@pytest.fixture()
def b24(tmp_path) -> dict[str, Path]:
    out = {}
    for test, split in (("opus", "test"), ("flores", "valid")):
        raw = _corpus(tmp_path, split, ("af", "gd"))
        _cli(
            "ch6", "tests", "--setting", "bloomz-24", "--split", split, "--raw",
            *map(str, raw), "--languages", "af", "gd", "--max-test", "3",
            "--out", str(tmp_path / test),
        )  # fmt: skip
        out[test] = tmp_path / test
    return out


def test_default_prompts_and_their_index(tmp_path, b24):
    run = get("bloomz-24/7b1-mt")
    index = decode.prompts(run, b24, ("af", "gd"), tmp_path / "p.jsonl", tmp_path / "p.json")
    records = read_jsonl(tmp_path / "p.jsonl")
    assert index["total"] == len(records) == 2 * 4 * 3
    entries = index["entries"]
    assert [(e["test"], e["direction"]) for e in entries][:4] == [
        ("opus", "en-af"), ("opus", "af-en"), ("opus", "en-gd"), ("opus", "gd-en"),
    ]  # fmt: skip
    sources, refs = testsets.read(b24["opus"], "af", "en")
    first = records[entries[1]["start"]]
    assert (
        first.input == f"Translate from Afrikaans to English.\nAfrikaans: {sources[0]}.\nEnglish:"
    )
    assert first.output == refs[0] + "." and first.direction == "af-en"
    sources, _ = testsets.read(b24["flores"], "en", "gd")
    flores_gd = next(e for e in entries if e["test"] == "flores" and e["direction"] == "en-gd")
    assert records[flores_gd["start"] + 2].input == (
        f"Translate from English to Scottish Gaelic.\nEnglish: {sources[2]}.\nScottish Gaelic:"
    )


def test_a_prompt_variant_and_the_opus_only_ablation(tmp_path, b24):
    run = get("bloomz-24/7b1-mt-align-p3")
    index = decode.prompts(run, b24, ("af", "gd"), tmp_path / "p.jsonl", tmp_path / "p.json")
    assert {e["test"] for e in index["entries"]} == {"opus"} and index["prompt"] == "p3"
    sources, _ = testsets.read(b24["opus"], "en", "af")
    assert read_jsonl(tmp_path / "p.jsonl")[0].input == (
        f"Translate to Afrikaans.\nEnglish: {sources[0]}.\nAfrikaans:"
    )
    with pytest.raises(decode.DecodeError, match="--tests flores=FOLDER"):
        decode.prompts(
            get("bloomz-24/7b1-mt"), {"opus": b24["opus"]}, ("af",), tmp_path / "x", tmp_path / "y"
        )


def test_pivot_decodes_through_english_in_two_passes(tmp_path, b3):
    run = get("bloomz-3/7b1-ar-de-fr-nl-ru-zh-mt-pivot")
    tests = {"opus": b3}
    first = decode.prompts(run, tests, (), tmp_path / "p1.jsonl", tmp_path / "p1.json")
    assert len(first["entries"]) == 30
    assert all(e["asks"] == e["direction"].split("-")[0] + "-en" for e in first["entries"])
    records = read_jsonl(tmp_path / "p1.jsonl")
    entry = next(e for e in first["entries"] if e["direction"] == "ru-zh")
    sources, refs = testsets.read(b3, "ru", "zh")
    assert records[entry["start"]].input == (
        f"Translate from Russian to English.\nRussian: {sources[0]}.\nEnglish:"
    )
    assert records[entry["start"]].output == ""
    hyps = tmp_path / "h1.txt"  # the first pass's English, with the templates' period
    hyps.write_text("".join(f"english {n}.\n" for n in range(first["total"])), encoding="utf-8")
    decode.pivot_prompts(
        run, tests, tmp_path / "p1.json", hyps, tmp_path / "p2.jsonl", tmp_path / "p2.json"
    )
    second = json.loads((tmp_path / "p2.json").read_text(encoding="utf-8"))
    records = read_jsonl(tmp_path / "p2.jsonl")
    entry2 = next(e for e in second["entries"] if e["direction"] == "ru-zh")
    assert entry2["asks"] == "en-zh" and second["pass"] == 2
    n = entry["start"] + 1
    assert records[entry2["start"] + 1].input == (
        f"Translate from English to Chinese.\nEnglish: english {n}.\nChinese:"
    )
    assert records[entry2["start"] + 1].output == refs[1] + "."
    out = tmp_path / "h2.txt"
    out.write_text("".join(f"zh {n}.\n" for n in range(second["total"])), encoding="utf-8")
    written = decode.split(tmp_path / "p2.json", out, tmp_path / "hyp")
    assert len(written) == 30
    got = (tmp_path / "hyp/opus/ru-zh.txt").read_text(encoding="utf-8").splitlines()
    assert got == [f"zh {entry2['start'] + k}." for k in range(entry2["lines"])]
    short = tmp_path / "short.txt"
    short.write_text("a\n", encoding="utf-8")
    with pytest.raises(decode.DecodeError, match="decode that index's prompts file again"):
        decode.split(tmp_path / "p2.json", short, tmp_path / "hyp2")
    with pytest.raises(decode.DecodeError, match="no pivot run"):
        decode.pivot_prompts(get("bloomz-3/7b1-noft"), tests, tmp_path / "p1.json", hyps, out, out)


# ---- training stages and the instruction cap ------------------------------------------------


def test_a_curriculum_stage_mixes_its_objectives_over_the_languages(tmp_path):
    run = get("bloomz-24/7b1-mt-align-then-mt")
    for lang in ("af", "gd"):
        for objective in ("mt", "align"):
            path = training.instruction_file(tmp_path, lang, objective)
            record = {"input": f"{lang} {objective}", "output": "x", "type": objective}
            path.write_text(json.dumps(record | {"direction": f"en-{lang}"}) + "\n")
    assert [p.name for p in training.stage_inputs(run, 1, ("af", "gd"), tmp_path)] == [
        "en-af.mt.jsonl", "en-gd.mt.jsonl", "en-af.align.jsonl", "en-gd.align.jsonl",
    ]  # fmt: skip
    _cli(
        "ch6", "stage", "--run", run.path, "--stage", "2", "--languages", "af", "gd",
        "--instructions", str(tmp_path), "--seed", "1", "--out", str(tmp_path / "s2.jsonl"),
    )  # fmt: skip
    assert sorted(r.input for r in read_jsonl(tmp_path / "s2.jsonl")) == ["af mt", "gd mt"]
    b3 = get("bloomz-3/7b1-de-nl-ru-mt")
    assert training.languages_of(b3, ("af",)) == ("de", "nl", "ru")
    with pytest.raises(
        training.TrainingSetError, match=r"en-de\.mt\.jsonl.*mlrep ch6 instructions"
    ):
        training.stage_inputs(b3, 1, (), tmp_path)
    with pytest.raises(training.TrainingSetError, match="has 2 training stage"):
        training.stage(run, 3)


def _aligned(folder: Path, pairs: int) -> dict:
    en = [f"word{n} other{n}" for n in range(pairs)]
    (folder / "en.tok").write_text("".join(f"{e}\n" for e in en), encoding="utf-8")
    (folder / "af.tok").write_text("".join(f"woord{n} ander{n}\n" for n in range(pairs)))
    (folder / "links").write_text("0-0 1-1\n" * pairs, encoding="utf-8")
    return dict(
        source=Language("en", "English"),
        target=Language("af", "Afrikaans"),
        source_tokens=folder / "en.tok",
        target_tokens=folder / "af.tok",
        links=folder / "links",
    )


def test_max_pairs_keeps_the_first_pairs(tmp_path):
    inputs = _aligned(tmp_path, 5)
    assert len(read_pairs(**inputs)) == 5
    kept = read_pairs(**inputs, max_pairs=3)
    assert [p.source.tokens[0] for p in kept] == ["word0", "word1", "word2"]
    assert len(read_pairs(**inputs, max_pairs=9)) == 5
    counts = build(tmp_path / "mt.jsonl", ["mt"], **_args(inputs), seed=1, max_pairs=2)
    assert counts["mt"] == 4  # both directions of the first two pairs
    sources = {r.input for r in read_jsonl(tmp_path / "mt.jsonl") if r.direction == "en-af"}
    assert sources == {
        f"Translate from English to Afrikaans.\nEnglish: word{n} other{n}.\nAfrikaans:"
        for n in (0, 1)
    }
    with pytest.raises(Exception, match="max_pairs 0"):
        read_pairs(**inputs, max_pairs=0)
    words = ["ch6", "instructions", "--types", "mt", "--source", "en", "--target", "af"]
    words += ["--source-tokens", str(inputs["source_tokens"]), "--target-tokens"]
    words += [str(inputs["target_tokens"]), "--links", str(inputs["links"]), "--seed", "1"]
    _cli(*words, "--max-pairs", "3", "--out", str(tmp_path / "cli.jsonl"))
    assert len(read_jsonl(tmp_path / "cli.jsonl")) == 6


def _args(inputs: dict) -> dict:
    return {k: inputs[k] for k in ("source", "target", "source_tokens", "target_tokens", "links")}


# ---- the COMET stand-in ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def comet_folder(tmp_path_factory) -> Path:
    made = tmp_path_factory.mktemp("comet") / "made"
    _cli("eval", "comet-stand-in", "--out", str(made), "--seed", "3")
    moved = made.parent / "moved"  # its encoder is found inside it, wherever it lies
    shutil.move(made, moved)
    return moved


def test_the_comet_stand_in_loads_and_scores_through_the_protocol(comet_folder):
    protocol = mt.Protocol("comet", comet_checkpoint=str(comet_folder))
    scorer = protocol.comet(device="cpu")
    hyps, refs, sources = ["die Katze"], ["die Katze saß"], ["the cat sat"]
    result = mt.score(protocol, hyps * 3, refs * 3, "de", sources * 3, scorer)
    assert result.kind == "sentence_scores" and len(result.stats) == 3
    assert result.score == pytest.approx(100 * scorer.score(sources, hyps, refs)[0])
    assert "stand-in" in result.signature
    again = comet_folder.parent / "again"  # a seed makes the same checkpoint
    comet_stand_in.write(again, 3)
    other = mt.Protocol("comet", comet_checkpoint=str(again)).comet(device="cpu")
    assert other.score(sources, hyps, refs) == pytest.approx(scorer.score(sources, hyps, refs))


# ---- scores → metrics.json ------------------------------------------------------------------


def _hypotheses(folder: Path, tests: dict[str, Path], run, languages) -> Path:
    """Each reference less its last word, with the templates' period: what a model writes."""
    hyp = folder / "hyp"
    for test in run.tests:
        for src, tgt in run.directions(languages):
            _, refs = testsets.read(tests[test], src, tgt)
            path = hyp / test / f"{src}-{tgt}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [" ".join(r.split()[:-1]) + "." for r in refs]
            path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return hyp


def test_scores_and_metrics_against_sacrebleu(tmp_path, b24, comet_folder):
    run = get("bloomz-24/7b1-mt")
    hyp = _hypotheses(tmp_path, b24, run, ("af", "gd"))
    tests = [f"{t}={p}" for t, p in b24.items()]
    common = ["--run", run.path, "--tests", *tests, "--hyp", str(hyp), "--languages", "af", "gd"]
    _cli("ch6", "score", *common, "--metrics", "bleu", "chrf", "--out", str(tmp_path / "s.json"))
    _cli(
        "ch6", "score", *common, "--metrics", "comet", "--comet-checkpoint", str(comet_folder),
        "--out", str(tmp_path / "c.json"),
    )  # fmt: skip
    out = tmp_path / "seed1" / "metrics.json"
    _cli(
        "ch6", "metrics", "--run", run.path, "--seed", "1", "--scale", "tiny", "--scores",
        str(tmp_path / "s.json"), str(tmp_path / "c.json"), "--out", str(out),
    )  # fmt: skip
    result = read_metrics(out)
    # the stand-in's COMET ran, but its numbers are set aside: pending, so no claim judges them
    stand_in = json.loads(out.read_text(encoding="utf-8"))["stand_in"]
    assert set(stand_in) == set(result.pending) and "comet_avg" in stand_in
    assert set(result.pending.values()) == {scoring.STAND_IN_REASON}
    assert not [name for name in result.metrics if "comet" in name]
    numbers = result.metrics | stand_in
    scorer = mt.Protocol("comet", comet_checkpoint=str(comet_folder)).comet(device="cpu")
    bleu, chrf = BLEU(tokenize="13a"), CHRF(word_order=2)
    means: dict[str, list[float]] = {}
    for test, folder in b24.items():
        for src, tgt in run.directions(("af", "gd")):
            sources, refs = testsets.read(folder, src, tgt)
            hyps = [" ".join(r.split()[:-1]) for r in refs]
            name = f"{test}_{{}}_{src}-{tgt}"
            want = {
                "bleu": bleu.corpus_score(hyps, [refs]).score,
                "chrf": chrf.corpus_score(hyps, [refs]).score,
                "comet": 100 * sum(scorer.score(sources, hyps, refs)) / len(refs),
            }
            for metric, value in want.items():
                assert numbers[name.format(metric)] == pytest.approx(value, abs=1e-6)
                group = "en-xx" if src == "en" else "xx-en"
                means.setdefault(f"{test}_{metric}_{group}", []).append(value)
            floor = bleu.corpus_score(sources, [refs]).score
            assert result.metrics["floor_" + name.format("bleu")] == pytest.approx(floor)
            stats = result.bleu_stats
            assert stats[name.format("bleu")] == sentence_stats(hyps, refs, tokenize="13a")
            assert stats["floor_" + name.format("bleu")] == sentence_stats(
                sources, refs, tokenize="13a"
            )
            group = f"{test}_bleu_{'en-xx' if src == 'en' else 'xx-en'}"
            members = [d for d, _ in result.groups[group]]
            at = sum(n for _, n in result.groups[group][: members.index(f"{src}-{tgt}")])
            assert stats[group][at : at + len(refs)] == stats[name.format("bleu")]
            assert (
                stats["floor_" + group][at : at + len(refs)]
                == stats["floor_" + name.format("bleu")]
            )
    for name, values in means.items():
        assert numbers[name] == pytest.approx(sum(values) / len(values), abs=1e-6)
    columns = [f"{t}_comet_{g}" for t in ("opus", "flores") for g in ("en-xx", "xx-en")]
    assert numbers["comet_avg"] == pytest.approx(sum(numbers[c] for c in columns) / 4)
    assert result.groups["opus_bleu_en-xx"] == [("en-af", 3), ("en-gd", 3)]
    assert declared("ch6_aligninstruct").undeclared([*numbers, *result.pending]) == []
    # a real checkpoint's COMET (the same scores, the signature unmarked) is written as numbers
    documents = scoring.read_scores([tmp_path / "s.json", tmp_path / "c.json"])
    for _, document in documents:
        for by_metric in document["scores"].values():
            for entry in by_metric.get("comet", {}).values():
                entry["signature"] = entry["signature"].replace(STAND_IN, "real")
    parts = scoring.metrics(scoring.merged(documents, run), run.setting)
    assert "pending" not in parts and parts["metrics"]["comet_avg"] == numbers["comet_avg"]
    assert len(parts["sentence_scores"]["comet_avg"]) == 4 * 2 * 3
    assert parts["groups"]["comet_avg"][:2] == [("opus:en-af", 3), ("opus:en-gd", 3)]
    write(tmp_path / "real" / "metrics.json", "ch6_aligninstruct", run.path, 1, "tiny", **parts)
    # the claims' bootstrap recomputes each printed mean from its per-sentence data
    for name, kind, score in (
        ("opus_bleu_en-xx", "bleu_stats", corpus_bleu),
        ("floor_flores_bleu_xx-en", "bleu_stats", corpus_bleu),
        ("flores_chrf_xx-en", "chrf_stats", corpus_chrf),
        ("opus_bleu_en-af", "bleu_stats", corpus_bleu),
        ("comet_avg", "sentence_scores", corpus_mean),
        ("floor_comet_avg", "sentence_scores", corpus_mean),
    ):
        assert quantity(_sets(parts, name, kind), score) == pytest.approx(
            parts["metrics"][name], abs=1e-6
        )


def _sets(parts: dict, name: str, kind: str) -> list[SentenceSet]:
    """A metric's test sets as the report's cells build them (`mlrep.report.fill`)."""
    layout = parts["groups"].get(name) or [("", len(parts[kind][name]))]
    data = np.asarray(parts[kind][name], dtype=float).reshape(1, sum(n for _, n in layout), -1)
    bounds = np.cumsum([0] + [n for _, n in layout])
    return [SentenceSet(data[:, a:b], 1 / len(layout)) for a, b in itertools.pairwise(bounds)]


def test_bloomz3_groups_and_the_chinese_tokenizer(tmp_path, b3):
    run = get("bloomz-3/7b1-de-nl-ru-mt")
    tests = {"opus": b3}
    hyp = _hypotheses(tmp_path, tests, run, ())
    scored = scoring.score(run, tests, hyp, (), ("bleu",))
    parts = scoring.metrics(scoring.merged([(tmp_path / "s", scored)], run), run.setting)
    found = parts["metrics"]
    assert "tok:zh" in parts["signatures"]["opus_bleu_en-zh"]
    assert "tok:13a" in parts["signatures"]["opus_bleu_en-de"]
    zero = [f"opus_bleu_{a}-{b}" for a in SIX for b in SIX if a != b]
    assert found["opus_bleu_overall"] == pytest.approx(sum(found[z] for z in zero) / 30)
    seen_unseen = [f"opus_bleu_{a}-{b}" for a in ("ar", "fr", "zh") for b in ("de", "nl", "ru")]
    assert found["opus_bleu_seen-unseen"] == pytest.approx(sum(found[z] for z in seen_unseen) / 9)
    assert [d for d, _ in parts["groups"]["opus_bleu_en-seen"]] == ["en-ar", "en-fr", "en-zh"]
    assert declared("ch6_aligninstruct").undeclared(found) == []
    with pytest.raises(scoring.ScoringError, match="give each metric's scores once"):
        scoring.merged([(tmp_path / "a", scored), (tmp_path / "b", scored)], run)
    (hyp / "opus" / "de-fr.txt").write_text("one line\n", encoding="utf-8")
    with pytest.raises(scoring.ScoringError, match=r"de-fr\.txt has 1 hypotheses"):
        scoring.score(run, tests, hyp, (), ("bleu",))
