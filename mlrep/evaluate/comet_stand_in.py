"""A tiny, randomly initialised COMET checkpoint in COMET's own layout: the stand-in that lets
a small scale run the real COMET code path (`mlrep.evaluate.comet`) offline.

Its scores mean nothing. It exists so that at the tiny scale a chapter's COMET cells are filled
by the same loading, batching, layer mix and estimator as the real ``Unbabel/wmt22-comet-da``
at full scale, instead of by a stub that would leave that path untested. Every score it makes
carries the signature ``comet:<folder>|encoder:encoder|mlrep port``, and a scale's settings
name it as the checkpoint, so a report reads which checkpoint scored.

Layout (as ``Unbabel/wmt22-comet-da``): ``hparams.yaml``, ``checkpoints/model.ckpt`` (a
Lightning ``state_dict``: ``encoder.model.*``, ``layerwise_attention.*``, ``estimator.ff.*``)
and ``encoder/``, the XLM-R configuration and a SentencePiece tokenizer trained here on
`TEXT` (and any lines given), which ``pretrained_model: encoder`` names relative to the
checkpoint folder, so the folder can move (a DVC cache, another machine). Everything is drawn
from `torch.manual_seed(seed)` and SentencePiece is trained single-threaded, so a seed gives
the same checkpoint on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from mlrep.io import atomic_directory

ENCODER = "encoder"  # the encoder folder, relative to the checkpoint (hparams' pretrained_model)
LAYERS, HIDDEN = 2, 8
LAYER_WEIGHTS = (0.9, -0.4, 0.5)  # sparsemax keeps two layers, softmax all three
ESTIMATOR = ((0, (6, 6 * HIDDEN)), (3, (4, 6)), (6, (1, 4)))  # (ff index, weight shape)
# what the tokenizer is trained on when no lines are given: a few scripts, so that common text
# is split into pieces rather than unknown tokens
TEXT = (
    "the cat sat on the mat",
    "we meet tomorrow",
    "die Katze saß auf der Matte",
    "wir sehen uns morgen",
    "le chat est sur le tapis",
    "de kat zit op de mat",
    "кошка сидит на коврике",
    "猫坐在垫子上。",
    "今日は良い天気です。",
    "القطة تجلس على السجادة",
)


def _tokenizer(folder: Path, lines: Sequence[str]):  # -> XLMRobertaTokenizer
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer

    prefix = folder / "spm"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(lines) * 5),
        model_prefix=str(prefix),
        # every character a piece of its own (coverage 1), and some room for merges
        vocab_size=len(set("".join(lines))) + 40,
        hard_vocab_limit=False,
        character_coverage=1.0,
        num_threads=1,
        minloglevel=2,
    )
    pieces = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
    vocab = [(t, 0.0) for t in ("<s>", "<pad>", "</s>", "<unk>")]
    vocab += [(pieces.id_to_piece(i), pieces.get_score(i)) for i in range(3, len(pieces))]
    for suffix in (".model", ".vocab"):
        Path(f"{prefix}{suffix}").unlink()
    return XLMRobertaTokenizer(vocab=vocab)


def write(
    out: Path,
    seed: int = 0,
    transformation: str = "sparsemax",
    lines: Sequence[str] = TEXT,
) -> Path:
    """Write a random COMET regression checkpoint into the folder `out` (atomically): layer
    mix by `transformation` (``sparsemax`` as wmt22, or ``softmax`` as wmt20), tokenizer
    trained on `lines`. Returns `out`."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    with atomic_directory(out) as staging:
        torch.manual_seed(seed)
        encoder_folder = staging / ENCODER
        tokenizer = _tokenizer(staging, lines or TEXT)
        tokenizer.save_pretrained(encoder_folder)
        config = XLMRobertaConfig(
            vocab_size=len(tokenizer),
            hidden_size=HIDDEN,
            num_hidden_layers=LAYERS,
            num_attention_heads=2,
            intermediate_size=16,
            max_position_embeddings=40,
            pad_token_id=tokenizer.pad_token_id,
        )
        config.save_pretrained(encoder_folder)
        encoder = XLMRobertaModel(config, add_pooling_layer=False)
        state = {f"encoder.model.{k}": v for k, v in encoder.state_dict().items()}
        for i, w in enumerate(LAYER_WEIGHTS):
            state[f"layerwise_attention.scalar_parameters.{i}"] = torch.tensor([w])
        state["layerwise_attention.gamma"] = torch.tensor([1.3])
        for index, shape in ESTIMATOR:
            state[f"estimator.ff.{index}.weight"] = torch.randn(shape)
            state[f"estimator.ff.{index}.bias"] = torch.randn(shape[0])
        (staging / "checkpoints").mkdir()
        torch.save({"state_dict": state, "epoch": 0}, staging / "checkpoints/model.ckpt")
        hparams = {
            "class_identifier": "regression_metric",
            "encoder_model": "XLM-RoBERTa",
            "pretrained_model": ENCODER,
            "layer": "mix",
            "layer_norm": False,
            "layer_transformation": transformation,
            "pool": "avg",
            "hidden_sizes": [6, 4],
            "activations": "Tanh",
            "final_activation": None,
            "stand_in": f"random, seed {seed}: scores mean nothing (mlrep.evaluate.comet_stand_in)",
        }
        (staging / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    return out
