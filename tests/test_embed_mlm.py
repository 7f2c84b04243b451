"""``mlrep embed mlm-pretrain``: the tiny stand-ins for mBERT and XLM-R learn, and load back
through the hub's two calls like a downloaded checkpoint."""

from __future__ import annotations

import json
import random

import pytest
import torch

from mlrep.cli import main
from mlrep.embed import mlm
from mlrep.embed.mlm import IGNORE, MlmTextError
from mlrep.embed.settings import EmsConfigError, MlmSettings
from tests.learning import assert_improves, assert_loss_falls

SUBJECTS = {"aa": ["kato", "mirel", "sunda", "pelo"], "bb": ["zuk", "orav", "tenis", "lomu"]}
VERBS = {"aa": ["vidi", "amas", "portas"], "bb": ["sehen", "liebt", "tragt"]}
OBJECTS = {"aa": ["libron", "panon", "akvon"], "bb": ["bruk", "wasa", "brot"]}


def sentences(language: str, count: int, seed: int) -> list[str]:
    """Subject-verb-object sentences of a made-up language: structure an MLM can learn."""
    draw = random.Random(seed)
    return [
        " ".join(draw.choice(words[language]) for words in (SUBJECTS, VERBS, OBJECTS))
        + draw.choice([" .", " !"])
        for _ in range(count)
    ]


@pytest.fixture
def text(tmp_path):
    """A folder in `mlrep data monolingual`'s layout: ``<language>.txt`` + ``metadata.json``."""
    folder = tmp_path / "text"
    folder.mkdir()
    for seed, language in enumerate(SUBJECTS):
        lines = "".join(f"{line}\n" for line in sentences(language, 150, seed))
        (folder / f"{language}.txt").write_text(lines, encoding="utf-8")
    (folder / "metadata.json").write_text("{}\n")
    return folder


def options(**changed) -> dict:
    return {
        "model_type": "bert",
        "languages": (),
        "layers": 2,
        "dim": 32,
        "heads": 2,
        "ffn_dim": 64,
        "vocab_size": 400,
        "max_tokens": 16,
        "steps": 80,
        "batch_size": 32,
        "lr": 3e-3,
        "warmup": 8,
        "mask_prob": 0.15,
    } | changed


def train(text, out, **changed) -> dict:
    """The verb as the workflow runs it (every option explicit); its train.json."""
    flags = ["embed", "mlm-pretrain", "--section", "stand_in", "--scale", "tiny"]
    flags += ["--text", str(text), "--out", str(out), "--seed", "1"]
    for key, value in options(**changed).items():
        values = value if isinstance(value, tuple) else (value,)
        flags += ["--" + key.replace("_", "-"), *map(str, values)]
    assert main(flags) == 0
    return json.loads((out / mlm.SUMMARY_FILE).read_text())


@pytest.mark.parametrize("model_type", ["bert", "xlm-roberta"])
def test_a_stand_in_learns_and_loads_like_a_hub_checkpoint(text, tmp_path, model_type):
    """Loss on the training text falls (measured: last/first 10 of 80 updates 0.43 for both
    classes, 1.00 with lr 0), held-out MLM loss beats the untrained model's (measured: 5.8 ->
    2.5 for both, unchanged with lr 0), and `AutoModel`/`AutoTokenizer` read the folder back
    with one hidden state per layer plus the embeddings."""
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    torch.set_num_threads(1)
    out = tmp_path / "model"
    summary = train(text, out, model_type=model_type)
    assert_loss_falls(summary["losses"], window=10, below=0.7)
    assert summary["steps"] == 80 and summary["parameters"] > 0

    tokenizer = AutoTokenizer.from_pretrained(out)
    heldout = sentences("aa", 64, seed=99) + sentences("bb", 64, seed=98)
    settings = MlmSettings(**options(model_type=model_type))
    trained = mlm.masked_loss(
        AutoModelForMaskedLM.from_pretrained(out), tokenizer, heldout, settings, 7
    )
    torch.manual_seed(1)
    untrained = mlm.masked_loss(
        mlm.build_model(settings, tokenizer), tokenizer, heldout, settings, 7
    )
    assert_improves(trained, untrained, by=1.0, higher_is_better=False, what="held-out MLM loss")

    encoder = AutoModel.from_pretrained(out)
    assert (
        type(encoder).__name__
        == {"bert": "BertModel", "xlm-roberta": "XLMRobertaModel"}[model_type]
    )
    encoded = tokenizer(["kato vidi libron .", "zuk liebt"], padding=True, return_tensors="pt")
    assert encoded["input_ids"][0, 0] == tokenizer.bos_token_id  # <s> … </s>, RoBERTa-style
    with torch.no_grad():
        states = encoder(**encoded, output_hidden_states=True).hidden_states
    assert len(states) == 3 and states[-1].shape == (*encoded["input_ids"].shape, 32)
    saved = {p.name for p in out.iterdir()}
    assert {"config.json", "tokenizer.json", "train.json", "provenance.json"} <= saved


