"""The registry covers every dataset the specs name, with honest checksums."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from mlrep import chapters, config_checks
from mlrep import config as cfg
from mlrep.cli import main
from mlrep.data import registry
from tests import tatoeba_helpers
from tests.conftest import REPO

# One key per corpus or benchmark named in a spec's "Data" section.
SPEC_DATASETS = {
    "laser_tatoeba_v1", "xtreme_tatoeba36", "bucc_bucc2018", "flores_flores101",
    "flores_flores200", "opus_paracrawl_v5", "manual_mldoc", "manual_amazon_cls10",
    "manual_amazon_marc", "opus_unpc_v1", "opus_europarl_v8", "opus_globalvoices_v2018q4",
    "opus_newscommentary_v16", "opus_opensubtitles_v2018", "opus_ted2020_v1",
    "opus_wikimatrix_v1", "opus_tatoeba_v2023", "opus_qed_v2", "opus_gnome_v1",
    "opus_bibleuedin_v1", "unavailable_labse_train", "opus_opus100", "opus_opus100_zeroshot",
    "wit3_iwslt2017_multilingual", "wit3_iwslt2017_bilingual", "stanford_iwslt15_envi",
    "phontron_ted_talks", "statmt_europarl_v7", "sacrebleu_wmt09", "sacrebleu_wmt13",
    "sacrebleu_wmt14", "sacrebleu_wmt16", "sacrebleu_wmt16_dev", "sacrebleu_wmt17",
    "sacrebleu_wmt18", "sacrebleu_wmt18_dev", "sacrebleu_wmt19", "sacrebleu_wmt19_dev",
    "sacrebleu_wmt20", "sacrebleu_iwslt17_tst2017", "sacrebleu_iwslt17_tst2015",
    "sacrebleu_iwslt17_tst2016", "manual_wmt18_en_et_train", "manual_wmt19_en_kk_train",
    "manual_wmt16_en_ro_train", "manual_wmt17_en_tr_train", "nict_alt", "manual_aspec_je",
    "manual_aspec_jc", "manual_kyoto_wiki_jc", "jungyeul_news_ek", "statmt_cc100",
    "manual_mrasp_pc32", "manual_newscrawl_mc24", "muse_dictionaries",
    "manual_tatoeba_challenge_v20210807", "manual_iwslt17_mted_test", "manual_iwslt14_en_nl_test",
    "mrasp2_synonym_dict", "manual_wmt19_commoncrawl_mono", "mbart_cc25",
}  # fmt: skip


@pytest.fixture(scope="module")
def entries():
    return registry.load()


def test_registry_lists_every_spec_dataset_with_metadata(entries):
    assert set(entries) == SPEC_DATASETS
    chapters = set(cfg.load_yaml(REPO / "params.yaml")["chapters"])
    for dataset in entries.values():
        assert dataset.licence and dataset.citation and dataset.size and dataset.languages
        assert set(dataset.chapters) <= chapters, dataset.key
    assert {c for d in entries.values() for c in d.chapters} == chapters  # every chapter has data


def test_licence_gated_sets_are_manual(entries):
    for key in ("manual_aspec_je", "manual_aspec_jc", "manual_mldoc", "manual_amazon_cls10"):
        assert entries[key].access == "manual" and entries[key].manual


def test_tatoeba_pins_every_file_of_the_laser_release(entries):
    # the pins themselves are checked against a copy of LASER's data/tatoeba/v1 by fetching
    # from it: mlrep data fetch laser_tatoeba_v1 --mirror file://<copy>/ --languages all ...
    dataset = entries["laser_tatoeba_v1"]
    assert len(dataset.files) == 224 and len(dataset.languages) == 112
    assert all(spec.sha256 and spec.size for spec in dataset.files)
    assert {f.path for f in entries["xtreme_tatoeba36"].files} <= {f.path for f in dataset.files}


def test_extra_entries_join_the_registry_under_keys_of_their_own(tmp_path, tatoeba_registry):
    joined = registry.load(tatoeba_registry)
    assert set(joined) == SPEC_DATASETS | {tatoeba_helpers.KEY}
    assert joined[tatoeba_helpers.KEY].reader == "tatoeba"
    data = yaml.safe_load(tatoeba_registry.read_text(encoding="utf-8"))
    data["datasets"]["laser_tatoeba_v1"] = data["datasets"].pop(tatoeba_helpers.KEY)
    (tmp_path / "clash.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(registry.RegistryError, match=r"\['laser_tatoeba_v1'\] are keys of the"):
        registry.load(tmp_path / "clash.yaml")
    with pytest.raises(registry.RegistryError, match="cannot read these extra registry entries"):
        registry.load(tmp_path / "missing.yaml")


def test_sacrebleu_md5s_match_sacrebleu(entries):
    from sacrebleu.dataset import DATASETS

    dataset = entries["sacrebleu_wmt14"]
    assert [dataset.url(f) for f in dataset.files] == DATASETS["wmt14"].data
    assert [f.md5 for f in dataset.files] == DATASETS["wmt14"].md5
    # every md5 in the registry is the one sacrebleu publishes for that URL, and every file
    # sacrebleu publishes a sum for carries it (an added file without one is trust-on-first-use)
    published = {u: md5 for d in DATASETS.values() for u, md5 in zip(d.data, d.md5, strict=True)}
    checked = 0
    for dataset in entries.values():
        for spec in dataset.files:
            if dataset.base_url and dataset.url(spec) in published:
                assert spec.md5 == published[dataset.url(spec)], (dataset.key, spec.path)
                checked += 1
            elif spec.md5:
                pytest.fail(f"{dataset.key}/{spec.path}: md5 that sacrebleu does not publish")
    assert checked >= 30


def test_mixed_pins_say_how_many_files_are_pinned(entries, tmp_path):
    lock = registry.Lock(tmp_path / "lock.yaml")
    tst2015 = entries["sacrebleu_iwslt17_tst2015"]  # sacrebleu's six archives + the en-ja one
    assert registry.checksum_status(tst2015, lock) == "6 pinned + trust-on-first-use (0/1)"
    lock.record(tst2015.key, "en/ja/en-ja.tgz", "0" * 64)
    assert registry.checksum_status(tst2015, lock) == "6 pinned + trust-on-first-use (1/1)"


def test_every_entry_has_licence_citation_and_a_checksum_status(entries, tmp_path):
    lock = registry.Lock(tmp_path / "lock.yaml")
    status = re.compile(
        r"^(sha256 pinned \(\d+ files\)|md5 pinned by sacrebleu \(\d+ files\)|not public|"
        r"(\d+ pinned \+ )?(trust-on-first-use|manual, locked on placement) "
        r"\((\d+/\d+|\d+ files)\))$"
    )
    for dataset in entries.values():
        assert dataset.licence.strip() and dataset.citation.strip(), dataset.key
        assert status.match(registry.checksum_status(dataset, lock)), dataset.key
        if dataset.access == "download":
            assert dataset.files, dataset.key  # a download entry says what it downloads


# Folders under results/data/ that are no registry dataset: the embedded gettext corpus.
NOT_IN_REGISTRY = {"tiny_corpus"}


def _dataset_fields(resolved):
    """The params values that name a results/data/<key> folder (`mlrep.config` checks each one
    names a dataset) and the per-dataset data blocks."""
    yield from (value for _, value in config_checks.dataset_references(resolved))
    yield from resolved["data"]["datasets"]
    yield from resolved["data"]["download"]["mirrors"]


def _keys(node):
    """Every mapping key of a YAML document, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item)


