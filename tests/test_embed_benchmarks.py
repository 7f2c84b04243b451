"""Chapter 2's benchmarks on both layouts: the embedded corpus's held-out splits (segment ids give
the gold) and the data layer's normalised Flores, BUCC, ParaCrawl and labelled sets."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from mlrep.data.tiny_corpus import IDS_SUFFIX, CorpusLayoutError
from mlrep.embed import benchmarks
from mlrep.evaluate import classify, mining, protocols, retrieval
from mlrep.evaluate.settings import ClassifySettings

SEARCH = {
    "search": {"block_size": 32},
    "bucc": {"margin": "ratio", "k": 4},
    "paracrawl": {"queries": 50, "candidates": 200, "margin": "ratio", "k": 4, "seed": 1},
    "classify": {
        "hidden": [10, 8],
        "dropout": 0.0,
        "lr": 0.01,
        "weight_decay": 0.0,
        "epochs": 20,
        "batch_size": 12,
        "runs": 2,
        "seed": 1,
    },
}


def segment_encoder(noise: float = 0.0):
    """Sentences ``<lang> s<segment> ...``: the segment's vector (a translation's meaning) plus
    `noise` times a vector of the whole sentence (what differs between languages)."""

    def vector(text: str) -> np.ndarray:
        return np.random.default_rng(zlib.crc32(text.encode())).normal(size=32)

    def encode(sentences: list[str]) -> np.ndarray:
        rows = [vector(s.split()[1]) + noise * vector(s) for s in sentences]
        return np.asarray(rows, dtype=np.float32)

    return encode


def corpus(folder, splits: dict[str, dict[str, range]]):
    """An embedded-corpus folder: ``<split>.en-<xx>.{en,xx,segids}`` for the given segments."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / benchmarks.CORPUS_MANIFEST).write_text("{}")
    for split, languages in splits.items():
        for lang, segments in languages.items():
            stem = folder / f"{split}.en-{lang}"
            (stem.parent / f"{stem.name}.en").write_text("".join(f"en s{n}\n" for n in segments))
            (stem.parent / f"{stem.name}.{lang}").write_text(
                "".join(f"{lang} s{n} {lang}{n % 7}\n" for n in segments)
            )
            (stem.parent / f"{stem.name}.{IDS_SUFFIX}").write_text(
                "".join(f"seg{n:04d}\n" for n in segments)
            )
    return folder


