"""``mlrep llm stand-in`` and `load_base`: the tiny BLOOM stand-ins learn, and load from their
folder exactly as a hub model does."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from mlrep.llm import stand_in
from mlrep.llm.base import BaseLoadError, load_base
from mlrep.llm.batches import mean_loss
from mlrep.llm.settings import LlmSettingsError, StandInSettings
from mlrep.llm.stand_in import StandInTextError
from tests.learning import assert_improves, assert_loss_falls
from tests.llm_helpers import STAND_IN, build_stand_in, sentences, write_text


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("stand_in")
    return build_stand_in(write_text(root / "text"), root / "base", layers=3)


def test_pretraining_lowers_held_out_lm_loss(built):
    """Training loss falls (measured: last/first 10 of 60 updates 0.25; 1.00 with lr 1e-12) and
    the held-out LM loss beats the untrained model's (measured: 5.75 -> 1.21; 5.75 with lr
    1e-12)."""
    summary = json.loads((built / stand_in.SUMMARY_FILE).read_text())
    assert_loss_falls(summary["losses"], window=10, below=0.6, what="LM pretraining loss")
    base = load_base(built)
    heldout = stand_in.encode(base.tokenizer, sentences(64, seed=99), 32)
    trained = mean_loss(base.model, heldout, base.pad_id, 16)
    torch.manual_seed(1)
    untrained = stand_in.build_model(StandInSettings(**STAND_IN), base.tokenizer)
    before = mean_loss(untrained, heldout, base.pad_id, 16)
    assert_improves(trained, before, by=2.0, higher_is_better=False, what="held-out LM loss")


def test_the_folder_loads_like_a_hub_checkpoint(built, tmp_path):
    """`AutoModelForCausalLM`/`AutoTokenizer` read it: a BLOOM of the asked depth, BLOOM's
    specials at ids 0-3, no special token added to a text, float32 on the CPU; a copy of the
    folder is the same base (fingerprint), a retrained one is not."""
    base = load_base(built, precision="bf16", device="cpu")
    assert type(base.model).__name__ == "BloomForCausalLM"
    assert base.model.config.n_layer == 3 and base.model.config.hidden_size == 64
    assert base.model.dtype == torch.float32 and not base.model.training
    tok = base.tokenizer
    assert (tok.unk_token_id, tok.bos_token_id, tok.eos_token_id, tok.pad_token_id) == (0, 1, 2, 3)
    assert tok("kato vidi", add_special_tokens=True)["input_ids"] == tok("kato vidi")["input_ids"]
    assert 2 not in tok("kato vidi libron")["input_ids"]
    assert {"config.json", "tokenizer.json", "train.json", "provenance.json"} <= {
        p.name for p in built.iterdir()
    }
    assert base.identity["fingerprint"].startswith("sha256:")
    shutil.copytree(built, tmp_path / "copy")
    assert load_base(tmp_path / "copy").identity["fingerprint"] == base.identity["fingerprint"]
    other = build_stand_in(write_text(tmp_path / "text"), tmp_path / "other", seed=2, steps=5)
    assert load_base(other).identity["fingerprint"] != base.identity["fingerprint"]


def test_missing_text_or_base_and_impossible_shapes_name_the_fix(tmp_path):
    with pytest.raises(StandInTextError, match="no such file or folder; make it with"):
        stand_in.read_text([tmp_path / "absent"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(StandInTextError, match=r"no \*\.txt files"):
        stand_in.read_text([tmp_path / "empty"])
    (tmp_path / "blank.txt").write_text("\n \n")
    with pytest.raises(StandInTextError, match="no text"):
        stand_in.read_text([tmp_path / "blank.txt"])
    with pytest.raises(BaseLoadError, match="absent: cannot load a causal LM"):
        load_base(tmp_path / "absent")
    with pytest.raises(LlmSettingsError, match="not a multiple of heads"):
        StandInSettings(**(STAND_IN | {"hidden_size": 66}))
    with pytest.raises(LlmSettingsError, match="leaves no merges"):
        StandInSettings(**(STAND_IN | {"vocab_size": 260}))
