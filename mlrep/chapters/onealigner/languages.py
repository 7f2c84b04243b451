"""OneAligner's Figure 2: per language X, the monolingual pretraining text of X (CC-100's size
in GB) against Top1 (Eng)'s New-Tatoeba accuracy over the pairs involving X.

The points are written as runs ``top1-eng/<X>`` (one metrics.json per language and seed, with
``cc100_gb`` and ``new_tatoeba_acc``), which the figure's scatter series reads
(``runs_under: top1-eng/`` in ``mlrep/report/figures.yaml``). The sizes are a published table
at full (XLM-R's CC-100, params.yaml ``cc100_gb``) and, at tiny, measured: the bytes of each
language's leak-free text the stand-in encoders were pretrained on (``<lang>.txt`` of `mlrep
data monolingual`), in GiB as the published table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from mlrep.embed.new_tatoeba import by_language
from mlrep.errors import MlrepError
from mlrep.io import atomic_directory
from mlrep.report.metrics import METRICS_FILE, read, write

SECTION = "onealigner"
RUN = "top1-eng"  # the figure's model (Top1 (Eng)); its languages are runs RUN/<X>
GIB = 2**30
_PAIR = re.compile(r"^new_tatoeba_(?P<pair>[^-]+-[^-]+)$")


class LanguagePointsError(MlrepError):
    """A size source without a language's text, or runs of different scales."""


def text_sizes(folder: Path) -> dict[str, float]:
    """GiB of each ``<lang>.txt`` of a monolingual text folder (`mlrep data monolingual`)."""
    sizes = {path.stem: path.stat().st_size / GIB for path in sorted(folder.glob("*.txt"))}
    if not sizes:
        raise LanguagePointsError(
            f"{folder}: no <lang>.txt; give the folder `mlrep data monolingual` wrote"
        )
    return sizes


def points(metrics: Mapping[str, float], sizes: Mapping[str, float]) -> dict[str, dict]:
    """``{X: {cc100_gb, new_tatoeba_acc}}`` for each language with a size and a scored pair:
    the mean of the run's ``new_tatoeba_<a>-<b>`` over the pairs involving X."""
    per_pair = {m["pair"]: v for name, v in metrics.items() if (m := _PAIR.match(name))}
    return {
        lang: {"cc100_gb": float(sizes[lang]), "new_tatoeba_acc": acc}
        for lang, acc in by_language(per_pair).items()
        if lang in sizes
    }


def write_points(
    runs: Sequence[Path], sizes: Mapping[str, float], out: Path
) -> dict[int, dict[str, dict]]:
    """Write ``<out>/<X>/seed<N>/metrics.json`` (run ``top1-eng/<X>``) for every seed's
    metrics.json of `runs` (atomically, as one folder); return the points per seed."""
    written: dict[int, dict[str, dict]] = {}
    scales = set()
    with atomic_directory(out) as staging:
        for path in runs:
            result = read(path)
            scales.add(result.scale)
            written[result.seed] = points(result.metrics, sizes)
            for lang, values in written[result.seed].items():
                target = staging / lang / f"seed{result.seed}" / METRICS_FILE
                write(target, SECTION, f"{RUN}/{lang}", result.seed, result.scale, values)
        if len(scales) > 1:
            raise LanguagePointsError(f"{', '.join(map(str, runs))}: scales {sorted(scales)} mix")
    return written
