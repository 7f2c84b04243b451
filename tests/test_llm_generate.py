"""``mlrep llm generate`` and ``mlrep llm cosine`` against hand computations: greedy decoding
one token at a time, and per-layer mean-pooled cosines."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from mlrep.cli import main
from mlrep.llm import cosine, generate
from mlrep.llm.base import load_base
from mlrep.llm.cosine import CosineError
from mlrep.llm.examples import ExampleError
from tests.llm_helpers import build_stand_in, sentences, write_jsonl, write_text


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("generate")
    return build_stand_in(write_text(root / "text"), root / "base", layers=3, steps=30)


def hand_greedy(base, prompt: str, max_new_tokens: int) -> str:
    """Argmax of the next token, fed back, one prompt alone (no padding, no `generate`)."""
    ids = base.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    new: list[int] = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = base.model(input_ids=torch.tensor([ids + new])).logits[0, -1]
            token = int(logits.argmax())
            if token == base.tokenizer.eos_token_id:
                break
            new.append(token)
            if "\n" in base.tokenizer.decode(new):
                break
    return base.tokenizer.decode(new).split("\n")[0].strip()


def test_batched_greedy_decoding_is_one_prompt_at_a_time(base_dir, tmp_path):
    """Left-padded batches of prompts of different lengths decode as each prompt alone does;
    the verb writes one line per prompt, from a JSONL or a text file."""
    prompts = ["kato", "mirel vidi", "sunda portas akvon kato", "zuk tenis", "orav"]
    base = load_base(base_dir)
    expected = [hand_greedy(base, prompt, 6) for prompt in prompts]
    assert generate.greedy(base, prompts, 6, batch_size=3) == expected
    assert any(expected)
    jsonl = write_jsonl(tmp_path / "test.jsonl", [{"input": p, "output": "x"} for p in prompts])
    text = tmp_path / "prompts.txt"
    text.write_text("".join(f"{p}\n" for p in prompts))
    for source in (jsonl, text):
        out = tmp_path / f"{source.name}.hyp"
        args = ["llm", "generate", "--base", str(base_dir), "--prompts", str(source)]
        args += ["--out", str(out), "--max-new-tokens", "6", "--batch-size", "2"]
        assert main(args) == 0
        assert out.read_text().split("\n") == [*expected, ""]


def test_the_hypothesis_is_the_text_before_the_first_newline(base_dir, tmp_path):
    assert generate.first_line(" sunda vidi\nkato amas\n") == "sunda vidi"
    assert generate.first_line("\nkato") == ""
    (tmp_path / "blank.txt").write_text("kato\n\n")
    with pytest.raises(ExampleError, match="prompt 2 is empty"):
        generate.read_prompts(tmp_path / "blank.txt")


def test_layer_cosines_are_the_hand_computed_means(base_dir, tmp_path):
    """Each layer 1..L: the mean over pairs of the cosine of the two sides' token-averaged
    states, each sentence run alone (batched sentences of 1 to 6 words: padding must not
    count); as many values as the stand-in has layers (3)."""
    words = " ".join(sentences(5, seed=1)).split()
    src = [" ".join(words[i : i + 1 + i % 3]) for i in range(5)]
    tgt = [f"{a} {b}" for a, b in zip(sentences(5, seed=2), src, strict=True)]
    base = load_base(base_dir)
    values = cosine.layer_cosines(base, src, tgt, batch_size=2, max_tokens=32)

    def pooled(sentence: str) -> list[np.ndarray]:
        ids = torch.tensor([base.tokenizer(sentence, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            states = base.model(input_ids=ids, output_hidden_states=True).hidden_states
        return [layer[0].numpy().mean(axis=0) for layer in states[1:]]

    expected = np.zeros(3)
    for a, b in zip(src, tgt, strict=True):
        for layer, (u, v) in enumerate(zip(pooled(a), pooled(b), strict=True)):
            expected[layer] += u @ v / np.sqrt((u @ u) * (v @ v)) / len(src)
    assert values == pytest.approx(expected.tolist(), abs=1e-5)

    (tmp_path / "src.txt").write_text("".join(f"{s}\n" for s in src))
    (tmp_path / "tgt.txt").write_text("".join(f"{s}\n" for s in tgt))
    args = ["llm", "cosine", "--base", str(base_dir), "--src", str(tmp_path / "src.txt")]
    args += ["--tgt", str(tmp_path / "tgt.txt"), "--out", str(tmp_path / "cos.json")]
    assert main(args) == 0
    written = json.loads((tmp_path / "cos.json").read_text())
    assert written["layers"] == [1, 2, 3] and written["pairs"] == 5
    assert written["cosine"] == pytest.approx(values, abs=1e-6)
    with pytest.raises(CosineError, match="5 source and 4 target"):
        cosine.layer_cosines(base, src, tgt[:4], 2, 32)
