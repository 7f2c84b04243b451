"""`mlrep data fetch` against an in-process loopback HTTP server with fault injection.

The server is real HTTP (threaded ``http.server`` with Range support) on 127.0.0.1; faults
are injected per file: a connection dropped mid-body, HTTP 500, and missing files (404). It
serves a Tatoeba v1 look-alike the tests build (tests/tatoeba_helpers.py), pinned by sha256 in
a test registry file, so every check runs as on the real benchmark.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from mlrep.cli import main
from mlrep.data import download, registry
from mlrep.data.download import ChecksumError, DownloadError, Policy
from mlrep.data.registry_cli import fetch_values, normalize_values
from mlrep.io import sha256_file
from tests import tatoeba_helpers
from tests.conftest import REPO

FAST = Policy(retries=3, timeout=5, backoff=0.01, chunk_bytes=4096, progress=False)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        path = unquote(self.path.split("?", 1)[0]).lstrip("/")
        self.server.requests.append((path, self.headers.get("Range")))
        queue = self.server.faults.get(path, [])
        fault = queue.pop(0) if queue else None
        if fault == 500:
            self.send_error(500, "injected failure")
            return
        file = self.server.root / path
        if not file.is_file():
            self.send_error(404)
            return
        size = file.stat().st_size
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match and self.server.ranges:
            start = int(match.group(1))
            if start >= size:
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        limit = fault[1] if isinstance(fault, tuple) else None  # ("drop", n): close after n
        with open(file, "rb") as handle:
            handle.seek(start)
            sent = 0
            while chunk := handle.read(1 << 16):
                if limit is not None and sent + len(chunk) > limit:
                    self.wfile.write(chunk[: limit - sent])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(chunk)
                sent += len(chunk)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        self.faults: dict[str, list] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.ranges = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"


@contextlib.contextmanager
def serve(root: Path) -> Iterator[_Server]:
    """A loopback HTTP server for `root`, shut down on exit."""
    server = _Server(root)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def mirror(tatoeba_raw):
    with serve(tatoeba_raw) as server:
        yield server


@pytest.fixture
def lock(tmp_path):
    return registry.Lock(tmp_path / "lock.yaml")


@pytest.fixture(scope="module")
def tatoeba(tatoeba_registry):
    """The look-alike's registry entry (its files' sha256 pinned, as the real one's are)."""
    return tatoeba_helpers.dataset(tatoeba_registry)


TATOEBA_KEY = tatoeba_helpers.KEY


def fetch_tatoeba(dataset, server, dest, lock, languages=("jpn", "deu"), policy=FAST):
    return download.fetch(
        dataset, dest, languages=list(languages), mirror=server.url, lock=lock, policy=policy
    )


def test_fetch_through_mirror_publishes_verified_files(
    mirror, tmp_path, lock, tatoeba, tatoeba_raw
):
    dest = tmp_path / "raw"
    files = fetch_tatoeba(tatoeba, mirror, dest, lock)
    assert sorted(files) == [
        "tatoeba.deu-eng.deu",
        "tatoeba.deu-eng.eng",
        "tatoeba.jpn-eng.eng",
        "tatoeba.jpn-eng.jpn",
    ]
    for name, digest in files.items():
        assert (dest / name).read_bytes() == (tatoeba_raw / name).read_bytes()
        assert sha256_file(dest / name) == digest
    assert not list((dest / download.PARTIAL).rglob("*.part"))
    assert (dest / download.MANIFEST).exists()
    assert not lock.path.exists()  # pinned files never touch the lock
    mirror.requests.clear()
    fetch_tatoeba(tatoeba, mirror, dest, lock)  # a rerun verifies what is there and stays offline
    assert mirror.requests == []


def test_dropped_connection_resumes_with_range_and_identical_result(
    mirror, tmp_path, lock, tatoeba, tatoeba_raw
):
    name = "tatoeba.jpn-eng.jpn"
    mirror.faults[name] = [("drop", 10_000), ("drop", 25_000)]
    dest = tmp_path / "raw"
    fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["jpn"])
    assert (dest / name).read_bytes() == (tatoeba_raw / name).read_bytes()
    ranges = [r for p, r in mirror.requests if p == name]
    assert ranges == [None, "bytes=10000-", "bytes=35000-"]


