"""Every source format through fetch (loopback mirror, or hand placement) and its reader.

Each sample is written here, by hand, in the layout the source publishes (file and member
names, separators, markup); the sentences are our own.
"""

from __future__ import annotations

import dataclasses
import io
import json
import lzma
import tarfile
import zipfile

import pytest

from mlrep.data import download, readers, registry
from mlrep.data.download import DownloadError
from mlrep.data.validate import Filters
from tests.test_data_download import FAST, serve


def _tar(path, members: dict[str, str | bytes], mode: str = "w:gz") -> None:
    with tarfile.open(path, mode) as tar:
        for name, text in members.items():
            data = text.encode() if isinstance(text, str) else text
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _fetched(tmp_path, key, site_files, languages=None, unpin=False):
    """Serve `site_files` (path -> bytes-maker) on loopback and fetch `key` from there."""
    site = tmp_path / "site"
    for path, make in site_files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        make(site / path)
    dataset = registry.get(key)
    if unpin:  # the test's files are not the published ones whose md5 the registry pins
        files = tuple(
            dataclasses.replace(f, md5=None, sha256=None)
            for f in dataset.files
            if f.path in site_files
        )
        dataset = dataclasses.replace(dataset, files=files)
    raw = tmp_path / "raw"
    lock = registry.Lock(tmp_path / "lock.yaml")
    with serve(site) as server:
        download.fetch(dataset, raw, languages=languages, mirror=server.url, lock=lock, policy=FAST)
    return dataset, raw


def _text(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# --- BUCC -------------------------------------------------------------------------------------

BUCC_DE = "de-000001\tDer Hund schläft.\nde-000002\tEs regnet heute.\nde-000003\tWir gehen.\n"
BUCC_EN = "en-000001\tIt is raining today.\nen-000002\tThe dog is asleep.\n"
BUCC_GOLD = "de-000001\ten-000002\nde-000002\ten-000001\n"


def _bucc(path, de=BUCC_DE, en=BUCC_EN, gold=BUCC_GOLD):
    folder = "bucc2018/de-en/de-en.training"
    _tar(path, {f"{folder}.de": de, f"{folder}.en": en, f"{folder}.gold": gold}, "w:bz2")


def test_bucc_keeps_ids_beside_each_side_and_the_gold_pairs(tmp_path):
    dataset, raw = _fetched(
        tmp_path, "bucc_bucc2018", {"bucc2018-de-en.training-gold.tar.bz2": _bucc}, ["de"]
    )
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters())
    assert _text(out / "training.de-en.de") == [
        "Der Hund schläft.",
        "Es regnet heute.",
        "Wir gehen.",
    ]
    assert _text(out / "training.de-en.de.ids") == ["de-000001", "de-000002", "de-000003"]
    assert _text(out / "training.de-en.en.ids") == ["en-000001", "en-000002"]
    assert _text(out / "training.de-en.gold") == ["de-000001\ten-000002", "de-000002\ten-000001"]
    info = meta["pairs"]["training.de-en"]
    assert info["kind"] == "comparable" and info["gold_pairs"] == 2
    assert info["sides"]["de"]["lines"] == 3 and info["sides"]["en"]["lines"] == 2
    assert sorted(info["files"]) == sorted(
        f"training.de-en.{s}" for s in ("de", "de.ids", "en", "en.ids", "gold")
    )


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ({"en": "en-000001 no tab here\n"}, r"training\.en:1: 1 column\(s\), expected 2"),
        ({"gold": "de-000001\ten-000099\n"}, r"training\.gold:1: gold id en-000099 is not among"),
        ({"de": "de-1\tEins\nde-1\tZwei\n"}, r"training\.de:2: id de-1 appears twice"),
    ],
)
def test_bucc_bad_columns_unknown_gold_ids_and_repeated_ids_stop(tmp_path, parts, message):
    def make(path):
        _bucc(path, **parts)

    dataset, raw = _fetched(
        tmp_path, "bucc_bucc2018", {"bucc2018-de-en.training-gold.tar.bz2": make}, ["de"]
    )
    with pytest.raises(readers.ReaderError, match=message):
        readers.normalize(dataset, raw, tmp_path / "out", None, Filters())
    assert not (tmp_path / "out").exists()


