"""The metric names Chapter 4's runs write, which its tables and claims may read;
`mlrep.report.metrics.write` refuses any other name.

A fine-tune (`runs.FineTune`, one direction) writes ``bleu_<src>-<tgt>``, WAT-style BLEU of its
test words (`mlrep nmt pair-score`), with its copy-the-source floor; the human evaluation of
Tables 4.8/4.9 writes ``adequacy_<src>-<tgt>`` and ``fluency_<src>-<tgt>`` per judged system
(`mlrep.evaluate.human`), and their reference-free adequacy of Table 4.7
``laser_<src>-<tgt>`` (`mlrep.evaluate.adequacy`, runs ``laser/<fine-tune>``); a pre-training
writes its teacher-forced token accuracy per language and task, Tables 4.12/4.13
(`mlrep.nmt.token_accuracy.metrics`), and beside it the
reordering statistic of its pre-training data, ``moved_words_<lang>_<task>``
(`mlrep.nmt.token_accuracy.moved_words`), which the thesis states in its text only.
A case of Tables 4.10/4.11 writes the texts ``case_source``, ``case_reference`` and
``case_<start>`` per system (`mlrep.evaluate.cases`).
"""

from __future__ import annotations

from mlrep.evaluate.adequacy import PATTERNS as ADEQUACY_PATTERNS
from mlrep.evaluate.cases import PATTERNS as CASE_PATTERNS
from mlrep.evaluate.human import PATTERNS as HUMAN_PATTERNS
from mlrep.nmt.token_accuracy import PATTERNS as ACCURACY_PATTERNS

PATTERNS: tuple[str, ...] = (
    "bleu_{src}-{tgt}",
    *HUMAN_PATTERNS,
    *ADEQUACY_PATTERNS,
    *ACCURACY_PATTERNS,
    *CASE_PATTERNS,
)
