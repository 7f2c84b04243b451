"""Translation scoring protocols, one function each, chosen by name (`PROTOCOLS`).

The thesis's chapters score with different protocols, and a number is only comparable with
the published one under the same protocol, so the protocol is a setting and every score
records what produced it (`Score.signature`):

- ``sacrebleu``: detokenized sacreBLEU, ``zh`` for Chinese targets and ``13a`` otherwise
  (Chapters 7 and 8); ``sacrebleu-13a``, ``sacrebleu-zh`` and ``sacrebleu-ja-mecab`` force one
  tokenizer (``ja-mecab`` needs ``mecab-python3`` and ``ipadic``). Signature: sacrebleu's.
- ``wat``: tokenized BLEU as WAT reports it (Chapters 4 and 5): both sides segmented,
  Japanese by the project's segmenter (GiNZA's Sudachi words, the documented stand-in for
  Juman++), Chinese by jieba, Burmese and Khmer by the project's rules, other languages by
  Moses, then BLEU over the space-separated tokens with sacrebleu's ``--tokenize none``,
  which is multi-bleu.perl's computation.
- ``mrasp2``: mRASP2's tokenized BLEU: Moses, Chinese split into characters, and (only where
  the published table did so: `Protocol.remove_diacritics`) Romanian diacritics removed.
- ``chrf++``: sacrebleu's chrF++ (``CHRF(word_order=2)``) on detokenized text.
- ``comet``: COMET (`mlrep.evaluate.comet`), ×100, needs the source sentences.

Each score keeps per-sentence statistics from which `mlrep.report.stats` recomputes the
corpus score, so the paired bootstrap resamples the printed number: BLEU's ten sufficient
statistics (``bleu_stats``; also for the tokenized protocols, whose BLEU is sacrebleu's on
the tokens), chrF++'s n-gram counts (``chrf_stats``), COMET's per-sentence scores
(``sentence_scores``, the corpus score being their mean).

multi-bleu.perl prints 0 when a corpus has no matching 4-gram; sacrebleu's default ``exp``
smoothing, kept here so the bootstrap's recomputation matches, gives a small positive value
instead. The two agree whenever every n-gram order has a match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sacrebleu.metrics import BLEU, CHRF

from mlrep.errors import MlrepError
from mlrep.report.stats import chrf_sentence_stats, sentence_stats

if TYPE_CHECKING:
    from mlrep.evaluate.comet import Comet

PROTOCOLS = (
    "sacrebleu",
    "sacrebleu-13a",
    "sacrebleu-zh",
    "sacrebleu-ja-mecab",
    "wat",
    "mrasp2",
    "chrf++",
    "comet",
)
MOSES_BACKEND = "mosestokenizer"
SEGMENTED = ("ja", "zh", "my", "km")  # languages `wat_tokens` segments instead of Moses


class ProtocolError(MlrepError):
    """A scoring request that the named protocol cannot serve."""


@dataclass(frozen=True)
class Protocol:
    """A chapter's scoring setting (``$defs/scoring`` of the params schema): the protocol's
    name and the options it reads."""

    name: str = field(default="sacrebleu", metadata={"help": f"one of {', '.join(PROTOCOLS)}"})
    moses_backend: str = field(
        default=MOSES_BACKEND, metadata={"help": "wat, mrasp2: the Moses implementation"}
    )
    remove_diacritics: bool = field(
        default=False, metadata={"help": "mrasp2: remove Romanian diacritics (where its table did)"}
    )
    comet_checkpoint: str = field(
        default="", metadata={"help": "comet: hub id or folder of a COMET checkpoint"}
    )
    comet_revision: str = field(
        default="", metadata={"help": "comet: the hub revision (commit) to pin; '' = default"}
    )

    def __post_init__(self) -> None:
        if self.name not in PROTOCOLS:
            raise ProtocolError(f"unknown scoring protocol {self.name!r}; one of {PROTOCOLS}")

    def comet(self, device: str | None = None) -> Comet:
        """The COMET checkpoint this setting names, loaded (at its pinned revision)."""
        from mlrep.evaluate import comet

        if not self.comet_checkpoint:
            raise ProtocolError("comet_checkpoint is empty: name a COMET hub id or folder")
        return comet.load(self.comet_checkpoint, self.comet_revision or None, device)


@dataclass(frozen=True)
class Score:
    """A corpus score, what produced it, and its per-sentence statistics of kind `kind`
    (``bleu_stats``, ``chrf_stats`` or ``sentence_scores``)."""

    score: float
    signature: str
    stats: list[list[float]] | list[float]
    kind: str


def _lang(lang: str) -> str:
    """The language of a code such as ``zh``, ``zh_CN`` or ``ja-JP``."""
    return lang.replace("-", "_").split("_")[0].lower()


def sacrebleu_tokenizer(lang: str) -> str:
    """The thesis's detokenized protocol: ``zh`` for Chinese targets, ``13a`` otherwise."""
    return "zh" if _lang(lang) == "zh" else "13a"


def _check(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references) or not hypotheses:
        raise ProtocolError(
            f"{len(hypotheses)} hypotheses for {len(references)} references; give one each"
        )


def bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str) -> Score:
    """sacreBLEU with tokenizer `tokenize` (``13a``, ``zh``, ``ja-mecab``, ``none``)."""
    _check(hypotheses, references)
    metric = BLEU(tokenize=tokenize)
    result = metric.corpus_score(list(hypotheses), [list(references)])
    stats = sentence_stats(hypotheses, references, tokenize=tokenize)
    return Score(result.score, str(metric.get_signature()), stats, "bleu_stats")


