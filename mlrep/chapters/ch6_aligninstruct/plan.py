"""Where Chapter 6's jobs read and write, for its rules (workflow/rules/ch6_aligninstruct.smk):
one object built from params.yaml's sections, so every path and input list is derived here,
unit-testable without Snakemake.

A block's pairs come from a preprocess dataset (``blocks.<block>.dataset``): its raw lines (what
the prompts show and the test sets hold), its ``tok`` sides and the alignment layer's links of
them (what the instructions' spans come from). A size's base is a hub checkpoint or folder, or
the stand-in built under ``bases/<size>/``. A run decodes its own last stage's adapter, another
run's (a prompt or pivot decoding: `Run.model`) or none (no fine-tuning).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlrep.chapters.ch6_aligninstruct import runs as grid
from mlrep.chapters.ch6_aligninstruct.testsets import FLORES_CODES, MULTIWAY
from mlrep.chapters.ch6_aligninstruct.training import instruction_file, stage_files
from mlrep.paths import Paths
from mlrep.text import plan as preprocess_plan

CHAPTER = "ch6_aligninstruct"
COSINE = "cosine"  # the test-set name of the analyses' valid pairs


def grid_settings(section: Mapping[str, Any]) -> grid.GridSettings:
    """The grid params.yaml asks for (lists as tuples, as the dataclass holds them)."""
    return grid.GridSettings(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in section["grid"].items()}
    )


class Plan:
    """Chapter 6's runs, analyses and files under `section` (``ch6_aligninstruct``), `pre`
    (``preprocess``) and `align` (``align``)."""

    def __init__(
        self,
        section: Mapping[str, Any],
        pre: Mapping[str, Any],
        align: Mapping[str, Any],
        paths: Paths,
    ) -> None:
        self.section, self.pre, self.align, self.paths = section, pre, align, paths
        settings = grid_settings(section)
        self.runs = {run.path: run for run in grid.runs(settings)}
        self.analyses = {a.path: a for a in grid.analyses(settings)}
        self.base_folder = str(paths.run_group(CHAPTER, "bases") / "{size}")
        self.instructions = str(
            instruction_file(
                paths.chapter_data(CHAPTER, "instructions/{block}"), "{lang}", "{objective}"
            )
        )
        self.tests = str(paths.chapter_data(CHAPTER, "tests/{block}/{test}"))
        run = paths.run(CHAPTER, "{run}", "{seed}", dataset="{block}")
        self.stage = str(run / "stage{stage}" / "train.json")
        self.hyp = str(run / "hyp")
        self.scores = str(run / "scores.json")
        self.metrics = str(run / "metrics.json")
        self.cosine = str(run / "cosine" / "{model}.json")
        self.comet = str(paths.run_group(CHAPTER, "comet-stand-in"))

    # --- runs and bases

    def run(self, block: str, name: str) -> grid.Run:
        return self.runs[f"{block}/{name}"]

    def languages(self, block: str) -> list[str]:
        """The languages a block runs with English at this scale."""
        return list(self.section["blocks"][block]["languages"])

    def base(self, size: str) -> str:
        """A size's base: its checkpoint's hub id or folder, else the stand-in built here."""
        return self.section["bases"][size]["model"] or self.base_folder.format(size=size)

    def base_input(self, size: str) -> list[str]:
        """The stand-in folder a job depends on ([] for a hub checkpoint)."""
        return [] if self.section["bases"][size]["model"] else [self.base(size)]

    def targets(self, seeds: list[int]) -> list[str]:
        """Every run's and analysis's metrics.json: the chapter target."""
        every = [*self.runs.values(), *self.analyses.values()]
        return [
            self.metrics.format(block=r.setting, run=r.name, seed=s) for r in every for s in seeds
        ]

    # --- data

    def _raw(self, dataset: str, split: str, pair: str, lang: str) -> tuple[str, str]:
        """(the corpus folder a job depends on, the raw file it reads)."""
        folder, path = preprocess_plan.source(self.pre, self.paths, dataset, split, pair, lang)
        return str(folder), str(path)

    def pair_tokens(self, block: str, lang: str) -> list[str]:
        """(tokens en, tokens xx, links) of one pair of the block's dataset: what fast_align
        saw and the alignment layer's symmetrized links of them."""
        dataset, pair = self.section["blocks"][block]["dataset"], f"en-{lang}"
        aligner = self.align["aligner"]["backend"]
        links = self.paths.alignment_run(dataset, pair, aligner, self.align["symmetrize"])
        tokens = self.paths.pair_tokens(dataset, self.align["split"], pair)
        return [*map(str, tokens), str(links / "links.txt")]

    def pair_raw(self, block: str, lang: str) -> list[tuple[str, str]]:
        """The raw en and xx files of the pair's aligned split (the prompts show them)."""
        dataset, pair = self.section["blocks"][block]["dataset"], f"en-{lang}"
        return [self._raw(dataset, self.align["split"], pair, side) for side in ("en", lang)]

    def test_raw(self, block: str, test: str) -> list[tuple[str, str]]:
        """(corpus folder, file) pairs a test set is cut from: the block's pairs' split, or a
        multi-way corpus's files (Flores-200 at full)."""
        spec = self.section["tests"][test]
        langs = grid.LANGUAGE_SETS[grid.PIVOT_SET] if block == grid.B3 else self.languages(block)
        if spec["corpus"]:
            folder = self.paths.dataset(spec["corpus"])
            return [
                (str(folder), str(folder / f"{spec['split']}.{MULTIWAY}.{FLORES_CODES[lang]}"))
                for lang in ("en", *langs)
            ]
        dataset = self.section["blocks"][block]["dataset"]
        return [
            self._raw(dataset, spec["split"], pair, side)
            for pair in preprocess_plan.dataset(self.pre, dataset)["pairs"]
            if set(pair.split("-")) <= {"en", *langs}
            and spec["split"] in preprocess_plan.splits_of(self.pre, dataset, pair)
            for side in pair.split("-")
        ]

    def corpus_folders(self) -> list[str]:
        """Every corpus folder the chapter reads (its `data` target)."""
        folders = [str(self.paths.dataset(self.section["monolingual"]["corpus"]))]
        for block in self.section["blocks"]:
            for lang in self.languages(block):
                folders += [folder for folder, _ in self.pair_raw(block, lang)]
        tests = self.section["tests"].values()
        folders += [str(self.paths.dataset(t["corpus"])) for t in tests if t["corpus"]]
        return list(dict.fromkeys(folders))

    def tests_of(self, block: str, name: str) -> dict[str, str]:
        """The test set folders a run is scored on, by name."""
        return {
            test: self.tests.format(block=block, test=test) for test in self.run(block, name).tests
        }

    # --- training and decoding

    def stage_inputs(self, block: str, name: str, stage: int) -> list[str]:
        """The instruction files a stage trains on (its objectives × the block's languages)."""
        folder = self.paths.chapter_data(CHAPTER, f"instructions/{block}")
        run = self.run(block, name)
        return [str(p) for p in stage_files(run, stage, self.languages(block), folder)]

    def previous_stage(self, block: str, name: str, seed: str, stage: int) -> list[str]:
        """The previous stage's record (its adapter beside it); [] for the first stage."""
        if stage == 1:
            return []
        return [self.stage.format(block=block, run=name, seed=seed, stage=stage - 1)]

    def adapter_of(self, block: str, name: str, seed: str) -> list[str]:
        """The train.json beside the adapter a run decodes with: its own last stage's, the
        run's `model`'s, or [] (the base alone)."""
        run = self.run(block, name)
        if not (run.stages or run.model):
            return []
        trained = self.run(block, run.model or run.name)
        return [
            self.stage.format(block=block, run=trained.name, seed=seed, stage=len(trained.stages))
        ]

    def cosine_pairs(self, block: str, analysis: str) -> dict[str, list[str]]:
        """The valid pairs an analysis compares, per side: English (``src``) and each of its
        languages run at this scale (``tgt``)."""
        folder = Path(self.tests.format(block=block, test=COSINE))
        langs = [
            lang
            for lang in self.analyses[f"{block}/{analysis}"].languages
            if lang in self.languages(block)
        ]
        return {
            side: [str(folder / f"en-{lang}{suffix}") for lang in langs]
            for side, suffix in (("src", ".src"), ("tgt", ".ref"))
        }

    def cosine_inputs(self, block: str, analysis: str, seed: str) -> dict[str, str]:
        """The cosine files of an analysis's compared models, as `mlrep ch6 cosine` names them
        (``noft``, ``mt``, ``mt_align``)."""
        compared = self.analyses[f"{block}/{analysis}"].compared
        return {
            key: self.cosine.format(block=block, run=analysis, seed=seed, model=model)
            for key, model in zip(("noft", "mt", "mt_align"), compared, strict=True)
        }
