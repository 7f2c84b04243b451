"""Moses punctuation normalisation, tokenization and detokenization, with two backends.

``mosestokenizer`` runs the Moses Perl scripts themselves (the thesis's tool, exact);
``sacremoses`` is the Python port. They are NOT interchangeable: on the tiny corpus they
differ on a few lines per thousand (German ``‚ ‘`` quotes normalised to ``"`` by the Perl
script but to ``'`` by sacremoses, French elisions, ``Inc.`` before a capital;
tests/test_text_moses.py pins such cases), so the backend is a recorded setting, never a
silent swap. Both tokenize with aggressive dash splitting (``-a``), which ``mosestokenizer``
hard-wires.

Language-specific steps (Romanian diacritics, `mlrep.text.normalise`) run between punctuation
normalisation and tokenization, where the WMT16 scripts put them.

Korean: the Perl detokenizer treats ``ko`` like Chinese and Japanese and deletes every space
between Hangul words; sacremoses keeps them. Detokenize Korean with ``--backend sacremoses``.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib import metadata
from typing import Literal

from mlrep.text.normalise import pipeline

Backend = Literal["mosestokenizer", "sacremoses"]
BACKENDS = typing.get_args(Backend)


@dataclass(frozen=True)
class TokenizeSettings:
    """params.yaml ``preprocess.tokenize``: the options of ``mlrep text tokenize``
    (``detokenize`` reads the backend only)."""

    backend: Backend = field(metadata={"help": "the Moses implementation"})
    normalize: bool = field(metadata={"help": "normalise punctuation first"})
    escape: bool = field(metadata={"help": "escape XML special characters"})


def backend_version(backend: str) -> str:
    return f"{backend} {metadata.version(backend)}"


def _perl(lang: str, stack: ExitStack, normalize: bool, escape: bool, steps: Sequence[str]):
    from mosestokenizer import MosesPunctuationNormalizer, MosesTokenizer

    tokenizer = stack.enter_context(MosesTokenizer(lang, no_escape=not escape))
    normalizer = stack.enter_context(MosesPunctuationNormalizer(lang)) if normalize else None
    extra = pipeline(steps)

    def run(line: str) -> str:
        return " ".join(tokenizer(extra(normalizer(line) if normalizer else line)))

    return run


def _sacre(lang: str, normalize: bool, escape: bool, steps: Sequence[str]) -> Callable[[str], str]:
    import sacremoses

    tokenizer = sacremoses.MosesTokenizer(lang)
    normalizer = sacremoses.MosesPunctNormalizer(lang) if normalize else None
    extra = pipeline(steps)

    def run(line: str) -> str:
        text = extra(normalizer.normalize(line) if normalizer else line)
        return tokenizer.tokenize(
            text, aggressive_dash_splits=True, escape=escape, return_str=True
        ).strip()

    return run


def tokenize(
    lines: list[str],
    lang: str,
    backend: str,
    normalize: bool = True,
    escape: bool = True,
    steps: Sequence[str] = (),
) -> list[str]:
    """Normalise punctuation (optional), apply the named language `steps`
    (`mlrep.text.normalise`) and tokenize each line; tokens joined by spaces."""
    if backend == "sacremoses":
        run = _sacre(lang, normalize, escape, steps)
        return [run(line) for line in lines]
    with ExitStack() as stack:
        run = _perl(lang, stack, normalize, escape, steps)
        return [run(line) for line in lines]


def detokenize(lines: list[str], lang: str, backend: str) -> list[str]:
    """Undo `tokenize` (escaped entities are unescaped by both backends)."""
    if backend == "sacremoses":
        import sacremoses

        detok = sacremoses.MosesDetokenizer(lang)
        return [detok.detokenize(line.split(), unescape=True) for line in lines]
    from mosestokenizer import MosesDetokenizer

    with MosesDetokenizer(lang) as detok:
        return [detok(line.split()) for line in lines]
