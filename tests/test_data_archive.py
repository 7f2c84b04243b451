"""Safe extraction: real archives built in tmp, including hostile and truncated ones."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from mlrep.cli import main
from mlrep.data.archive import ArchiveError, extract


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def test_tar_gz_extracts_into_target(tmp_path):
    archive = _tar(
        tmp_path / "ok.tar.gz",
        [(_file("corpus/a.txt"), b"one\n"), (_link("corpus/b.txt", "a.txt"), None)],
    )
    out = extract(archive, tmp_path / "out")
    assert (out / "corpus/a.txt").read_bytes() == b"one\n"
    assert (out / "corpus/b.txt").read_bytes() == b"one\n"


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ((_file("../evil.txt"), b"x"), "contains '..'"),
        ((_file("corpus/../../evil.txt"), b"x"), "contains '..'"),
        ((_file("/etc/evil.txt"), b"x"), "absolute path"),
        ((_link("corpus/link", "../../outside"), None), "points outside"),
        ((_link("corpus/link", "/etc/passwd"), None), "points outside"),
        ((_link("hard", "../outside", tarfile.LNKTYPE), None), "points outside"),
    ],
)
def test_hostile_tar_members_are_rejected_and_nothing_is_written(tmp_path, member, reason):
    archive = _tar(tmp_path / "bad.tar.gz", [(_file("fine.txt"), b"ok\n"), member])
    target = tmp_path / "out"
    target.mkdir()
    (target / "previous.txt").write_text("kept\n")
    with pytest.raises(ArchiveError, match=reason):
        extract(archive, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tar.gz", "out"]
    assert [p.name for p in target.iterdir()] == ["previous.txt"]
    assert not (tmp_path / "evil.txt").exists()


def test_zip_with_parent_path_is_rejected(tmp_path):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok.txt", "fine")
        zf.writestr("../evil.txt", "bad")
    with pytest.raises(ArchiveError, match=r"contains '\.\.'"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.txt").exists()


def test_zip_extracts(tmp_path):
    archive = tmp_path / "en-fr.txt.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("Corpus.en-fr.en", "hello\n")
        zf.writestr("Corpus.en-fr.fr", "bonjour\n")
    out = extract(archive, tmp_path / "out")
    assert (out / "Corpus.en-fr.fr").read_text() == "bonjour\n"


def test_truncated_gzip_is_a_clear_error_and_leaves_nothing(tmp_path):
    whole = gzip.compress(("line\n" * 50_000).encode())
    archive = tmp_path / "mono.txt.gz"
    archive.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ArchiveError, match=r"truncated or corrupt.*fetch it again"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["mono.txt.gz"]


def test_truncated_tar_gz_is_a_clear_error(tmp_path):
    archive = _tar(tmp_path / "t.tar.gz", [(_file("big.bin"), bytes(range(256)) * 4000)])
    archive.write_bytes(archive.read_bytes()[:-200])
    with pytest.raises(ArchiveError, match="truncated or corrupt"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_single_gzip_file_decompresses(tmp_path):
    archive = tmp_path / "ja.txt.gz"
    archive.write_bytes(gzip.compress("日本語\n".encode()))
    out = extract(archive, tmp_path / "out")
    assert (out / "ja.txt").read_text(encoding="utf-8") == "日本語\n"


def test_cli_extract_refuses_hostile_archive(tmp_path, capsys):
    archive = _tar(tmp_path / "bad.tgz", [(_file("../x"), b"x")])
    assert main(["data", "extract", str(archive), "--out", str(tmp_path / "o")]) == 2
    assert "refusing to extract" in capsys.readouterr().err
