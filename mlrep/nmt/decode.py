"""Beam search with a trained model, in one process for every direction of a test set.

A fairseq process pays ~9 s of start-up on a small CPU, so decoding all directions (and the
pivot's two passes) with one loaded model is what makes the tiny grid affordable. Batches come
from fairseq's own iterator with ``required_batch_size_multiple=1``: with fairseq-fixed's
default the last incomplete batch is silently dropped (DESIGN trap 2), so `translate` checks
that every input line got a hypothesis. The model and every batch live on the job's device
(`mlrep.device`: its GPU where it has one). Checkpoints are loaded with
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` (trap 1): fairseq pickles its config into them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlrep.device import visible
from mlrep.errors import MlrepError
from mlrep.nmt.data import FAIRSEQ, Direction, strip_tags, tag, tag_source
from mlrep.nmt.settings import BeamSettings
from mlrep.text.pretrain_tasks import finetune_source


class DecodeError(MlrepError):
    """Decoding lost or invented lines, or the model cannot be loaded."""


def load_model(checkpoint: Path, data_bin: Path) -> tuple[Any, Any, Any]:
    """(model in eval mode on the job's device, its fairseq task, that device) of a checkpoint
    read with the dictionaries of `data_bin` (fairseq keeps none in the checkpoint).

    Dictionaries of another size than the checkpoint's embeddings (another run's data-bin, or a
    pre-trained model's data that lacks the fine-tuning symbols) are refused by name; fairseq's
    own refusal lists parameter shapes only."""
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    from fairseq import checkpoint_utils

    import mlrep.nmt.interlingua  # noqa: F401 (registers every architecture)

    if not checkpoint.exists():
        raise DecodeError(f"{checkpoint}: no checkpoint; train the system first")
    try:
        models, _cfg, task = checkpoint_utils.load_model_ensemble_and_task(
            [str(checkpoint)], arg_overrides={"data": str(data_bin)}
        )
    except RuntimeError as error:
        shapes = [line.strip() for line in str(error).splitlines() if "embed_tokens" in line]
        if not shapes:
            raise
        raise DecodeError(
            f"{checkpoint}: its embeddings do not fit the dictionaries of {data_bin} "
            f"({shapes[0]}); read it with the data-bin the model was trained on"
        ) from None
    device = visible().device
    return models[0].eval().to(device), task, device


class Translator:
    """A loaded checkpoint with its dictionary, on the job's device."""

    def __init__(self, checkpoint: Path, data_bin: Path, tag_format: str, tags: str = FAIRSEQ):
        from mlrep.nmt.interlingua import InterlinguaEncoder

        self.model, self.task, self.device = load_model(checkpoint, data_bin)
        self.dictionary = self.task.target_dictionary
        self.tag_format = tag_format
        self.tags = tags  # the tag style of the data-bin (`mlrep.nmt.prepare.tag_style`)
        encoder = self.model.encoder
        self.interlingua = isinstance(encoder, InterlinguaEncoder)
        self.variable_length = self.interlingua and encoder.interlingua.query == "var"

    def source(self, pieces: str, d: Direction) -> str:
        """A subword line of direction `d` as the model reads it: tagged by `tag_format`."""
        return tag_source(pieces, d.src, d.tgt, self.tag_format, self.tags)

    def encode(self, pieces: Sequence[str], d: Direction):
        """Tagged source token ids (with EOS) for subword lines of one direction."""
        return [
            self.task.source_dictionary.encode_line(
                self.source(p, d), add_if_not_exist=False, append_eos=True
            ).long()
            for p in pieces
        ]

    def prefix(self, tgt: str) -> int | None:
        """The forced first target token: the target tag in S-ENC-T-DEC, none in T-ENC."""
        if self.tag_format != "s-enc-t-dec":
            return None
        return self.dictionary.index(tag(tgt, self.tags))

    def generate(
        self, sources: Sequence[str], dirs: Sequence[Direction], beam: BeamSettings
    ) -> list[list[str]]:
        """Best hypothesis per source line as subword tokens (tags and EOS removed)."""
        return self.generate_with_lengths(sources, dirs, beam)[0]

    def generate_with_lengths(
        self,
        sources: Sequence[str],
        dirs: Sequence[Direction],
        beam: BeamSettings,
        lengths: Sequence[int] | None = None,
    ) -> tuple[list[list[str]], list[int] | None]:
        """`generate`, and the interlingua length each line was decoded with (None for a
        plain Transformer). `lengths` imposes them (gold-length decoding; var models only)."""
        import torch
        from fairseq import utils
        from fairseq.sequence_generator import SequenceGenerator

        tokens = [self.encode([s], d)[0] for s, d in zip(sources, dirs, strict=True)]
        dataset = self.task.build_dataset_for_inference(tokens, [len(t) for t in tokens])
        batches = self.task.get_batch_iterator(
            dataset=dataset,
            max_sentences=beam.batch_size,
            required_batch_size_multiple=1,
            ignore_invalid_inputs=False,
        ).next_epoch_itr(shuffle=False)
        generator = SequenceGenerator(
            [self.model],
            self.dictionary,
            beam_size=beam.beam,
            max_len_a=beam.max_len_a,
            max_len_b=beam.max_len_b,
        )
        if lengths is not None and not self.variable_length:
            raise DecodeError(
                "gold interlingua lengths need a var interlingua model; this checkpoint's "
                "length is fixed or it has no interlingua: decode it without --gold-length"
            )
        out: dict[int, list[str]] = {}
        used: dict[int, int] = {}
        with torch.no_grad():
            for batch in batches:
                sample = utils.apply_to_sample(lambda t: t.to(self.device), batch)
                ids = sample["id"].tolist()
                if lengths is not None:  # SequenceGenerator hands net_input to the encoder
                    gold = torch.tensor([lengths[i] for i in ids], device=self.device)
                    sample["net_input"]["interlingua_lengths"] = gold
                prefixes = [self.prefix(dirs[i].tgt) for i in ids]
                prefix = None
                if prefixes[0] is not None:
                    prefix = torch.tensor(prefixes, dtype=torch.long).unsqueeze(1).to(self.device)
                for i, hypos in zip(
                    ids, generator.generate([self.model], sample, prefix_tokens=prefix), strict=True
                ):
                    words = self.dictionary.string(hypos[0]["tokens"].cpu()).split()
                    out[i] = strip_tags(words)
                if self.interlingua:  # the encoder ran once per batch, in batch order
                    used.update(zip(ids, self.model.encoder.lengths_used.tolist(), strict=True))
        if len(out) != len(sources):
            raise DecodeError(
                f"decoding returned {len(out)} hypotheses for {len(sources)} input lines "
                "(an incomplete batch was dropped: pass required_batch_size_multiple=1)"
            )
        order = range(len(sources))
        return [out[i] for i in order], [used[i] for i in order] if self.interlingua else None


class PairTranslator(Translator):
    """A fine-tuned pair model (Chapter 4, `mlrep.nmt.pair`): its source is tagged as it was
    fine-tuned, with the target language's tag only (`finetune_source`), and its decoder
    starts free: no forced first token, as no fine-tuning target starts with a tag."""

    def __init__(self, checkpoint: Path, data_bin: Path):
        super().__init__(checkpoint, data_bin, "pair")

    def source(self, pieces: str, d: Direction) -> str:
        return finetune_source(pieces, d.tgt)

    def prefix(self, tgt: str) -> None:
        return None
