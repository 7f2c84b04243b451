"""What `snakemake preprocess` asks for, from the config section."""

from pathlib import Path

from mlrep import config as cfg
from mlrep.paths import Paths
from mlrep.text import plan
from tests.conftest import REPO


def section(**changes):
    params = cfg.load(cfg.load_yaml(REPO / "params.yaml"))
    return {**params["preprocess"], **changes}, Paths(Path("r"), Path("rep"), Path("res"))


def test_segmented_languages_are_not_moses_tokenized():
    pre, _ = section(pairs=["en-ja", "en-zh", "en-ko"], segment={"languages": ["ja", "zh"]})
    assert plan.tokenized_languages(pre) == ["en", "ko"]


def test_targets_cover_subwords_bunsetsu_and_head_final():
    pre, paths = section(
        pairs=["en-ja", "en-de"],
        splits=["test"],
        segment={"languages": ["ja"]},
        parse={"pairs": ["en-ja"]},
    )
    assert plan.targets(pre, paths) == [
        "r/preprocess/tiny_corpus/sub/test.en-ja.en",
        "r/preprocess/tiny_corpus/sub/test.en-ja.ja",
        "r/preprocess/tiny_corpus/bunsetsu/test.en-ja.ja",
        "r/preprocess/tiny_corpus/hf/test.en-ja.en",
        "r/preprocess/tiny_corpus/sub/test.en-de.en",
        "r/preprocess/tiny_corpus/sub/test.en-de.de",
    ]


def test_no_bunsetsu_when_moses_tokenizes_japanese():
    pre, paths = section(
        pairs=["en-ja"], splits=["train"], segment={"languages": []}, parse={"pairs": []}
    )
    assert plan.targets(pre, paths) == [
        "r/preprocess/tiny_corpus/sub/train.en-ja.en",
        "r/preprocess/tiny_corpus/sub/train.en-ja.ja",
    ]
