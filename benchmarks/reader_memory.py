"""Peak memory and throughput of `mlrep data normalize` on a large CC-100-style ``.txt.xz``.

A monolingual file of --lines lines (documents separated by empty lines, like CC-100) is
xz-compressed and placed as a fetched ``statmt_cc100`` download; each measurement runs in a
fresh process and reports its peak resident memory (ru_maxrss):

* baseline: the interpreter with mlrep imported, nothing read;
* mlrep: ``readers.normalize`` over the whole file (``max_lines: 0``): stream, validate, write;
* reference: ``lzma.open(path).read().decode().splitlines()`` then one write, i.e. the whole
  text in memory, which is what a reader that loads its input does.

Flat memory means mlrep's peak stays near the baseline while the reference grows with the file.

    python benchmarks/reader_memory.py --lines 2000000
"""

from __future__ import annotations

import argparse
import json
import lzma
import tempfile
import time
from pathlib import Path

from _timing import in_child

CHILD = r"""
import json, lzma, resource, sys, time
from pathlib import Path
from mlrep.data import readers, registry
from mlrep.data.validate import Filters
mode, raw, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
start = time.perf_counter()
lines = 0
if mode == "mlrep":
    meta = readers.normalize(registry.get("statmt_cc100"), raw, out, ["ja"], Filters())
    lines = meta["pairs"]["train.mono"]["sides"]["ja"]["input_lines"]
elif mode == "reference":
    text = lzma.open(raw / "ja.txt.xz").read().decode("utf-8").splitlines()
    lines = len(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.mono.ja").write_text("\n".join(t for t in text if t.strip()) + "\n")
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"mode": mode, "seconds": seconds, "peak_rss_mb": peak_mb, "lines": lines}))
"""

_WORDS = ["東京", "は", "雨", "です", "。", "今日", "の", "ニュース", "明日", "晴れ"]


def _write_corpus(path: Path, lines: int) -> int:
    """Pseudo-text with a document break every 20 lines; returns the compressed size."""
    with lzma.open(path, "wt", encoding="utf-8", preset=1) as handle:
        for number in range(lines):
            if number % 20 == 19:
                handle.write("\n")
            else:
                words = [_WORDS[(number * 7 + i * 3) % len(_WORDS)] for i in range(12 + number % 9)]
                handle.write("".join(words) + f" {number}\n")
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        raw.mkdir()
        size = _write_corpus(raw / "ja.txt.xz", args.lines)
        manifest = {"key": "statmt_cc100", "files": {"ja.txt.xz": "benchmark"}}
        (raw / "fetched.json").write_text(json.dumps(manifest))
        with lzma.open(raw / "ja.txt.xz") as handle:
            text_mb = handle.seek(0, 2) / 2**20
        print(
            f"file: {args.lines} lines, {text_mb:.1f} MiB of text ({size / 2**20:.1f} MiB xz); "
            "peak RSS per fresh process"
        )
        for mode in ("baseline", "mlrep", "reference"):
            started = time.perf_counter()
            row = in_child(CHILD, mode, str(raw), str(Path(tmp) / mode))
            rate = text_mb / row["seconds"] if mode != "baseline" else float("nan")
            print(
                f"{mode:<10} peak RSS {row['peak_rss_mb']:8.1f} MiB   "
                f"{row['seconds']:6.2f} s reading ({rate:6.1f} MiB/s of text), "
                f"{time.perf_counter() - started:5.1f} s with start-up"
            )


if __name__ == "__main__":
    main()