def test_every_dataset_key_the_workflow_reads_is_in_the_registry(entries):
    params = cfg.load_yaml(REPO / "params.yaml")
    scales = cfg.scale_names(cfg.load_yaml(cfg.DEFAULT_SCHEMA))
    named = set()
    for scale in scales:
        named |= set(_dataset_fields(cfg.resolve(params, scale, scales)))
    assert named - NOT_IN_REGISTRY - set(entries) == set()
    # anything shaped like a key of a registry importer, anywhere in the params (every scale
    # block, comments too) or the rules, so a chapter added later is covered without a list
    importers = {d.importer for d in entries.values()}
    # a YAML key (`bucc_tune:`, a setting of the BUCC protocol) counts only where it is a
    # registry key (`laser_tatoeba_v1:` under data.stand_ins): settings share the prefixes
    token = re.compile(r"(?<![A-Za-z0-9_])([a-z0-9]+_[a-z0-9_]+)(?![a-z0-9_])(\s*:)?")
    sources = [REPO / "params.yaml", REPO / "Snakefile", *(REPO / "workflow").rglob("*.smk")]
    # a setting's name (`mbart_pretrain`, Chapter 5's stand-in) is no dataset key, wherever
    # it is written, unless it also is one
    settings = set(_keys(params)) - set(entries)
    # nor is a name the workflow defines: a rule (`mrasp2_data`; mRASP2 is also the importer
    # of its synonym dictionaries) or an import alias
    defined = {
        name
        for path in sources
        for match in re.findall(r"^rule (\w+)|\bas (\w+)", path.read_text("utf-8"), re.M)
        for name in match
        if name
    }
    found = {
        (path.name, key)
        for path in sources
        for key, colon in token.findall(path.read_text("utf-8"))
        if key.split("_", 1)[0] in importers
        and not (colon and key not in entries)
        and key not in settings | defined
    }
    assert {key for _, key in found} >= {"laser_tatoeba_v1", "opus_opus100", "manual_mldoc"}
    assert {(name, key) for name, key in found if key not in entries} == set()
    assert named - NOT_IN_REGISTRY <= {key for _, key in found}


