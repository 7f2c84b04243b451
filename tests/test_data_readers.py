"""Archive-based readers end to end: fetch through a loopback mirror, then normalise.

The archives are built here in the layouts the sources publish (OPUS Moses zips, the Flores
tarball); nothing is downloaded from outside.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest

from mlrep.data import download, readers, registry
from mlrep.data.validate import Filters
from tests.test_data_download import FAST, serve


def _opus_zip(path, corpus: str, pair: str, rows: list[tuple[str, str]]) -> None:
    l1, l2 = pair.split("-")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{corpus}.{pair}.{l1}", "".join(a + "\n" for a, _ in rows))
        zf.writestr(f"{corpus}.{pair}.{l2}", "".join(b + "\n" for _, b in rows))
        zf.writestr("README", "OPUS release notes\n")
        zf.writestr("LICENSE", "licence text\n")


def _fetch(key, site, dest, lock, languages=None):
    with serve(site) as server:
        dataset = registry.get(key)
        download.fetch(
            dataset, dest, languages=languages, mirror=server.url, lock=lock, policy=FAST
        )
    return dataset


def test_opus_moses_zips_become_aligned_pairs(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _opus_zip(
        site / "de-en.txt.zip",
        "ParaCrawl",
        "de-en",
        [
            ("Hallo Welt", "Hello world"),
            ("", "empty"),
            ("Hallo Welt", "Hello world"),
            ("Ja", "Yes"),
        ],
    )
    _opus_zip(site / "en-fr.txt.zip", "ParaCrawl", "en-fr", [("Thanks", "Merci")])
    lock = registry.Lock(tmp_path / "lock.yaml")
    raw = tmp_path / "raw"
    dataset = _fetch("opus_paracrawl_v5", site, raw, lock, ["de", "fr"])
    assert sorted(lock.entries("opus_paracrawl_v5")) == ["de-en.txt.zip", "en-fr.txt.zip"]
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters(drop_duplicates=True))
    assert (out / "train.de-en.de").read_text() == "Hallo Welt\nJa\n"
    assert (out / "train.de-en.en").read_text() == "Hello world\nYes\n"
    assert (out / "train.en-fr.fr").read_text() == "Merci\n"
    assert meta["pairs"]["train.de-en"]["filtered"] == {"empty": 1, "too_long": 0, "duplicate": 1}
    assert sorted(meta["raw_files"]) == ["de-en.txt.zip", "en-fr.txt.zip"]
    only_fr = readers.normalize(dataset, raw, tmp_path / "fr", ["fr"], Filters())
    assert list(only_fr["pairs"]) == ["train.en-fr"] and list(only_fr["raw_files"]) == [
        "en-fr.txt.zip"
    ]
    with pytest.raises(readers.ReaderError, match=r"\['it'\].*were not fetched"):
        readers.normalize(dataset, raw, tmp_path / "it", ["it"], Filters())


def test_opus_zip_without_the_expected_members_is_a_clear_error(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _opus_zip(site / "de-en.txt.zip", "ParaCrawl", "de-fr", [("a", "b")])
    raw = tmp_path / "raw"
    dataset = _fetch("opus_paracrawl_v5", site, raw, registry.Lock(tmp_path / "l.yaml"), ["de"])
    with pytest.raises(readers.ReaderError, match=r"expected one member named \*\.de-en\.de"):
        readers.normalize(dataset, raw, tmp_path / "out", None, Filters())
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if "scratch" in p.name] == []


def _flores_tar(path, languages: dict[str, list[str]]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for split in ("dev", "devtest"):
            for code, lines in languages.items():
                data = "".join(f"{split} {line}\n" for line in lines).encode()
                info = tarfile.TarInfo(f"flores200_dataset/{split}/{code}.{split}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def test_flores_archive_becomes_multiway_splits(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _flores_tar(
        site / "flores200_dataset.tar.gz",
        {"eng_Latn": ["one", "two"], "fra_Latn": ["un", "deux"], "jpn_Jpan": ["一", "二"]},
    )
    raw = tmp_path / "raw"
    dataset = _fetch("flores_flores200", site, raw, registry.Lock(tmp_path / "lock.yaml"))
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, ["eng_Latn", "jpn_Jpan"], Filters())
    assert sorted(p.name for p in out.iterdir()) == [
        "dev.multiway.eng_Latn",
        "dev.multiway.jpn_Jpan",
        "devtest.multiway.eng_Latn",
        "devtest.multiway.jpn_Jpan",
        "metadata.json",
    ]
    assert (out / "devtest.multiway.jpn_Jpan").read_text(
        encoding="utf-8"
    ) == "devtest 一\ndevtest 二\n"
    assert meta["pairs"]["devtest.multiway"]["lines"] == 2
    assert json.loads((out / "metadata.json").read_text())["languages"] == ["eng_Latn", "jpn_Jpan"]
    with pytest.raises(readers.ReaderError, match=r"\['xxx_Latn'\] .* are not in the archive"):
        readers.normalize(dataset, raw, tmp_path / "bad", ["xxx_Latn"], Filters())