def test_interrupted_run_leaves_no_complete_looking_file_and_rerun_resumes(
    mirror, tmp_path, lock, tatoeba, tatoeba_raw
):
    name = "tatoeba.jpn-eng.jpn"
    mirror.faults[name] = [("drop", 7_000)]
    dest = tmp_path / "raw"
    with pytest.raises(DownloadError, match=r"gave up after 1 attempts.*7000 bytes are kept"):
        fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["jpn"], policy=Policy(retries=0))
    assert not (dest / name).exists() and not (dest / download.MANIFEST).exists()
    assert (dest / download.PARTIAL / f"{name}.part").stat().st_size == 7_000
    fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["jpn"])
    assert (dest / name).read_bytes() == (tatoeba_raw / name).read_bytes()
    assert ("tatoeba.jpn-eng.jpn", "bytes=7000-") in mirror.requests


def test_server_that_ignores_ranges_restarts_the_file(mirror, tmp_path, lock, tatoeba, tatoeba_raw):
    name = "tatoeba.deu-eng.deu"
    mirror.ranges = False
    mirror.faults[name] = [("drop", 5_000)]
    dest = tmp_path / "raw"
    fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["deu"])
    assert (dest / name).read_bytes() == (tatoeba_raw / name).read_bytes()


def test_http_500_is_retried_then_succeeds(mirror, tmp_path, lock, tatoeba, tatoeba_raw):
    name = "tatoeba.deu-eng.eng"
    mirror.faults[name] = [500, 500]
    dest = tmp_path / "raw"
    fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["deu"])
    assert [p for p, _ in mirror.requests].count(name) == 3
    assert (dest / name).read_bytes() == (tatoeba_raw / name).read_bytes()


def test_persistent_500_gives_up_with_a_clear_error(mirror, tmp_path, lock, tatoeba):
    mirror.faults["tatoeba.deu-eng.deu"] = [500] * 10
    with pytest.raises(DownloadError, match=r"gave up after 4 attempts .*HTTP 500"):
        fetch_tatoeba(tatoeba, mirror, tmp_path / "raw", lock, languages=["deu"])


def test_404_is_a_clear_error_without_retries(tmp_path, lock, tatoeba):
    with serve(tmp_path / "empty") as server:
        with pytest.raises(DownloadError, match=r"tatoeba\.jpn-eng\.eng: HTTP 404"):
            fetch_tatoeba(tatoeba, server, tmp_path / "raw", lock, languages=["jpn"])
        assert len(server.requests) == 1
    assert not (tmp_path / "raw" / "tatoeba.jpn-eng.eng").exists()


def test_wrong_checksum_publishes_nothing_and_keeps_earlier_files(
    tmp_path, lock, tatoeba, tatoeba_raw
):
    root = tmp_path / "bad-mirror"
    shutil.copytree(tatoeba_raw, root)
    dest = tmp_path / "raw"
    with serve(root) as server:
        fetch_tatoeba(tatoeba, server, dest, lock, languages=["deu"])
        before = {p.name: p.read_bytes() for p in dest.glob("tatoeba.*")}
        tampered = root / "tatoeba.jpn-eng.jpn"
        tampered.write_bytes(tampered.read_bytes()[:-2] + b"X\n")
        with pytest.raises(ChecksumError, match=r"tatoeba\.jpn-eng\.jpn.*nothing was published"):
            fetch_tatoeba(tatoeba, server, dest, lock, languages=["deu", "jpn"])
    assert not (dest / "tatoeba.jpn-eng.jpn").exists()
    assert not list((dest / download.PARTIAL).rglob("tatoeba.jpn-eng.jpn*"))
    assert {p.name: p.read_bytes() for p in dest.glob("tatoeba.deu*")} == before


