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
    # registry keys whose stand-in a chapter reads instead of the benchmark (data.use_stand_ins)
    stand_ins: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Paths:
        section = config["paths"]
        data = config.get("data") or {}
        chosen = (data.get("stand_ins") or {}) if data.get("use_stand_ins") else {}
        return cls(
            Path(section["results"]),
            Path(section["reports"]),
            Path(section["resources"]),
            frozenset(chosen),
        )

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

    def stand_in(self, key: str) -> Path:
        """A benchmark's stand-in, cut from a local corpus in the layout of `dataset(key)`."""
        return self.results / "data" / "stand_ins" / key

    def benchmark(self, key: str) -> Path:
        """The folder a chapter reads for the registry benchmark `key`: its stand-in where
        ``data.use_stand_ins`` selects one (tiny), else the normalised download."""
        return self.stand_in(key) if key in self.stand_ins else self.dataset(key)

    def chapter_summary(self, chapter: str) -> Path:
        """One chapter's metrics, averaged over seeds, in one flat JSON (DVC metrics)."""
        return self.results / "metrics" / f"{chapter}.json"

    def chapter_data(self, chapter: str, dataset: str = "") -> Path:
        """A chapter's prepared training data: ``results/<chapter>/data/[<dataset>]``, the
        dataset level where the chapter trains per dataset (Chapter 8: cut text, subwords,
        fairseq binaries; Chapter 2: one SentencePiece model and token-id pairs)."""
        return (
            self.results / chapter / "data" / dataset
            if dataset
            else self.results / chapter / "data"
        )

    def run(self, chapter: str, run: str, seed: int | str, dataset: str = "") -> Path:
        """One run and seed of a chapter: ``results/<chapter>/[<dataset>/]<run>/seed<N>/``,
        holding ``model/``, the evaluation outputs and ``metrics.json`` (the report's contract).
        ``run`` may hold a slash (a grid point: ``grid/layers-4``)."""
        base = self.results / chapter / dataset if dataset else self.results / chapter
        return base / run / f"seed{seed}"

    def run_group(self, chapter: str, group: str) -> Path:
        """The folder of a chapter's runs ``<group>/<name>``, ``results/<chapter>/<group>/``,
        for a step that writes them all at once (OneAligner's Figure 2 languages), or of what
        they all start from (Chapter 5's mBART release and its init, ``mbart/``)."""
        return self.results / chapter / group

    def model(self, chapter: str, run: str, seed: int | str, dataset: str = "") -> Path:
        """Where a run's trainer writes: the final model, ``train.json``, its checkpoints
        (resumed after preemption) and training curve."""
        return self.run(chapter, run, seed, dataset) / "model"

    @property
    def cluster_probe(self) -> Path:
        return self.results / "cluster" / "probe.json"

    def preprocessed_root(self, dataset: str) -> Path:
        """A dataset's preprocessing outputs, with the ``config.yaml`` and ``provenance.json``
        of the last `snakemake preprocess`."""
        return self.results / "preprocess" / dataset

    def preprocessed(self, dataset: str, stage: str) -> Path:
        """Outputs of one preprocessing stage (tok, bunsetsu, parse, hf) of a dataset; files
        inside are named ``{split}.{pair}.{lang}`` like the corpus."""
        return self.preprocessed_root(dataset) / stage

    def pair_tokens(self, dataset: str, split: str, pair: str) -> tuple[Path, Path]:
        """The `tok` files of both sides of a pair's split: what alignment reads."""
        source, target = pair.split("-")
        tok = self.preprocessed(dataset, "tok")
        return tok / f"{split}.{pair}.{source}", tok / f"{split}.{pair}.{target}"

    def external_analysis(self, dataset: str, tool: str, name: str) -> Path:
        """A user's own KNP (``.knp``) or Enju (``.xml``) output of the corpus file ``name``
        (``{split}.{pair}.{lang}``) of a dataset: an input the workflow reads, never builds
        (``preprocess.segment.source: knp``, ``preprocess.parse.source: enju``)."""
        suffix = {"knp": "knp", "enju": "xml"}[tool]
        return self.resources / "parses" / dataset / tool / f"{name}.{suffix}"

    def subword_model(self, dataset: str, setting: str, model: str) -> Path:
        """A trained subword model folder: setting of ``preprocess.subwords.settings``, model
        a pair or ``all`` (mlrep.text.plan)."""
        return self.preprocessed_root(dataset) / "subwords" / setting / model

    def subword_encoded(self, dataset: str, setting: str, name: str) -> Path:
        """Tokenized text ``{split}.{pair}.{lang}`` encoded with its model of `setting`."""
        return self.preprocessed_root(dataset) / "sub" / setting / name

    def alignments(self, dataset: str, pair: str) -> Path:
        """Word alignments of one language pair of a dataset: intermediates
        ``bitext.<shard>.txt``, ``<backend>.<fwd|rev|method>.<shard>.txt``, one
        `alignment_run` folder per backend and symmetrization, and Chapter 5's `w2w_lexicon`,
        `w2w_run` and `one_to_one_run` folders. `dataset` is a preprocess dataset, or one with
        `mlrep.align.od`'s suffix for a run that also learnt from out-of-domain text."""
        return self.results / "align" / dataset / pair

    def alignment_run(self, dataset: str, pair: str, backend: str, method: str) -> Path:
        """``links.txt`` (Pharaoh, line n = line n of the pair's tokenized split), ``stats.json``,
        ``config.yaml`` and ``provenance.json`` of one aligner + symmetrization."""
        return self.alignments(dataset, pair) / f"{backend}.{method}"

    def w2w_lexicon(self, dataset: str, pair: str) -> Path:
        """The pair's word2word lexicon, learnt from the split the aligners train on:
        ``lexicon.tsv`` (`mlrep.align.lexicon`'s format), ``stats.json``, ``config.yaml``,
        ``provenance.json``."""
        return self.alignments(dataset, pair) / "w2w" / "lexicon"

    def w2w_run(self, dataset: str, pair: str, split: str) -> Path:
        """The `w2w_lexicon`'s links in one split: ``links.txt`` (line n = line n of the split's
        `tok` files; a phrase pair as the cross product of its words), ``stats.json`` (units:
        Table 5.1's N), ``config.yaml``, ``provenance.json``."""
        return self.alignments(dataset, pair) / "w2w" / split

    def one_to_one_run(self, dataset: str, pair: str, backend: str, method: str) -> Path:
        """The links of an `alignment_run` whose two words have no other link, with the same
        files as a `w2w_run`."""
        return self.alignments(dataset, pair) / f"{backend}.{method}.one-to-one"

    def preprocess_shard(
        self, dataset: str, stage: str, name: str, shard: int | str, shards: int | str
    ) -> Path:
        """One scattered shard of a preprocessing output (gathered into ``stage/name``);
        rules pass wildcard strings such as ``"{shard}"``."""
        return self.preprocessed(dataset, stage) / "shards" / f"{name}.{shard}-of-{shards}"
