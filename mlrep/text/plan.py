"""What `snakemake preprocess` builds, from the ``preprocess`` config section.

Kept out of the rule file so the rules stay declarations and the plan is unit-tested.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.paths import Paths


def tokenized_languages(section: Mapping[str, Any]) -> list[str]:
    """Languages of the configured pairs that Moses tokenizes (all but the segmented ones)."""
    langs = {lang for pair in section["pairs"] for lang in pair.split("-")}
    return sorted(langs - set(section["segment"]["languages"]))


def targets(section: Mapping[str, Any], paths: Paths) -> list[str]:
    """Subword-encoded files of every pair, bunsetsu spans of Japanese (when GiNZA segments
    it), head-finalized English of the parsed pairs."""
    dataset = section["dataset"]
    out = []
    for pair in section["pairs"]:
        for split in section["splits"]:
            for lang in pair.split("-"):
                name = f"{split}.{pair}.{lang}"
                out.append(paths.preprocessed(dataset, "sub") / name)
                if lang == "ja" and "ja" in section["segment"]["languages"]:
                    out.append(paths.preprocessed(dataset, "bunsetsu") / name)
            if pair in section["parse"]["pairs"]:
                out.append(paths.preprocessed(dataset, "hf") / f"{split}.{pair}.en")
    return [str(path) for path in out]
