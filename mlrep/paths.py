"""Every path of the workflow, derived from the resolved config in one place.

Rules, CLI defaults and tests ask this module where things live; nothing else joins
path fragments, so moving an output means changing one line here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ReportLayout:
    """Files of the generated report under the reports folder."""

    root: Path

    @property
    def index(self) -> Path:
        return self.root / "index.html"

    @property
    def tables(self) -> Path:
        return self.root / "tables"

    @property
    def figures(self) -> Path:
        return self.root / "figures"

    def figure(self, figure_id: str, suffix: str) -> Path:
        return self.figures / f"{figure_id}.{suffix}"

    @property
    def claims(self) -> Path:
        return self.root / "claims.json"

    @property
    def claims_markdown(self) -> Path:
        return self.root / "claims.md"


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
    def reference(self) -> Path:
        """The published numbers (one CSV per table + sources.yaml); shipped, never built."""
        return self.reports / "reference"

    @property
    def report(self) -> ReportLayout:
        """The generated report: index.html, tables/, figures/, claims ledger."""
        return ReportLayout(self.reports)

    def dataset_raw(self, key: str) -> Path:
        """Downloaded (or hand-placed) files of a registry dataset, as published upstream."""
        return self.resources / "datasets" / key

    def dataset_fetched(self, key: str) -> Path:
        """Written last by `mlrep data fetch`: the raw folder is complete and verified."""
        return self.dataset_raw(key) / "fetched.json"

    def dataset(self, key: str) -> Path:
        """A registry dataset normalised to aligned plain text plus metadata.json."""
        return self.results / "data" / key

    def chapter_summary(self, chapter: str) -> Path:
        """One chapter's metrics, averaged over seeds, in one flat JSON (DVC metrics)."""
        return self.results / "metrics" / f"{chapter}.json"

    @property
    def cluster_probe(self) -> Path:
        return self.results / "cluster" / "probe.json"

    def preprocessed(self, dataset: str, stage: str) -> Path:
        """Outputs of one preprocessing stage (tok, bunsetsu, parse, hf, subwords, sub) of a
        dataset; files inside are named ``{split}.{pair}.{lang}`` like the corpus."""
        return self.results / "preprocess" / dataset / stage

    def alignments(self, dataset: str, pair: str) -> Path:
        """Word alignments of one language pair of a dataset: ``bitext.<shard>.txt``,
        ``<backend>.<fwd|rev>.<shard>.txt`` (+ ``.json`` stats), ``<backend>.<method>.txt``."""
        return self.results / "align" / dataset / pair

    def preprocess_shard(
        self, dataset: str, stage: str, name: str, shard: int | str, shards: int | str
    ) -> Path:
        """One scattered shard of a preprocessing output (gathered into ``stage/name``);
        rules pass wildcard strings such as ``"{shard}"``."""
        return self.preprocessed(dataset, stage) / "shards" / f"{name}.{shard}-of-{shards}"
