"""Fine-tuning pools (`mlrep.data.pools`): nested prefixes of one seeded permutation, held-out
sets left out, non-English pairs joined on segment ids with their bunsetsu spans, and the
leak-free pre-training text that leaves every pool and held-out id out of every language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlrep.data import monolingual, pools
from mlrep.data.tiny_corpus import IDS_SUFFIX

LANGUAGES = ("ja", "zh", "ko")
SPLIT_LINES = {"train": 40, "valid": 6, "test": 6}


def write_corpus(root: Path, kept: int = 30) -> tuple[Path, Path, Path]:
    """(corpus with segment ids, its words folder, its bunsetsu folder): an English-centric
    multi-way corpus (segment <split><k> in every pair; zh lacks every third segment), the words
    being the first `kept` training lines of each file, as `preprocess.max_lines` keeps them.
    Training segment train3 is a valid segment, as a corpus built otherwise could have it."""
    corpus, words, bunsetsu = root / "corpus", root / "tok", root / "bunsetsu"
    for folder in (corpus, words, bunsetsu):
        folder.mkdir(parents=True)
    (corpus / "manifest.json").write_text("{}\n")  # the record leak-free text fingerprints
    for split, count in SPLIT_LINES.items():
        segments = [f"{split}{k}" for k in range(count)]
        if split == "train":
            segments[3] = "valid0"
        for lang in LANGUAGES:
            ids = [s for k, s in enumerate(segments) if lang != "zh" or k % 3]
            stem = f"{split}.en-{lang}"
            (corpus / f"{stem}.{IDS_SUFFIX}").write_text("".join(f"{s}\n" for s in ids))
            for side in ("en", lang):
                lines = [f"{side} {s}" for s in ids]
                (corpus / f"{stem}.{side}").write_text("".join(f"{t}\n" for t in lines))
                shown = lines[:kept] if split == "train" else lines
                (words / f"{stem}.{side}").write_text("".join(f"{t} w\n" for t in shown))
            if lang == "ja":
                spans = [f"0:2 2:3 #{s[::-1]}" for s in ids]  # marked with the segment, unsorted
                shown = spans[:kept] if split == "train" else spans
                (bunsetsu / f"{stem}.ja").write_text("".join(f"{t}\n" for t in shown))
    return corpus, words, bunsetsu


def settings(pool: int = 0, seed: int = 1) -> pools.PoolSettings:
    return pools.PoolSettings(pool=pool, max_valid=4, max_test=0, seed=seed)


def read(folder: Path, name: str) -> list[str]:
    return (folder / name).read_text().splitlines()


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path)


def test_smaller_pools_are_prefixes_of_larger_ones(corpus, tmp_path):
    ids, words, _ = corpus
    made = {}
    for size in (5, 12, 0):
        out = tmp_path / f"pool{size}"
        pools.build(words, ids, "ja-en", out, settings(size))
        made[size] = read(out, "train.ids")
    assert len(made[5]) == 5 and len(made[12]) == 12
    assert made[12][:5] == made[5] and made[0][:12] == made[12]
    assert made[0] != sorted(made[0])  # permuted, not the corpus order
    other = tmp_path / "seed2"
    pools.build(words, ids, "ja-en", other, settings(12, seed=2))
    assert read(other, "train.ids") != made[12]


def test_pool_lines_stay_aligned_with_their_ids(corpus, tmp_path):
    ids, words, _ = corpus
    out = tmp_path / "pool"
    pools.build(words, ids, "ja-en", out, settings(10))
    for segment, ja, en in zip(
        read(out, "train.ids"), read(out, "train.ja"), read(out, "train.en"), strict=True
    ):
        assert (ja, en) == (f"ja {segment} w", f"en {segment} w")


def test_pool_is_disjoint_from_the_held_out_sets_and_within_the_words(corpus, tmp_path):
    ids, words, _ = corpus
    out = tmp_path / "pool"
    counts = pools.build(words, ids, "ja-en", out, settings())
    train = set(read(out, "train.ids"))
    assert "valid0" not in train and counts["train_held_out_ids"] == 1
    assert len(train) == 29  # the 30 preprocessed lines, less the valid segment
    assert train <= {f"train{k}" for k in range(30)}
    assert read(out, "valid.ids") == [f"valid{k}" for k in range(4)]  # max_valid: the first 4
    assert len(read(out, "test.ids")) == SPLIT_LINES["test"]  # max_test 0: all
    metadata = json.loads((out / pools.METADATA).read_text())
    assert metadata["counts"] == {
        "train_words": 30,
        "train_held_out_ids": 1,
        "train_lines": 29,
        "valid_lines": 4,
        "test_lines": 6,
    }


def test_ja_zh_is_joined_on_segment_ids_with_the_bunsetsu_spans(corpus, tmp_path):
    ids, words, bunsetsu = corpus
    out = tmp_path / "pool"
    pools.build(words, ids, "ja-zh", out, settings(), {("ja", "bunsetsu"): bunsetsu})
    segments = read(out, "train.ids")
    shared = {f"train{k}" for k in range(30) if k % 3} - {"train3"}
    assert set(segments) == shared  # zh lacks every third segment
    for segment, ja, zh, spans in zip(
        segments,
        read(out, "train.ja"),
        read(out, "train.zh"),
        read(out, "train.ja.bunsetsu"),
        strict=True,
    ):
        assert (ja, zh, spans) == (
            f"ja {segment} w",
            f"zh {segment} w",
            f"0:2 2:3 #{segment[::-1]}",
        )


def test_aligned_files_that_miss_a_segment_name_the_folder(corpus, tmp_path):
    ids, words, bunsetsu = corpus
    spans = bunsetsu / "valid.en-ja.ja"
    spans.write_text("".join(spans.read_text().splitlines(keepends=True)[:2]))
    with pytest.raises(pools.PoolError, match="bunsetsu"):
        pools.build(
            words, ids, "ja-en", tmp_path / "pool", settings(), {("ja", "bunsetsu"): bunsetsu}
        )


def test_pretraining_text_holds_no_pool_or_held_out_segment(corpus, tmp_path):
    """The leak test: with every pool's training ids excluded, no segment of a pool or of a
    held-out set is in any language's pre-training text, and without the exclusion some are."""
    ids, words, _ = corpus
    used: set[str] = set()
    excluded: list[str] = []
    for pair in ("ja-en", "ja-zh", "en-ko"):
        out = tmp_path / pair
        pools.build(words, ids, pair, out, settings(8))
        excluded += read(out, "train.ids")
        used.update(excluded, *(read(out, f"{split}.ids") for split in ("valid", "test")))
    held = monolingual.MonolingualSettings(
        held_out_splits=["valid", "test"], drop_held_out_text=True
    )

    def leaked(exclude: list[str]) -> set[str]:
        text = tmp_path / f"mono{len(exclude)}"
        monolingual.write(ids, ["en", *LANGUAGES], text, held, exclude)
        return used & {s for lang in ("en", *LANGUAGES) for s in read(text, f"{lang}.id")}

    assert not leaked(excluded)
    assert leaked([])  # the check can fail: the pools' segments are training text otherwise


