"""Validation (structural errors stop; content filters count) and the Tatoeba reader."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from mlrep.cli import main
from mlrep.data import readers, registry, validate
from mlrep.data.download import MANIFEST
from mlrep.data.validate import Filters, StructuralError
from mlrep.io import sha256_file
from tests import tatoeba_helpers


def _pair(tmp_path, src: bytes, tgt: bytes):
    a, b = tmp_path / "x.de", tmp_path / "x.en"
    a.write_bytes(src)
    b.write_bytes(tgt)
    return [a, b]


def test_different_line_counts_name_the_short_file_and_line(tmp_path):
    paths = _pair(tmp_path, b"eins\nzwei\n", b"one\ntwo\nthree\n")
    with pytest.raises(StructuralError, match=r"x\.de:3: ends after 2 lines but .*x\.en"):
        list(validate.parallel(paths))


def test_invalid_utf8_names_file_and_line(tmp_path):
    paths = _pair(tmp_path, b"gut\n\xff\xfebad\n", b"good\nbad\n")
    with pytest.raises(StructuralError, match=r"x\.de:2: invalid UTF-8 at byte 0"):
        list(validate.parallel(paths))


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\u2028", "\x85", "\r"])
def test_control_characters_inside_a_line_are_structural(tmp_path, char):
    paths = _pair(tmp_path, f"a{char}b\n".encode(), b"ab\n")
    with pytest.raises(StructuralError, match=r"x\.de:1: control character U\+"):
        list(validate.parallel(paths))


def test_crlf_line_endings_and_tabs_are_accepted(tmp_path):
    paths = _pair(tmp_path, b"a\tb\r\nc\r\n", b"x\ny\n")
    assert list(validate.parallel(paths)) == [("a\tb", "x"), ("c", "y")]


def test_content_filters_count_what_they_remove(tmp_path):
    rows = iter([("a", "b"), ("", "b"), ("  ", "b"), ("long" * 10, "b"), ("a", "b"), ("c", "d")])
    counts: dict[str, int] = {}
    kept = list(validate.filtered(rows, Filters(max_chars=20, drop_duplicates=True), counts))
    assert kept == [("a", "b"), ("c", "d")]
    assert counts == {"input": 6, "empty": 2, "too_long": 1, "duplicate": 1, "kept": 2}
    counts = {}
    assert len(list(validate.filtered(iter([("", "b")]), Filters(drop_empty=False), counts))) == 1


@pytest.fixture(scope="module")
def tatoeba(tatoeba_registry):
    return tatoeba_helpers.dataset(tatoeba_registry)


@pytest.fixture
def fetched(tmp_path, tatoeba_raw):
    """A raw folder laid out as `mlrep data fetch` leaves it, for some languages."""

    def place(languages):
        raw = tmp_path / "raw"
        raw.mkdir(exist_ok=True)
        files = {}
        for lang in languages:
            for side in (lang, "eng"):
                name = f"tatoeba.{lang}-eng.{side}"
                shutil.copy(tatoeba_raw / name, raw / name)
                files[name] = sha256_file(raw / name)
        (raw / MANIFEST).write_text(json.dumps({"files": files}))
        return raw

    return place


def test_tatoeba_normalises_to_aligned_text_and_metadata(tmp_path, fetched, tatoeba, tatoeba_raw):
    raw = fetched(["jpn", "kor"])
    meta = readers.normalize(tatoeba, raw, tmp_path / "out", None, Filters())
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "metadata.json",
        "test.jpn-eng.eng",
        "test.jpn-eng.jpn",
        "test.kor-eng.eng",
        "test.kor-eng.kor",
    ]
    jpn = (tatoeba_raw / "tatoeba.jpn-eng.jpn").read_bytes()
    assert (out / "test.jpn-eng.jpn").read_bytes() == jpn
    assert json.loads((out / "metadata.json").read_text()) == meta
    assert meta["source_key"] == tatoeba_helpers.KEY
    assert meta["languages"] == ["eng", "jpn", "kor"]
    pair = meta["pairs"]["test.jpn-eng"]
    assert pair["lines"] == pair["input_lines"] == 1000
    assert pair["filtered"] == {"empty": 0, "too_long": 0, "duplicate": 0}
    assert pair["files"]["test.jpn-eng.jpn"] == sha256_file(out / "test.jpn-eng.jpn")
    assert meta["raw_files"]["tatoeba.kor-eng.kor"] == sha256_file(raw / "tatoeba.kor-eng.kor")


def test_a_structural_error_keeps_the_previous_output(tmp_path, fetched, tatoeba):
    raw = fetched(["jpn"])
    out = tmp_path / "out"
    readers.normalize(tatoeba, raw, out, ["jpn"], Filters())
    before = (out / "metadata.json").read_text()
    broken = raw / "tatoeba.jpn-eng.eng"
    broken.write_bytes(broken.read_bytes() + b"extra line\n")
    with pytest.raises(StructuralError, match=r"tatoeba\.jpn-eng\.jpn:1001: ends after 1000"):
        readers.normalize(tatoeba, raw, out, ["jpn"], Filters())
    assert (out / "metadata.json").read_text() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_unfetched_language_and_missing_reader_are_clear_errors(tmp_path, fetched, tatoeba):
    raw = fetched(["jpn"])
    with pytest.raises(readers.ReaderError, match=r"\['deu'\].*not fetched"):
        readers.normalize(tatoeba, raw, tmp_path / "o", ["deu"], Filters())
    unknown = dataclasses.replace(tatoeba, reader="nonesuch")
    with pytest.raises(readers.ReaderError, match="no reader yet"):
        readers.normalize(unknown, raw, tmp_path / "o", None, Filters())
    with pytest.raises(readers.ReaderError, match=r"flores200_dataset\.tar\.gz was not fetched"):
        readers.normalize(registry.get("flores_flores200"), raw, tmp_path / "o", None, Filters())


def test_cli_normalize_takes_filters_as_flags(tmp_path, capsys, fetched, tatoeba_registry):
    raw = fetched(["cmn"])
    code = main(
        ["data", "normalize", tatoeba_helpers.KEY, "--raw", str(raw), "--out",
         str(tmp_path / "out"), "--languages", "all", "--drop-empty", "true", "--max-chars",
         "30", "--drop-duplicates", "true", "--scale", "tiny", "--registry",
         str(tatoeba_registry)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert (tmp_path / "out" / "provenance.json").exists()
    pair = meta["pairs"]["test.cmn-eng"]
    assert meta["filters"] == {
        "drop_empty": True,
        "max_chars": 30,
        "drop_duplicates": True,
        "langid_sample": 0,
        "max_lines": 0,
    }
    assert pair["filtered"]["too_long"] > 0
    assert pair["lines"] + sum(pair["filtered"].values()) == pair["input_lines"] == 1000
    text = (tmp_path / "out" / "test.cmn-eng.cmn").read_text(encoding="utf-8")
    assert len(text.splitlines()) == pair["lines"]


def test_language_id_sample_records_labels_and_flags_swapped_sides(tmp_path, fetched, tatoeba):
    raw = fetched(["jpn", "deu"])
    meta = readers.normalize(tatoeba, raw, tmp_path / "out", None, Filters(langid_sample=50))
    check = meta["pairs"]["test.jpn-eng"]["langid"]
    assert check["sample"] == 50 and check["warnings"] == []
    assert next(iter(check["detected"]["jpn"])) == "ja"
    assert next(iter(check["detected"]["eng"])) == "en"
    assert check["detected"]["jpn"]["ja"] > 0.9
    english = raw / "tatoeba.deu-eng.eng"  # an English file where German belongs
    shutil.copy(english, raw / "tatoeba.deu-eng.deu")
    meta = readers.normalize(tatoeba, raw, tmp_path / "out", ["deu"], Filters(langid_sample=50))
    assert meta["pairs"]["test.deu-eng"]["langid"]["warnings"] == [
        "deu and eng are both mostly detected as 'en'"
    ]