# --- WMT SGML ---------------------------------------------------------------------------------


def _sgm(lang: str, docs: dict[str, list[str]], role: str = "src") -> str:
    body = [f'<{role}set setid="newstest" srclang="any" trglang="{lang}">']
    for docid, segs in docs.items():
        body.append(f'<doc sysid="ref" docid="{docid}" genre="news" origlang="de">')
        body.append("<p>")
        body += [f'<seg id="{i}">{text}</seg>' for i, text in enumerate(segs, 1)]
        body += ["</p>", "</doc>"]
    return "\n".join([*body, f"</{role}set>", ""])


WMT_DE = {"d1": ["Guten  Morgen &amp; willkommen.", "Zwei &quot;Wörter&quot;."], "d2": ["Ende."]}
WMT_EN = {"d1": ["Good morning &amp; welcome.", 'Two "words".'], "d2": ["The end."]}


def _wmt(path, de=None, en=None):
    _tar(
        path,
        {
            "test/newstest2014-deen-src.de.sgm": de or _sgm("de", WMT_DE),
            "test/newstest2014-deen-ref.en.sgm": en or _sgm("en", WMT_EN, "ref"),
            "test/newstest2009-src.de.sgm": _sgm("de", {"a": ["Hallo."]}),
            "test/newstest2009-src.fr.sgm": _sgm("fr", {"a": ["Bonjour."]}),
            "test/newstest2009-src.en.sgm": _sgm("en", {"a": ["Hello."]}),
            "test/README": "not a test set\n",
        },
    )


def test_wmt_sgml_pairs_source_and_reference_and_reads_multiway_sets(tmp_path):
    dataset, raw = _fetched(tmp_path, "sacrebleu_wmt14", {"test-filtered.tgz": _wmt}, unpin=True)
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters())
    assert _text(out / "newstest2014.de-en.de") == [
        "Guten Morgen & willkommen.",
        'Zwei "Wörter".',
        "Ende.",
    ]
    assert _text(out / "newstest2014.de-en.en")[1] == 'Two "words".'
    assert meta["pairs"]["newstest2014.de-en"]["entities_decoded"] == 3
    assert meta["pairs"]["newstest2009.multiway"]["languages"] == ["de", "en", "fr"]
    assert _text(out / "newstest2009.multiway.fr") == ["Bonjour."]
    only = readers.normalize(dataset, raw, tmp_path / "only", ["en", "fr"], Filters())
    assert list(only["pairs"]) == ["newstest2009.multiway"]
    assert only["pairs"]["newstest2009.multiway"]["languages"] == ["en", "fr"]


@pytest.mark.parametrize(
    ("de", "en", "message"),
    [
        (
            _sgm("de", WMT_DE).replace("Ende.</seg>", "Ende."),
            None,
            r"newstest2014-deen-src\.de\.sgm:10: <seg> is not closed on its line",
        ),
        (
            None,
            _sgm("en", {"d1": WMT_EN["d1"], "d3": ["The end."]}, "ref"),
            r"ref\.en\.sgm:10: has doc d3 seg 1 where .*src\.de\.sgm:10 has doc d2 seg 1",
        ),
        (
            None,
            _sgm("en", {"d1": WMT_EN["d1"]}, "ref"),
            r"ref\.en\.sgm: ends where .*src\.de\.sgm:10 has doc d2 seg 1",
        ),
        (
            _sgm("de", WMT_DE).replace("</doc>\n<doc", "<doc", 1),
            None,
            r"src\.de\.sgm:7: <doc> opens before the one opened at line 2 is closed",
        ),
        (
            _sgm("de", WMT_DE).encode().replace(b"Ende", b"End\xe9"),
            None,
            r"src\.de\.sgm:10: invalid UTF-8",
        ),
    ],
)
def test_malformed_sgml_stops_with_file_line_and_fix(tmp_path, de, en, message):
    def make(path):
        _wmt(path, de, en)

    dataset, raw = _fetched(tmp_path, "sacrebleu_wmt14", {"test-filtered.tgz": make}, unpin=True)
    with pytest.raises(readers.ReaderError, match=message):
        readers.normalize(dataset, raw, tmp_path / "out", None, Filters())


