"""COMET (Rei et al. 2020; ``Unbabel/wmt22-comet-da``: Rei et al. 2022) without the comet package.

``unbabel-comet`` (2.2.7, the latest) requires numpy < 2, huggingface-hub < 1 and
transformers < 5, none of which fits this environment (numpy 2, transformers 5, needed by the
rest of the project), so `load` reads COMET's own checkpoint layout into transformers'
`XLMRobertaModel` and computes its regression estimator here, as `mlrep.evaluate.bleurt` does
for BLEURT. A COMET checkpoint folder (the hub repository, or a folder of the same shape) holds
``hparams.yaml`` and ``checkpoints/model.ckpt``, a Lightning checkpoint whose ``state_dict``
has the encoder (``encoder.model.*``, XLM-R without pooler), the layer mix
(``layerwise_attention.scalar_parameters.<i>`` and ``.gamma``) and the estimator
(``estimator.ff.<i>``, linear layers with the ``activations`` of hparams between them). The
XLM-R configuration and tokenizer come from ``pretrained_model`` in hparams (a hub id such as
``xlm-roberta-large``, or a folder: one inside the checkpoint folder is found there, as the
random stand-in of `mlrep.evaluate.comet_stand_in` has it, whose ``stand_in`` entry marks
every signature).

The estimator (COMET's ``RegressionMetric``): each of source, hypothesis and reference is
encoded alone (``<s> text </s>``, truncated to the encoder's positions); a sentence embedding
is the layer mix (softmax or sparsemax of the scalar weights, times gamma; optionally each
layer normalised over its unmasked elements) pooled over the tokens (``avg``, ``max``, ``cls``
or the last layer's first token); the features ``[h, r, h·r, |h−r|, h·s, |h−s|]`` go through
the feed-forward estimator, whose one output is the segment score.

Only the regression (reference-based, XLM-R) models are supported: ``wmt20-comet-da`` and
``wmt22-comet-da``. tests/test_evaluate_comet.py checks the port against the formula written
out on a tiny checkpoint of this layout; a real checkpoint has not been scored here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from mlrep.device import visible
from mlrep.errors import MlrepError
from mlrep.evaluate.bleurt import checkpoint_folder

CHECKPOINT = "checkpoints/model.ckpt"
# marks the signature of a checkpoint whose hparams say it is a random stand-in
STAND_IN = "stand-in: random weights"
FILES = ("hparams.yaml", CHECKPOINT)
ENCODER_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "sentencepiece.bpe.model",
    "special_tokens_map.json",
)


class CometError(MlrepError):
    """A COMET checkpoint that cannot be loaded as a reference-based regression model."""


def sparsemax(weights: Any) -> Any:
    """Sparsemax (Martins and Astudillo 2016) of a 1-D tensor: the Euclidean projection onto
    the simplex, which COMET's wmt22 model uses to weight the encoder layers."""
    import torch

    ordered, _ = torch.sort(weights, descending=True)
    ranks = torch.arange(1, weights.numel() + 1, dtype=weights.dtype, device=weights.device)
    cumulative = ordered.cumsum(0)
    support = int((1 + ranks * ordered > cumulative).sum())
    threshold = (cumulative[support - 1] - 1) / support
    return torch.clamp(weights - threshold, min=0.0)


@dataclass
class Comet:
    """A loaded checkpoint: `score` gives one COMET value per (source, hypothesis, reference)."""

    encoder: Any  # transformers.XLMRobertaModel, in eval mode
    tokenizer: Any
    layer_weights: (
        Any  # layer "mix": the normalised weights of the hidden states (embeddings first)
    )
    gamma: float
    layer: str | int  # "mix" or one hidden state's index
    layer_norm: bool
    pool: str
    estimator: Any  # torch.nn.Sequential
    max_length: int
    device: str
    signature: str

    def embed(self, lines: Sequence[str]) -> Any:
        """Sentence embeddings of `lines` as COMET's ``get_sentence_embedding`` computes them."""

        batch = self.tokenizer(
            list(lines),
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_length,
        ).to(self.device)
        ids, mask = batch["input_ids"], batch["attention_mask"]
        out = self.encoder(ids, attention_mask=mask, output_hidden_states=True)
        layers = out.hidden_states
        if self.layer == "mix":
            if self.layer_norm:
                layers = [_masked_norm(h, mask) for h in layers]
            words = self.gamma * sum(w * h for w, h in zip(self.layer_weights, layers, strict=True))
        else:
            words = layers[int(self.layer)]
        if self.pool == "default":
            return out.last_hidden_state[:, 0]
        if self.pool == "cls":
            return words[:, 0]
        padding = ids.eq(self.tokenizer.pad_token_id).unsqueeze(-1)
        if self.pool == "max":
            return words.masked_fill(padding, float("-inf")).max(dim=1).values
        total = words.masked_fill(padding, 0.0).sum(dim=1)
        return total / mask.unsqueeze(-1).to(words.dtype).sum(dim=1)

    def score(
        self,
        sources: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[str],
        batch_size: int = 16,
    ) -> list[float]:
        """COMET of each hypothesis given its source and reference."""
        import torch

        if not len(sources) == len(hypotheses) == len(references):
            raise CometError(
                f"{len(sources)} sources, {len(hypotheses)} hypotheses and {len(references)} "
                "references; give one each"
            )
        scores: list[float] = []
        with torch.no_grad():
            for start in range(0, len(hypotheses), batch_size):
                window = slice(start, start + batch_size)
                s, h, r = (self.embed(side[window]) for side in (sources, hypotheses, references))
                features = torch.cat((h, r, h * r, (h - r).abs(), h * s, (h - s).abs()), dim=1)
                scores.extend(float(v) for v in self.estimator(features)[:, 0].tolist())
        return scores


