"""The New-Tatoeba builder (`mlrep.embed.new_tatoeba`): which pairs it keeps, what it samples,
what it records, and the errors it names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlrep import cli
from mlrep.embed import new_tatoeba
from mlrep.embed.align_data import AlignDataError, pair_sentences
from mlrep.embed.settings import EmsConfigError, NewTatoebaSettings

# per split: en-de 30 own lines, en-fr 20, en-ja 12, with segment ids 0..count-1, so de and fr
# share 20 segments per split and ja shares 12 with each
SIZES = {"en-de": 30, "en-fr": 20, "en-ja": 12}


def write_split(folder: Path, split: str) -> None:
    """English-centric files with segment ids, every line unique to its split and pair."""
    folder.mkdir(parents=True, exist_ok=True)
    for pair, count in SIZES.items():
        lang = pair.split("-")[1]
        ids = [f"{split}-{i:03d}" for i in range(count)]
        sides = {
            "en": [f"{split} english {i}" for i in range(count)],
            lang: [f"{split} {lang} {i}" for i in range(count)],
            "segids": ids,
        }
        for suffix, lines in sides.items():
            (folder / f"{split}.{pair}.{suffix}").write_text("".join(f"{x}\n" for x in lines))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    for split in ("valid", "test", "train"):
        write_split(folder, split)
    return folder


def settings(**changes) -> NewTatoebaSettings:
    values = {
        "splits": ("valid", "test"),
        "min_examples": 30,
        "sample": 10,
        "seed": 1,
        "languages": ("en", "de", "fr", "ja"),
    }
    return NewTatoebaSettings(**{**values, **changes})


def test_pairs_below_the_threshold_are_left_out_with_their_size(corpus, tmp_path):
    # merged over valid + test: en-de 60, en-fr 40, de-fr 40 (joined), en-ja 24, de-ja 24,
    # fr-ja 24
    index = new_tatoeba.build(corpus, tmp_path / "out", settings(min_examples=40))
    assert {p: v["examples"] for p, v in index["pairs"].items()} == {
        "de-fr": 40,
        "en-de": 60,
        "en-fr": 40,
    }
    assert index["left_out"] == {"de-ja": 24, "en-ja": 24, "fr-ja": 24}
    assert (index["english_pairs"], index["other_pairs"]) == (2, 1)
    higher = new_tatoeba.build(corpus, tmp_path / "out2", settings(min_examples=41))
    assert list(higher["pairs"]) == ["en-de"]


def test_only_pairs_of_two_allowed_languages_are_candidates(corpus, tmp_path):
    index = new_tatoeba.build(corpus, tmp_path / "out", settings(languages=("en", "fr", "ja")))
    assert list(index["pairs"]) == ["en-fr"]
    assert set(index["left_out"]) == {"en-ja", "fr-ja"}


def test_each_kept_pair_holds_exactly_the_sample_at_its_recorded_rows(corpus, tmp_path):
    out = tmp_path / "out"
    index = new_tatoeba.build(corpus, out, settings(sample=25))
    assert new_tatoeba.pairs(out) == list(index["pairs"]) == ["de-fr", "en-de", "en-fr"]
    for pair, entry in index["pairs"].items():
        rows = entry["indices"]
        assert len(rows) == len(set(rows)) == 25 and rows == sorted(rows)
        assert rows[0] >= 0 and rows[-1] < entry["examples"]
        # the rows index the splits' examples concatenated in the settings' order
        merged = [pair_sentences(corpus, split, pair) for split in ("valid", "test")]
        src = [s for part in merged for s in part.src]
        tgt = [t for part in merged for t in part.tgt]
        built = pair_sentences(out, new_tatoeba.SPLIT, pair)
        assert built.src == [src[r] for r in rows] and built.tgt == [tgt[r] for r in rows]
    recorded = json.loads((out / new_tatoeba.INDEX).read_text())
    assert recorded["pairs"] == index["pairs"] and recorded["settings"]["seed"] == 1
    # held-out lines only: nothing of the train split
    assert not any("train" in line for line in (out / "eval.en-de.de").read_text().splitlines())


def test_joined_pairs_keep_their_translations_together(corpus, tmp_path):
    out = tmp_path / "out"
    new_tatoeba.build(corpus, out, settings())
    joined = pair_sentences(out, new_tatoeba.SPLIT, "de-fr")
    assert all(
        d.replace(" de ", " ") == f.replace(" fr ", " ")
        for d, f in zip(joined.src, joined.tgt, strict=True)
    )


def test_the_sample_depends_on_the_seed_and_the_pair_only(corpus, tmp_path):
    first = new_tatoeba.build(corpus, tmp_path / "a", settings())
    again = new_tatoeba.build(corpus, tmp_path / "b", settings())
    assert first["pairs"] == again["pairs"]
    assert (tmp_path / "a/eval.en-de.de").read_text() == (tmp_path / "b/eval.en-de.de").read_text()
    other_seed = new_tatoeba.build(corpus, tmp_path / "c", settings(seed=2))
    assert other_seed["pairs"]["en-de"]["indices"] != first["pairs"]["en-de"]["indices"]
    # dropping a language (and with it two pairs) leaves en-de's draw unchanged
    fewer = new_tatoeba.build(corpus, tmp_path / "d", settings(languages=("en", "de")))
    assert fewer["pairs"]["en-de"] == first["pairs"]["en-de"]
    # pairs of one size draw different rows
    assert first["pairs"]["en-fr"]["indices"] != first["pairs"]["de-fr"]["indices"]


def test_a_same_language_pair_is_no_candidate(tmp_path):
    """The Challenge's layout (own files per pair, no segment ids) ships paraphrase sets such
    as ita-ita beside the translation pairs."""
    folder = tmp_path / "challenge"
    folder.mkdir()
    for split in ("dev", "test"):
        for name in ("deu-eng.deu", "deu-eng.eng", "ita-ita.ita"):
            lines = "".join(f"{split} {name} {i}\n" for i in range(20))
            (folder / f"{split}.{name}").write_text(lines)
    challenge = settings(splits=("dev", "test"), languages=("deu", "eng", "ita"))
    index = new_tatoeba.build(folder, tmp_path / "out", challenge)
    assert index["pairs"]["deu-eng"]["examples"] == 40 and not index["left_out"]


def test_a_missing_split_is_named_with_its_folder(corpus, tmp_path):
    with pytest.raises(new_tatoeba.NewTatoebaError, match=r"corpus/dev\.<a>-<b>\.<a>.*'dev'"):
        new_tatoeba.build(corpus, tmp_path / "out", settings(splits=("dev", "test")))
    assert not (tmp_path / "out").exists()


def test_a_missing_side_is_named(corpus, tmp_path):
    (corpus / "test.en-de.de").unlink()
    with pytest.raises(AlignDataError, match=r"test\.en-de\.de"):
        new_tatoeba.build(corpus, tmp_path / "out", settings())


def test_a_sample_larger_than_the_threshold_is_refused():
    with pytest.raises(EmsConfigError, match="sample 31 exceeds min_examples 30"):
        settings(sample=31)
    with pytest.raises(EmsConfigError, match="languages"):
        settings(languages=())


def test_an_unbuilt_folder_names_its_index(tmp_path):
    with pytest.raises(new_tatoeba.NewTatoebaError, match=r"new_tatoeba\.json"):
        new_tatoeba.pairs(tmp_path)


def test_language_means_average_the_pairs_involving_each_language():
    means = new_tatoeba.by_language({"en-de": 80.0, "de-fr": 60.0, "en-fr": 40.0})
    assert means == {"de": 70.0, "en": 60.0, "fr": 50.0}


def test_the_cli_reads_its_section_and_records_the_build(corpus, tmp_path):
    params = tmp_path / "params.yaml"
    source = Path(__file__).resolve().parent.parent / "params.yaml"
    params.write_text(source.read_text())
    out = tmp_path / "out"
    args = ["embed", "new-tatoeba", "--params", str(params), "--section"]
    args += ["onealigner.new_tatoeba_set", "--corpus", str(corpus), "--out", str(out)]
    args += ["--min-examples", "40", "--sample", "20", "--languages", "en", "de", "fr"]
    assert cli.main(args) == 0
    index = json.loads((out / new_tatoeba.INDEX).read_text())
    # splits and seed from the params section (tiny: valid + test, seed 1)
    assert index["settings"]["splits"] == ["valid", "test"] and index["settings"]["seed"] == 1
    assert list(index["pairs"]) == ["de-fr", "en-de", "en-fr"]
    assert (out / "provenance.json").is_file()
