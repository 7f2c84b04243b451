"""The preprocessing plan's per-file answers, each worked out once while Snakemake plans.

Each corpus file has `preprocess.shards` shard jobs (64 at full scale) and Snakemake asks each
job for its inputs and params while it plans (~35k jobs for ``snakemake preprocess``), so the
shard rules (workflow/rules/preprocess.smk) ask `FileLookups` rather than `mlrep.text.plan`.
Kept apart from `plan` on purpose: the jobs of every verb that imports `plan` (alignment,
subword training) carry its code digest (`mlrep.closure`), which a helper that only the rules
use must not change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mlrep.paths import Paths
from mlrep.text import plan


class FileLookups:
    """`plan.inputs`, `plan.source` and `plan.steps` of a section's files, with the same
    arguments and results, each computed once per file (or dataset and language).

    The answers are those of the `section` and `paths` given here, the run's resolved config,
    which stays fixed while Snakemake plans: another config needs another `FileLookups`. The
    rules only read what they get back.
    """

    def __init__(self, section: Mapping[str, Any], paths: Paths) -> None:
        self.inputs: Callable[..., dict[str, str]] = functools.cache(
            functools.partial(plan.inputs, section, paths)
        )
        self.source: Callable[[str, str, str, str], tuple[Path, Path]] = functools.cache(
            functools.partial(plan.source, section, paths)
        )
        self.steps: Callable[[str, str], list[str]] = functools.cache(
            functools.partial(plan.steps, section)
        )
