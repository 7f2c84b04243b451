"""Per-layer token states for the language-recognition probes and SVCCA (Chapter 8 §5).

Encoder layers see the tagged source; decoder layers see the model's *own* beam output fed
back (free decoding, as the thesis specifies: no reference, no teacher forcing). A causal
decoder's state at step t depends only on the tokens before t, so one pass over the decoded
sequence gives exactly the states the decoder had while generating it. Rows are subword
tokens; language tags and EOS are dropped (a tag would give the language away).

npz layout (agreed with the analyses in `mlrep.evaluate`): ``layer_1`` … ``layer_K`` float32
[rows, d], encoder layers first; ``sentence`` (encoder rows) and ``decoder_sentence`` (decoder
rows) int64 sentence indices; ``src_lang`` / ``tgt_lang`` per sentence; ``n_encoder_layers``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mlrep.evaluate.states import write_states
from mlrep.io import read_lines
from mlrep.nmt.data import PIVOT, Direction, NmtDataError, directions, read_stats
from mlrep.nmt.decode import BeamSettings, Translator
from mlrep.nmt.prepare import read_subwords


@dataclass
class Collected:
    """The arguments of `mlrep.evaluate.states.write_states` for one set of sentences."""

    layers: list[np.ndarray]
    n_encoder_layers: int
    sentence: np.ndarray
    decoder_sentence: np.ndarray | None
    src_lang: list[str]
    tgt_lang: list[str]


@dataclass
class _Rows:
    layers: list[list[np.ndarray]] = field(default_factory=list)
    sentence: list[np.ndarray] = field(default_factory=list)


def collect(
    translator: Translator,
    sources: Sequence[str],
    dirs: Sequence[Direction],
    hypotheses: Sequence[Sequence[str]] | None,
    batch_size: int,
) -> Collected:
    """States of every line; `hypotheses` None means encoder layers only (SVCCA)."""
    import torch
    from fairseq.data import data_utils

    model, dictionary = translator.model, translator.dictionary
    pad, eos = dictionary.pad(), dictionary.eos()
    enc, dec = _Rows(), _Rows()
    with torch.no_grad():
        for start in range(0, len(sources), batch_size):
            stop = min(start + batch_size, len(sources))
            pairs = zip(sources[start:stop], dirs[start:stop], strict=True)
            src = [translator.encode([line], d)[0] for line, d in pairs]
            src_tokens = data_utils.collate_tokens(src, pad, eos, left_pad=False)
            lengths = torch.tensor([len(t) for t in src])
            out = model.encoder(
                src_tokens.to(translator.device),
                src_lengths=lengths.to(translator.device),
                return_all_hiddens=True,
            )
            # content tokens: after the leading tag, before EOS
            _append(
                enc, out["encoder_states"][1:], [range(1, n - 1) for n in lengths.tolist()], start
            )
            if hypotheses is None:
                continue
            prev, keep = [], []
            for i in range(start, stop):
                prefix = translator.prefix(dirs[i].tgt)
                ids = [eos] + ([prefix] if prefix is not None else [])
                ids += [dictionary.index(w) for w in hypotheses[i]]
                prev.append(torch.tensor(ids))
                # the state predicting hypothesis token j sits at the position of its predecessor
                first = len(ids) - len(hypotheses[i]) - 1
                keep.append(range(first, first + len(hypotheses[i])))
            prev_tokens = data_utils.collate_tokens(prev, pad, eos, left_pad=False)
            _, extra = model.decoder.extract_features(
                prev_tokens.to(translator.device), encoder_out=out
            )
            _append(dec, extra["inner_states"][1:], keep, start)
    return Collected(
        layers=[np.concatenate(rows) for rows in enc.layers + dec.layers],
        n_encoder_layers=len(enc.layers),
        sentence=np.concatenate(enc.sentence),
        decoder_sentence=np.concatenate(dec.sentence) if hypotheses is not None else None,
        src_lang=[d.src for d in dirs],
        tgt_lang=[d.tgt for d in dirs],
    )


def _append(rows: _Rows, states: Sequence, keep: Sequence[range], offset: int) -> None:
    """Add the kept positions of T×B×C layer states, sentence by sentence."""
    if not rows.layers:
        rows.layers = [[] for _ in states]
    for k, state in enumerate(states):
        batch = state.transpose(0, 1).float().cpu().numpy()
        rows.layers[k].append(
            np.concatenate([batch[b, list(r)] for b, r in enumerate(keep)]).astype(np.float32)
        )
    rows.sentence.append(
        np.concatenate([np.full(len(r), offset + b, dtype=np.int64) for b, r in enumerate(keep)])
    )


def write_all(
    translator: Translator,
    prepared: Path,
    hyp_dir: Path,
    out: Path,
    sentences: int,
    beam: BeamSettings,
) -> dict[str, int]:
    """The probe sets (``train`` = valid, ``sup`` and ``zst`` = test) and the SVCCA pair.

    Each direction contributes its first `sentences` lines to the probe sets and every test
    line to the SVCCA pair (CCA needs many more sentences than kept dimensions). The probes
    train on the
    supervised validation directions (decoded here) and test on the supervised and zero-shot
    test directions (decoded by `translate`, read back from `hyp_dir`). SVCCA compares the
    encoder states of the English side (en→xx) with the xx side (xx→en) of the same test
    sentences, all xx pooled.
    """
    languages = read_stats(prepared / "text")["languages"]
    every = directions(languages)
    sizes: dict[str, int] = {}

    def lines(
        split: str, wanted: list[Direction], cap: int | None = sentences
    ) -> tuple[list[str], list[Direction]]:
        sources = {d: read_subwords(prepared, split, d)[0][:cap] for d in wanted}
        return [x for d in wanted for x in sources[d]], [d for d in wanted for _ in sources[d]]

    sup = [d for d in every if not d.zero_shot]
    sources, dirs = lines("valid", sup)
    hyps = translator.generate(sources, dirs, beam)
    sets = {"train": collect(translator, sources, dirs, hyps, beam.batch_size)}
    for name, zero_shot in (("sup", False), ("zst", True)):
        wanted = [d for d in every if d.zero_shot == zero_shot]
        sources, dirs = lines("test", wanted)
        hyps = [
            h.split()
            for d in wanted
            for h in read_lines(hyp_dir / f"{d.name}.sub", NmtDataError)[:sentences]
        ]
        sets[name] = collect(translator, sources, dirs, hyps, beam.batch_size)
    english = [d for d in sup if d.src == PIVOT]
    for name, side in (
        ("svcca_a", english),
        ("svcca_b", [Direction(d.tgt, d.src) for d in english]),
    ):
        sources, dirs = lines("test", side, cap=None)
        sets[name] = collect(translator, sources, dirs, None, beam.batch_size)
    for name, collected in sets.items():
        write_states(out / f"{name}.npz", **collected.__dict__)
        sizes[name] = len(collected.src_lang)
    return sizes