# --- IWSLT XML and train.tags -----------------------------------------------------------------


def _iwslt_xml(talks: dict[str, list[str]], lang: str) -> str:
    body = ['<?xml version="1.0" encoding="UTF-8"?>', "<mteval>", f'<srcset srclang="{lang}">']
    for talk, segs in talks.items():
        body += [f'<doc docid="{talk}" genre="lectures">', f"<talkid>{talk}</talkid>"]
        body += [f"<title>Talk {talk}</title>"]
        body += [f'<seg id="{i}"> {text} </seg>' for i, text in enumerate(segs, 1)]
        body.append("</doc>")
    return "\n".join([*body, "</srcset>", "</mteval>", ""])


TAGS_EN = (
    "<url>http://example.org/talk/1</url>\n<keywords>talks, ideas</keywords>\n"
    "<speaker>A Speaker</speaker>\n<talkid>1</talkid>\n<title>Ideas</title>\n"
    "We share ideas here.\nThank you.\n"
)
TAGS_FR = (
    "<url>http://example.org/talk/1</url>\n<keywords>conférences</keywords>\n"
    "<speaker>A Speaker</speaker>\n<talkid>1</talkid>\n<title>Idées</title>\n"
    " Nous partageons des idées ici.\nMerci.\n"
)


def test_iwslt_xml_pairs_sides_across_direction_archives_and_drops_train_tag_lines(tmp_path):
    def en_fr(path):
        _tar(
            path,
            {
                "en-fr/IWSLT17.TED.tst2017.en-fr.en.xml": _iwslt_xml(
                    {"7": ["Hello &amp; welcome.", "Bye."]}, "en"
                ),
                "en-fr/train.tags.en-fr.en": TAGS_EN,
                "en-fr/train.tags.en-fr.fr": TAGS_FR,
            },
        )

    def fr_en(path):
        _tar(
            path,
            {
                "fr-en/IWSLT17.TED.tst2017.fr-en.fr.xml": _iwslt_xml(
                    {"7": ["Bonjour et bienvenue.", "Au revoir."]}, "fr"
                )
            },
        )

    site = {"en/fr/en-fr.tgz": en_fr, "fr/en/fr-en.tgz": fr_en}
    dataset, raw = _fetched(tmp_path, "sacrebleu_iwslt17_tst2017", site, unpin=True)
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, ["en", "fr"], Filters())
    assert sorted(meta["pairs"]) == ["train.en-fr", "tst2017.en-fr"]
    assert _text(out / "tst2017.en-fr.en") == ["Hello & welcome.", "Bye."]
    assert _text(out / "tst2017.en-fr.fr") == ["Bonjour et bienvenue.", "Au revoir."]
    assert _text(out / "train.en-fr.en") == ["We share ideas here.", "Thank you."]
    assert _text(out / "train.en-fr.fr") == ["Nous partageons des idées ici.", "Merci."]
    with pytest.raises(readers.ReaderError, match="found no data for languages"):
        readers.normalize(dataset, raw, tmp_path / "none", ["ja"], Filters())
    broken = _iwslt_xml({"7": ["Bonjour.", "Au revoir."]}, "fr").replace("</doc>\n", "")
    _tar(raw / "fr/en/fr-en.tgz", {"fr-en/IWSLT17.TED.tst2017.fr-en.fr.xml": broken})
    with pytest.raises(
        readers.ReaderError, match=r"fr\.xml: <doc> opened at line 4 is never closed"
    ):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


