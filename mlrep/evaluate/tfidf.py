"""A training-free retrieval baseline: character n-gram TF-IDF vectors, compared by cosine.

Translations share names, numbers, cognates and punctuation, so character n-grams retrieve
far above chance with no model at all (on real Tatoeba, 200 pairs, about 30% P@1 for German,
Afrikaans and Catalan). A retrieval table shows this row beside its trained systems: a number
below it says the system has learnt less than string overlap gives.

The vectors are ``TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3))`` (lower-cased,
smoothed IDF, L2-normalised rows). The IDF and the vocabulary are fitted on the sentences being
retrieved, both sides together (`fit`): transductive, as a retrieval baseline may be, since
it uses no pairing, only which n-grams are rare in the test text. A protocol fits a
`Transductive` encoder on every side of a test set before it encodes them
(`mlrep.evaluate.protocols.fit`), so the sides share one vector space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mlrep.evaluate.embeddings import EmbeddingError


@runtime_checkable
class Transductive(Protocol):
    """An encoder whose vector space is fitted on the sentences of the test set itself."""

    def fit(self, sides: Sequence[Sequence[str]]) -> None: ...

    def __call__(self, sentences: list[str]) -> np.ndarray: ...


@dataclass
class CharTfidf:
    """Character n-gram TF-IDF vectors (module docstring); call `fit` before encoding."""

    ngram_min: int = 1
    ngram_max: int = 3
    _vectorizer: Any = field(default=None, init=False, repr=False)

    def fit(self, sides: Sequence[Sequence[str]]) -> None:
        """Vocabulary and IDF from every sentence of every side of one test set."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(self.ngram_min, self.ngram_max), lowercase=True
        )
        vectorizer.fit([line for side in sides for line in side])
        self._vectorizer = vectorizer

    def __call__(self, sentences: list[str]) -> np.ndarray:
        if self._vectorizer is None:
            raise EmbeddingError("CharTfidf: fit it on the test set's sentences before encoding")
        return self._vectorizer.transform(sentences).toarray().astype(np.float32)
