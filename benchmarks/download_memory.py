"""Peak memory and throughput of `mlrep data fetch` on a large file over loopback HTTP.

A file of --size-mb random bytes is served by a local ``http.server`` on 127.0.0.1; each
measurement runs in a fresh process and reports its peak resident memory (ru_maxrss):

* baseline: the interpreter with mlrep imported, no download;
* mlrep: ``download.fetch`` (streaming, then a chunked sha256 pass and the atomic publish);
* reference: ``urllib.request.urlopen(url).read()`` then one write, i.e. the whole body in
  memory, which is what a non-streaming downloader does.

Flat memory means mlrep's peak stays near the baseline while the reference grows with the file.

    python benchmarks/download_memory.py --size-mb 512
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from _timing import in_child

CHILD = r"""
import json, resource, sys, time, urllib.request
from pathlib import Path
from mlrep.data import download, registry
mode, url, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
start = time.perf_counter()
if mode == "mlrep":
    entry = {"name": "bench", "chapters": [], "languages": ["xx"], "access": "download",
             "licence": "-", "citation": "-", "size": "-", "base_url": url,
             "files": [{"path": "big.bin"}]}
    dataset = registry.parse({"datasets": {"bench_big": entry}})["bench_big"]
    download.fetch(dataset, out, lock=registry.Lock(out / "lock.yaml"),
                   policy=download.Policy(progress=False))
elif mode == "reference":
    data = urllib.request.urlopen(url + "big.bin").read()
    out.mkdir(parents=True, exist_ok=True)
    (out / "big.bin").write_bytes(data)
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"mode": mode, "seconds": seconds, "peak_rss_mb": peak_mb}))
"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "site"
        root.mkdir()
        with open(root / "big.bin", "wb") as handle:
            for _ in range(args.size_mb):
                handle.write(os.urandom(1 << 20))
        handler = functools.partial(_Quiet, directory=str(root))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        print(f"file: {args.size_mb} MiB over loopback HTTP; peak RSS per fresh process")
        try:
            for mode in ("baseline", "mlrep", "reference"):
                started = time.perf_counter()
                row = in_child(CHILD, mode, url, str(Path(tmp) / mode))
                rate = args.size_mb / row["seconds"] if mode != "baseline" else float("nan")
                print(
                    f"{mode:<10} peak RSS {row['peak_rss_mb']:8.1f} MiB   "
                    f"{row['seconds']:6.2f} s in the download ({rate:6.1f} MiB/s), "
                    f"{time.perf_counter() - started:5.1f} s with start-up"
                )
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
