"""mRASP2's MC24 mix (`mlrep.nmt.monolingual_mix`, ``mlrep nmt mono-mix`` and
``self-parallel``): temperature counts against hand-computed shares, the fixed languages,
the resampled text and the tags of the self-parallel pairs."""

from __future__ import annotations

import json

import pytest

from mlrep.cli import main
from mlrep.nmt import monolingual_mix
from mlrep.nmt.data import MBART, NmtDataError
from mlrep.nmt.sampling import sampled_counts
from tests.test_nmt_sampling import TABLE_10


def test_temperature_five_counts_by_hand():
    # (3200/3300)^(1/5) : (100/3300)^(1/5) = 32^(1/5) : 1 = 2 : 1, so 2/3 and 1/3 of 3,300
    assert monolingual_mix.mix_counts({"de": 3200, "nl": 100}, 5) == {"de": 2200, "nl": 1100}
    # a budget other than the input's lines: the same shares of 600
    assert monolingual_mix.mix_counts({"de": 3200, "nl": 100}, 5, total=600) == {
        "de": 400,
        "nl": 200,
    }
    # T = 1 keeps the natural shares
    assert monolingual_mix.mix_counts({"de": 3200, "nl": 100}, 1) == {"de": 3200, "nl": 100}


def test_fixed_languages_keep_their_lines_and_the_rest_share_the_budget():
    counts = {"de": 3200, "pt": 70, "fr": 100}
    # pt is fixed at 70; de and fr share 3,300 at 2:1 (T = 5, as above)
    assert monolingual_mix.mix_counts(counts, 5, fixed=["pt"]) == {
        "de": 2200,
        "pt": 70,
        "fr": 1100,
    }
    assert list(monolingual_mix.mix_counts(counts, 5, fixed=["pt"])) == ["de", "pt", "fr"]
    assert monolingual_mix.mix_counts(counts, 5, total=670, fixed=["pt"]) == {
        "de": 400,
        "pt": 70,
        "fr": 200,
    }
    with pytest.raises(NmtDataError, match=r"fixed languages \['pl'\] have no line counts"):
        monolingual_mix.mix_counts(counts, 5, fixed=["pl"])
    with pytest.raises(NmtDataError, match="cannot keep the fixed languages' 70 lines"):
        monolingual_mix.mix_counts(counts, 5, total=69, fixed=["pt"])
    assert monolingual_mix.mix_counts({"pt": 70}, 5, fixed=["pt"]) == {"pt": 70}


def test_the_table_10_mix_keeps_nl_pl_pt_and_the_other_languages_total():
    counts = {lang: original for lang, (original, _, _) in TABLE_10.items()}
    counts |= {"nl": 1177713, "pl": 3404714, "pt": 9103090}  # Table 10's ratio-1.00 rows
    after = monolingual_mix.mix_counts(counts, 5, fixed=["nl", "pl", "pt"])
    assert (after["nl"], after["pl"], after["pt"]) == (1177713, 3404714, 9103090)
    assert sum(after.values()) == sum(counts.values())
    assert after["gu"] > 10 * counts["gu"] and after["de"] < counts["de"] / 2  # up and down
    sampled = {lang: counts[lang] for lang in TABLE_10}
    assert after == {**sampled_counts(sampled, 5), "nl": 1177713, "pl": 3404714, "pt": 9103090}


def test_sampled_counts_round_to_a_budget_exactly():
    assert sampled_counts({"a": 900, "b": 100}, 2, total=100) == {"a": 75, "b": 25}
    counts = sampled_counts({"a": 5, "b": 3, "c": 1}, 5, total=7)
    assert sum(counts.values()) == 7
    with pytest.raises(ValueError, match="a resampled total of -1 lines"):
        sampled_counts({"a": 5}, 5, total=-1)


def test_mix_resamples_each_language_to_its_count_by_seed():
    texts = {"de": [f"de{i}" for i in range(10)], "fr": ["fr0", "fr1", "fr2"]}
    mixed = monolingual_mix.mix(texts, {"de": 4, "fr": 7}, seed=1)
    assert len(mixed["de"]) == 4 and set(mixed["de"]) <= set(texts["de"])
    assert len(set(mixed["de"])) == 4  # downsampling: a subset, no repeats
    assert mixed["fr"][:6] == texts["fr"] * 2 and mixed["fr"][6] in texts["fr"]
    assert monolingual_mix.mix(texts, {"de": 4, "fr": 7}, seed=1) == mixed
    others = [monolingual_mix.mix(texts, {"de": 4, "fr": 7}, seed=s)["de"] for s in range(2, 6)]
    assert any(other != mixed["de"] for other in others)
    # each language has its own draws: adding one leaves the others' lines as they were
    alone = monolingual_mix.mix({"de": texts["de"]}, {"de": 4}, seed=1)
    assert alone["de"] == mixed["de"]
    # and two languages of one size do not share their subset (their lines are not paired)
    same_size = {"de": texts["de"], "nl": [f"nl{i}" for i in range(10)]}
    both = monolingual_mix.mix(same_size, {"de": 4, "nl": 4}, seed=1)
    assert [line[2:] for line in both["de"]] != [line[2:] for line in both["nl"]]


