"""Pretrained baselines: tiny random checkpoints of each real format, made here, load through the
same functions the full scale uses on LaBSE, SBERT-distill, LASER, LASER2 and mUSE."""

from __future__ import annotations

import json
import tarfile

import numpy as np
import pytest
import torch

from mlrep.chapters.ch2_ems import cli as ch2_cli
from mlrep.cli import main
from mlrep.device import Devices
from mlrep.embed import baselines
from tests.device_helpers import FakeCuda
from tests.test_data_download import serve

SENTENCES = ["the cat sat", "a dog", "the cat sat on the mat today", "hello", "the mat"]
WORDS = sorted({w for s in SENTENCES for w in s.split()})


def bert_like(folder, model: str = "bert", pooling: str = "cls"):
    """A tiny random model of LaBSE's class (BERT, CLS pooling, dense, normalised) or of
    SBERT-distill's (XLM-R, mean pooling), saved as a sentence-transformers folder."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import (
        Dense,
        Normalize,
        Pooling,
        Transformer,
    )
    from transformers import (
        BertConfig,
        BertModel,
        BertTokenizerFast,
        XLMRobertaConfig,
        XLMRobertaModel,
    )

    raw = folder.parent / f"{folder.name}-raw"
    raw.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (raw / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(0)
    shape = dict(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    if model == "bert":
        BertModel(BertConfig(**shape)).save_pretrained(raw)
    else:
        XLMRobertaModel(XLMRobertaConfig(**shape, pad_token_id=0)).save_pretrained(raw)
    BertTokenizerFast(vocab_file=str(raw / "vocab.txt")).save_pretrained(raw)
    encoder = Transformer(str(raw), max_seq_length=32)
    modules = [encoder, Pooling(encoder.get_embedding_dimension(), pooling_mode=pooling)]
    if model == "bert":
        modules += [Dense(16, 8, activation_function=torch.nn.Tanh()), Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder))
    return folder


@pytest.mark.parametrize(("model", "pooling", "dim"), [("bert", "cls", 8), ("xlmr", "mean", 16)])
def test_sentence_transformers_folders_load_and_encode_in_input_order(
    tmp_path, model, pooling, dim
):
    from sentence_transformers import SentenceTransformer

    folder = bert_like(tmp_path / "model", model, pooling)
    encoder = baselines.load("sentence_transformers", folder, batch_size=2)
    vectors = encoder.encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), dim) and vectors.dtype == np.float32
    reference = SentenceTransformer(str(folder), device="cpu").encode(SENTENCES)
    np.testing.assert_allclose(vectors, reference, atol=1e-5)  # length-sorted batches, reordered
    assert encoder.parameters > 1000 and encoder.library == "sentence-transformers"
    with pytest.raises(baselines.BaselineError, match=r"no modules\.json"):
        baselines.load("sentence_transformers", tmp_path / "model-raw", batch_size=2)


def laser_checkpoint(folder, tokenizer: str = "spm"):
    """A tiny random checkpoint in LASER's format, with LASER2's SentencePiece model or
    LASER's fastBPE codes and vocabulary beside it."""
    import sentencepiece

    folder.mkdir(parents=True)
    if tokenizer == "spm":
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(SENTENCES * 20),
            model_prefix=str(folder / "tiny"),
            vocab_size=20,
            minloglevel=2,
        )
        (folder / "tiny.model").rename(folder / "tiny.spm")
        model = sentencepiece.SentencePieceProcessor(model_file=str(folder / "tiny.spm"))
        pieces = [model.id_to_piece(i) for i in range(model.get_piece_size())]
    else:
        (folder / "tiny.fcodes").write_text("t h 9\nth e</w> 8\nc a 7\n")
        (folder / "tiny.fvocab").write_text("the 9\nca@@ 7\nt 5\n! 3\n")
        pieces = ["the", "ca@@", "t", "!", *"abcdefghijklmnopqrstuvwxyz"]
    dictionary = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    dictionary.update({p: 4 + i for i, p in enumerate(pieces) if p not in dictionary})
    params = dict(
        num_embeddings=len(dictionary) + 4,
        padding_idx=1,
        embed_dim=8,
        hidden_size=6,
        num_layers=2,
        bidirectional=True,
        left_pad=True,
        padding_value=0.0,
    )
    torch.manual_seed(1)
    state = {
        "embed_tokens.weight": torch.randn(params["num_embeddings"], 8),
        **torch.nn.LSTM(8, 6, num_layers=2, bidirectional=True).state_dict(),
    }
    state = {k if k.startswith("embed") else f"lstm.{k}": v for k, v in state.items()}
    torch.save({"params": params, "model": state, "dictionary": dictionary}, folder / "m.pt")
    return folder, state, dictionary