# --- OPUS-100 ---------------------------------------------------------------------------------


def _opus100(path):
    top = "opus-100-corpus/v1.0"
    members = {}
    for pair, rows in {
        "supervised/de-en": [("Ja.", "Yes."), ("Nein.", "No.")],
        "supervised/en-fr": [("Thanks.", "Merci.")],
        "zero-shot/de-fr": [("Danke.", "Merci.")],
        "zero-shot/de-nl": [("Hallo.", "Hallo.")],
    }.items():
        code = pair.split("/")[1]
        l1, l2 = code.split("-")
        splits = ("test",) if pair.startswith("zero") else ("train", "dev", "test")
        for split in splits:
            members[f"{top}/{pair}/opus.{code}-{split}.{l1}"] = "".join(a + "\n" for a, _ in rows)
            members[f"{top}/{pair}/opus.{code}-{split}.{l2}"] = "".join(b + "\n" for _, b in rows)
    members[f"{top}/README"] = "release notes\n"
    _tar(path, members)


def test_opus100_reads_the_supervised_or_zero_shot_part_of_one_archive(tmp_path):
    dataset, raw = _fetched(tmp_path, "opus_opus100", {"opus-100-corpus-v1.0.tar.gz": _opus100})
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, ["de"], Filters())
    assert sorted(meta["pairs"]) == ["dev.de-en", "test.de-en", "train.de-en"]
    assert _text(out / "train.de-en.en") == ["Yes.", "No."]
    zero = dataclasses.replace(registry.get("opus_opus100_zeroshot"), files=dataset.files)
    meta = readers.normalize(zero, raw, tmp_path / "zero", ["de", "fr"], Filters())
    assert list(meta["pairs"]) == ["test.de-fr"]
    with pytest.raises(
        readers.ReaderError, match=r"\[.ru.\] of opus_opus100_zeroshot are in no pair"
    ):
        readers.normalize(zero, raw, tmp_path / "ru", ["de", "ru"], Filters())


# --- ASPEC (manual) ---------------------------------------------------------------------------


def test_aspec_placed_files_are_verified_and_their_fields_split(tmp_path):
    dataset = registry.get("manual_aspec_jc")
    raw = tmp_path / "raw"
    with pytest.raises(DownloadError, match=r"must be obtained by hand.*ASPEC-JC/train/train.txt"):
        download.fetch(dataset, raw, lock=registry.Lock(tmp_path / "lock.yaml"))
    rows = {
        "train/train.txt": "1 ||| 猫が寝ている。 ||| 猫在睡觉。\n2 ||| 雨です。 ||| 下雨了。\n",
        "dev/dev.txt": "3 ||| はい。 ||| 是。\n",
        "devtest/devtest.txt": "4 ||| いいえ。 ||| 不是。\n",
        "test/test.txt": "5 ||| 終わり。 ||| 结束。\n",
    }
    for path, text in rows.items():
        (raw / "ASPEC-JC" / path).parent.mkdir(parents=True, exist_ok=True)
        (raw / "ASPEC-JC" / path).write_text(text, encoding="utf-8")
    download.fetch(dataset, raw, lock=registry.Lock(tmp_path / "lock.yaml"))
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters())
    assert sorted(meta["pairs"]) == ["dev.ja-zh", "devtest.ja-zh", "test.ja-zh", "train.ja-zh"]
    assert _text(out / "train.ja-zh.ja") == ["猫が寝ている。", "雨です。"]
    assert _text(out / "train.ja-zh.zh") == ["猫在睡觉。", "下雨了。"]
    (raw / "ASPEC-JC/dev/dev.txt").write_text("3 ||| はい。\n", encoding="utf-8")
    (raw / "fetched.json").write_text(
        json.dumps({"files": json.loads((raw / "fetched.json").read_text())["files"]})
    )
    with pytest.raises(readers.ReaderError, match=r"dev\.txt:1: 2 column\(s\), expected 3"):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


