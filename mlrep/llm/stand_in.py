"""Tiny BLOOM-class causal LMs pretrained from scratch: the tiny scale's stand-ins for BLOOMZ.

AlignInstruct LoRA-tunes a pretrained multilingual BLOOMZ; an adapter on a random model has
no language knowledge to steer. At the tiny scale no hub checkpoint is fetched, so this module
trains a byte-level BPE (BLOOM's tokenizer kind, with BLOOM's specials ``<unk> <s> </s> <pad>``
at ids 0-3) and a small ``BloomForCausalLM`` on leak-free monolingual text (``mlrep data
monolingual``), briefly, as a causal LM; it saves both with `save_pretrained`, so
`mlrep.llm.base.load_base` reads the folder exactly as it reads ``bigscience/bloomz-7b1``.
Sizes are settings: the 1b1/3b/7b1 stand-ins differ in their number of layers.

Each line is one sequence, ``tokens </s>``, cut to ``max_tokens``; the loss covers every token
(there is no prompt). AdamW with linear warm-up and decay to 0; batches from seeded epoch-wise
permutations (`mlrep.llm.schedule`). Pretraining takes seconds at the tiny shapes, so it does
not resume: a killed run starts over, and the atomic output folder never leaves half a model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from mlrep.device import visible
from mlrep.errors import MlrepError
from mlrep.io import read_lines
from mlrep.llm import batches, schedule
from mlrep.llm.settings import StandInSettings
from mlrep.train import pretrain as pretraining

SPECIALS = ("<unk>", "<s>", "</s>", "<pad>")  # BLOOM's ids 0-3
SUMMARY_FILE = pretraining.SUMMARY_FILE
MADE_BY = "mlrep data monolingual"


class StandInTextError(MlrepError):
    """Pretraining text that is missing or empty."""


def text_files(paths: Sequence[Path]) -> list[Path]:
    """The files of `paths`: a file as given, a folder as its ``*.txt`` (sorted), so a rule can
    pass ``mlrep data monolingual``'s folder or chosen languages' files."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.txt"))
            if not found:
                raise StandInTextError(f"{path}: no *.txt files; make them with `{MADE_BY}`")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise StandInTextError(f"{path}: no such file or folder; make it with `{MADE_BY}`")
    return files


def read_text(paths: Sequence[Path]) -> list[str]:
    """The non-blank lines of every file of `paths`, in order."""
    lines = [
        line
        for file in text_files(paths)
        for line in read_lines(file, StandInTextError)
        if line.strip()
    ]
    if not lines:
        raise StandInTextError(f"{', '.join(map(str, paths))}: no text; rerun `{MADE_BY}`")
    return lines


def train_tokenizer(lines: Sequence[str], vocab_size: int, max_tokens: int) -> Any:
    """A byte-level BPE tokenizer (no unknown bytes) trained on `lines`, wrapped as a
    `transformers` fast tokenizer. Like BLOOM's it adds no special tokens to a text: the LoRA
    trainer and the decoder place ``</s>`` themselves."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(lines, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        model_max_length=max_tokens,
        model_input_names=["input_ids", "attention_mask"],
    )


def build_model(settings: StandInSettings, tokenizer: Any) -> torch.nn.Module:
    """An untrained ``BloomForCausalLM`` of the settings' shape over `tokenizer`'s vocabulary
    (ALiBi positions: no length limit in the model itself)."""
    from transformers import BloomConfig, BloomForCausalLM

    config = BloomConfig(
        vocab_size=len(tokenizer),
        hidden_size=settings.hidden_size,
        n_layer=settings.layers,
        n_head=settings.heads,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return BloomForCausalLM(config)


def encode(tokenizer: Any, lines: Sequence[str], max_tokens: int) -> list[batches.Row]:
    """One causal-LM row per line: ``tokens </s>`` cut to `max_tokens`, every token labelled."""
    rows = []
    for ids in tokenizer(list(lines), add_special_tokens=False)["input_ids"]:
        kept = [*ids[: max_tokens - 1], tokenizer.eos_token_id]
        rows.append((kept, kept))
    return rows


def pretrain(
    paths: Sequence[Path],
    settings: StandInSettings,
    out: Path,
    seed: int,
    threads: int,
    finish: Callable[[Path], object] = lambda staging: None,
    log: Callable[[str], object] = print,
) -> dict[str, Any]:
    """Train a tokenizer and a causal LM on the text of `paths`, and write both
    (`save_pretrained`) with ``train.json`` into `out`, atomically; `finish` adds to the
    staging folder before it replaces `out` (the verb's provenance). Returns the summary."""
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    lines = read_text(paths)
    tokenizer = train_tokenizer(lines, settings.vocab_size, settings.max_tokens)
    rows = encode(tokenizer, lines, settings.max_tokens)
    device = visible().device
    model = build_model(settings, tokenizer).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)

    def loss_at(step: int) -> tuple[torch.Tensor, float]:
        chosen = [rows[i] for i in schedule.update_rows(len(rows), settings.batch_size, seed, step)]
        loss, tokens = batches.summed_loss(
            model, batches.collate(chosen, tokenizer.pad_token_id, device)
        )
        return loss / tokens, loss.item() / tokens

    losses, seconds = pretraining.run(
        optimizer,
        settings.steps,
        loss_at,
        lambda step: schedule.linear_lr(settings.lr, step, settings.steps, settings.warmup),
        log,
    )
    summary = {
        **pretraining.summary(losses, out, "LM", settings.lr, model),
        "lines_per_second": settings.steps * settings.batch_size / seconds,
        "lines": len(lines),
        "text": [str(file) for file in text_files(paths)],
        "vocab_size": len(tokenizer),
        "settings": asdict(settings),
        "seed": seed,
        "losses": losses,
    }
    pretraining.save(out, model, tokenizer, summary, finish)
    return summary