def chrf(hypotheses: Sequence[str], references: Sequence[str]) -> Score:
    """chrF++: character 6-grams and word bigrams, β = 2 (sacrebleu's ``CHRF(word_order=2)``)."""
    _check(hypotheses, references)
    metric = CHRF(word_order=2)
    result = metric.corpus_score(list(hypotheses), [list(references)])
    stats = chrf_sentence_stats(hypotheses, references)
    return Score(result.score, str(metric.get_signature()), stats, "chrf_stats")


def wat_tokens(lines: Sequence[str], lang: str, backend: str = MOSES_BACKEND) -> list[str]:
    """WAT's segmentation: Japanese words (GiNZA), Chinese words (jieba), Burmese syllables
    and Khmer words (the rules of `mlrep.text.scripts`, the stand-ins for myseg.py and
    Khmer segmenters: Moses would keep an unspaced phrase one token), else Moses."""
    from mlrep.text import moses, segment

    code = _lang(lang)
    if code in SEGMENTED:
        return [" ".join(s.words) for s in segment.segment(list(lines), code)]
    return moses.tokenize(list(lines), code, backend, normalize=False, escape=False)


def mrasp2_tokens(
    lines: Sequence[str],
    lang: str,
    backend: str = MOSES_BACKEND,
    remove_diacritics: bool = False,
) -> list[str]:
    """mRASP2's segmentation: Moses, Chinese by character, Romanian optionally without
    diacritics (cedilla forms first made comma-below, as the WMT16 scripts do)."""
    from mlrep.text import moses

    code = _lang(lang)
    if code == "zh":
        return [" ".join("".join(line.split())) for line in lines]
    steps = (
        ("normalise_romanian", "remove_diacritics") if code == "ro" and remove_diacritics else ()
    )
    return moses.tokenize(list(lines), code, backend, normalize=False, escape=False, steps=steps)


def wat_segmenter(lang: str, backend: str = MOSES_BACKEND) -> str:
    """What `wat_tokens` segments `lang` with, as the signature names it."""
    from mlrep.text import segment

    code = _lang(lang)
    return segment.tool_version(code) if code in SEGMENTED else f"moses ({backend})"


def presegmented_bleu(
    hypotheses: Sequence[str], references: Sequence[str], lang: str, segmenter: str
) -> Score:
    """The ``wat`` protocol's BLEU of text that is already in WAT's tokens: both sides are
    the words of `segmenter` (a model trained and decoded on those words, scored against the
    same segmenter's references), so they are scored as they are (``--tokenize none``)
    instead of being segmented a second time, which would split or join some words again
    and no longer score the words the model produced. The signature names the segmenter."""
    _check(hypotheses, references)
    scored = bleu(hypotheses, references, "none")
    signature = f"wat:{_lang(lang)}:{segmenter} (given words)|{scored.signature}"
    return Score(scored.score, signature, scored.stats, scored.kind)


def tokenized_bleu(
    hypotheses: Sequence[str], references: Sequence[str], lang: str, protocol: Protocol
) -> Score:
    """BLEU over tokens (``--tokenize none``) after the `protocol`'s segmentation of both
    sides; the signature names the segmentation, then sacrebleu's own."""
    _check(hypotheses, references)
    code = _lang(lang)
    if protocol.name == "wat":
        tokens = [
            wat_tokens(side, code, protocol.moses_backend) for side in (hypotheses, references)
        ]
        how = wat_segmenter(code, protocol.moses_backend)
    elif protocol.name == "mrasp2":
        tokens = [
            mrasp2_tokens(side, code, protocol.moses_backend, protocol.remove_diacritics)
            for side in (hypotheses, references)
        ]
        how = "characters" if code == "zh" else f"moses ({protocol.moses_backend})"
        if code == "ro" and protocol.remove_diacritics:
            how += " + remove_diacritics"
    else:
        raise ProtocolError(f"{protocol.name!r} is not a tokenized-BLEU protocol")
    scored = bleu(tokens[0], tokens[1], "none")
    return Score(
        scored.score, f"{protocol.name}:{code}:{how}|{scored.signature}", scored.stats, scored.kind
    )


def comet(
    hypotheses: Sequence[str],
    references: Sequence[str],
    sources: Sequence[str],
    scorer: Comet,
    batch_size: int = 16,
) -> Score:
    """COMET ×100: the mean of the per-sentence scores, which the bootstrap resamples."""
    _check(hypotheses, references)
    _check(hypotheses, sources)
    values = [100 * v for v in scorer.score(sources, hypotheses, references, batch_size)]
    return Score(sum(values) / len(values), scorer.signature, values, "sentence_scores")


def score(
    protocol: Protocol,
    hypotheses: Sequence[str],
    references: Sequence[str],
    lang: str,
    sources: Sequence[str] | None = None,
    scorer: Comet | None = None,
) -> Score:
    """Score `hypotheses` in target language `lang` under `protocol`."""
    name = protocol.name
    if name == "sacrebleu":
        return bleu(hypotheses, references, sacrebleu_tokenizer(lang))
    if name.startswith("sacrebleu-"):
        return bleu(hypotheses, references, name.removeprefix("sacrebleu-"))
    if name in ("wat", "mrasp2"):
        return tokenized_bleu(hypotheses, references, lang, protocol)
    if name == "chrf++":
        return chrf(hypotheses, references)
    if sources is None or scorer is None:
        raise ProtocolError("comet needs the source sentences and a loaded checkpoint")
    return comet(hypotheses, references, sources, scorer)
