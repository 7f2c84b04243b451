"""Where mRASP2's jobs read and write, for its rules (workflow/rules/mrasp2.smk): one object
built from params.yaml's sections, so every path and input list is derived here and
unit-testable without Snakemake.

The data side, in words (whitespace tokens, what a dictionary lists), under
``results/mrasp2/data/``:

- ``dictionaries/<pair>.txt``: one en-xx dictionary per dictionary pair, MUSE's format. Tiny
  induces it from the alignment layer's symmetrized links of the pair's tokens (p(t|s) of
  1-to-1 links, `mlrep text induce-dictionary`), standing in for MUSE; full reads MUSE's
  ground-truth files (the registry dataset ``dictionaries`` names). A pair held out of the
  parallel data (en-nl) reaches the model through its dictionary alone, as MUSE's does.
- ``dictionaries/synonyms.txt``: every pair's dictionary as one multilingual synonym dictionary
  (`mlrep text synonym-graph`, mRASP's word graph; the release builds its own from MUSE), so a
  word of any language reaches its translations in every other: what AA draws from.
- ``aa/<pair>/train.<lang>``: one side of a pair's training tokens with its words substituted
  (`mlrep text augment`): C(x) of the direction from `lang`, whose target is the pair's other
  side, unchanged.
- ``mc24/words/mono.<lang>``: the chapter's leak-free monolingual text (the `monolingual`
  rule, data.smk) in words, as the preprocessing makes each language's (`Plan.mono_steps`);
  ``mc24/mix/``: those words temperature-sampled (`mlrep nmt mono-mix`);
  ``mc24/aa/mono.<lang>``: C(x) of the mixed lines, whose target is the mixed line itself
  (the self-parallel pair).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mlrep.data.registry import Dataset
from mlrep.paths import Paths

CHAPTER = "mrasp2"
SYNONYMS = "synonyms.txt"
MIX_TEXT = "mono.{lang}"  # one language's lines in `mlrep nmt mono-mix`'s folder


class Plan:
    """mRASP2's data files under `section` (``mrasp2``) and `align` (``align``), with the
    data registry `registry` (where the MUSE dictionaries are)."""

    def __init__(
        self,
        section: Mapping[str, Any],
        align: Mapping[str, Any],
        paths: Paths,
        registry: Mapping[str, Dataset],
    ) -> None:
        self.section, self.align, self.paths, self.registry = section, align, paths, registry
        data = paths.chapter_data(CHAPTER)
        self.induced = str(data / "dictionaries" / "{pair}.txt")
        self.synonyms = str(data / "dictionaries" / SYNONYMS)
        self.augmented = str(data / "aa" / "{pair}" / "train.{lang}")
        self.monolingual = str(paths.chapter_data(CHAPTER, "monolingual"))
        self.mono_words = str(data / "mc24" / "words" / MIX_TEXT)
        # the Japanese segmenter's bunsetsu spans beside its words (AA reads the words only)
        self.mono_bunsetsu = str(data / "mc24" / "bunsetsu" / MIX_TEXT)
        self.mix = str(data / "mc24" / "mix")
        self.mono_augmented = str(data / "mc24" / "aa" / MIX_TEXT)

    # --- parallel data

    @property
    def pairs(self) -> list[str]:
        """The en-xx pairs of the parallel data (the paper's PC32)."""
        return list(self.section["pairs"])

    def pair_tokens(self, pair: str) -> dict[str, str]:
        """The en (``source``) and xx (``target``) tokens of the pair's aligned split and the
        alignment layer's symmetrized ``links`` of them: what a dictionary is induced from."""
        dataset = self.section["dataset"]
        run = self.paths.alignment_run(
            dataset, pair, self.align["aligner"]["backend"], self.align["symmetrize"]
        )
        en, xx = self.paths.pair_tokens(dataset, self.align["split"], pair)
        return {"source": str(en), "target": str(xx), "links": str(run / "links.txt")}

    def side_tokens(self, pair: str, lang: str) -> dict[str, str]:
        """The direction from `lang`'s side of the pair: its tokens (``source``, what AA
        substitutes) and the other side's (``target``, its translation)."""
        files = self.pair_tokens(pair)
        sides = [files["source"], files["target"]]
        if lang == pair.split("-")[1]:
            sides.reverse()
        return dict(zip(("source", "target"), sides, strict=True))

    @property
    def dictionary_pairs(self) -> list[str]:
        """The en-xx pairs whose dictionaries AA draws from: the parallel pairs and those of
        languages with monolingual text only (the paper's MUSE dictionaries cover Dutch,
        which its parallel data lacks)."""
        return list(self.section["dictionary_pairs"])

    def dictionaries(self) -> list[str]:
        """The en-xx dictionaries the synonym dictionary is built from: one induced here per
        dictionary pair (tiny), or the MUSE files the registry dataset ``dictionaries`` holds
        for them (full; a pair MUSE lacks gets none, so its language's words stay as they are
        and reach no other language through a shared translation)."""
        key = self.section["dictionaries"]
        if not key:
            return [self.induced.format(pair=pair) for pair in self.dictionary_pairs]
        raw = self.paths.dataset_raw(key)
        return [
            str(raw / f.path)
            for f in self.registry[key].files
            if f"en-{f.lang}" in self.dictionary_pairs
        ]

    def dictionary_inputs(self) -> list[str]:
        """What the synonym dictionary's job waits for: the induced files, or the MUSE
        dataset's fetch record (its files are then complete and verified)."""
        key = self.section["dictionaries"]
        if not key:
            return self.dictionaries()
        return [str(self.paths.dataset_fetched(key))]

    def augmented_files(self) -> list[str]:
        """Both sides of every pair's training tokens, substituted: the sources of both
        directions of each pair."""
        return [
            self.augmented.format(pair=pair, lang=lang)
            for pair in self.pairs
            for lang in pair.split("-")
        ]

    # --- monolingual data (MC24)

    @property
    def mono_languages(self) -> list[str]:
        return list(self.section["monolingual"]["languages"])

    def mono_steps(self, segmented: Sequence[str]) -> dict[str, list[str]]:
        """The monolingual languages by the preprocessing step that makes their words, as it
        makes the parallel data's: Moses (``tokenize``), a segmenter (``segment``: the
        `segmented` languages but Japanese) or GiNZA (``segment_ja``)."""
        steps: dict[str, list[str]] = {"tokenize": [], "segment": [], "segment_ja": []}
        for lang in self.mono_languages:
            step = (
                "tokenize" if lang not in segmented else "segment_ja" if lang == "ja" else "segment"
            )
            steps[step].append(lang)
        return steps

    def mono_files(self) -> list[str]:
        """The substituted side of every language's mixed monolingual lines."""
        return [self.mono_augmented.format(lang=lang) for lang in self.mono_languages]

    def data_files(self) -> list[str]:
        """Everything the data side writes, for the systems that read each (`systems.DATA`):
        the substituted parallel sources and the substituted monolingual lines."""
        return [*self.augmented_files(), *self.mono_files()]
