"""Chapter 5's mBART FT at the verb level: the tiny stand-in (`mlrep nmt mbart-pretrain`),
converted by `mbart-init`, fine-tuned for many-to-many NMT by `mlrep nmt train --init` on a
dataset `mlrep nmt prepare --dictionary` binarised with its dictionary and its language
tokens, then decoded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sentencepiece
import torch
from fairseq.data import Dictionary, data_utils

from mlrep import cli
from mlrep.io import atomic_write_text, read_lines
from mlrep.nmt import data, prepare
from mlrep.nmt.alignments import tagged
from mlrep.nmt.data import MBART, NmtDataError, strip_tags, tag_source, tag_target
from mlrep.nmt.decode import Translator
from mlrep.nmt.mbart_init import DICT
from mlrep.nmt.settings import BeamSettings
from mlrep.nmt.train import BEST
from mlrep.nmt.valid_log import VALID_LOG
from tests.mbart_helpers import MONO_LANGUAGES, monolingual, pretrain_argv
from tests.nmt_helpers import corpus  # noqa: F401

ARCH = "mlrep_transformer_mbart_tiny"
DETOKENIZE = {"method": "sentencepiece", "backend": "mosestokenizer", "segmented": []}
LINES = {"train": 120, "valid": 20, "test": 8}  # of each preprocessed split read


@pytest.fixture(scope="module")
def init(corpus, tmp_path_factory) -> Path:  # noqa: F811
    """The stand-in, pre-trained and converted by `mbart-init`."""
    root = tmp_path_factory.mktemp("mbart-ft")
    text = monolingual(corpus, root / "text")
    assert cli.main(pretrain_argv(text, root / "release", lr=0.005)) == 0
    release = root / "release"
    argv = ["nmt", "mbart-init", "--checkpoint", str(release / "model.pt"), "--dict"]
    argv += [str(release / "dict.txt"), "--spm", str(release / "sentence.bpe.model")]
    assert cli.main([*argv, "--arch", ARCH, "--out", str(root / "init")]) == 0
    return root / "init"


@pytest.fixture(scope="module")
def encoded(corpus, init, tmp_path_factory) -> list[Path]:  # noqa: F811
    """Raw corpus files and their pieces under the stand-in's SentencePiece model, named as
    the preprocessing names them: ``--raw`` then ``--encoded`` of `mlrep nmt prepare`."""
    out = tmp_path_factory.mktemp("mbart-ft-encoded")
    spm_model = init.parent / "release" / "sentence.bpe.model"
    spm = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
    raws, subs = [], []
    for split, n in LINES.items():
        for xx in MONO_LANGUAGES[1:]:
            for lang in ("en", xx):
                raw = corpus / f"{split}.en-{xx}.{lang}"
                lines = read_lines(raw, ValueError)[:n]
                pieces = (" ".join(spm.encode(line, out_type=str)) for line in lines)
                atomic_write_text(out / raw.name, "".join(p + "\n" for p in pieces))
                raws.append(raw)
                subs.append(out / raw.name)
    return [*raws, *subs]


def _prepare(encoded: list[Path], out: Path, dictionary: Path) -> dict:
    half = len(encoded) // 2
    argv = ["nmt", "prepare", "--section", "ch8_layernorm", "--scale", "tiny", "--raw"]
    argv += [str(p) for p in encoded[:half]] + ["--encoded"] + [str(p) for p in encoded[half:]]
    argv += ["--subword-method", "sentencepiece", "--backend", "mosestokenizer", "--dataset"]
    argv += ["iwslt", "--out", str(out), "--dictionary", str(dictionary), "--max-train", "100"]
    argv += ["--max-valid", "10", "--max-test", "5", "--max-length", "256"]
    argv += ["--sampling-temperature", "1", "--sampling-seed", "1", "--languages"]
    argv += [*MONO_LANGUAGES, "--splits", "train", "valid", "test"]
    assert cli.main(argv) == 0
    return json.loads((out / prepare.BINARISE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def prepared(encoded, init, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mbart-ft-data") / "tiny"
    _prepare(encoded, out, init / DICT)
    return out


def test_prepare_binarises_with_the_given_dictionary_and_mbart_tags(prepared, init):
    """The dataset's dictionary is mbart-init's, byte for byte (so the data-bin's hash is the
    init's), every piece of the stand-in's model is in it (no <unk>), and the lines carry
    mBART's tokens: in S-ENC-T-DEC the source's then the target's, in T-ENC the target's."""
    assert (prepared / prepare.DICT).read_bytes() == (init / DICT).read_bytes()
    binarised = json.loads((prepared / prepare.BINARISE).read_text(encoding="utf-8"))
    assert binarised["tags"] == MBART and binarised["dictionary"] == str(init / DICT)
    # the few characters the SentencePiece model never saw are its own <unk>
    assert all(rate < 0.005 for rate in binarised["unk_rate"].values())
    assert prepare.tag_style(prepared) == MBART
    raw = prepared / "s-enc-t-dec" / "raw"
    sources = read_lines(raw / "train.src-tgt.src", ValueError)
    targets = read_lines(raw / "train.src-tgt.tgt", ValueError)
    tokens = {f"[{code}]" for code in ("en_XX", "it_IT", "nl_XX", "ro_RO")}
    pairs = {(s.split()[0], t.split()[0]) for s, t in zip(sources, targets, strict=True)}
    assert {s for s, _ in pairs} == tokens and ("[en_XX]", "[ro_RO]") in pairs
    assert ("[ro_RO]", "[en_XX]") in pairs and all(s != t for s, t in pairs)
    t_enc = prepared / "t-enc" / "raw"
    first = read_lines(t_enc / "train.src-tgt.src", ValueError)[0].split()[0]
    assert first in tokens
    assert not any(
        line.split()[0] in tokens for line in read_lines(t_enc / "train.src-tgt.tgt", ValueError)
    )
    assert not any("__" in line for line in sources)


def test_pieces_the_dictionary_lacks_are_unk_and_counted(encoded, init, prepared, tmp_path):
    """A dictionary without a frequent piece (another model's): that piece is read as <unk>,
    as fairseq reads it, and binarise.json's rate is the share of such pieces."""
    lines = (init / DICT).read_text(encoding="utf-8").splitlines()
    dropped = "▁the"
    assert any(line.split()[0] == dropped for line in lines)
    renamed = [
        f"▁notapiece {line.split()[1]}" if line.split()[0] == dropped else line for line in lines
    ]
    other = tmp_path / "other.dict.txt"
    other.write_text("".join(line + "\n" for line in renamed), encoding="utf-8")
    binarised = _prepare(encoded, tmp_path / "data", other)
    words = Dictionary.load(str(other))
    pieces = [
        p
        for d in data.split_directions(MONO_LANGUAGES, "train")
        for side in prepare.read_subwords(tmp_path / "data", "train", d)
        for line in side
        for p in line.split()
    ]
    base = json.loads((prepared / prepare.BINARISE).read_text(encoding="utf-8"))["unk_rate"]
    expected = base["train"] + pieces.count(dropped) / len(pieces)
    assert binarised["unk_rate"]["train"] == pytest.approx(expected)
    assert expected > base["train"] + 0.005
    train = data_utils.load_indexed_dataset(
        str(tmp_path / "data" / "t-enc" / "bin" / "train.src-tgt.src"), words
    )
    ids = torch.cat([train[i] for i in range(len(train))])
    assert int((ids == words.unk()).sum()) > 0


def test_a_language_without_an_mbart_token_or_a_dictionary_without_tags_is_refused(
    prepared, init, tmp_path
):
    with pytest.raises(NmtDataError, match=r"'xh' has no mBART-25 language token.*drop xh"):
        prepare.prepare(tmp_path, ["en", "xh"], DETOKENIZE, init / DICT)
    own = tmp_path / "own.txt"
    own.write_text("▁a 1\n__en__ 1\n", encoding="utf-8")
    with pytest.raises(NmtDataError, match=r"own.txt has no language token \[en_XX\]"):
        prepare.prepare(tmp_path, ["en"], DETOKENIZE, own)


def test_tag_shifted_links_point_at_the_same_pieces_under_mbart_tags():
    """`alignments.tagged` shifts past one tag token: an mBART tag is one token too."""
    en, ro, links = "▁the ▁cat", "▁pisica ▁mea", [(0, 1), (1, 0)]
    for tag_format in data.TAGS:
        for reverse in (False, True):
            src, tgt, (s_lang, t_lang) = (
                (ro, en, ("ro", "en")) if reverse else (en, ro, ("en", "ro"))
            )
            source = tag_source(src, s_lang, t_lang, tag_format, MBART).split()
            target = tag_target(tgt, t_lang, tag_format, MBART).split()
            for s, t in tagged(links, tag_format, reverse):
                pair = (source[s], target[t]) if not reverse else (target[t], source[s])
                assert pair in {("▁the", "▁mea"), ("▁cat", "▁pisica")}


def test_strip_tags_drops_both_tag_styles_and_nothing_else():
    tokens = ["[ro_RO]", "▁a", "[en_XX]", "__nl__", "[x]", "[ab_CD]", "__"]
    assert strip_tags(tokens) == ["▁a", "[x]", "[ab_CD]", "__"]


def _train_argv(prepared: Path, out: Path, *init: str) -> list[str]:
    argv = ["nmt", "train", "--section", "ch8_layernorm", "--scale", "tiny", "--data"]
    argv += [str(prepared), "--dataset", "iwslt", "--name", "mbart-ft", "--tag-format"]
    argv += ["s-enc-t-dec", "--layernorm", "pre", "--seed", "1", "--out", str(out), *init]
    argv += ["--arch", ARCH, "--dropout", "0.1", "--lr", "0.0003", "--max-epoch", "0"]
    argv += ["--max-update", "3", "--max-tokens", "1024", "--warmup-updates", "1"]
    argv += ["--label-smoothing", "0.1", "--save-interval-updates", "1", "--gpus", "1"]
    return [*argv, "--fp16", "false"]


def _train(prepared: Path, out: Path, *init: str) -> list[dict]:
    assert cli.main(_train_argv(prepared, out, *init)) == 0
    return [json.loads(line) for line in (out / VALID_LOG).read_text().splitlines()]


def test_fine_tuning_starts_from_the_stand_in_and_decodes_without_tags(prepared, init, tmp_path):
    """`nmt train --init`: after one update the validation loss is far below that of the same
    run from random weights (the init was read, not ignored); the fine-tuned model decodes
    every direction with mBART's target token forced first, and no tag reaches a
    hypothesis."""
    tuned = _train(prepared, tmp_path / "ft", "--init", str(init / "checkpoint.pt"))
    scratch = _train(prepared, tmp_path / "scratch")
    assert tuned[0]["updates"] == scratch[0]["updates"] == 1
    assert tuned[0]["loss"] < scratch[0]["loss"] - 1
    bin_ = prepared / "s-enc-t-dec" / "bin"
    translator = Translator(
        tmp_path / "ft" / BEST, bin_, "s-enc-t-dec", prepare.tag_style(prepared)
    )
    assert (
        translator.prefix("ro")
        == translator.dictionary.index("[ro_RO]")
        != translator.dictionary.unk()
    )
    dirs = data.directions(MONO_LANGUAGES)
    sources = [prepare.read_subwords(prepared, "test", d)[0][0] for d in dirs]
    beam = BeamSettings(beam=1, max_len_a=1.0, max_len_b=5, batch_size=16)
    hypotheses = translator.generate(sources, dirs, beam)
    assert len(hypotheses) == len(dirs)
    tags = {f"[{code}]" for code in data.MBART25_LANGUAGES}
    assert not any(token in tags for hypothesis in hypotheses for token in hypothesis)


def test_an_init_of_another_dictionary_is_refused_naming_both(encoded, init, tmp_path, capsys):
    """Data binarised with a dictionary of the init's size but other pieces: refused before
    training, naming the checkpoint, the data-bin's dictionary and the init's record."""
    lines = (init / DICT).read_text(encoding="utf-8").splitlines()
    other = tmp_path / "other.dict.txt"
    other.write_text(
        "".join(f"x{line}\n" if i == 5 else line + "\n" for i, line in enumerate(lines)),
        encoding="utf-8",
    )
    _prepare(encoded, tmp_path / "data", other)
    argv = _train_argv(tmp_path / "data", tmp_path / "ft", "--init", str(init / "checkpoint.pt"))
    assert cli.main(argv) == 2
    message = capsys.readouterr().err
    assert "was trained with another dictionary than" in message
    for part in ("checkpoint.pt", "s-enc-t-dec/bin/dict.src.txt", "train.json", "--dictionary"):
        assert part in message


def test_links_binarises_again_with_the_datasets_dictionary_and_tags(
    prepared, encoded, init, tmp_path
):
    """`mlrep nmt links` on a dataset prepared with mBART's dictionary keeps both: its lines
    carry mBART's tokens and its data-bin has the init's dictionary (words: the raw lines'
    whitespace words, each line's first words linked)."""
    half = len(encoded) // 2
    tokens, links = [], []
    for raw, sub in zip(encoded[:half], encoded[half:], strict=True):
        words = read_lines(raw, ValueError)[: len(read_lines(sub, ValueError))]
        atomic_write_text(tmp_path / "tok" / sub.name, "".join(w + "\n" for w in words))
        tokens.append(tmp_path / "tok" / sub.name)
    for xx in MONO_LANGUAGES[1:]:
        lines = len(read_lines(tmp_path / "tok" / f"train.en-{xx}.en", ValueError))
        atomic_write_text(tmp_path / f"en-{xx}.links", "0-0\n" * lines)
        links.append(f"train.en-{xx}={tmp_path / f'en-{xx}.links'}")
    argv = ["nmt", "links", "--data", str(prepared), "--encoded", *map(str, encoded[half:])]
    argv += ["--tokens", *map(str, tokens), "--links", *links, "--tag-formats", "s-enc-t-dec"]
    assert cli.main([*argv, "--out", str(tmp_path / "linked")]) == 0
    raw = tmp_path / "linked" / "s-enc-t-dec" / "raw"
    sources = read_lines(raw / "train.src-tgt.src", ValueError)
    assert {line.split()[0] for line in sources} == {"[en_XX]", "[it_IT]", "[nl_XX]", "[ro_RO]"}
    bin_dict = tmp_path / "linked" / "s-enc-t-dec" / "bin" / prepare.BIN_DICT
    assert bin_dict.read_bytes() == (init / DICT).read_bytes()