def test_self_parallel_pairs_are_tagged_as_direction_xx_to_xx():
    augmented, original = ["Katze sat ▁on"], ["cat sat ▁on"]
    assert monolingual_mix.self_parallel(augmented, original, "en", "s-enc-t-dec") == (
        ["__en__ Katze sat ▁on"],
        ["__en__ cat sat ▁on"],
    )
    assert monolingual_mix.self_parallel(augmented, original, "en", "t-enc") == (
        ["__en__ Katze sat ▁on"],
        ["cat sat ▁on"],
    )
    assert monolingual_mix.self_parallel(augmented, original, "de", "s-enc-t-dec", MBART) == (
        ["[de_DE] Katze sat ▁on"],
        ["[de_DE] cat sat ▁on"],
    )
    with pytest.raises(NmtDataError, match="1 augmented lines for 2 original en lines"):
        monolingual_mix.self_parallel(augmented, original * 2, "en", "t-enc")


def test_unperturbed_sentences_leave_the_self_parallel_data_unless_kept():
    augmented, original = ["Katze sat", "the  dog", "le dog"], ["cat sat", "the dog", "the dog"]
    assert monolingual_mix.self_parallel(augmented, original, "en", "t-enc") == (
        ["__en__ Katze sat", "__en__ le dog"],
        ["cat sat", "the dog"],
    )
    kept = monolingual_mix.self_parallel(augmented, original, "en", "t-enc", drop_unchanged=False)
    assert kept == (["__en__ Katze sat", "__en__ the  dog", "__en__ le dog"], original)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_mono_mix_verb_writes_each_language_and_its_stats(tmp_path, capsys):
    de, nl = tmp_path / "mono.de", tmp_path / "mono.nl"
    de.write_text("".join(f"de {i}\n" for i in range(3200)))
    nl.write_text("".join(f"nl {i}\n" for i in range(100)))
    out = tmp_path / "mix"
    argv = ("nmt", "mono-mix", "--input", f"de={de}", f"nl={nl}", "--seed", "3", "--out", out)
    code, printed, err = _run(capsys, *argv, "--temperature", "5")
    assert code == 0, err
    assert json.loads(printed)["after"] == {"de": 2200, "nl": 1100}
    stats = json.loads((out / "mix.json").read_text())
    assert stats["before"] == {"de": 3200, "nl": 100}
    assert stats["ratio"] == {"de": 0.6875, "nl": 11.0}
    assert stats["share"] == {"de": pytest.approx(2 / 3, abs=1e-6), "nl": pytest.approx(1 / 3)}
    assert (stats["temperature"], stats["total"], stats["seed"]) == (5.0, 3300, 3)
    lines = (out / "mono.nl").read_text().splitlines()
    assert len(lines) == 1100 and lines[:100] == nl.read_text().splitlines()
    assert len((out / "mono.de").read_text().splitlines()) == 2200
    # fixed and budget options reach the counts
    assert _run(capsys, *argv, "--fixed", "nl", "--total", "700")[0] == 0
    assert json.loads((out / "mix.json").read_text())["after"] == {"de": 600, "nl": 100}
    for options, complaint in [
        (("--fixed", "pt"), "fixed languages ['pt'] have no line counts"),
        (("--input", f"de={de}", f"de={nl}"), "names a language twice"),
    ]:
        code, _, err = _run(capsys, *argv, *options)
        assert code == 2 and complaint in err, err


def test_self_parallel_verb_writes_the_tagged_pair(tmp_path, capsys):
    source, target = tmp_path / "aa.sub", tmp_path / "orig.sub"
    source.write_text("Katze sat\nthe cat\nle dog\n")
    target.write_text("cat sat\nthe cat\nthe dog\n")
    out_src, out_tgt = tmp_path / "bin" / "train.src", tmp_path / "bin" / "train.tgt"
    code, printed, err = _run(capsys, "nmt", "self-parallel", "--lang", "en", "--source", source,
                              "--target", target, "--tag-format", "s-enc-t-dec",
                              "--out-source", out_src, "--out-target", out_tgt)  # fmt: skip
    assert code == 0, err
    assert json.loads(printed)["lines"] == 2
    assert out_src.read_text() == "__en__ Katze sat\n__en__ le dog\n"
    assert out_tgt.read_text() == "__en__ cat sat\n__en__ the dog\n"
    code, printed, _ = _run(capsys, "nmt", "self-parallel", "--lang", "en", "--source", source,
                            "--target", target, "--tag-format", "t-enc", "--drop-unchanged",
                            "false", "--out-source", out_src, "--out-target", out_tgt)  # fmt: skip
    assert code == 0 and json.loads(printed)["lines"] == 3
    assert out_tgt.read_text() == target.read_text()
