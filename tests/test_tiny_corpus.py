import json
import zlib

import numpy as np
import pytest

from mlrep.data import registry, stand_in
from mlrep.data.tiny_corpus import (
    IDS_SUFFIX,
    CorpusLayoutError,
    Settings,
    build,
    canonical_language,
    ids_file,
    segment_id,
    split_of,
)
from mlrep.data.validate import Filters
from mlrep.data.wheels import WheelPin
from mlrep.embed import benchmarks
from tests.conftest import po_text

SENTENCES = [f"Sentence number {i} about {w}" for i, w in enumerate(["cats", "dogs", "birds"] * 40)]


def _catalog(lang: str, prefix: str, sentences=SENTENCES) -> str:
    return po_text(lang, "".join(f'msgid "{s}"\nmsgstr "{prefix} {s}"\n\n' for s in sentences))


def _settings(**overrides) -> Settings:
    values = dict(
        packages=["django"],
        languages="all",
        required_languages=[],
        valid_fraction=0.1,
        test_fraction=0.2,
        max_chars=200,
        min_segments=10,
        target_segments=100,
    )
    values.update(overrides)
    return Settings(**values)


def _pin(path) -> WheelPin:
    return WheelPin(path.name.split("-")[0], "1.0", path.name, "0" * 64, "MIT")


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("de", ("de", 0)),
        ("pt_BR", ("pt", 1)),
        ("zh_Hans", ("zh", 0)),
        ("zh_CN", ("zh", 0)),
        ("zh_TW", ("zh_Hant", 0)),
        ("zh_Hant_HK", ("zh_Hant", 1)),
        ("sr_Latn", ("sr_Latn", 0)),
        ("sr@latin", ("sr_Latn", 0)),
        ("en", None),
        ("en_GB", None),
    ],
)
def test_canonical_language(locale, expected):
    assert canonical_language(locale) == expected


def test_split_is_a_function_of_the_english_text_with_the_requested_fractions():
    texts = [f"segment {i}" for i in range(20000)]
    splits = [split_of(t, 0.1, 0.2) for t in texts]
    assert splits == [split_of(t, 0.1, 0.2) for t in texts]
    assert abs(splits.count("test") / len(texts) - 0.2) < 0.02
    assert abs(splits.count("valid") / len(texts) - 0.1) < 0.02


def _read(folder, name):
    return (folder / name).read_text(encoding="utf-8").splitlines()


def test_build_writes_aligned_splits_and_a_manifest(tmp_path, wheel_factory):
    wheel = wheel_factory("alpha", {"de": _catalog("de", "DE"), "ja": _catalog("ja", "JA")})
    out = tmp_path / "corpus"
    out.mkdir()
    manifest = build([(_pin(wheel), wheel)], out, _settings())
    for lang in ("de", "ja"):
        assert manifest["languages"][lang]["total"] == len(SENTENCES)
        for split in ("train", "valid", "test"):
            ids = _read(out, f"{split}.en-{lang}.{IDS_SUFFIX}")
            en = _read(out, f"{split}.en-{lang}.en")
            xx = _read(out, f"{split}.en-{lang}.{lang}")
            assert len(ids) == len(en) == len(xx) == manifest["languages"][lang][split]
            assert all(x == f"{lang.upper()} {e}" for e, x in zip(en, xx, strict=True))
            assert ids == sorted(ids)
            assert all(segment_id(e) == i for e, i in zip(en, ids, strict=True))
    written = json.loads((out / "manifest.json").read_text())
    assert written == manifest
    assert set(manifest["files"]) == {p.name for p in out.iterdir()} - {"manifest.json"}


def test_a_sentence_is_in_the_same_split_in_every_language(tmp_path, wheel_factory):
    wheel = wheel_factory(
        "alpha",
        {
            "de": _catalog("de", "DE"),
            "fr": _catalog("fr", "FR"),
            "ja": _catalog("ja", "JA", SENTENCES[::2]),
        },
    )
    out = tmp_path / "c"
    out.mkdir()
    build([(_pin(wheel), wheel)], out, _settings())
    where: dict[str, set[str]] = {}
    for lang in ("de", "fr", "ja"):
        for split in ("train", "valid", "test"):
            for sentence in _read(out, f"{split}.en-{lang}.en"):
                where.setdefault(sentence, set()).add(split)
    assert all(len(splits) == 1 for splits in where.values())
    assert sum(len(_read(out, f"{s}.en-ja.en")) for s in ("train", "valid", "test")) == 60


def test_build_is_byte_identical_when_repeated(tmp_path, wheel_factory):
    wheel = wheel_factory("alpha", {"de": _catalog("de", "DE"), "ru": _catalog("ru", "RU")})
    outs = []
    for name in ("one", "two"):
        out = tmp_path / name
        out.mkdir()
        build([(_pin(wheel), wheel)], out, _settings())
        outs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outs[0] == outs[1]


