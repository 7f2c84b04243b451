"""Small multilingual encoders MLM-pretrained from scratch: the tiny stand-ins for the hub's
mBERT and XLM-R checkpoints.

OneAligner fine-tunes a pretrained multilingual encoder and scores with its token states; a
randomly initialised encoder gives the normalisation and the fine-tuning nothing to act on.
At the tiny scale no hub checkpoint is fetched, so this module gives each stand-in a brief
masked-language-model pretraining on the shared leak-free text (``mlrep data monolingual``),
with its own byte-level BPE vocabulary, and saves model and tokenizer with `save_pretrained`:
the step that reads them calls ``AutoModel.from_pretrained`` and
``AutoTokenizer.from_pretrained`` exactly as it does for ``xlm-roberta-large`` at full scale.

The recipe is BERT's and RoBERTa's: a `mask_prob` share of the non-special tokens is
predicted, of them 80% replaced by ``<mask>``, 10% by a random token and 10% left as they
are; AdamW with linear warm-up and linear decay to 0; batches cut from seeded epoch-wise
shuffles of the pooled text of the chosen languages (no per-language smoothing: the stand-ins
need a usable encoder, not XLM-R's language balance). Dropout and the other architecture
details are the `transformers` defaults of the chosen class. Training takes seconds to minutes
at the tiny shapes, so it does not resume: a killed run starts over, and the atomic output
folder means it never leaves a half-written checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from mlrep.device import visible
from mlrep.embed.settings import MlmSettings
from mlrep.embed.train import Schedule
from mlrep.errors import MlrepError
from mlrep.train import pretrain as pretraining

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")  # RoBERTa's ids 0-3, <mask> next
SUMMARY_FILE = pretraining.SUMMARY_FILE
IGNORE = -100  # label of a token the loss skips (`transformers`' convention)
MADE_BY = "mlrep data monolingual"


class MlmTextError(MlrepError):
    """A text folder that is missing, empty, or lacks a language asked for."""


def read_text(folder: Path, languages: Sequence[str]) -> dict[str, list[str]]:
    """{language: its non-empty lines} from the ``<language>.txt`` files of `folder` (all of
    them when `languages` is empty)."""
    if not folder.is_dir():
        raise MlmTextError(
            f"{folder}: no such text folder; make it with `{MADE_BY} --out {folder}`"
        )
    present = sorted(path.stem for path in folder.glob("*.txt"))
    if not present:
        raise MlmTextError(f"{folder}: no <language>.txt files; rerun `{MADE_BY} --out {folder}`")
    unknown = [language for language in languages if language not in present]
    if unknown:
        raise MlmTextError(
            f"{folder}: no text for {', '.join(unknown)} (present: {', '.join(present)}); "
            f"choose among them or rerun `{MADE_BY}` with those languages"
        )
    text = {}
    for language in languages or present:
        lines = (folder / f"{language}.txt").read_text(encoding="utf-8").splitlines()
        text[language] = [line for line in lines if line.strip()]
    empty = [language for language, lines in text.items() if not lines]
    if empty:
        raise MlmTextError(f"{folder}: {', '.join(empty)}.txt empty; rerun `{MADE_BY}`")
    return text


def train_tokenizer(sentences: Sequence[str], vocab_size: int, max_tokens: int):
    """A byte-level BPE tokenizer (no unknown bytes) trained on `sentences`, wrapped as a
    `transformers` fast tokenizer with RoBERTa's specials: ``<s> … </s>``, ``<pad>``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(sentences, trainer)
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>"))
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=max_tokens,
        model_input_names=["input_ids", "attention_mask"],
    )