def _masked_norm(hidden: Any, mask: Any) -> Any:
    """COMET's per-sentence layer norm over the unmasked elements of one hidden state."""
    import torch

    keep = mask.to(hidden.dtype).unsqueeze(-1)
    count = mask.to(hidden.dtype).sum(1) * hidden.size(-1)
    mean = (hidden * keep).flatten(1).sum(1) / count
    mean = mean.view(-1, 1, 1)
    variance = (((hidden * keep - mean) * keep) ** 2).flatten(1).sum(1) / count
    return (hidden - mean) / torch.sqrt(variance + 1e-12).view(-1, 1, 1)


def _estimator(state: dict[str, Any], hparams: dict[str, Any]) -> Any:
    """The feed-forward estimator from its ``estimator.ff.<i>`` weights and hparams."""
    import torch

    linear = sorted({int(k.split(".")[2]) for k in state if k.startswith("estimator.ff.")})
    if not linear or state[f"estimator.ff.{linear[-1]}.weight"].shape[0] != 1:
        raise CometError("the estimator must end in one output (a regression COMET model)")
    activation = getattr(torch.nn, str(hparams.get("activations", "Tanh")).title())
    modules: list[Any] = []
    for number, index in enumerate(linear):
        weight = state[f"estimator.ff.{index}.weight"]
        layer = torch.nn.Linear(weight.shape[1], weight.shape[0])
        layer.load_state_dict(
            {"weight": weight, "bias": state[f"estimator.ff.{index}.bias"]}, strict=True
        )
        modules.append(layer)
        if number < len(linear) - 1:
            modules.append(activation())
    final = hparams.get("final_activation")
    if final:
        modules.append(getattr(torch.nn, str(final).title())())
    return torch.nn.Sequential(*modules)


def load(checkpoint: str, revision: str | None = None, device: str | None = None) -> Comet:
    """A COMET regression checkpoint (hub id at `revision`, or folder) ready to score."""
    import torch
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaModel

    folder = checkpoint_folder(checkpoint, revision, FILES)
    if not (folder / "hparams.yaml").exists() or not (folder / CHECKPOINT).exists():
        raise CometError(f"{folder}: needs hparams.yaml and {CHECKPOINT} (a COMET checkpoint)")
    hparams = yaml.safe_load((folder / "hparams.yaml").read_text(encoding="utf-8"))
    kind, encoder_name = hparams.get("class_identifier"), hparams.get("encoder_model")
    if kind != "regression_metric" or encoder_name != "XLM-RoBERTa":
        raise CometError(
            f"{folder / 'hparams.yaml'}: class_identifier {kind!r}, encoder_model "
            f"{encoder_name!r}; only reference-based XLM-R regression models are supported "
            "(Unbabel/wmt22-comet-da, Unbabel/wmt20-comet-da)"
        )
    # a folder inside the checkpoint (the stand-in's ``encoder``) moves with it; else a hub
    # id (``xlm-roberta-large``) or a folder of its own
    inside = folder / str(hparams["pretrained_model"])
    encoder_source = str(inside) if inside.is_dir() else str(hparams["pretrained_model"])
    encoder_folder = checkpoint_folder(encoder_source, None, ENCODER_FILES)
    config = XLMRobertaConfig.from_pretrained(encoder_folder)
    encoder = XLMRobertaModel(config, add_pooling_layer=False)
    state = torch.load(folder / CHECKPOINT, map_location="cpu", weights_only=True)["state_dict"]
    weights = {
        k.removeprefix("encoder.model."): v
        for k, v in state.items()
        if k.startswith("encoder.model.") and not k.endswith("position_ids")
    }
    problems = encoder.load_state_dict(weights, strict=False)
    if problems.missing_keys or problems.unexpected_keys:
        raise CometError(
            f"{folder / CHECKPOINT}: encoder weights do not match {hparams['pretrained_model']}: "
            f"missing {problems.missing_keys[:5]}, unexpected {problems.unexpected_keys[:5]}"
        )
    mix, gamma = None, 1.0
    if hparams.get("layer", "mix") == "mix":
        # the embeddings, then every layer
        scalars = torch.cat(
            [
                state[f"layerwise_attention.scalar_parameters.{i}"]
                for i in range(config.num_hidden_layers + 1)
            ]
        )
        if hparams.get("layer_transformation", "softmax") == "sparsemax":
            mix = sparsemax(scalars)
        else:
            mix = torch.softmax(scalars, dim=0)
        gamma = float(state["layerwise_attention.gamma"])
    device = device or visible().device
    name = checkpoint if revision is None else f"{checkpoint}@{revision}"
    return Comet(
        encoder=encoder.eval().to(device),
        tokenizer=AutoTokenizer.from_pretrained(encoder_folder),
        layer_weights=None if mix is None else mix.to(device),
        gamma=gamma,
        layer=hparams.get("layer", "mix"),
        layer_norm=bool(hparams.get("layer_norm", False)),
        pool=hparams.get("pool", "avg"),
        estimator=_estimator(state, hparams).eval().to(device),
        max_length=config.max_position_embeddings - 4,
        device=device,
        signature=f"comet:{name}|encoder:{hparams['pretrained_model']}|mlrep port"
        + (f"|{STAND_IN}" if hparams.get("stand_in") else ""),
    )
