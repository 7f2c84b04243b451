"""Maintainer check: the shipped published numbers against the thesis transcriptions.

``reports/reference/*.csv`` hold the tables of the thesis and papers as transcribed in the
reproduction spec, and ``sources.yaml`` cites, for each, the seed file and line where its
caption is. This compares every CSV byte for byte with the spec's transcription and checks
that every cited line starts a table caption. It needs the spec and seed files, which a clone
of this repository does not have, so it is a script for whoever holds them, not a test:

    python tools/check_reference.py --spec ../shared/spec --seeds ../shared/seeds

Prints one line per problem and exits 1 if there is any, 0 if the reference is faithful.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from mlrep.paths import Paths
from mlrep.report.reference import load_sources

CAPTION = re.compile(r"\**(Table|TABLE) ")


def problems(reference: Path, spec: Path, seeds: Path) -> list[str]:
    """What differs between the shipped reference and the spec's transcriptions and seeds."""
    found = []
    tables = sorted((spec / "tables").glob("*.csv"))
    if not tables:
        found.append(f"{spec / 'tables'}: no *.csv transcriptions; is --spec the spec folder?")
    for csv in tables:
        shipped = reference / csv.name
        if not shipped.exists():
            found.append(f"{shipped}: missing (the spec has {csv})")
        elif shipped.read_bytes() != csv.read_bytes():
            found.append(f"{shipped}: differs from {csv}")
    for source in load_sources(reference).values():
        path = seeds / source.seed
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if not 0 < source.line <= len(lines) or not CAPTION.match(lines[source.line - 1]):
            found.append(f"{source.table_id}: {path}:{source.line} is not a table caption")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, required=True, help="spec folder (has tables/)")
    parser.add_argument("--seeds", type=Path, required=True, help="the seed files cited")
    parser.add_argument(
        "--reference",
        type=Path,
        default=Paths(Path("results"), Path("reports"), Path("resources")).reference,
        help="the shipped reference folder (default: reports/reference)",
    )
    args = parser.parse_args(argv)
    found = problems(args.reference, args.spec, args.seeds)
    for line in found:
        print(line)
    print(f"{len(found)} problem(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