def test_duplicates_first_package_wins_and_bare_locale_beats_a_region(tmp_path, wheel_factory):
    first = wheel_factory("first", {"pt_BR": _catalog("pt", "BR"), "de": _catalog("de", "ONE")})
    second = wheel_factory("second", {"pt": _catalog("pt", "PT"), "de": _catalog("de", "TWO")})
    out = tmp_path / "c"
    out.mkdir()
    manifest = build([(_pin(first), first), (_pin(second), second)], out, _settings())
    translations = _read(out, "train.en-de.de") + _read(out, "train.en-pt.pt")
    assert all(t.startswith(("ONE ", "PT ")) for t in translations)
    assert manifest["languages"]["de"]["dropped"]["duplicate"] == len(SENTENCES)
    assert manifest["languages"]["pt"]["catalog_locales"] == ["pt", "pt_BR"]


def test_short_languages_are_reported_and_tiny_ones_not_written(tmp_path, wheel_factory):
    wheel = wheel_factory(
        "alpha", {"de": _catalog("de", "DE"), "ko": _catalog("ko", "KO", SENTENCES[:5])}
    )
    out = tmp_path / "c"
    out.mkdir()
    manifest = build([(_pin(wheel), wheel)], out, _settings(target_segments=200))
    assert manifest["languages"]["ko"]["written"] is False
    assert not (out / "train.en-ko.ko").exists()
    assert "below the target of 200" in manifest["short_languages"]["de"]
    assert "not written" in manifest["short_languages"]["ko"]


def test_language_selection(tmp_path, wheel_factory):
    wheel = wheel_factory("alpha", {"de": _catalog("de", "DE"), "fr": _catalog("fr", "FR")})
    out = tmp_path / "c"
    out.mkdir()
    manifest = build([(_pin(wheel), wheel)], out, _settings(languages=["fr"]))
    assert set(manifest["languages"]) == {"fr"}


def _meaning(sentences: list[str]) -> np.ndarray:
    """A translation's vector: its catalog's English after the language prefix (``ID Sentence
    ...`` and ``DE Sentence ...`` embed alike), so retrieval is exact when the ids pair rows."""
    rows = [sentence.split(" ", 1)[1] for sentence in sentences]
    return np.stack([np.random.default_rng(zlib.crc32(r.encode())).normal(size=16) for r in rows])


def test_indonesian_keeps_its_text_and_its_segment_ids(tmp_path, wheel_factory):
    """Indonesian's code, ``id``, once was the ids' suffix: its text overwrote its segment ids.
    Both survive, and the ids pair its lines with German's in a benchmark and a stand-in."""
    wheel = wheel_factory("alpha", {"id": _catalog("id", "ID"), "de": _catalog("de", "DE")})
    out = tmp_path / "tiny_corpus"
    out.mkdir()
    manifest = build([(_pin(wheel), wheel)], out, _settings())
    assert manifest["languages"]["id"]["total"] == len(SENTENCES)
    for split in ("train", "valid", "test"):
        en = _read(out, f"{split}.en-id.en")
        assert _read(out, f"{split}.en-id.id") == [f"ID {e}" for e in en]
        assert _read(out, f"{split}.en-id.{IDS_SUFFIX}") == [segment_id(e) for e in en]
        assert ids_file(out / f"{split}.en-id.id").name == f"{split}.en-id.{IDS_SUFFIX}"
    spec = {"split": "test", "min_shared": 5, "codes": {}, "groups": {"pair": ["de", "id"]}}
    metrics, details = benchmarks.flores(_meaning, out, spec, block_size=8)
    assert details["shared"] == {"de-id": manifest["languages"]["id"]["test"]}
    assert metrics["flores_de-id"] == metrics["flores_id-de"] == 100.0
    codes = {"ind": "id", "deu": "de"}
    settings = stand_in.Settings(split="test", pairs=0, seed=1, codes=codes)
    tatoeba = tmp_path / "laser_tatoeba_v1"
    stand_in.cut(registry.get("laser_tatoeba_v1"), out, tatoeba, ["ind"], settings, Filters())
    english = _read(tatoeba, "test.ind-eng.eng")
    assert _read(tatoeba, "test.ind-eng.ind") == [f"ID {e}" for e in english]
    assert sorted(english) == sorted(_read(out, "test.en-id.en"))


def test_a_reader_of_an_old_corpus_names_the_rebuild(tmp_path):
    """A corpus of format 1 has ``.id`` ids: the reader asks for a rebuild, not a line count."""
    for suffix in ("en", "de", "id"):
        (tmp_path / f"test.en-de.{suffix}").write_text("Save\n")
    with pytest.raises(
        CorpusLayoutError, match=r"test\.en-de\.segids.*snakemake results/data/tiny"
    ):
        ids_file(tmp_path / "test.en-de.de")
