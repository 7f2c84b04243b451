"""Training data for sentence encoders: a SentencePiece model and English-centric pairs as ids.

``prepare`` reads aligned text folders in the data layer's layout (``<split>.<a>-<b>.<lang>``:
the tiny corpus, normalised OPUS corpora), trains one SentencePiece model on every side
(lower-cased, as the thesis does), and stores each split as flat int32 token arrays with
offsets (``<split>.npz``), so every training run of the chapter shares one tokenisation and
a run's batches are a pure function of (seed, step): the checkpoint contract needs that.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from mlrep.embed.model import MASK, PAD, UNK, Batch
from mlrep.embed.settings import PrepareSettings
from mlrep.errors import MlrepError
from mlrep.io import atomic_file, atomic_write_text, read_lines

SPLITS = ("train", "valid", "test")
SIDES = ("src", "tgt")  # English, then the other language: the rows of `PairArrays`
ENGLISH = ("en", "eng")
_FILE = re.compile(r"^(?P<split>[a-z]+)\.(?P<a>[^.]+)-(?P<b>[^.]+)\.(?P<lang>[^.]+)$")


class EmbedDataError(MlrepError):
    """Input text that cannot become training pairs; the message names the file and the fix."""


def english_pairs(folder: Path, split: str) -> dict[str, tuple[Path, Path]]:
    """{language: (English file, language file)} of the English-centric pairs of one split."""
    found: dict[str, dict[str, Path]] = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        match = _FILE.match(path.name)
        sides = {match["a"], match["b"]} if match else set()
        # other files of a pair (the tiny corpus's segment ids, ``.segids``) are not a side
        if match and match["split"] == split and sides & set(ENGLISH) and match["lang"] in sides:
            found.setdefault(f"{match['a']}-{match['b']}", {})[match["lang"]] = path
    pairs = {}
    for pair, sides in found.items():
        english = [lang for lang in sides if lang in ENGLISH]
        other = [lang for lang in sides if lang not in ENGLISH]
        if len(english) != 1 or len(other) != 1:
            raise EmbedDataError(f"{folder}: pair {pair} of split {split} lacks one of its sides")
        pairs[other[0]] = (sides[english[0]], sides[other[0]])
    return pairs


def read_pair(english: Path, other: Path, limit: int) -> list[tuple[str, str]]:
    """The first `limit` aligned lines (0: all); unequal line counts are an error."""
    left, right = read_lines(english, EmbedDataError), read_lines(other, EmbedDataError)
    if len(left) != len(right):
        raise EmbedDataError(
            f"{other}: {len(right)} lines but {english} has {len(left)}; the sides must align"
        )
    rows = list(zip(left, right, strict=True))
    return rows[:limit] if limit else rows


def train_spm(sentences: list[str], prefix: Path, vocab_size: int, threads: int) -> Path:
    """BPE SentencePiece with pad 0, unk 1, ``<mask>`` 2 and no bos/eos (the EMS repo's ids)."""
    import sentencepiece as spm

    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_prefix=str(prefix),
            model_type="bpe",
            vocab_size=vocab_size,
            character_coverage=0.9995,
            pad_id=PAD,
            unk_id=UNK,
            bos_id=-1,
            eos_id=-1,
            user_defined_symbols=["<mask>"],
            num_threads=threads,
            minloglevel=2,
        )
    except RuntimeError as exc:
        raise EmbedDataError(
            f"SentencePiece could not train on {len(sentences)} lines: {exc} "
            "(change the section's prepare.vocab_size as SentencePiece says: lower for little "
            "text, higher for many scripts)"
        ) from None
    return prefix.with_suffix(".model")


class Tokenizer:
    """Lower-case (optional), SentencePiece ids, truncation to `max_tokens`."""

    def __init__(self, model: Path, lowercase: bool, max_tokens: int) -> None:
        import sentencepiece as spm

        self.processor = spm.SentencePieceProcessor(model_file=str(model))
        if self.processor.piece_to_id("<mask>") != MASK:
            raise EmbedDataError(f"{model}: <mask> is not id {MASK}; rerun the prepare step")
        self.lowercase = lowercase
        self.max_tokens = max_tokens

    @property
    def vocab_size(self) -> int:
        return self.processor.get_piece_size()

    def ids(self, sentences: list[str]) -> list[list[int]]:
        text = [s.lower() for s in sentences] if self.lowercase else sentences
        return [ids[: self.max_tokens] or [UNK] for ids in self.processor.encode(text)]