# --- CC-100 and other monolingual streams -----------------------------------------------------


def test_monolingual_xz_is_streamed_capped_and_keeps_document_breaks_on_request(tmp_path):
    text = "Erster Satz.\nZweiter Satz.\n\nNeues Dokument.\n\nDrittes.\nVierter.\nFünfter.\n"

    def make(path):
        path.write_bytes(lzma.compress(text.replace("Satz", "文").encode()))

    dataset, raw = _fetched(tmp_path, "statmt_cc100", {"ja.txt.xz": make}, ["ja"])
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters(max_lines=6))
    info = meta["pairs"]["train.mono"]
    assert info["kind"] == "monolingual" and info["documents"] == {"ja": 3}
    assert _text(out / "train.mono.ja") == [
        "Erster 文.",
        "Zweiter 文.",
        "Neues Dokument.",
        "Drittes.",
    ]
    assert info["sides"]["ja"]["filtered"]["empty"] == 2
    kept = readers.normalize(dataset, raw, tmp_path / "kept", None, Filters(drop_empty=False))
    assert _text(tmp_path / "kept/train.mono.ja")[2] == ""
    assert kept["pairs"]["train.mono"]["sides"]["ja"]["lines"] == 8


def test_a_truncated_xz_stream_is_a_clear_error(tmp_path):
    def make(path):
        path.write_bytes(lzma.compress(b"line\n" * 1000)[:-20])

    dataset, raw = _fetched(tmp_path, "statmt_cc100", {"ja.txt.xz": make}, ["ja"])
    with pytest.raises(readers.ReaderError, match=r"ja\.txt\.xz:\d+: truncated or corrupt"):
        readers.normalize(dataset, raw, tmp_path / "out", None, Filters())


# --- MUSE dictionaries ------------------------------------------------------------------------


def test_muse_dictionary_keeps_every_translation_of_a_word(tmp_path):
    def make(path):
        path.write_text("house haus\nhouse gebäude\nthe\tdie\nthe der\n", encoding="utf-8")

    dataset, raw = _fetched(tmp_path, "muse_dictionaries", {"en-de.txt": make}, ["de"])
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters())
    assert _text(out / "dict.en-de.en") == ["house", "house", "the", "the"]
    assert _text(out / "dict.en-de.de") == ["haus", "gebäude", "die", "der"]
    info = meta["pairs"]["dict.en-de"]
    assert info["kind"] == "dictionary" and info["source_words"] == 2 and info["lines"] == 4
    (raw / "en-de.txt").write_text("house haus\nhigh school schule\n", encoding="utf-8")
    with pytest.raises(readers.ReaderError, match=r"en-de\.txt:2: 3 column\(s\), expected 2"):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


# --- plain split files ------------------------------------------------------------------------


def test_plain_split_files_become_pairs_and_a_missing_side_is_named(tmp_path):
    def lines(*rows):
        return lambda path: path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")

    site = {
        "train.en": lines("Hello.", "Thanks."),
        "train.vi": lines("Xin chào.", "Cảm ơn."),
        "tst2012.en": lines("Yes."),
        "tst2012.vi": lines("Vâng."),
        "tst2013.en": lines("No."),
        "tst2013.vi": lines("Không."),
    }
    dataset, raw = _fetched(tmp_path, "stanford_iwslt15_envi", site)
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters())
    assert sorted(meta["pairs"]) == ["train.en-vi", "tst2012.en-vi", "tst2013.en-vi"]
    assert _text(out / "train.en-vi.vi") == ["Xin chào.", "Cảm ơn."]
    (raw / "tst2013.vi").unlink()
    with pytest.raises(
        readers.ReaderError, match=r"split 'tst2013' of en-vi has files for \['en'\]"
    ):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