def _tofu_dataset(url: str, **pin: str) -> registry.Dataset:
    entry = {
        "name": "synthetic",
        "chapters": ["ch2_ems"],
        "languages": ["xx"],
        "access": "download",
        "licence": "test",
        "citation": "test",
        "size": "1 file",
        "base_url": url,
        "files": [{"path": "sub/data.bin", **pin}],
    }
    return registry.parse({"datasets": {"test_tofu": entry}})["test_tofu"]


def _site(tmp_path: Path, data: bytes = b"mirrored\n" * 1000) -> Path:
    """A folder laid out like `_tofu_dataset`'s base_url: one file, sub/data.bin."""
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "data.bin").write_bytes(data)
    return root


def test_a_local_mirror_folder_is_copied_and_verified(tmp_path, lock):
    root = _site(tmp_path)
    expected = {"sub/data.bin": sha256_file(root / "sub" / "data.bin")}
    dataset = _tofu_dataset("https://mlrep-no-such-host.invalid/")  # never contacted
    for i, mirror in enumerate([str(root), root.as_uri(), root.as_uri() + "/"]):
        assert download.fetch(dataset, tmp_path / f"d{i}", mirror=mirror, lock=lock) == expected
    assert lock.entries("test_tofu") == expected  # locked on first use, then enforced
    wrong = _tofu_dataset("https://mlrep-no-such-host.invalid/", sha256="0" * 64)
    with pytest.raises(ChecksumError, match="nothing was published"):
        download.fetch(wrong, tmp_path / "bad", mirror=str(root), lock=lock)
    assert not (tmp_path / "bad" / "sub" / "data.bin").exists()
    (root / "sub" / "data.bin").unlink()
    with pytest.raises(DownloadError, match=r"sub/data\.bin: not in the mirror folder"):
        download.fetch(dataset, tmp_path / "d9", mirror=str(root), lock=lock)


@pytest.mark.parametrize(
    ("mirror", "message"),
    [
        ("{tmp}/no-such-dir", r"the folder .*no-such-dir does not exist"),
        ("file://{tmp}/no-such-dir", r"the folder .*no-such-dir does not exist"),
        ("ftp://example.org/pub/", r"'ftp://example.org/pub/': unsupported; a mirror is"),
    ],
)
def test_a_missing_mirror_folder_or_another_scheme_is_named(tmp_path, lock, mirror, message):
    dataset = _tofu_dataset("https://mlrep-no-such-host.invalid/")
    with pytest.raises(DownloadError, match=message) as info:
        download.fetch(dataset, tmp_path / "d", mirror=mirror.format(tmp=tmp_path), lock=lock)
    assert "data.download.mirrors.test_tofu" in str(info.value)


