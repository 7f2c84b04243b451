"""The registry covers every dataset the specs name, with honest checksums."""

from __future__ import annotations

import json

import pytest

from mlrep import config as cfg
from mlrep.cli import main
from mlrep.data import registry
from mlrep.io import sha256_file
from tests.conftest import REPO
from tests.test_data_download import tatoeba_root

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
    "manual_tatoeba_challenge_v20210807",
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


def test_tatoeba_pins_are_the_sha256_of_the_laser_files(entries):
    root = tatoeba_root()
    dataset = entries["laser_tatoeba_v1"]
    assert len(dataset.files) == 224 and len(dataset.languages) == 112
    for spec in dataset.files:
        assert sha256_file(root / spec.path) == spec.sha256, spec.path
        assert (root / spec.path).stat().st_size == spec.size
    assert {f.path for f in entries["xtreme_tatoeba36"].files} <= {f.path for f in dataset.files}


def test_sacrebleu_md5s_match_sacrebleu(entries):
    from sacrebleu.dataset import DATASETS

    dataset = entries["sacrebleu_wmt14"]
    assert [dataset.url(f) for f in dataset.files] == DATASETS["wmt14"].data
    assert [f.md5 for f in dataset.files] == DATASETS["wmt14"].md5


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
