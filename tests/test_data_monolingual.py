"""Leak-free monolingual text: no held-out sentence of any language, in any of its
translations, reaches pre-training, LM or denoising text."""

from __future__ import annotations

import json

import pytest

from mlrep.cli import main
from mlrep.data import monolingual
from mlrep.data.monolingual import MonolingualSettings
from mlrep.data.tiny_corpus import IDS_SUFFIX

SETTINGS = MonolingualSettings(held_out_splits=["valid", "test"], drop_held_out_text=True)

# (split, pair language, segment id, English, translation). s3 is a German *test* sentence
# whose French translation sits in French *training* text: the multi-way leak. s6's French
# equals the French of valid segment s5 under another id (two English messages, one
# translation).
ROWS = [
    ("train", "de", "s1", "Save", "Speichern"),
    ("train", "de", "s2", "Delete", "Löschen"),
    ("test", "de", "s3", "Open the file", "Datei öffnen"),
    ("train", "fr", "s1", "Save", "Enregistrer"),
    ("train", "fr", "s3", "Open the file", "Ouvrir le fichier"),
    ("train", "fr", "s4", "Close", "Fermer"),
    ("train", "fr", "s6", "Hi", "Bonjour"),
    ("valid", "fr", "s5", "Hello", "Bonjour"),
]


def corpus(root, rows=ROWS):
    """A multi-way corpus in the tiny corpus's layout (``<split>.en-<xx>.{en,xx,segids}``)."""
    folder = root / "tiny_corpus"
    folder.mkdir()
    files: dict[str, list[str]] = {}
    for split, lang, segment, english, translation in rows:
        stem = f"{split}.en-{lang}"
        for suffix, line in ((IDS_SUFFIX, segment), ("en", english), (lang, translation)):
            files.setdefault(f"{stem}.{suffix}", []).append(line)
    for name, lines in files.items():
        (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    (folder / "manifest.json").write_text('{"corpus": "tiny"}\n')
    return folder


def ids(folder, language, settings=SETTINGS, exclude=()):
    return [segment for segment, _ in monolingual.text(folder, language, settings, exclude)]


def test_a_held_out_sentence_leaves_every_languages_text(tmp_path):
    """s3 is held out in en-de only; its French translation and its English must still go."""
    folder = corpus(tmp_path)
    assert ids(folder, "fr") == ["s1", "s4"]
    assert ids(folder, "de") == ["s1", "s2"]
    # English sits in every pair: each id once, none held out anywhere
    assert ids(folder, "en") == ["s1", "s2", "s4", "s6"]
    lines = [line for _, line in monolingual.text(folder, "fr", SETTINGS)]
    assert "Ouvrir le fichier" not in lines


def test_a_held_out_translation_under_another_id_goes_where_asked(tmp_path):
    folder = corpus(tmp_path)
    kept = MonolingualSettings(held_out_splits=["valid", "test"], drop_held_out_text=False)
    assert ids(folder, "fr", kept) == ["s1", "s4", "s6"]
    assert "s6" not in ids(folder, "fr")


def test_extra_excluded_ids_leave_every_language(tmp_path):
    """A chapter's fine-tuning ids (``--exclude-ids``) leave its pre-training text too."""
    folder = corpus(tmp_path)
    assert ids(folder, "fr", exclude=["s4"]) == ["s1"]
    assert ids(folder, "en", exclude=["s4", "s1"]) == ["s2", "s6"]


def test_indonesian_is_a_language_like_any_other(tmp_path):
    """Indonesian's code is ``id``: its text and its segment ids are separate files, so its
    held-out ids (s4) leave every language and its own text keeps its ids."""
    indonesian = [
        ("train", "id", "s1", "Save", "Simpan"),
        ("train", "id", "s3", "Open the file", "Buka berkas"),
        ("train", "id", "s7", "Quit", "Keluar"),
        ("test", "id", "s4", "Close", "Tutup"),
    ]
    folder = corpus(tmp_path, ROWS + indonesian)
    assert list(monolingual.text(folder, "id", SETTINGS)) == [("s1", "Simpan"), ("s7", "Keluar")]
    assert ids(folder, "fr") == ["s1"]
    assert ids(folder, "en") == ["s1", "s2", "s6", "s7"]


def test_a_corpus_without_segment_ids_is_refused(tmp_path):
    (tmp_path / "train.en-de.en").write_text("Save\n")
    with pytest.raises(monolingual.MonolingualError, match="no <split>"):
        ids(tmp_path, "de")


def test_a_corpus_of_the_old_layout_asks_for_a_rebuild(tmp_path):
    """Format 1 kept the ids in ``.id``: the reader names the rebuild, not a missing key."""
    for suffix, line in (("en", "Save"), ("de", "Speichern"), ("id", "s1")):
        (tmp_path / f"train.en-de.{suffix}").write_text(f"{line}\n")
    with pytest.raises(monolingual.MonolingualError, match="snakemake results/data/tiny_corpus"):
        ids(tmp_path, "de")


def test_the_verb_writes_aligned_text_ids_and_counts(tmp_path, capsys):
    folder = corpus(tmp_path)
    (tmp_path / "finetune.ids").write_text("s1\n")
    out = tmp_path / "mono"
    argv = ["data", "monolingual", "--corpus", str(folder), "--languages", "fr", "en"]
    argv += ["--out", str(out), "--exclude-ids", str(tmp_path / "finetune.ids")]
    argv += ["--held-out-splits", "valid", "test", "--drop-held-out-text", "true"]
    assert main([*argv, "--scale", "tiny"]) == 0, capsys.readouterr().err
    assert (out / "fr.txt").read_text(encoding="utf-8") == "Fermer\n"
    assert (out / "fr.id").read_text() == "s4\n"
    assert (out / "en.txt").read_text() == "Delete\nClose\nHi\n"
    metadata = json.loads((out / monolingual.METADATA).read_text())
    assert metadata["languages"]["fr"] == {
        "lines": 1,
        "excluded_id": 1,
        "held_out_id": 1,
        "held_out_text": 1,
    }
    assert metadata["excluded_ids"] == 1
    assert (out / "provenance.json").is_file()


def test_a_monolingual_dataset_passes_through_with_line_ids(tmp_path, capsys):
    """CC-100 (Chapter 4 at full), normalised as ``train.mono.<lang>``: no segment of it is
    held out anywhere, so every line is kept, with ``<lang>:<n>`` ids no pool id can match."""
    folder = tmp_path / "statmt_cc100"
    folder.mkdir()
    (folder / "train.mono.ja").write_text("猫が鳴く\n犬が走る\n", encoding="utf-8")
    (folder / "metadata.json").write_text('{"source_key": "statmt_cc100"}\n')
    assert ids(folder, "ja", exclude=["train-1.ja-en:0"]) == ["ja:0", "ja:1"]
    out = tmp_path / "mono"
    argv = ["data", "monolingual", "--corpus", str(folder), "--languages", "ja"]
    argv += ["--out", str(out), "--held-out-splits", "valid", "test"]
    argv += ["--drop-held-out-text", "true", "--scale", "full"]
    assert main(argv) == 0, capsys.readouterr().err
    assert (out / "ja.txt").read_text(encoding="utf-8") == "猫が鳴く\n犬が走る\n"
    assert (out / "ja.id").read_text() == "ja:0\nja:1\n"