def test_cli_fetch_from_a_local_mirror_by_flag_and_by_params(tmp_path, capsys):
    key, name = "flores_flores200", "flores200_dataset.tar.gz"  # trust-on-first-use: one file
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / name).write_bytes(b"a site's copy\n")
    args = ["data", "fetch", key, "--no-progress", "--lock", str(tmp_path / "lock.yaml")]
    flag = ["--mirror", str(tmp_path / "copy"), "--scale", "tiny"]
    flag += ["--retries", "0", "--timeout", "5", "--backoff", "0"]
    assert main([*args, "--dest", str(tmp_path / "a"), *flag]) == 0, capsys.readouterr().err
    assert (tmp_path / "a" / name).read_bytes() == b"a site's copy\n"
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["data"]["download"]["mirrors"] = {key: str(tmp_path / "copy")}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    code = main([*args, "--dest", str(tmp_path / "b"), "--params", str(tmp_path / "params.yaml")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "b" / name).read_bytes() == b"a site's copy\n"
    flag[1] = str(tmp_path / "nowhere")
    assert main([*args, "--dest", str(tmp_path / "c"), *flag]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("mlrep: error: mirror ") and "nowhere does not exist" in last


def test_an_unresolvable_host_fails_at_once_with_the_offline_hint(tmp_path, lock, monkeypatch):
    for proxy in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
        monkeypatch.delenv(proxy.upper(), raising=False)
    attempts = []
    real = download._attempt
    monkeypatch.setattr(download, "_attempt", lambda *a: attempts.append(a[0]) or real(*a))
    dataset = _tofu_dataset("http://mlrep-no-such-host.invalid/")
    with pytest.raises(download.UnresolvedHostError) as info:
        download.fetch(dataset, tmp_path / "d", lock=lock, policy=Policy(retries=5, backoff=1))
    assert attempts == ["http://mlrep-no-such-host.invalid/sub/data.bin"]  # never retried
    message = str(info.value)
    assert "the host mlrep-no-such-host.invalid could not be resolved" in message
    assert "offline? use a copy: --mirror DIR|URL, or data.download.mirrors.test_tofu" in message


def test_trust_on_first_use_records_then_enforces(tmp_path, lock):
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "data.bin").write_bytes(b"first version\n" * 1000)
    with serve(root) as server:
        dataset = _tofu_dataset(server.url)
        files = download.fetch(dataset, tmp_path / "a", lock=lock, policy=FAST)
        assert yaml.safe_load(lock.path.read_text()) == {"test_tofu": files}
        assert registry.checksum_status(dataset, lock) == "trust-on-first-use (1/1)"
        (root / "sub" / "data.bin").write_bytes(b"changed upstream\n" * 1000)
        with pytest.raises(ChecksumError, match="from the lock"):
            download.fetch(dataset, tmp_path / "b", lock=lock, policy=FAST)
    assert not (tmp_path / "b" / "sub" / "data.bin").exists()
    assert yaml.safe_load(lock.path.read_text()) == {"test_tofu": files}


def test_a_damaged_published_file_is_reported_not_replaced(mirror, tmp_path, lock, tatoeba):
    dest = tmp_path / "raw"
    fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["kor"])
    damaged = dest / "tatoeba.kor-eng.kor"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    with pytest.raises(ChecksumError, match=r"bytes, but the registry says .*delete .*kor-eng"):
        fetch_tatoeba(tatoeba, mirror, dest, lock, languages=["kor"])
    assert damaged.exists()


def test_lock_is_sorted_and_refuses_to_overwrite(tmp_path):
    lock = registry.Lock(tmp_path / "lock.yaml")
    lock.record("zz_b", "y", "1" * 64)
    lock.record("aa_a", "x", "2" * 64)
    lock.record("zz_b", "a", "3" * 64)
    text = lock.path.read_text()
    assert text.index("aa_a") < text.index("zz_b") and text.index("  a:") < text.index("  y:")
    with pytest.raises(registry.RegistryError, match="is locked to"):
        lock.record("zz_b", "y", "4" * 64)


def test_manual_dataset_explains_then_verifies_placed_files(tmp_path, lock):
    dataset = registry.get("manual_aspec_jc")
    dest = tmp_path / "aspec"
    with pytest.raises(DownloadError) as info:
        download.fetch(dataset, dest, lock=lock)
    message = str(info.value)
    assert "jipsti.jst.go.jp/aspec" in message and "ASPEC-JC/train/train.txt" in message
    assert str(dest) in message
    for spec in dataset.files:
        (dest / spec.path).parent.mkdir(parents=True, exist_ok=True)
        (dest / spec.path).write_text(f"{spec.path} ||| 文\n", encoding="utf-8")
    files = download.fetch(dataset, dest, lock=lock)
    assert set(files) == {f.path for f in dataset.files}
    assert registry.checksum_status(dataset, lock) == "manual, locked on placement (4/4)"
    (dest / "ASPEC-JC/dev/dev.txt").write_text("edited\n")
    with pytest.raises(ChecksumError, match=r"ASPEC-JC/dev/dev\.txt"):
        download.fetch(dataset, dest, lock=lock)


def test_unavailable_dataset_says_so(tmp_path, lock):
    with pytest.raises(DownloadError, match="not public"):
        download.fetch(registry.get("unavailable_labse_train"), tmp_path, lock=lock)