def test_a_corpus_without_segment_ids_is_numbered_from_its_own_files(tmp_path):
    """A registry download's words (ASPEC-JC: ``<split>.ja-zh.<lang>``, no ``.segids``): the
    pair's own lines, numbered per split, the bunsetsu spans carried along line by line."""
    words, spans = tmp_path / "tok", tmp_path / "bunsetsu"
    for folder in (words, spans):
        folder.mkdir()
    for split, count in SPLIT_LINES.items():
        for lang in ("ja", "zh"):
            text = "".join(f"{lang} {split}{k}\n" for k in range(count))
            (words / f"{split}.ja-zh.{lang}").write_text(text)
        marks = "".join(f"0:1 #{split}{k}\n" for k in range(count))
        (spans / f"{split}.ja-zh.ja").write_text(marks)
    out = tmp_path / "pool"
    counts = pools.build(words, None, "ja-zh", out, settings(8), {("ja", "bunsetsu"): spans})
    assert counts["train_lines"] == 8 and counts["valid_lines"] == 4
    for split in ("train", "valid"):
        rows = zip(
            read(out, f"{split}.ids"),
            read(out, f"{split}.ja"),
            read(out, f"{split}.zh"),
            read(out, f"{split}.ja.bunsetsu"),
            strict=True,
        )
        for segment, ja, zh, marks in rows:
            number = segment.removeprefix(f"{split}.ja-zh:")
            assert ja == f"ja {split}{number}" and zh == f"zh {split}{number}"
            assert marks == f"0:1 #{split}{number}"
    (words / "train.ja-zh.ja").unlink()
    with pytest.raises(pools.PoolError, match=r"train\.ja-zh\.ja or train\.zh-ja\.ja"):
        pools.build(words, None, "ja-zh", tmp_path / "other", settings())
