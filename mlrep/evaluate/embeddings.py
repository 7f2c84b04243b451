"""Reading sentence embeddings (``.npy``, float32 or float16) with checks that name the file.

Every benchmark of the suite starts from embedding files written by some encoder; a wrong
file (another format, NaNs from a diverged model, an empty or one-dimensional array, a
dimension that does not match its partner) must stop the evaluation with the file named,
not surface later as a shape error or a silently meaningless score.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlrep.errors import MlrepError

DTYPES = (np.dtype(np.float32), np.dtype(np.float16))
_FINITE_CHUNK = 65536  # rows checked at a time, so a memory-mapped file is never copied whole


class EmbeddingError(MlrepError):
    """An embedding file that cannot be evaluated (format, dtype, shape, values)."""


def load(path: Path) -> np.ndarray:
    """The 2-D embedding matrix in `path`, memory-mapped (rows: sentences, columns: features)."""
    path = Path(path)
    if path.suffix != ".npy":
        raise EmbeddingError(
            f"{path}: embeddings must be a .npy file (numpy.save of a float32 or float16 "
            "matrix); convert other formats (raw LASER .bin, .pt, .txt) with numpy first"
        )
    if not path.exists():
        raise EmbeddingError(f"{path}: file not found")
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise EmbeddingError(
            f"{path}: not a readable .npy file ({exc}); write it with numpy.save"
        ) from None
    return check(array, str(path))


def check(array: np.ndarray, label: str) -> np.ndarray:
    """`array` if it is a non-empty, finite float32/float16 matrix; else an error naming `label`."""
    if array.dtype not in DTYPES:
        raise EmbeddingError(
            f"{label}: dtype {array.dtype}; expected float32 or float16 "
            "(cast with array.astype(numpy.float32) before saving)"
        )
    if array.ndim != 2:
        raise EmbeddingError(
            f"{label}: shape {array.shape}; expected a 2-D matrix (sentences x dimensions)"
        )
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise EmbeddingError(f"{label}: empty embedding matrix {array.shape}; nothing to evaluate")
    for start in range(0, array.shape[0], _FINITE_CHUNK):
        block = np.asarray(array[start : start + _FINITE_CHUNK])
        bad = ~np.isfinite(block).all(axis=1)
        if bad.any():
            row = start + int(np.argmax(bad))
            raise EmbeddingError(
                f"{label}: row {row} (0-based) holds NaN or infinity; re-encode the sentences "
                "(a diverged model or an fp16 overflow produces these)"
            )
    return array


def check_dimensions(a: np.ndarray, b: np.ndarray, label_a: str, label_b: str) -> None:
    """Both matrices live in one space: the same number of columns."""
    if a.shape[1] != b.shape[1]:
        raise EmbeddingError(
            f"{label_a} has dimension {a.shape[1]} but {label_b} has {b.shape[1]}; "
            "embed both sides with the same encoder"
        )


def check_aligned(a: np.ndarray, b: np.ndarray, label_a: str, label_b: str) -> None:
    """Row i of `a` translates row i of `b`: same dimension and the same number of rows."""
    check_dimensions(a, b, label_a, label_b)
    if a.shape[0] != b.shape[0]:
        raise EmbeddingError(
            f"{label_a} has {a.shape[0]} rows but {label_b} has {b.shape[0]}; aligned "
            "retrieval needs row i of one file to translate row i of the other"
        )