def test_spec_test_sets_are_tagged_with_their_chapters(entries):
    def keys(chapter):
        return {k for k, d in entries.items() if chapter in d.chapters}

    # Chapter 5: IWSLT17 en-ja dev tst2015 / test tst2016; en-it and en-nl from the multilingual
    # task (training, dev2010/tst2010) and its 2017 test release
    assert keys("ch5_wordcl") >= {
        "sacrebleu_iwslt17_tst2015", "sacrebleu_iwslt17_tst2016", "wit3_iwslt2017_bilingual",
        "wit3_iwslt2017_multilingual", "manual_iwslt17_mted_test",
    }  # fmt: skip
    assert {f.lang for f in entries["sacrebleu_iwslt17_tst2016"].select(["ja"])} == {"ja"}
    assert {f.lang for f in entries["wit3_iwslt2017_bilingual"].files} == {"ja"}
    # mRASP2: supervised WMT sets, En-Nl iwslt14, En-Pt OPUS-100, En-Pl wmt20, zero-shot,
    # Tatoeba, Ted-M, MUSE and the synonym dictionaries built from them
    assert keys("mrasp2") >= {
        "sacrebleu_wmt09", "sacrebleu_wmt13", "sacrebleu_wmt14", "sacrebleu_wmt16",
        "sacrebleu_wmt17", "sacrebleu_wmt19", "sacrebleu_wmt20", "manual_iwslt14_en_nl_test",
        "opus_opus100", "opus_opus100_zeroshot", "laser_tatoeba_v1", "phontron_ted_talks",
        "muse_dictionaries", "mrasp2_synonym_dict", "manual_mrasp_pc32", "manual_newscrawl_mc24",
    }  # fmt: skip
    assert "opus_opus100_zeroshot" in keys("ch6_aligninstruct")
    assert "manual_wmt19_commoncrawl_mono" in keys("ch4_jass")


def test_mirror_replaces_the_base_url(entries):
    dataset = entries["laser_tatoeba_v1"]
    spec = dataset.files[0]
    assert dataset.url(spec).startswith(
        "https://raw.githubusercontent.com/facebookresearch/LASER/main/data/tatoeba/v1/"
    )
    assert dataset.url(spec, "http://mirror.local/tatoeba/") == (
        f"http://mirror.local/tatoeba/{spec.path}"
    )