def naive_laser(state, dictionary, tokenized: str) -> np.ndarray:
    """One sentence through the same weights, unbatched: embed, BiLSTM, max over time."""
    lstm = torch.nn.LSTM(8, 6, num_layers=2, bidirectional=True)
    lstm.load_state_dict({k[len("lstm.") :]: v for k, v in state.items() if k.startswith("lstm")})
    ids = [dictionary.get(t, 3) for t in tokenized.split()] + [2]
    x = state["embed_tokens.weight"][torch.tensor(ids)].unsqueeze(1)
    with torch.no_grad():
        out, _ = lstm(x)
    return out.squeeze(1).max(dim=0).values.numpy()


@pytest.mark.parametrize("tokenizer", ["spm", "bpe"])
def test_laser_checkpoints_match_an_unbatched_bilstm(tmp_path, tokenizer):
    folder, state, dictionary = laser_checkpoint(tmp_path / "laser", tokenizer)
    encoder = baselines.load("laser", folder, batch_size=3)
    vectors = encoder.encode(SENTENCES)
    tokenize = baselines.laser_tokenizer(folder)
    for row, sentence in enumerate(SENTENCES):
        want = naive_laser(state, dictionary, tokenize(sentence))
        np.testing.assert_allclose(vectors[row], want, atol=1e-5)
    assert vectors.shape == (len(SENTENCES), 12)
    assert encoder.parameters == sum(v.numel() for v in state.values())
    if tokenizer == "bpe":  # Moses tokens, lower-cased, split by the fastBPE merges
        assert tokenize("The   Cat!") == "the ca@@ t !"
    (folder / "m.pt").rename(folder / "m.bin")
    with pytest.raises(baselines.BaselineError, match=r"no LASER checkpoint \(\*.pt\)"):
        baselines.load("laser", folder, batch_size=3)


def tf_saved_model(folder):
    """A tiny SavedModel with mUSE's signature: a batch of strings in, unit vectors out."""
    import tensorflow as tf

    class Tiny(tf.Module):
        def __init__(self):
            super().__init__()
            self.table = tf.Variable(tf.random.stateless_normal([64, 8], seed=[1, 2]))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, text):
            ids = tf.strings.to_hash_bucket_fast(tf.strings.split(tf.strings.lower(text)), 64)
            vectors = tf.ragged.map_flat_values(tf.nn.embedding_lookup, self.table, ids)
            return tf.math.l2_normalize(tf.reduce_mean(vectors, axis=1), axis=1)

    tf.saved_model.save(Tiny(), str(folder))
    return folder


@pytest.mark.slow
def test_tf_saved_models_load_and_a_fetched_archive_is_unpacked(tmp_path):
    import tensorflow as tf

    folder = tf_saved_model(tmp_path / "muse")
    encoder = baselines.load("tf_saved_model", folder, batch_size=2)
    vectors = encoder.encode(SENTENCES)
    want = tf.saved_model.load(str(folder))(tf.constant(SENTENCES)).numpy()
    np.testing.assert_allclose(vectors, want, atol=1e-6)
    assert encoder.parameters == 64 * 8
    site = tmp_path / "site"
    site.mkdir()
    with tarfile.open(site / "muse.tar.gz", "w:gz") as archive:
        for path in folder.rglob("*"):
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    with serve(site) as server:
        spec = {"loader": "tf_saved_model", "hub": f"{server.url}/muse.tar.gz"}
        info = baselines.fetch(baselines.Baseline.from_params("muse", spec), tmp_path / "got")
    assert "saved_model/saved_model.pb" in info["files"]
    again = baselines.load("tf_saved_model", tmp_path / "got", batch_size=4).encode(SENTENCES)
    np.testing.assert_allclose(again, want, atol=1e-6)