def test_a_stand_in_that_does_not_update_fails(text, tmp_path):
    """The no-update mutant (lr 0): the loss stays flat, so the learning check fails."""
    torch.set_num_threads(1)
    summary = train(text, tmp_path / "model", lr=0.0, steps=40)
    with pytest.raises(AssertionError, match="did not fall"):
        assert_loss_falls(summary["losses"], window=10, below=0.7)


def test_masking_predicts_a_share_of_ordinary_tokens_80_10_10():
    """15% of the non-special tokens get a label (their own id); of them about 80% read
    <mask>, 10% another ordinary token, 10% themselves; specials and padding are never
    chosen."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 1000, (400, 100), generator=generator)
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -20:] = True
    inputs, labels = mlm.mask_tokens(ids, special, 4, 1000, 0.15, generator)
    chosen = labels != IGNORE
    assert not chosen[special].any()
    assert torch.equal(labels[chosen], ids[chosen])
    assert torch.equal(inputs[~chosen], ids[~chosen])
    assert chosen.sum() / (~special).sum() == pytest.approx(0.15, abs=0.01)
    masked = (inputs[chosen] == 4).float().mean()
    kept = (inputs[chosen] == ids[chosen]).float().mean()
    assert masked == pytest.approx(0.8, abs=0.02) and kept == pytest.approx(0.1, abs=0.02)
    replaced = chosen & (inputs != 4) & (inputs != ids)
    assert replaced.sum() / chosen.sum() == pytest.approx(0.1, abs=0.02)
    assert inputs[replaced].min() >= len(mlm.SPECIALS)


def test_a_batch_without_a_chosen_token_still_predicts_one():
    ids = torch.tensor([[0, 7, 2, 1]])
    special = torch.tensor([[True, False, True, True]])
    generator = torch.Generator().manual_seed(0)
    _, labels = mlm.mask_tokens(ids, special, 4, 100, 1e-9, generator)
    assert labels.tolist() == [[IGNORE, 7, IGNORE, IGNORE]]


def test_missing_empty_or_unknown_text_names_the_fix(tmp_path, text):
    with pytest.raises(MlmTextError, match="mlrep data monolingual"):
        mlm.read_text(tmp_path / "absent", ())
    (tmp_path / "empty").mkdir()
    with pytest.raises(MlmTextError, match=r"no <language>\.txt"):
        mlm.read_text(tmp_path / "empty", ())
    with pytest.raises(MlmTextError, match=r"no text for de \(present: aa, bb\)"):
        mlm.read_text(text, ("aa", "de"))
    assert list(mlm.read_text(text, ("bb",))) == ["bb"]


def test_a_vocabulary_with_no_room_for_merges_is_refused():
    """Byte-level BPE keeps all 256 bytes and the 5 specials whatever `vocab_size` says."""
    with pytest.raises(EmsConfigError, match="raise it"):
        MlmSettings(**options(vocab_size=261))
    with pytest.raises(EmsConfigError, match="multiple of heads"):
        MlmSettings(**options(dim=30, heads=4))


def test_a_seed_gives_the_same_stand_in(text, tmp_path):
    """Tokenizer, initialisation, batches and masks all follow `--seed`."""
    torch.set_num_threads(1)
    first = train(text, tmp_path / "a", steps=10)["losses"]
    assert train(text, tmp_path / "b", steps=10)["losses"] == first
    assert (tmp_path / "a" / "tokenizer.json").read_text() == (
        tmp_path / "b" / "tokenizer.json"
    ).read_text()