def build_model(settings: MlmSettings, tokenizer: Any) -> torch.nn.Module:
    """An untrained ``BertForMaskedLM`` or ``XLMRobertaForMaskedLM`` of the settings' shape
    over `tokenizer`'s vocabulary (XLM-R's positions start after the padding id, as on the
    hub)."""
    from transformers import BertConfig, BertForMaskedLM, XLMRobertaConfig, XLMRobertaForMaskedLM

    shape = {
        "vocab_size": len(tokenizer),
        "hidden_size": settings.dim,
        "num_hidden_layers": settings.layers,
        "num_attention_heads": settings.heads,
        "intermediate_size": settings.ffn_dim,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    if settings.model_type == "bert":
        return BertForMaskedLM(BertConfig(max_position_embeddings=settings.max_tokens, **shape))
    positions = settings.max_tokens + tokenizer.pad_token_id + 1
    config = XLMRobertaConfig(max_position_embeddings=positions, type_vocab_size=1, **shape)
    return XLMRobertaForMaskedLM(config)


def mask_tokens(
    ids: torch.Tensor,
    special: torch.Tensor,
    mask_id: int,
    vocab_size: int,
    mask_prob: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, labels) of one MLM batch: each token where `special` is false is chosen with
    probability `mask_prob` (at least one per batch, so the loss is defined); a chosen token
    becomes ``<mask>`` (80%), a random ordinary token (10%) or stays (10%), and only chosen
    tokens carry a label (`IGNORE` elsewhere)."""
    draw = torch.rand(ids.shape, generator=generator)
    chosen = (draw < mask_prob) & ~special
    if not chosen.any():
        chosen.view(-1)[int(torch.nonzero(~special.view(-1))[0])] = True
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    kind = torch.rand(ids.shape, generator=generator)
    inputs = torch.where(chosen & (kind < 0.8), torch.full_like(ids, mask_id), ids)
    first = len(SPECIALS)  # random replacements are ordinary tokens, never specials
    random = torch.randint(first, vocab_size, ids.shape, generator=generator)
    inputs = torch.where(chosen & (kind >= 0.8) & (kind < 0.9), random, inputs)
    return inputs, labels


def encode(tokenizer: Any, sentences: Sequence[str], max_tokens: int) -> list[list[int]]:
    """Token ids of each sentence with ``<s>``/``</s>``, cut to `max_tokens`."""
    return tokenizer(list(sentences), truncation=True, max_length=max_tokens)["input_ids"]


def batch(
    tokenizer: Any,
    rows: Sequence[list[int]],
    settings: MlmSettings,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
) -> dict[str, torch.Tensor]:
    """The model's keyword arguments for `rows` on `device`: padded ids, masked (on the CPU,
    so a seed draws the same masks on any device), with attention mask and labels."""
    padded = tokenizer.pad({"input_ids": list(rows)}, return_tensors="pt")
    ids, attention = padded["input_ids"], padded["attention_mask"]
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    inputs, labels = mask_tokens(
        ids, special, tokenizer.mask_token_id, len(tokenizer), settings.mask_prob, generator
    )
    kwargs = {"input_ids": inputs, "attention_mask": attention, "labels": labels}
    return {key: value.to(device) for key, value in kwargs.items()}


def masked_loss(
    model: torch.nn.Module,
    tokenizer: Any,
    sentences: Sequence[str],
    settings: MlmSettings,
    seed: int,
) -> float:
    """Mean MLM loss over `sentences` under a masking drawn from `seed`, dropout off: the
    held-out measure of a stand-in (lower is better)."""
    rows = encode(tokenizer, sentences, settings.max_tokens)
    generator = torch.Generator().manual_seed(seed)
    model.eval()
    total = count = 0.0
    with torch.no_grad():
        for start in range(0, len(rows), settings.batch_size):
            inputs = batch(
                tokenizer, rows[start : start + settings.batch_size], settings, generator
            )
            predicted = int((inputs["labels"] != IGNORE).sum())
            total += float(model(**inputs).loss) * predicted
            count += predicted
    model.train()
    return total / count


def learning_rate(settings: MlmSettings, step: int) -> float:
    """Linear warm-up over `warmup` updates, then linear decay to 0 at `steps` (BERT's)."""
    if step <= settings.warmup:
        return settings.lr * step / max(settings.warmup, 1)
    return settings.lr * max(
        0.0, (settings.steps - step) / max(settings.steps - settings.warmup, 1)
    )


def run(
    folder: Path,
    settings: MlmSettings,
    out: Path,
    seed: int,
    threads: int,
    finish: Callable[[Path], object] = lambda staging: None,
    log: Callable[[str], object] = print,
) -> dict[str, Any]:
    """Train a tokenizer and an MLM on the text of `folder`, and write both (`save_pretrained`)
    with ``train.json`` into `out`, atomically; `finish` adds to the staging folder before it
    replaces `out` (the verb's provenance). Returns the summary written to ``train.json``."""
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    text = read_text(folder, settings.languages)
    sentences = [line for lines in text.values() for line in lines]
    tokenizer = train_tokenizer(sentences, settings.vocab_size, settings.max_tokens)
    rows = encode(tokenizer, sentences, settings.max_tokens)
    device = visible().device
    model = build_model(settings, tokenizer).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    schedule = Schedule(len(rows), settings.batch_size, seed)
    generator = torch.Generator().manual_seed(seed)

    def loss_at(step: int) -> tuple[torch.Tensor, float]:
        chosen = [rows[i] for i in schedule.rows(step)]
        loss = model(**batch(tokenizer, chosen, settings, generator, device)).loss
        return loss, loss.item()

    losses, seconds = pretraining.run(
        optimizer, settings.steps, loss_at, lambda step: learning_rate(settings, step), log
    )
    summary = {
        **pretraining.summary(losses, out, "MLM", settings.lr, model),
        "sentences_per_second": settings.steps * settings.batch_size / seconds,
        "sentences": {language: len(lines) for language, lines in text.items()},
        "vocab_size": len(tokenizer),
        "settings": asdict(settings),
        "seed": seed,
        "losses": losses,
    }
    pretraining.save(out, model, tokenizer, summary, finish)
    return summary
