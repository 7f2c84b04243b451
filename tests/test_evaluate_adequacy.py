"""Reference-free adequacy (`mlrep.evaluate.adequacy`, ``mlrep eval adequacy``): the mean
cosine of each source sentence's and its output's embeddings ×100, checked against numpy on
an encoder whose vectors are not unit length, and through the LASER loader on a tiny saved
checkpoint (the full scale's encoder)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from mlrep import cli
from mlrep.embed import baselines
from mlrep.evaluate import adequacy
from mlrep.report.metrics import collect
from tests.test_embed_baselines import laser_checkpoint

SOURCES = [f"source sentence {i} about cats" for i in range(6)]
OUTPUTS = [f"output {i} cat" if i % 2 else f"translation number {i}" for i in range(6)]
REFERENCES = [f"reference {i} of the cats" for i in range(6)]


def fake_encode(lines: list[str]) -> np.ndarray:
    """Deterministic vectors per line whose norms vary with the line (not unit length)."""
    rows = []
    for line in lines:
        rng = np.random.default_rng(zlib.crc32(line.encode("utf-8")))
        rows.append(rng.normal(size=8) * (1 + len(line)))
    return np.asarray(rows)


def lines_file(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def numpy_cosines(a: list[str], b: list[str]) -> np.ndarray:
    x, y = fake_encode(a), fake_encode(b)
    return 100 * np.array(
        [u @ v / np.linalg.norm(u) / np.linalg.norm(v) for u, v in zip(x, y, strict=True)]
    )


@pytest.fixture
def files(tmp_path):
    return {
        name: lines_file(tmp_path / name, lines)
        for name, lines in (("test.ja", SOURCES), ("test.hyp", OUTPUTS), ("test.en", REFERENCES))
    }


def test_adequacy_is_the_mean_cosine_of_source_and_output_embeddings(files):
    system = adequacy.System("mt", 1, "ja-en", files["test.ja"], files["test.hyp"])
    reference = adequacy.System("ref", 0, "ja-en", files["test.ja"], files["test.en"])
    embed = adequacy.Embeddings(fake_encode, lambda lines, lang: lines)
    mt, ref = adequacy.score([system, reference], embed)
    expected = numpy_cosines(SOURCES, OUTPUTS)
    assert mt.sentences == pytest.approx(expected.tolist())
    assert mt.value == pytest.approx(expected.mean())
    # the Reference row scores the references against the same source
    assert ref.value == pytest.approx(numpy_cosines(SOURCES, REFERENCES).mean())
    assert ref.value != pytest.approx(mt.value)
    # floor: each output against the next line's source
    shifted = SOURCES[1:] + SOURCES[:1]
    assert mt.floor_value == pytest.approx(numpy_cosines(shifted, OUTPUTS).mean())


def test_a_zero_vector_has_cosine_zero_not_nan():
    a = np.array([[3.0, 4.0], [1.0, 0.0]])
    b = np.array([[6.0, 8.0], [0.0, 0.0]])
    assert adequacy.cosines(a, b).tolist() == pytest.approx([1.0, 0.0])


def test_each_file_is_encoded_once_in_its_language(files):
    calls = []

    def encode(lines):
        calls.append(lines)
        return fake_encode(lines)

    embed = adequacy.Embeddings(encode, lambda lines, lang: [f"{lang}:{x}" for x in lines])
    systems = [
        adequacy.System(run, 1, "ja-en", files["test.ja"], files[out])
        for run, out in (("a", "test.hyp"), ("b", "test.en"))
    ]
    adequacy.score(systems, embed)
    assert [c[0] for c in calls] == [f"ja:{SOURCES[0]}", f"en:{OUTPUTS[0]}", f"en:{REFERENCES[0]}"]


def test_a_missing_or_misaligned_hypothesis_file_is_named_with_its_counts_and_fix(files, tmp_path):
    short = lines_file(tmp_path / "short.hyp", OUTPUTS[:-1])
    system = adequacy.System("aspec_je.ja-en.10k.jaen-mass", 1, "ja-en", files["test.ja"], short)
    with pytest.raises(adequacy.AdequacyError) as error:
        adequacy.aligned(system)
    message = str(error.value)
    assert str(short) in message and "5 lines for the 6 lines" in message
    assert "aspec_je.ja-en.10k.jaen-mass" in message and "decode" in message
    missing = adequacy.System("x", 1, "ja-en", files["test.ja"], tmp_path / "none.hyp")
    with pytest.raises(adequacy.AdequacyError, match=r"none\.hyp: file not found"):
        adequacy.score([missing], adequacy.Embeddings(fake_encode, lambda lines, lang: lines))


def test_a_system_option_is_parsed_or_refused_with_its_spelling():
    system = adequacy.parse_system(["r", "2", "ja-en", "a.ja", "b.hyp"])
    assert (system.seed, system.languages, system.metric) == (2, ("ja", "en"), "laser_ja-en")
    with pytest.raises(adequacy.AdequacyError, match="RUN SEED SRC-TGT SOURCE OUTPUT"):
        adequacy.parse_system(["r", "one", "ja-en", "a.ja", "b.hyp"])


def run_verb(tmp_path: Path, files: dict[str, Path], loader: str, encoder: str) -> int:
    argv = ["eval", "adequacy", "--section", "ch4_jass", "--run-group", "laser"]
    argv += ["--out", str(tmp_path / "results" / "ch4_jass" / "laser"), "--scale", "tiny"]
    argv += ["--system", "aspec_je.ja-en.10k.jaen-mass", "1", "ja-en"]
    argv += [str(files["test.ja"]), str(files["test.hyp"])]
    argv += ["--system", "aspec_je.reference", "0", "ja-en"]
    argv += [str(files["test.ja"]), str(files["test.en"])]
    argv += ["--backend", "sacremoses", "--segmented", "ja", "zh"]
    argv += ["--loader", loader, "--encoder", encoder, "--batch-size", "4"]
    return cli.main(argv)


def test_the_verb_scores_with_a_saved_laser_checkpoint_into_declared_metrics(files, tmp_path):
    folder, _, _ = laser_checkpoint(tmp_path / "laser", "bpe")
    assert run_verb(tmp_path, files, "laser", str(folder)) == 0
    encode = baselines.load("laser", folder, 4).encode
    # detokenizing leaves these words as they are (Latin words stay spaced when joined)
    sources, outputs = encode(SOURCES).astype(float), encode(OUTPUTS).astype(float)
    cos = [
        u @ v / np.linalg.norm(u) / np.linalg.norm(v) for u, v in zip(sources, outputs, strict=True)
    ]
    results = collect(tmp_path / "results", "tiny")
    (mt,) = results.seeds("ch4_jass", "laser/aspec_je.ja-en.10k.jaen-mass")
    assert mt.seed == 1 and mt.metrics["laser_ja-en"] == pytest.approx(100 * np.mean(cos))
    (ref,) = results.seeds("ch4_jass", "laser/aspec_je.reference")
    assert ref.seed == 0 and "floor_laser_ja-en" in ref.metrics
    document = json.loads(mt.path.read_text(encoding="utf-8"))
    assert document["encoder"].startswith("laser:") and document["output"].endswith("test.hyp")
