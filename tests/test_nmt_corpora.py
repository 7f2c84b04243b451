"""`mlrep nmt prepare` on the thesis corpora as the data layer's readers normalise them.

Each fixture is written in the source's published layout (OPUS-100's tarball with its
supervised and zero-shot folders, the WIT3 IWSLT 2017 multilingual archive with train.tags
and XML sets, Europarl v7's per-pair tarballs), fetched from a loopback mirror and normalised
by the real reader, so prepare reads exactly what `results/data/<key>` holds at `full`.
Sentence ``<lang> message <n> …`` is the translation of every other language's message n,
so a test can check that both sides of a pair say the same thing. The cut does not look inside
the subwords, so here each set's corpus files stand in for their own subword files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mlrep import cli
from mlrep.data import readers, registry
from mlrep.data.validate import Filters
from mlrep.nmt.data import Corpora, Direction, NmtDataError, cut, read_pair, sets_of
from tests.test_data_readers_formats import _fetched, _iwslt_xml, _tar

WORDS = ("river", "lamp", "garden", "window", "letter", "bridge", "market", "winter", "silver")


def say(lang: str, n: int) -> str:
    return f"{lang} message {n} about the {WORDS[n % len(WORDS)]} and {WORDS[(n * 7) % 9]}"


def message(line: str) -> int:
    found = re.search(r"message (\d+)", line)
    assert found, line
    return int(found.group(1))


def lines(lang: str, numbers) -> str:
    return "".join(say(lang, n) + "\n" for n in numbers)


def files_of(folders: list[Path]) -> list[Path]:
    """The files of every line-aligned set of normalised corpora (metadata.json ``kind``), as
    `preprocess.corpora` names them at full scale."""
    found = []
    for folder in folders:
        pairs = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))["pairs"]
        for name, info in sorted(pairs.items()):
            if info["kind"] == "parallel":
                langs = name.split(".")[1].split("-")
                found.extend(folder / f"{name}.{lang}" for lang in langs)
    return found


def corpora_of(folders: list[Path]) -> Corpora:
    files = files_of(folders)
    return Corpora(sets_of(files, files))


def prepare(out: Path, dataset: str, corpora: list[Path], languages, splits, **caps) -> dict:
    """Run the real command with every value given (nothing read from params.yaml)."""
    limits = {"max_train": 1000, "max_valid": 1000, "max_test": 1000, "max_length": 256, **caps}
    files = [str(f) for f in files_of(corpora)]
    args = ["nmt", "prepare", "--section", "ch8_layernorm", "--encoded", *files, "--raw", *files]
    args += ["--dataset", dataset, "--subword-method", "subword_nmt"]
    args += ["--backend", "mosestokenizer", "--segmented"]
    args += ["--out", str(out), "--languages", *languages, "--splits", *splits, "--scale", "full"]
    for key, value in limits.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    assert cli.main(args) == 0
    for tag_format in ("s-enc-t-dec", "t-enc"):
        assert (out / tag_format / "bin/train.src-tgt.src.bin").exists()
        assert (out / tag_format / "bin/valid.src-tgt.src.bin").exists()
    return json.loads((out / "text/stats.json").read_text(encoding="utf-8"))


def same_message(folder: Path, split: str, d: Direction) -> int:
    """Lines of a pair, after checking that each pair of lines says the same message."""
    src, tgt = read_pair(folder, split, d)
    assert len(src) == len(tgt) > 0
    assert all(message(a) == message(b) for a, b in zip(src, tgt, strict=True))
    assert all(a.startswith(f"{d.src} ") for a in src)
    assert all(b.startswith(f"{d.tgt} ") for b in tgt)
    return len(src)


# --- OPUS-100 + its zero-shot test sets (Zhang et al. 2020) -----------------------------------


def _opus100(path):
    top = "opus-100-corpus/v1.0"
    members = {}
    for xx in ("de", "fr", "nl"):
        pair = "-".join(sorted(("en", xx)))  # OPUS names pairs alphabetically: de-en, en-fr
        base = {"de": 0, "fr": 1000, "nl": 2000}[xx]
        for split, numbers in (
            ("train", range(base, base + 40)),
            ("dev", range(base + 40, base + (43 if xx == "nl" else 45))),  # sizes differ
            ("test", range(base + 50, base + 56)),
        ):
            for lang in pair.split("-"):
                members[f"{top}/supervised/{pair}/opus.{pair}-{split}.{lang}"] = lines(
                    lang, numbers
                )
    for pair in ("de-fr", "de-nl", "fr-nl"):
        for lang in pair.split("-"):
            members[f"{top}/zero-shot/{pair}/opus.{pair}-test.{lang}"] = lines(
                lang, range(900, 904 if pair == "fr-nl" else 907)
            )
    members[f"{top}/README"] = "OPUS-100\n"
    _tar(path, members)


def test_opus100_supervised_bitexts_and_its_own_zero_shot_test_sets(tmp_path):
    dataset, raw = _fetched(tmp_path, "opus_opus100", {"opus-100-corpus-v1.0.tar.gz": _opus100})
    supervised, zero = tmp_path / "data/opus_opus100", tmp_path / "data/opus_opus100_zeroshot"
    readers.normalize(dataset, raw, supervised, ["de", "fr", "nl"], Filters())
    zeroshot = registry.get("opus_opus100_zeroshot")
    readers.normalize(zeroshot, raw, zero, ["de", "fr", "nl"], Filters())

    out = tmp_path / "prepared"
    stats = prepare(
        out, "opus", [supervised, zero], ["de", "en", "fr", "nl"], ["train", "dev", "test"]
    )
    assert stats["n_zero"] == 6 and stats["n_supervised"] == 6 and stats["s_train"] == 3 * 40
    text = out / "text"
    assert same_message(text, "train", Direction("en", "de")) == 40
    assert same_message(text, "valid", Direction("fr", "en")) == 5
    assert same_message(text, "test", Direction("en", "nl")) == 6
    # zero-shot: OPUS-100's own de-fr set, both directions, not a join of the en-xx test sets
    assert same_message(text, "test", Direction("fr", "de")) == 7
    assert {message(x) for x in read_pair(text, "test", Direction("de", "fr"))[0]} == set(
        range(900, 907)
    )
    assert stats["sources"]["test.fr-de"] == "opus_opus100_zeroshot/test.de-fr"
    assert stats["sources"]["train.en-de"] == "opus_opus100/train.de-en"
    assert not list(text.glob("valid.de-fr.*"))  # OPUS-100 has no zero-shot valid sets
    sub = (out / "sub/test.nl-fr.nl").read_text(encoding="utf-8")
    assert sub == (text / "test.nl-fr.nl").read_text(encoding="utf-8")
    # Table 7.1's per-pair sizes: the split's largest direction (fr-de's 7 test lines, not
    # the supervised 6 or fr-nl's 4; valid: de and fr's 5, not nl's 3)
    assert (stats["valid_per_pair"], stats["test_per_pair"]) == (5, 7)
    row = json.loads((out / "seed0/metrics.json").read_text(encoding="utf-8"))
    assert row["run"] == "data/opus"
    assert row["metrics"] == {
        "n_zero": 6,
        "n_supervised": 6,
        "s_train": 3 * 40,
        "valid_per_pair": 5,
        "test_per_pair": 7,
        "n_languages": 4,
    }


# --- IWSLT 2017 multilingual (WIT3 DeEnItNlRo archive) ----------------------------------------


def _iwslt17(path):
    top = "DeEnItNlRo-DeEnItNlRo"
    members = {}
    header = "<url>http://example.org/talk</url>\n<talkid>1</talkid>\n<title>Talk</title>\n"
    train = {"en-it": range(0, 30), "en-nl": range(100, 130), "it-nl": range(500, 530)}
    for pair, numbers in train.items():
        for lang in pair.split("-"):
            members[f"{top}/train.tags.{pair}.{lang}"] = header + lines(lang, numbers)
    evaluation = {
        "dev2010": {"en-it": range(40, 44), "en-nl": range(140, 144), "it-nl": range(540, 544)},
        "tst2010": {"en-it": range(50, 55), "en-nl": range(150, 155), "it-nl": range(700, 708)},
    }
    for name, pairs in evaluation.items():
        for pair, numbers in pairs.items():
            for lang in pair.split("-"):
                talk = {"1": [say(lang, n) for n in numbers]}
                members[f"{top}/IWSLT17.TED.{name}.{pair}.{lang}.xml"] = _iwslt_xml(talk, lang)
    _tar(path, members)


def test_iwslt2017_trains_english_centric_and_tests_its_non_english_pairs(tmp_path):
    site = {"DeEnItNlRo-DeEnItNlRo.tgz": _iwslt17}
    dataset, raw = _fetched(tmp_path, "wit3_iwslt2017_multilingual", site)
    corpus = tmp_path / "data/wit3_iwslt2017_multilingual"
    readers.normalize(dataset, raw, corpus, None, Filters())

    out = tmp_path / "prepared"
    stats = prepare(out, "iwslt", [corpus], ["en", "it", "nl"], ["train", "dev2010", "tst2010"])
    text = out / "text"
    assert stats["n_zero"] == 2 and stats["s_train"] == 60
    trained = {
        message(line)
        for xx in ("it", "nl")
        for side in read_pair(text, "train", Direction("en", xx))
        for line in side
    }
    assert trained == set(range(0, 30)) | set(range(100, 130))  # not the it-nl bitext
    assert same_message(text, "valid", Direction("nl", "en")) == 4
    assert same_message(text, "test", Direction("it", "en")) == 5
    assert same_message(text, "test", Direction("nl", "it")) == 8
    assert stats["sources"]["test.nl-it"] == "wit3_iwslt2017_multilingual/tst2010.it-nl"


# --- Europarl v7: per-pair training data only; multi-way valid/test held out of it -------------

MULTIWAY = range(0, 30)


def _europarl(xx: str, own: range):
    def make(path):
        numbers = [*MULTIWAY, *own]
        en = [say("en", n) for n in numbers] + ["(Applause)", ""]
        other = [say(xx, n) for n in numbers] + [f"{xx} applause", f"{xx} stray line"]
        if xx == "de":  # an English sentence twice, translated two ways: never held out
            en.append("(Applause)")
            other.append("de Beifall")
        members = {f"europarl-v7.{xx}-en.en": en, f"europarl-v7.{xx}-en.{xx}": other}
        _tar(path, {name: "".join(f"{t}\n" for t in rows) for name, rows in members.items()})

    return make


def test_europarl_holds_multi_way_sentences_out_of_training(tmp_path):
    site = {
        "de-en.tgz": _europarl("de", range(100, 120)),
        "fr-en.tgz": _europarl("fr", range(200, 220)),
    }
    dataset, raw = _fetched(tmp_path, "statmt_europarl_v7", site, ["de", "fr"])
    corpus = tmp_path / "data/statmt_europarl_v7"
    meta = readers.normalize(dataset, raw, corpus, ["de", "fr"], Filters())
    assert meta["pairs"]["train.de-en"]["filtered"]["empty"] == 1  # the unaligned line

    out = tmp_path / "prepared"
    splits = ["train", "train", "train"]
    stats = prepare(out, "europarl", [corpus], ["de", "en", "fr"], splits, max_valid=3, max_test=4)
    text = out / "text"
    english = {
        split: {message(e) for e in read_pair(text, split, Direction("en", "de"))[0]}
        for split in ("valid", "test")
    }
    assert len(english["valid"]) == 3 and len(english["test"]) == 4
    assert english["valid"] | english["test"] <= set(MULTIWAY)
    assert not english["valid"] & english["test"]
    for xx in ("de", "fr"):
        assert {message(e) for e in read_pair(text, "test", Direction("en", xx))[0]} == (
            english["test"]
        )
        trained = read_pair(text, "train", Direction("en", xx))[0]
        assert not {message(e) for e in trained if "message" in e} & (
            english["valid"] | english["test"]
        )
    # 30 multi-way + 20 own + applause lines, less the 7 held out: de has "(Applause)" twice
    assert stats["s_train"] == (30 + 20 + 2 - 7) + (30 + 20 + 1 - 7)
    assert same_message(text, "test", Direction("de", "fr")) == 4
    assert same_message(text, "valid", Direction("fr", "en")) == 3
    assert stats["sources"]["test.de-fr"] == (
        "held out of statmt_europarl_v7/train.de-en + held out of "
        "statmt_europarl_v7/train.fr-en on English"
    )
    with pytest.raises(NmtDataError, match=r"no English sentence left .* for test"):
        cut(corpora_of([corpus]), ["de", "en", "fr"], splits, tmp_path / "none", 10, 30, 5, 256)


def test_a_prepared_dataset_s_row_is_named_by_its_folder_below_the_chapter():
    from mlrep.nmt.cli import _run_of

    # Chapter 5 prepares each system twice, with its own dictionary and with mBART's
    own, mbart = (Path(f"results/ch5_wordcl/data/{d}/626_x") for d in ("own", "mbart"))
    assert _run_of(own, "ch5_wordcl", "data/626_x") == "data/own/626_x"
    assert _run_of(mbart, "ch5_wordcl", "data/626_x") == "data/mbart/626_x"
    assert (
        _run_of(Path("/w/results/ch8_layernorm/data/iwslt"), "ch8_layernorm", "-") == "data/iwslt"
    )
    assert _run_of(Path("/tmp/prepared"), "ch8_layernorm", "data/iwslt") == "data/iwslt"