def test_pair_folders_of_a_manual_release_become_pairs(tmp_path):
    raw = tmp_path / "raw"
    for pair, rows in {"en-de": ("Hi.", "Hallo."), "en-fr": ("Hi.", "Salut.")}.items():
        for lang, text in zip(pair.split("-"), rows, strict=True):
            (raw / pair).mkdir(parents=True, exist_ok=True)
            (raw / pair / f"train.{lang}").write_text(text + "\n", encoding="utf-8")
    dataset = registry.get("manual_mrasp_pc32")
    download.fetch(dataset, raw, lock=registry.Lock(tmp_path / "lock.yaml"))
    meta = readers.normalize(dataset, raw, tmp_path / "out", ["fr"], Filters())
    assert list(meta["pairs"]) == ["train.en-fr"]
    assert _text(tmp_path / "out/train.en-fr.fr") == ["Salut."]


# --- TED talks TSV, ALT, Tatoeba Challenge ----------------------------------------------------


def test_ted_talks_tsv_keeps_rows_translated_into_every_chosen_language(tmp_path):
    rows = [
        "talk_name\ten\tde\tja\tzh",
        "talk_a\tHello .\tHallo .\tこんにちは 。\t你好 。",
        "talk_a\tOnly English .\t__NULL__\tそれ 。\t__NULL__",
        "talk_b\tBye .\tTschüss .\tさようなら 。\t再见 。",
    ]

    def make(path):
        _tar(path, {"all_talks_test.tsv": "\n".join(rows) + "\n", "all_talks_dev.tsv": rows[0]})

    dataset, raw = _fetched(tmp_path, "phontron_ted_talks", {"ted_talks.tar.gz": make})
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, ["en", "ja"], Filters())
    assert _text(out / "test.multiway.ja") == ["こんにちは 。", "それ 。", "さようなら 。"]
    meta = readers.normalize(dataset, raw, out, ["en", "de", "zh"], Filters(drop_empty=False))
    assert meta["pairs"]["test.multiway"]["untranslated_rows"] == 1
    assert _text(out / "test.multiway.zh") == ["你好 。", "再见 。"]
    with pytest.raises(readers.ReaderError, match=r"\['ko'\] .* are not columns of"):
        readers.normalize(dataset, raw, tmp_path / "ko", ["en", "ko"], Filters())


def test_alt_sentences_are_paired_by_id_and_split_by_document(tmp_path):
    data = {
        "en": "SNT.1.1\tThe river is wide.\nSNT.1.2\tIt rains.\nSNT.2.1\tGood night.\n",
        "my": "SNT.1.1\tမြစ်ကျယ်သည်။\nSNT.1.2\tမိုးရွာသည်။\nSNT.2.1\tညနေကောင်း။\n",
    }

    def zipped(path):
        with zipfile.ZipFile(path, "w") as zf:
            for lang, text in data.items():
                zf.writestr(f"ALT-Parallel-Corpus-20191206/data_{lang}.txt", text)

    def urls(doc):
        return lambda path: path.write_text(f"URL.{doc}\thttp://example.org/{doc}\n")

    site = {
        "ALT-Parallel-Corpus-20191206.zip": zipped,
        "URL-train.txt": urls(1),
        "URL-dev.txt": urls(2),
        "URL-test.txt": urls(3),
    }
    dataset, raw = _fetched(tmp_path, "nict_alt", site)
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters(drop_empty=False))
    assert _text(out / "train.en-my.en") == ["The river is wide.", "It rains."]
    assert _text(out / "dev.en-my.my") == ["ညနေကောင်း။"]
    assert meta["pairs"]["test.en-my"]["lines"] == 0
    data["my"] = data["my"].replace("SNT.1.2", "SNT.1.9")
    (raw / "ALT-Parallel-Corpus-20191206.zip").unlink()
    zipped(raw / "ALT-Parallel-Corpus-20191206.zip")
    with pytest.raises(readers.ReaderError, match=r"data_en\.txt:2, .*data_my\.txt:2: sentence"):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