def dataset(folder, files: dict[str, list[str]]):
    """A normalised registry dataset: metadata.json and the named files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / benchmarks.DATASET_METADATA).write_text("{}")
    for name, lines in files.items():
        (folder / name).write_text("".join(line + "\n" for line in lines))
    return folder


FLORES = {"split": "test", "min_shared": 20, "codes": {}}


def test_flores_pairs_join_on_segment_ids_and_groups_need_every_pair(tmp_path):
    folder = corpus(
        tmp_path / "c", {"test": {"aa": range(60), "bb": range(20, 80), "cc": range(10)}}
    )
    spec = {**FLORES, "groups": {"two": ["aa", "bb"], "all": ["aa", "bb", "cc", "zz"]}}
    metrics, details = benchmarks.flores(segment_encoder(), folder, spec, 32)
    assert metrics == {"flores_aa-bb": 100.0, "flores_bb-aa": 100.0, "flores_two": 100.0} | {
        f"floor_{name}": 100 / 40  # chance: 1 of the 40 shared segments
        for name in ("flores_aa-bb", "flores_bb-aa", "flores_two")
    }
    assert details["shared"] == {"aa-bb": 40} and details["missing"] == ["zz"]
    assert sorted(details["skipped"]) == ["aa-cc", "bb-cc"]  # 10 and 0 shared < min_shared
    encode = segment_encoder(noise=1.2)
    noisy, _ = benchmarks.flores(encode, folder, spec, 32)
    # by hand: the 40 shared segments, in id order, retrieved both ways
    src = encode([f"aa s{n} aa{n % 7}" for n in range(20, 60)])
    tgt = encode([f"bb s{n} bb{n % 7}" for n in range(20, 60)])
    want = retrieval.evaluate(src, tgt)
    assert noisy["flores_aa-bb"] == want["p_at_1_src2tgt"] < 100
    assert noisy["flores_two"] == pytest.approx(want["p_at_1"])


def test_flores_reads_a_multiway_benchmark_through_its_codes(tmp_path):
    lines = {lang: [f"{lang} s{n}" for n in range(30)] for lang in ("aaa_Latn", "bbb_Cyrl")}
    folder = dataset(tmp_path / "f", {f"devtest.multiway.{k}": v for k, v in lines.items()})
    spec = {**FLORES, "split": "devtest", "groups": {"g": ["a", "b"]}}
    spec["codes"] = {"a": "aaa_Latn", "b": "bbb_Cyrl"}
    metrics, details = benchmarks.flores(segment_encoder(), folder, spec, 32)
    assert metrics["flores_g"] == 100.0 and details["shared"] == {"a-b": 30}


def test_hide_gold_keeps_a_fraction_on_both_sides_and_the_rest_on_one():
    src, tgt = mining.hide_gold(101, 0.2, seed=3)
    gold = np.intersect1d(src, tgt)
    assert len(gold) == 20 and len(np.union1d(src, tgt)) == 101
    assert abs(len(src) - len(tgt)) <= 1 and list(src) == sorted(src)
    assert np.array_equal(mining.hide_gold(101, 0.2, seed=3)[0], src)
    with pytest.raises(mining.MiningError, match="strictly between 0 and 1"):
        mining.hide_gold(10, 1.0, seed=1)


BUCC = {"languages": ["de", "xx"], "gold_fraction": 0.2, "seed": 1, "examples": 2}


@pytest.mark.parametrize("name", ["flores", "bucc", "paracrawl"])
def test_a_corpus_of_the_old_layout_asks_for_a_rebuild(tmp_path, name):
    """Format 1 kept segment ids in ``.id`` (Indonesian's text): each protocol names the
    missing ids file and the rebuild instead of failing on a count or a lookup."""
    folder = corpus(tmp_path / "c", {"test": {"de": range(60)}, "valid": {"de": range(60, 90)}})
    for ids in folder.glob(f"*.{IDS_SUFFIX}"):
        ids.rename(ids.with_suffix(".id"))
    specs = {
        "flores": {**FLORES, "groups": {"one": ["de"]}},
        "bucc": {**BUCC, "languages": ["de"], "tune": "valid", "test": "test"},
        "paracrawl": {"split": "test", "languages": ["de"]},
    }
    with pytest.raises(CorpusLayoutError, match=r"\.en-de\.segids.*snakemake results/data/tiny"):
        benchmarks.run(segment_encoder(), {name: folder}, {name: specs[name]}, SEARCH)


def test_bucc_on_the_corpus_tunes_on_valid_and_scores_test(tmp_path):
    folder = corpus(tmp_path / "c", {"valid": {"de": range(100)}, "test": {"de": range(100, 200)}})
    spec = {**BUCC, "tune": "valid", "test": "test"}
    metrics, details = benchmarks.bucc(segment_encoder(), folder, spec, SEARCH["bucc"], 32)
    # exact translations: the oracle threshold separates them all; on the other split the
    # threshold tuned here still keeps most of them
    assert details["de"]["tune"]["f1"] == 100.0 and 80 < metrics["bucc_de"] <= 100
    assert set(metrics) == {"bucc_de"} and details["missing"] == ["xx"]
    assert details["de"]["test"]["gold"] == 20 and details["de"]["tune"]["gold"] == 20
    # by hand with a noisier encoder: the same hidden splits, mining.evaluate on them
    encode = segment_encoder(noise=0.9)
    noisy, info = benchmarks.bucc(encode, folder, spec, SEARCH["bucc"], 32)

    def split(segments: range) -> mining.Split:
        src_rows, tgt_rows = mining.hide_gold(len(segments), 0.2, 1)
        ids = [f"seg{n:04d}" for n in segments]
        xx = encode([f"de s{segments[r]} de{segments[r] % 7}" for r in src_rows])
        en = encode([f"en s{segments[r]}" for r in tgt_rows])
        gold = {(ids[r], ids[r]) for r in np.intersect1d(src_rows, tgt_rows)}
        return mining.Split(xx, en, [ids[r] for r in src_rows], [ids[r] for r in tgt_rows], gold)

    want = mining.evaluate(split(range(100)), split(range(100, 200)), 4, "ratio", 32)
    assert noisy["bucc_de"] == pytest.approx(want["test"]["f1"]) and 0 < noisy["bucc_de"] < 100
    for pair in info["de"]["outside_gold"]:  # Table 2.8: mined, kept, but not gold
        assert pair["de_id"] != pair["en_id"] and pair["de"].startswith("de s")
    assert len(info["de"]["outside_gold"]) <= 2


def test_bucc_on_the_benchmark_with_one_split_is_the_oracle_f1(tmp_path):
    de = [f"de s{n}" for n in range(60)]
    en = [f"en s{n}" for n in range(30, 90)]
    folder = dataset(
        tmp_path / "b",
        {
            "training.de-en.de": de,
            "training.de-en.de.ids": [f"de-{n}" for n in range(60)],
            "training.de-en.en": en,
            "training.de-en.en.ids": [f"en-{n}" for n in range(30, 90)],
            "training.de-en.gold": [f"de-{n}\ten-{n}" for n in range(30, 60)],
        },
    )
    spec = {**BUCC, "languages": ["de"], "tune": "training", "test": "training"}
    metrics, details = benchmarks.bucc(segment_encoder(), folder, spec, SEARCH["bucc"], 32)
    assert metrics == {"bucc_de": 100.0} and details["de"]["test"] == details["de"]["tune"]
    assert details["de"]["test"]["gold"] == 30


def test_paracrawl_queries_find_their_translation_among_english_of_other_segments(tmp_path):
    splits = {"test": {"de": range(120), "lt": range(120, 150), "fr": range(150, 400)}}
    folder = corpus(tmp_path / "c", splits)
    spec = {"split": "test", "languages": ["de", "lt", "zz"]}
    metrics, details = benchmarks.paracrawl(
        segment_encoder(), folder, spec, SEARCH["paracrawl"], 32
    )
    assert metrics == {"paracrawl_de": 100.0, "floor_paracrawl_de": 100 / 200}
    assert details["de"]["candidates"] == 200 and details["de"]["queries"] == 50
    assert details["too_small"] == {"lt": "30 pairs < 50 queries"}
    assert details["missing"] == ["zz"]
    # sentences that carry no meaning: P@1 is near chance (1 in 200)
    blind, _ = benchmarks.paracrawl(
        lambda s: segment_encoder()([f"x s{zlib.crc32(t.encode()) % 9999}" for t in s]),
        folder,
        spec,
        SEARCH["paracrawl"],
        32,
    )
    assert blind["paracrawl_de"] < 10


def test_paracrawl_on_a_bitext_draws_distractors_from_its_other_rows(tmp_path):
    folder = dataset(
        tmp_path / "p",
        {
            "train.de-en.de": [f"de s{n}" for n in range(300)],
            "train.de-en.en": [f"en s{n}" for n in range(300)],
        },
    )
    spec = {"split": "train", "languages": ["de"]}
    metrics, details = benchmarks.paracrawl(
        segment_encoder(), folder, spec, SEARCH["paracrawl"], 32
    )
    assert metrics["paracrawl_de"] == 100.0 and details["de"]["candidates"] == 200
    assert metrics["floor_paracrawl_de"] == 100 / 200


def labelled_sets(folder, stems: dict[str, str], languages, n: int, labels=("sport", "money")):
    """Documents whose class is carried by a word every language shares, among filler words."""
    files = {}
    rng = np.random.default_rng(0)
    for stem in stems.values():
        for lang in languages:
            docs, tags = [], []
            for i in range(n):
                tag = labels[i % len(labels)]
                filler = " ".join(f"{lang}w{rng.integers(50)}" for _ in range(5))
                docs.append(f"{lang} {filler} {tag} {tag}")
                tags.append(tag)
            files[f"{stem}.{lang}"] = docs
            files[f"{stem}.{lang}.label"] = tags
    return dataset(folder, files)


def bag_of_words(sentences: list[str]) -> np.ndarray:
    out = np.zeros((len(sentences), 64), dtype=np.float32)
    for row, sentence in enumerate(sentences):
        for word in sentence.split():
            out[row, zlib.crc32(word.encode()) % 64] += 1
    return out


def test_classification_trains_on_one_language_and_tests_on_the_other(tmp_path):
    sets = {"train": "train.{group}", "dev": "test.{group}", "test": "test.{group}"}
    stems = {role: stem.format(group="books") for role, stem in sets.items()}
    folder = labelled_sets(tmp_path / "cls", stems, ["en", "de"], 40)
    spec = {"languages": ["de", "ja"], "groups": ["books"], "sets": sets}
    spec["limits"] = {"train": 30, "dev": 0, "test": 0}
    settings = ClassifySettings(**SEARCH["classify"])
    metrics, details = benchmarks.classification(bag_of_words, folder, "amazon_cls", spec, settings)
    assert set(metrics) == {"amazon_cls_books_en-de", "amazon_cls_books_de-en"}
    assert all(value > 90 for value in metrics.values()), metrics
    assert details["missing"] == ["amazon_cls_books_en-ja", "amazon_cls_books_ja-en"]
    assert details["amazon_cls_books_en-de"]["classes"] == ["money", "sport"]
    (folder / "test.books.de.label").write_text("sport\n" * 39 + "weather\n")
    with pytest.raises(classify.LabelError, match=r"labels \['weather'\]"):
        benchmarks.classification(bag_of_words, folder, "amazon_cls", spec, settings)


def test_un_searches_every_english_sentence_of_the_split(tmp_path):
    """The pool is every English test sentence (both languages' segments, once each), not a
    sample: P@1 is perfect for an encoder that keeps meaning and its floor is 1/pool."""
    folder = corpus(tmp_path / "c", {"test": {"de": range(40), "fr": range(30, 90)}})
    spec = {"split": "test", "languages": ["de", "zz"]}
    metrics, details = benchmarks.un(segment_encoder(), folder, spec, 16)
    assert metrics.metrics == {"un_de": 100.0, "floor_un_de": 100 / 90}
    assert metrics.sentence_scores["un_de"] == [100.0] * 40  # each query's hit
    assert details["de"] == {"queries": 40, "candidates": 90} and details["missing"] == ["zz"]
    # the block size bounds memory only: a noisy encoder scores the same with one block
    noisy = segment_encoder(noise=1.2)
    small, _ = benchmarks.un(noisy, folder, spec, 7)
    assert 0 < small.metrics["un_de"] < 100
    assert small.sentence_scores == benchmarks.un(noisy, folder, spec, 4096)[0].sentence_scores
    assert sum(small.sentence_scores["un_de"]) / 40 == pytest.approx(small.metrics["un_de"])


def test_un_encodes_the_corpus_pool_once_for_every_language(tmp_path):
    """Every language of the embedded corpus searches the same English pool: one encoding of
    it serves them all, and the scores are those of encoding it per language."""
    folder = corpus(tmp_path / "c", {"test": {"de": range(40), "fr": range(30, 90)}})
    encoder, calls = segment_encoder(noise=1.2), []

    def counted(lines):
        calls.append(len(lines))
        return encoder(lines)

    spec = {"split": "test", "languages": ["de", "fr"]}
    metrics, _ = benchmarks.un(counted, folder, spec, 16)
    assert calls.count(90) == 1 and sorted(c for c in calls if c != 90) == [40, 60]
    for lang in ("de", "fr"):
        alone, _ = benchmarks.un(encoder, folder, {"split": "test", "languages": [lang]}, 16)
        assert metrics.metrics[f"un_{lang}"] == alone.metrics[f"un_{lang}"]


def test_un_on_the_benchmark_reads_row_aligned_sides(tmp_path):
    xx = [f"de s{n} x" for n in range(25)]
    files = {"test.de-en.de": xx, "test.de-en.en": [f"en s{n}" for n in range(25)]}
    # each language of the benchmark has its own English side: its own pool
    files |= {"test.fr-en.fr": [f"fr s{n}" for n in range(50, 60)]}
    files |= {"test.fr-en.en": [f"en s{n}" for n in range(50, 60)]}
    folder = dataset(tmp_path / "d", files)
    spec = {"un": {"split": "test", "languages": ["de", "fr"]}}
    metrics, _ = benchmarks.run(segment_encoder(), {"un": folder}, spec, SEARCH)
    assert metrics.metrics == {
        "un_de": 100.0,
        "floor_un_de": 4.0,
        "un_fr": 100.0,
        "floor_un_fr": 10.0,
    }
    (folder / "test.de-en.en").write_text("en s1\n")
    with pytest.raises(protocols.BenchmarkError, match="renormalise"):
        benchmarks.un(segment_encoder(), folder, {"split": "test", "languages": ["de"]}, 16)


def test_run_dispatches_by_name_and_needs_a_known_layout(tmp_path):
    folder = corpus(tmp_path / "c", {"test": {"aa": range(30), "bb": range(30)}})
    specs = {"flores": {**FLORES, "groups": {"g": ["aa", "bb"]}}}
    metrics, details = benchmarks.run(segment_encoder(), {"flores": folder}, specs, SEARCH)
    assert metrics.metrics["flores_g"] == 100.0
    assert details["flores"]["layout"] == "embedded corpus"
    (tmp_path / "plain").mkdir()
    with pytest.raises(protocols.BenchmarkError, match="neither the embedded corpus"):
        benchmarks.run(segment_encoder(), {"flores": tmp_path / "plain"}, specs, SEARCH)


def test_many_to_many_with_ids_matches_the_aligned_case_on_shared_rows():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(50, 8)).astype(np.float32)
    a = base + 0.8 * rng.normal(size=base.shape).astype(np.float32)
    b = base + 0.8 * rng.normal(size=base.shape).astype(np.float32)
    aligned = protocols.many_to_many({"a": a, "b": b})
    # shuffle b's rows and drop some of a's: the ids restore the pairs
    order = rng.permutation(50)
    joined = protocols.many_to_many(
        {"a": a, "b": b[order]},
        ids={"a": [str(i) for i in range(50)], "b": [str(i) for i in order]},
    )
    assert joined["pairs"] != {} and joined["shared"] == {"a-b": 50}
    # the ids are compared as strings in sorted order, so rows are permuted, not P@1
    perm = sorted(range(50), key=str)
    want = retrieval.evaluate(a[perm], b[perm])
    assert joined["pairs"]["a-b"] == want["p_at_1_src2tgt"]
    assert sorted(aligned["pairs"]) == sorted(joined["pairs"])
    json.dumps(joined)  # plain types: it goes into benchmarks.json
