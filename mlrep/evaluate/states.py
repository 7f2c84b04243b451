"""The hidden-states file that the NMT runner writes and the Chapter 8 analyses read.

One ``.npz`` per (model, test set)::

    layer_1 … layer_K     float32 [rows, d]; encoder layers first, then decoder layers
    n_encoder_layers      int scalar E (layers 1..E are the encoder's)
    sentence              int64 [source tokens]: sentence index of each encoder-layer row
    decoder_sentence      int64 [decoder tokens]: the same for decoder-layer rows (needed when
                          K > E; decoder states come from free decoding, so their token count
                          differs from the source's; an empty hypothesis has no rows)
    src_lang, tgt_lang    unicode [n_sentences]: each sentence's direction

Layers are read one at a time (an npz member loads on access), so a full-scale file of several
GB never sits in memory whole. Every check names the file and the key, because a wrong file
here would otherwise surface as a shape error deep inside a classifier.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlrep.errors import MlrepError
from mlrep.io import atomic_file

_LAYER = re.compile(r"^layer_(\d+)$")


class StatesFileError(MlrepError):
    """A states npz breaks the format above; the message names file, key and fix."""


@dataclass
class States:
    """An open states file: per-sentence metadata now, layers on demand."""

    path: Path
    n_layers: int
    n_encoder_layers: int
    src_lang: np.ndarray
    tgt_lang: np.ndarray
    _archive: np.lib.npyio.NpzFile
    _rows: dict[str, np.ndarray]

    @property
    def n_sentences(self) -> int:
        return len(self.src_lang)

    def is_encoder(self, layer: int) -> bool:
        return layer <= self.n_encoder_layers

    def sentence_of_rows(self, layer: int) -> np.ndarray:
        """Sentence index of each row of `layer` (1-based, as in the key names)."""
        return self._rows["sentence" if self.is_encoder(layer) else "decoder_sentence"]

    def layer(self, layer: int) -> np.ndarray:
        """The float32 [rows, d] states of `layer`, checked against its sentence index."""
        key = f"layer_{layer}"
        if not 1 <= layer <= self.n_layers:
            raise StatesFileError(f"{self.path}: no key {key} (layers 1..{self.n_layers})")
        values = self._archive[key]
        rows = self.sentence_of_rows(layer)
        index = "sentence" if self.is_encoder(layer) else "decoder_sentence"
        if values.ndim != 2 or not np.issubdtype(values.dtype, np.floating):
            raise StatesFileError(
                f"{self.path}: {key} must be a float array [rows, d], got {values.dtype} "
                f"shape {values.shape}"
            )
        if len(values) != len(rows):
            raise StatesFileError(
                f"{self.path}: {key} has {len(values)} rows but {index} has {len(rows)}; "
                f"{'encoder' if self.is_encoder(layer) else 'decoder'} layers need one "
                f"{index} entry per row"
            )
        if not np.isfinite(values).all():
            raise StatesFileError(f"{self.path}: {key} holds NaN or infinite values")
        return values.astype(np.float32, copy=False)

    def close(self) -> None:
        self._archive.close()


def _int_vector(archive: np.lib.npyio.NpzFile, path: Path, key: str, n_sentences: int):
    values = archive[key]
    if values.ndim != 1 or not np.issubdtype(values.dtype, np.integer):
        raise StatesFileError(f"{path}: {key} must be a 1-d integer array, got {values.dtype}")
    if len(values) and (values.min() < 0 or values.max() >= n_sentences):
        raise StatesFileError(
            f"{path}: {key} holds sentence indices outside 0..{n_sentences - 1} "
            f"(src_lang has {n_sentences} sentences)"
        )
    return values.astype(np.int64, copy=False)


def _lang_vector(archive: np.lib.npyio.NpzFile, path: Path, key: str) -> np.ndarray:
    values = archive[key]
    if values.ndim != 1 or values.dtype.kind != "U":
        raise StatesFileError(
            f"{path}: {key} must be a 1-d unicode array (np.array([...], dtype=str)), "
            f"got {values.dtype} shape {values.shape}"
        )
    return values


def open_states(path: Path) -> States:
    """Open and check a states npz (metadata now; each layer when it is read)."""
    if not path.is_file():
        raise StatesFileError(f"{path}: file not found")
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise StatesFileError(f"{path}: not an .npz archive ({exc})") from None
    try:
        return _checked(archive, path)
    except BaseException:
        archive.close()
        raise


def _checked(archive: np.lib.npyio.NpzFile, path: Path) -> States:
    keys = set(archive.files)
    for key in ("sentence", "src_lang", "tgt_lang", "n_encoder_layers"):
        if key not in keys:
            raise StatesFileError(f"{path}: missing key {key} (see mlrep/evaluate/states.py)")
    numbers = sorted(int(m.group(1)) for k in keys if (m := _LAYER.match(k)))
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise StatesFileError(
            f"{path}: layer keys must be layer_1 … layer_K without gaps, found {numbers}"
        )
    encoder = archive["n_encoder_layers"]
    if encoder.ndim != 0 or not np.issubdtype(encoder.dtype, np.integer):
        raise StatesFileError(f"{path}: n_encoder_layers must be an integer scalar")
    n_encoder = int(encoder)
    if not 1 <= n_encoder <= len(numbers):
        raise StatesFileError(
            f"{path}: n_encoder_layers is {n_encoder} but the file has {len(numbers)} layers"
        )
    src_lang = _lang_vector(archive, path, "src_lang")
    tgt_lang = _lang_vector(archive, path, "tgt_lang")
    if len(src_lang) != len(tgt_lang):
        raise StatesFileError(
            f"{path}: src_lang has {len(src_lang)} sentences but tgt_lang {len(tgt_lang)}"
        )
    rows = {"sentence": _int_vector(archive, path, "sentence", len(src_lang))}
    if len(numbers) > n_encoder:
        if "decoder_sentence" not in keys:
            raise StatesFileError(
                f"{path}: missing key decoder_sentence (the file has decoder layers "
                f"layer_{n_encoder + 1}..layer_{len(numbers)}; give their rows' sentence indices)"
            )
        rows["decoder_sentence"] = _int_vector(archive, path, "decoder_sentence", len(src_lang))
    return States(path, len(numbers), n_encoder, src_lang, tgt_lang, archive, rows)


def write_states(
    path: Path,
    layers: list[np.ndarray],
    n_encoder_layers: int,
    sentence: np.ndarray,
    src_lang: list[str],
    tgt_lang: list[str],
    decoder_sentence: np.ndarray | None = None,
) -> None:
    """Write a states npz in the format above (atomically); the writer the NMT runner can use."""
    arrays = {f"layer_{i}": np.asarray(v, dtype=np.float32) for i, v in enumerate(layers, 1)}
    arrays["n_encoder_layers"] = np.int64(n_encoder_layers)
    arrays["sentence"] = np.asarray(sentence, dtype=np.int64)
    arrays["src_lang"] = np.asarray(src_lang, dtype=str)
    arrays["tgt_lang"] = np.asarray(tgt_lang, dtype=str)
    if decoder_sentence is not None:
        arrays["decoder_sentence"] = np.asarray(decoder_sentence, dtype=np.int64)
    with atomic_file(path, suffix=".npz") as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays)