def test_tatoeba_challenge_pairs_keep_their_id_column_and_stream_gzip(tmp_path):
    import gzip

    base = "data/release/v2021-08-07/deu-eng"
    raw = tmp_path / "raw"
    raw.mkdir()
    _tar(
        raw / "deu-eng.tar",
        {
            f"{base}/train.src.gz": gzip.compress(b"Hallo.\nDanke.\nBitte.\n"),
            f"{base}/train.trg.gz": gzip.compress(b"Hello.\nThanks.\nPlease.\n"),
            f"{base}/train.id.gz": gzip.compress(b"deu\teng\ngsw\teng\ndeu\teng\n"),
            f"{base}/test.src": "Ja.\n",
            f"{base}/test.trg": "Yes.\n",
            f"{base}/test.id": "deu\teng\n",
        },
        "w",
    )
    dataset = registry.get("manual_tatoeba_challenge_v20210807")
    download.fetch(dataset, raw, lock=registry.Lock(tmp_path / "lock.yaml"))
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters(max_lines=2))
    assert sorted(meta["pairs"]) == ["test.deu-eng", "train.deu-eng"]
    assert _text(out / "train.deu-eng.deu") == ["Hallo.", "Danke."]
    assert _text(out / "train.deu-eng.id") == ["deu\teng", "gsw\teng"]
    assert meta["pairs"]["train.deu-eng"]["languages"] == ["deu", "eng"]


# --- labelled classification sets (manual) ----------------------------------------------------


def _place(tmp_path, key, files: dict[str, str]):
    raw = tmp_path / "raw"
    for path, text in files.items():
        (raw / path).parent.mkdir(parents=True, exist_ok=True)
        (raw / path).write_text(text, encoding="utf-8")
    dataset = registry.get(key)
    dataset = dataclasses.replace(dataset, files=tuple(f for f in dataset.files if f.path in files))
    download.fetch(dataset, raw, lock=registry.Lock(tmp_path / "lock.yaml"))
    return dataset, raw


def test_mldoc_documents_keep_their_labels_line_by_line(tmp_path):
    files = {
        "english.train.1000": "CCAT\tShares rose.  Profits too.\nGCAT\tThe vote was held.\n",
        "german.train.1000": "ECAT\tDie Zinsen steigen.\n",
        "english.dev": "MCAT\tGold fell.\n",
    }
    dataset, raw = _place(tmp_path, "manual_mldoc", files)
    out = tmp_path / "out"
    meta = readers.normalize(dataset, raw, out, None, Filters())
    assert sorted(meta["pairs"]) == ["dev.labelled", "train1000.labelled"]
    assert _text(out / "train1000.labelled.en") == [
        "Shares rose. Profits too.",
        "The vote was held.",
    ]
    assert _text(out / "train1000.labelled.en.label") == ["CCAT", "GCAT"]
    info = meta["pairs"]["train1000.labelled"]
    assert info["kind"] == "labelled" and info["sides"]["de"]["lines"] == 1
    (raw / "english.dev").write_text("MCAT Gold fell.\n")
    with pytest.raises(readers.ReaderError, match=r"english\.dev:1: 1 column\(s\), expected 2"):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