def test_pair_templates_expand_to_one_file_per_language(entries):
    paracrawl = entries["opus_paracrawl_v5"]
    assert len(paracrawl.files) == 21
    assert [f.path for f in paracrawl.select(["fr", "de"])] == ["de-en.txt.zip", "en-fr.txt.zip"]
    with pytest.raises(registry.RegistryError, match=r"no files for language\(s\) \['xx'\]"):
        paracrawl.select(["xx"])
    flores = entries["flores_flores200"]  # one multilingual archive: the reader picks languages
    assert flores.select(["eng_Latn"]) == flores.files


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"access": "download", "files": [{"path": "a"}]}, "needs base_url and files"),
        ({"access": "manual", "files": []}, "needs a `manual` instruction"),
        ({"access": "sometimes"}, "access must be one of"),
        ({"access": "download", "base_url": "http://x/", "files": [{"path": "../a"}]}, "'..'"),
        ({"access": "download", "base_url": "http://x/", "files": [{"path": "a", "md5": "1"}]},
         "md5 must be 32"),
        ({"access": "download", "colour": "red"}, "unexpected keyword argument 'colour'"),
    ],
)  # fmt: skip
def test_malformed_entries_are_rejected(entry, message):
    base = {"name": "n", "chapters": [], "languages": ["xx"], "licence": "l", "citation": "c",
            "size": "s"}  # fmt: skip
    with pytest.raises(registry.RegistryError, match=message):
        registry.parse({"datasets": {"test_bad": {**base, **entry}}})


def test_bad_key_and_unknown_key(entries):
    with pytest.raises(registry.RegistryError, match="<importer>_<name>"):
        registry.parse({"datasets": {"Tatoeba": {}}})
    with pytest.raises(registry.RegistryError, match="mlrep data list"):
        registry.get("nope_nothing", entries)


def test_list_shows_every_dataset_with_licence_and_checksum_status(tmp_path, capsys):
    assert main(["data", "list", "--json", "--lock", str(tmp_path / "lock.yaml")]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == SPEC_DATASETS
    assert rows["laser_tatoeba_v1"]["checksum"] == "sha256 pinned (224 files)"
    assert rows["sacrebleu_wmt19"]["checksum"] == "md5 pinned by sacrebleu (1 files)"
    assert rows["flores_flores200"]["checksum"] == "trust-on-first-use (0/1)"
    assert rows["manual_aspec_je"]["checksum"] == "manual, locked on placement (0/6)"
    assert rows["unavailable_labse_train"]["checksum"] == "not public"
    assert all(r["licence"] for r in rows.values())
    assert main(["data", "list", "--chapter", "ch4_jass"]) == 0
    table = capsys.readouterr().out
    assert "manual_aspec_jc" in table and "laser_tatoeba_v1" not in table


@pytest.mark.parametrize(
    ("chapter", "hint"),
    [("ch99", "is not a chapter; chapters: ch2_ems, "), ("ch8_layernrom", "'ch8_layernorm'")],
)
def test_list_of_an_unknown_chapter_names_the_known_ones(chapter, hint, capsys):
    assert main(["data", "list", "--chapter", chapter]) == 2
    assert hint in capsys.readouterr().err


def test_every_chapter_tag_is_a_chapter_id_so_list_can_show_it(entries):
    assert {tag for d in entries.values() for tag in d.chapters} <= set(chapters.ids())


def test_list_of_a_chapter_without_datasets_says_so(entries, monkeypatch, capsys):
    only_ch2 = {k: d for k, d in entries.items() if d.chapters == ("ch2_ems",)}
    monkeypatch.setattr(registry, "load", lambda extra=None: only_ch2)
    assert main(["data", "list", "--chapter", "ch8_layernorm"]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "no registry dataset is tagged with chapter ch8_layernorm" in out.err
    assert main(["data", "list", "--chapter", "ch8_layernorm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