def test_laser_files_are_fetched_under_their_prefix_with_their_digests(tmp_path):
    site, _, _ = laser_checkpoint(tmp_path / "site", "bpe")
    spec = {"loader": "laser", "hub": "", "files": ["m.pt", "tiny.fcodes", "tiny.fvocab"]}
    with serve(site) as server:
        spec["hub"] = f"{server.url}/"
        info = baselines.fetch(baselines.Baseline.from_params("laser", spec), tmp_path / "got")
    fetched = json.loads((tmp_path / "got" / baselines.FETCHED).read_text())
    assert fetched == info and set(info["files"]) == {"m.pt", "tiny.fcodes", "tiny.fvocab"}
    assert not (tmp_path / "got" / ".partial").exists()
    want = baselines.load("laser", site, batch_size=2).encode(SENTENCES)
    np.testing.assert_array_equal(
        baselines.load("laser", tmp_path / "got", 2).encode(SENTENCES), want
    )
    with pytest.raises(baselines.BaselineError, match="loader: 'onnx'"):
        baselines.Baseline.from_params("x", {"loader": "onnx", "hub": "h"})


def test_baseline_command_scores_a_stand_in_and_refuses_an_unfetched_real_name(
    tmp_path, capsys, monkeypatch
):
    gpu = FakeCuda(monkeypatch)
    monkeypatch.setattr(ch2_cli, "visible", lambda: Devices(1))
    folder = bert_like(tmp_path / "labse")
    tatoeba = tmp_path / "tatoeba"
    tatoeba.mkdir()
    (tatoeba / "test.deu-eng.deu").write_text("die katze\nein hund\nhallo welt\n")
    (tatoeba / "test.deu-eng.eng").write_text("the cat\na dog\nhello world\n")
    settings = {
        "benchmarks": {"flores": {"dataset": ""}, "bucc": {"dataset": ""}},
        "evaluate": {"search": {"block_size": 64}},
    }
    argv = ["ch2", "baseline", "--checkpoint", str(folder), "--loader"]
    argv += ["sentence_transformers", "--hub", "sentence-transformers/LaBSE", "--tatoeba"]
    argv += [str(tatoeba), "--settings", json.dumps(settings), "--data-root", str(tmp_path)]
    argv += ["--encode-batch-size", "2", "--tatoeba-pairs", "0", "--scale", "tiny"]
    out = tmp_path / "labse-stand-in" / "seed0" / "metrics.json"
    assert main([*argv, "--run", "labse-stand-in", "--out", str(out)]) == 0
    assert gpu.modules == ["SentenceTransformer"]  # encoded on the job's GPU
    result = json.loads(out.read_text())
    assert (result["run"], result["seed"], result["checkpoint"]["stand_in"]) == (
        "labse-stand-in",
        0,
        True,
    )
    assert 0 <= result["metrics"]["tatoeba_deu"] <= 100 and result["metrics"]["parameters"] > 0
    config = (out.parent / "config.yaml").read_text()
    assert "stand_in: true" in config and "sentence-transformers/LaBSE" in config
    capsys.readouterr()
    assert main([*argv, "--run", "labse", "--out", str(tmp_path / "labse.json")]) != 0
    assert "no fetched.json" in capsys.readouterr().err
    assert not (tmp_path / "labse.json").exists()


def test_stand_ins_run_under_their_own_name():
    from mlrep.chapters.ch2_ems import runs

    spec = {"loader": "laser", "hub": "https://example.org/", "files": ["m.pt"]}
    section = {
        "baselines": {"labse": spec, "laser": spec},
        "baseline_runs": ["labse", "laser"],
        "stand_ins": {"labse": "/tmp/tiny-labse"},
    }
    assert runs.baseline_runs(section) == ["labse-stand-in", "laser"]
    assert runs.baseline_checkpoint(section, "labse-stand-in", "m/{name}") == "/tmp/tiny-labse"
    assert runs.baseline_checkpoint(section, "laser", "m/{name}") == "m/laser"
    assert runs.baseline_source(section, "laser") == {"loader": "laser", "hub": spec["hub"]}