@dataclass
class PairArrays:
    """Pairs of one split: flat token ids + offsets per side, and language indices."""

    src_tokens: np.ndarray
    src_offsets: np.ndarray
    tgt_tokens: np.ndarray
    tgt_offsets: np.ndarray
    src_lang: np.ndarray
    tgt_lang: np.ndarray

    def __len__(self) -> int:
        return len(self.src_lang)

    def save(self, path: Path) -> None:
        with atomic_file(path) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, **self.__dict__)

    @classmethod
    def load(cls, path: Path) -> PairArrays:
        with np.load(path) as data:
            return cls(**{k: data[k] for k in data.files})

    @classmethod
    def build(cls, src: list[list[int]], tgt: list[list[int]], src_lang, tgt_lang) -> PairArrays:
        def flat(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
            offsets = np.zeros(len(rows) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(r) for r in rows])
            return np.fromiter((t for r in rows for t in r), np.int32, offsets[-1]), offsets

        (st, so), (tt, to) = flat(src), flat(tgt)
        return cls(st, so, tt, to, np.asarray(src_lang, np.int16), np.asarray(tgt_lang, np.int16))

    def batch(self, rows: np.ndarray, device: str = "cpu") -> Batch:
        return Batch(
            src=_pad(self.src_tokens, self.src_offsets, rows).to(device),
            tgt=_pad(self.tgt_tokens, self.tgt_offsets, rows).to(device),
            src_lang=torch.from_numpy(self.src_lang[rows].astype(np.int64)).to(device),
            tgt_lang=torch.from_numpy(self.tgt_lang[rows].astype(np.int64)).to(device),
        )


def text_path(folder: Path, split: str, side: str) -> Path:
    """The raw sentences of one side of a prepared split, one per row of its `PairArrays`
    (what a teacher encodes: it has its own tokenizer)."""
    return folder / f"{split}.{side}.txt"


def _pad(tokens: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> torch.Tensor:
    lengths = offsets[rows + 1] - offsets[rows]
    out = np.full((len(rows), int(lengths.max())), PAD, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : lengths[i]] = tokens[offsets[row] : offsets[row + 1]]
    return torch.from_numpy(out)


def pad_ids(rows: list[list[int]]) -> torch.Tensor:
    """Padded id matrix of already-tokenised sentences (for encoding at evaluation)."""
    out = torch.full((len(rows), max(len(r) for r in rows)), PAD, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def _kept(pairs: dict[str, list], languages: tuple[str, ...]) -> dict[str, list]:
    return {lang: rows for lang, rows in pairs.items() if lang in languages}


def prepare(sources: list[Path], out: Path, settings: PrepareSettings) -> dict:
    """Write ``spm.model``, ``languages.json`` and ``<split>.npz`` for `sources` into `out`:
    the pairs of `settings.languages` (every language of the sources when empty), so the
    vocabulary is trained on the kept languages only."""
    text: dict[str, dict[str, list[tuple[str, str]]]] = {s: {} for s in SPLITS}
    for split in SPLITS:
        limit = settings.max_pairs if split == "train" else settings.heldout_pairs
        for folder in sources:
            for lang, (english, other) in english_pairs(folder, split).items():
                text[split].setdefault(lang, []).extend(read_pair(english, other, limit))
    named = ", ".join(map(str, sources))
    if not text["train"]:
        raise EmbedDataError(f"no English-centric train pairs (train.en-xx.xx files) in {named}")
    if settings.languages:
        absent = [lang for lang in settings.languages if lang not in text["train"]]
        if absent:
            raise EmbedDataError(
                f"prepare.languages {absent}: no train.en-xx pairs in {named}, whose languages "
                f"are {sorted(text['train'])}; drop them or add a source that has them"
            )
        text = {split: _kept(pairs, settings.languages) for split, pairs in text.items()}
    languages = ["en", *sorted(text["train"])]
    sentences = [s for rows in text["train"].values() for pair in rows for s in pair]
    if settings.lowercase:
        sentences = [s.lower() for s in sentences]
    train_spm(sentences, out / "spm", settings.vocab_size, settings.threads)
    tokenizer = Tokenizer(out / "spm.model", settings.lowercase, settings.max_tokens)
    counts: dict[str, dict[str, int]] = {}
    for split in SPLITS:
        rows = [(lang, pair) for lang in languages[1:] for pair in text[split].get(lang, [])]
        if not rows:
            continue
        arrays = PairArrays.build(
            tokenizer.ids([pair[0] for _, pair in rows]),
            tokenizer.ids([pair[1] for _, pair in rows]),
            [0] * len(rows),
            [languages.index(lang) for lang, _ in rows],
        )
        arrays.save(out / f"{split}.npz")
        for index, side in enumerate(SIDES):
            lines = "".join(pair[index] + "\n" for _, pair in rows)
            atomic_write_text(text_path(out, split, side), lines)
        counts[split] = {lang: len(text[split].get(lang, [])) for lang in languages[1:]}
    info = {
        "languages": languages,
        "vocab_size": tokenizer.vocab_size,
        "lowercase": settings.lowercase,
        "max_tokens": settings.max_tokens,
        "pairs": counts,
    }
    atomic_write_text(out / "languages.json", json.dumps(info, indent=1) + "\n")
    return info