def test_cli_fetch_with_mirror_flag(mirror, tmp_path, capsys, tatoeba_registry):
    dest = tmp_path / "raw"
    code = main(
        [
            "data",
            "fetch",
            TATOEBA_KEY,
            "--dest",
            str(dest),
            "--mirror",
            mirror.url,
            "--languages",
            "kor",
            "--retries",
            "2",
            "--timeout",
            "5",
            "--backoff",
            "0.01",
            "--no-progress",
            "--scale",
            "tiny",
            "--lock",
            str(tmp_path / "lock.yaml"),
            "--registry",
            str(tatoeba_registry),
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in dest.glob("tatoeba.*")) == [
        "tatoeba.kor-eng.eng",
        "tatoeba.kor-eng.kor",
    ]


def test_cli_reports_a_404_as_one_line(tmp_path, capsys):
    with serve(tmp_path) as server:  # the real benchmark's entry, served from nowhere
        code = main(
            ["data", "fetch", "laser_tatoeba_v1", "--dest", str(tmp_path / "raw"), "--mirror",
             server.url, "--languages", "kor", "--retries", "0", "--timeout", "5",
             "--backoff", "0", "--no-progress", "--scale", "tiny"]
        )  # fmt: skip
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert code == 2 and last.startswith("mlrep: error: ") and "HTTP 404" in last


def test_md5_pin_is_checked_and_the_sha256_is_locked_beside_it(tmp_path, lock):
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    data = b"newstest\n" * 500
    (root / "sub" / "data.bin").write_bytes(data)
    with serve(root) as server:
        wrong = _tofu_dataset(server.url, md5="0" * 32)
        with pytest.raises(ChecksumError, match=r"md5 .* from the registry \(sacrebleu\)"):
            download.fetch(wrong, tmp_path / "a", lock=lock, policy=FAST)
        assert not lock.path.exists()
        right = _tofu_dataset(server.url, md5=hashlib.md5(data).hexdigest())
        files = download.fetch(right, tmp_path / "a", lock=lock, policy=FAST)
    assert files == {"sub/data.bin": hashlib.sha256(data).hexdigest()}
    assert lock.entries("test_tofu") == files


def test_params_mirror_and_registry_are_used_when_no_flag_is_given(
    mirror, tmp_path, capsys, tatoeba_registry
):
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["data"]["registry"] = str(tatoeba_registry)
    params["data"]["download"]["mirrors"] = {TATOEBA_KEY: mirror.url}
    params["data"]["download"]["backoff"] = 0
    params["data"]["datasets"][TATOEBA_KEY] = {"languages": ["cmn"]}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    dest = tmp_path / "raw"
    args = ["data", "fetch", TATOEBA_KEY, "--dest", str(dest), "--no-progress"]
    code = main([*args, "--params", str(tmp_path / "params.yaml")])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in dest.glob("tatoeba.*")) == [
        "tatoeba.cmn-eng.cmn",
        "tatoeba.cmn-eng.eng",
    ]


def test_rule_flags_are_explicit_for_every_value():
    config = {
        "data": {
            "registry": "site.yaml",
            "download": {
                "retries": 2,
                "timeout": 9,
                "backoff": 0.5,
                "mirrors": {"a_b": "http://m/"},
            },
            "datasets": {"a_b": {"languages": ["xx"], "max_chars": 7}},
        }
    }
    assert fetch_values(config, "a_b") == {
        "retries": 2,
        "timeout": 9,
        "backoff": 0.5,
        "languages": ["xx"],
        "mirror": "http://m/",
        "lock": "",
        "registry": "site.yaml",
    }
    assert (
        fetch_values(config, "c_d")["mirror"] == ""
        and fetch_values(config, "c_d")["languages"] == "all"
    )
    assert normalize_values(config, "a_b") == {
        "drop_empty": True,
        "max_chars": 7,
        "drop_duplicates": False,
        "langid_sample": 0,
        "max_lines": 0,
        "languages": ["xx"],
        "registry": "site.yaml",
    }