def test_cls_reviews_become_binary_labels(tmp_path):
    review = (
        "<item>\n<category>Books</category>\n<rating>{rating}</rating>\n"
        "<title>A title</title>\n<text>{text}\nsecond line</text>\n</item>\n"
    )
    text = review.format(rating="5.0", text="Great &amp; long") + review.format(
        rating="1.0", text="Dull"
    )
    path = "cls-acl10-unprocessed/jp/books/train.review"
    dataset, raw = _place(tmp_path, "manual_amazon_cls10", {path: text})
    out = tmp_path / "out"
    readers.normalize(dataset, raw, out, ["ja"], Filters())
    assert _text(out / "train.books.ja") == ["Great & long second line", "Dull second line"]
    assert _text(out / "train.books.ja.label") == ["positive", "negative"]
    (raw / path).write_text(text.replace("</item>\n", "", 1))
    with pytest.raises(readers.ReaderError, match=r"train\.review:7: <item> inside the <item>"):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


def test_marc_json_lines_give_stars_and_review_bodies(tmp_path):
    rows = [
        {"review_id": "r1", "stars": 4, "review_body": "Works well.", "language": "de"},
        {"review_id": "r2", "stars": 1, "review_body": "Broke.", "language": "de"},
    ]
    path = "test/dataset_de_test.json"
    text = "".join(json.dumps(r) + "\n" for r in rows)
    dataset, raw = _place(tmp_path, "manual_amazon_marc", {path: text})
    out = tmp_path / "out"
    readers.normalize(dataset, raw, out, None, Filters())
    assert _text(out / "test.labelled.de.label") == ["4", "1"]
    (raw / path).write_text(text + '{"stars": 5}\n')
    with pytest.raises(readers.ReaderError, match=r"dataset_de_test\.json:3: not a MARC review"):
        readers.normalize(dataset, raw, tmp_path / "bad", None, Filters())


# Fetched and checksummed but not normalised: no reader parses their format yet (the registry
# entry's notes say so; the dataset_normalize rule only matches keys with a reader): a raw
# dictionary release, and mBART-25's model archive (`mlrep nmt mbart-init` reads it extracted).
FETCH_ONLY = {"mrasp2_synonym_dict", "mbart_cc25"}


def test_every_available_registry_entry_has_a_known_reader():
    entries = registry.load()
    missing = [
        key
        for key, dataset in entries.items()
        if dataset.access != "unavailable"
        and key not in FETCH_ONLY
        and dataset.reader not in readers.READERS
    ]
    assert missing == [], missing
    assert all(entries[key].reader is None for key in FETCH_ONLY)


def test_bucc_reaches_the_workflow_through_fetch_and_normalize_with_a_test_lock(workdir):
    """A trust-on-first-use key: the test's own lock records (and then checks) its sha256."""
    from mlrep.data.registry import DEFAULT_LOCK
    from mlrep.io import sha256_file
    from tests.conftest import snakemake

    site = workdir / "site"
    site.mkdir()
    _bucc(site / "bucc2018-de-en.training-gold.tar.bz2")
    lock = workdir / "test-lock.yaml"
    package_lock = DEFAULT_LOCK.read_text()
    target = "results/data/bucc_bucc2018"
    with serve(site) as server:
        override = {
            "data": {
                "download": {
                    "mirrors": {"bucc_bucc2018": server.url},
                    "backoff": 0,
                    "lock": str(lock),
                },
                "datasets": {"bucc_bucc2018": {"languages": ["de"], "max_lines": 2}},
            }
        }
        (workdir / "override.yaml").write_text(json.dumps(override))
        args = [target, "--cores", "1", "--configfile", "override.yaml"]
        result = snakemake(workdir, *args)
        assert result.returncode == 0, result.stderr[-3000:]
        again = snakemake(workdir, *args)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    recorded = registry.Lock(lock).entries("bucc_bucc2018")
    archive = site / "bucc2018-de-en.training-gold.tar.bz2"
    assert recorded == {archive.name: sha256_file(archive)}
    assert DEFAULT_LOCK.read_text() == package_lock
    out = workdir / target
    assert _text(out / "training.de-en.de") == ["Der Hund schläft.", "Es regnet heute."]
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["filters"]["max_lines"] == 2 and meta["pairs"]["training.de-en"]["gold_pairs"] == 2
