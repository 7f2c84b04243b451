"""Every path of the workflow, derived from the resolved config in one place.

Rules, CLI defaults and tests ask this module where things live; nothing else joins
path fragments, so moving an output means changing one line here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Paths:
    results: Path
    reports: Path
    resources: Path

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Paths:
        section = config["paths"]
        return cls(Path(section["results"]), Path(section["reports"]), Path(section["resources"]))

    @property
    def source_wheels(self) -> Path:
        """Pinned wheels whose catalogs make up the tiny corpus (inputs, not results)."""
        return self.resources / "wheels"

    @property
    def tiny_corpus(self) -> Path:
        return self.results / "data" / "tiny_corpus"

    @property
    def cluster_probe(self) -> Path:
        return self.results / "cluster" / "probe.json"
