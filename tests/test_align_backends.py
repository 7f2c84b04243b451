"""The aligners behave like fast_align (diagonal tension, directions) and reach a low AER on
the synthetic cipher corpus, eflomal lower than fast_align as in the literature."""

import pytest
import systran_align

from mlrep.align import backends, bitext, cipher
from mlrep.align.pharaoh import GoldLine
from mlrep.align.score import score
from mlrep.align.symmetrize import symmetrize

FAST_ALIGN = backends.Options(favor_diagonal=True, optimize_tension=True, variational_bayes=True)


def _flip(options):
    return backends.Options(**{**vars(options), "reverse": True})


@pytest.fixture(scope="module")
def cipher_corpus():
    pairs = cipher.generate(cipher.CipherSettings(sentences=800, vocabulary=1500, seed=3))
    text = bitext.from_pairs([(p.source, p.target) for p in pairs], max_length=100)
    gold = [GoldLine(p.links, p.links) for p in pairs]
    return text, gold


def _repeated_words():
    # Every token identical: word translation probabilities cannot choose, only the prior can.
    return bitext.from_pairs([(["a"] * n, ["x"] * n) for n in (2, 3, 4, 5, 6) * 20], 100)


def test_diagonal_prior_puts_identical_words_on_the_diagonal():
    text = _repeated_words()
    diagonal = backends.align(text, "fast_align", FAST_ALIGN)
    assert all(
        links == {(i, i) for i in range(len(src))}
        for links, src in zip(diagonal, text.source, strict=True)
    )
    # Without -d the prior is uniform (IBM Model 1): not every sentence lands on the diagonal.
    uniform = backends.align(text, "fast_align", backends.Options())
    assert any(
        links != {(i, i) for i in range(len(src))}
        for links, src in zip(uniform, text.source, strict=True)
    )


def test_directions_are_asymmetric_and_printed_source_target(cipher_corpus):
    text, gold = cipher_corpus
    forward = backends.align(text, "fast_align", FAST_ALIGN)
    reverse = backends.align(text, "fast_align", _flip(FAST_ALIGN))
    for links, rev, src, tgt in zip(forward, reverse, text.source, text.target, strict=True):
        targets = [j for _, j in links]
        sources = [i for i, _ in rev]
        assert len(targets) == len(set(targets))  # forward: one source word per target word
        assert len(sources) == len(set(sources))  # reverse: one target word per source word
        assert all(i < len(src) and j < len(tgt) for i, j in links | rev)
    # A word ciphered as two target words can only be fully recovered in the forward direction.
    recovered = sum(
        len({i for i, _ in f & g.sure}) < len(f & g.sure)
        for f, g in zip(forward, gold, strict=True)
    )
    assert recovered > 50


def test_systran_align_cannot_serve_reverse_runs(tmp_path):
    """Why the fast_align backend is sil-thot: systran-align only returns symmetrized links."""
    corpus = tmp_path / "in.txt"
    corpus.write_text("a b ||| x y\nb c ||| y z\n", encoding="utf-8")
    systran_align.generate_alignment_probabilities(
        str(corpus), str(tmp_path / "f"), str(tmp_path / "b"), favor_diagonal=True
    )
    result = systran_align.Aligner(str(tmp_path / "f"), str(tmp_path / "b")).align(["a"], ["x"])
    assert set(result) == {"alignments", "forward_log_prob", "backward_log_prob"}


def _gdfa_aer(text, gold, backend, options):
    forward = backends.align(text, backend, options)
    reverse = backends.align(text, backend, _flip(options))
    merged = [
        frozenset(symmetrize("grow-diag-final-and", f, r))
        for f, r in zip(forward, reverse, strict=True)
    ]
    return score(gold, merged).aer


def test_cipher_aer_is_low_and_eflomal_beats_fast_align(cipher_corpus):
    text, gold = cipher_corpus
    fast_align = _gdfa_aer(text, gold, "fast_align", FAST_ALIGN)
    eflomal = _gdfa_aer(text, gold, "eflomal", backends.Options())
    assert fast_align < 0.25
    assert eflomal < 0.10
    assert eflomal < fast_align


def test_skipped_pairs_keep_their_line_and_are_counted():
    text = bitext.from_pairs(
        [(["a"], ["x"]), ([], ["x"]), (["a"] * 5, ["x"]), (["a", "b"], ["x", "y"])], 4
    )
    assert dict(text.skipped) == {"empty_side": 1, "over_max_length": 1}
    for backend in backends.BACKENDS:
        links = backends.align(text, backend, FAST_ALIGN)
        assert len(links) == 4
        assert links[1] == links[2] == frozenset()
    assert backends.align(text, "fast_align", FAST_ALIGN)[0] == {(0, 0)}
