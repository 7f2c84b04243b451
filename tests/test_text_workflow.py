"""The preprocessing rules through Snakemake itself, on a small real corpus in a temp copy."""

import json
import shutil

import yaml

from tests.conftest import REPO, planned_jobs, preprocess_tiny_corpus, snakemake

JA = ["私は学校へ行きます。", "新しい翻訳を開始する権限がありません", "", "全件表示"]
EN = ["I go to school.", "You don't have permission to start a new translation", "", "Show all"]
RULES = [
    "tokenize_shard",
    "segment_shard",
    "segment_ja_shard",
    "parse_shard",
    "gather_text",
    "head_final",
    "train_subwords",
    "encode_subwords",
    "preprocess_dataset",
]


def write_corpus(root):
    corpus = root / "results/data/tiny_corpus"
    corpus.mkdir(parents=True)
    (corpus / "train.en-ja.en").write_text("\n".join(EN) + "\n", encoding="utf-8")
    (corpus / "train.en-ja.ja").write_text("\n".join(JA) + "\n", encoding="utf-8")


def trim_params(root) -> str:
    """One pair, one split, two shards, three lines, one small subword setting; returns the
    dataset's target."""
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    params["preprocess"].update(
        splits=["train"], shards=2, max_lines=3, parse={"pairs": ["en-ja"], "source": "spacy"}
    )
    setting = {"dataset": "tiny_corpus", "method": "subword_nmt", "merges": 20}
    target = preprocess_tiny_corpus(params, ["en-ja"], {"ch4_jass": setting})
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return target


def test_preprocess_target_runs_sharded_records_and_resumes(workdir):
    write_corpus(workdir)
    target = trim_params(workdir)
    args = ["--cores", "2", target, "--allowed-rules", *RULES]
    result = snakemake(workdir, *args)
    assert result.returncode == 0, result.stderr[-3000:]
    out = workdir / "results/preprocess/tiny_corpus"
    assert (out / "tok/train.en-ja.ja").read_text().splitlines() == [
        "私 は 学校 へ 行き ます 。",
        "新しい 翻訳 を 開始 する 権限 が あり ませ ん",
        "",
    ]
    assert (out / "bunsetsu/train.en-ja.ja").read_text().splitlines()[0] == "0:2 2:4 4:7"
    assert (out / "hf/train.en-ja.en").read_text().splitlines()[0] == "I school to go ."
    assert (out / "tok/train.en-ja.en").read_text().splitlines()[1].startswith("You don &apos;t")
    meta = json.loads((out / "tok/train.en-ja.ja.meta.json").read_text())
    assert (meta["lines"], meta["empty"]) == (3, 1)
    assert (meta["extra"]["input_lines"], meta["extra"]["max_lines"]) == (4, 3)
    assert len(list((out / "tok/shards").glob("train.en-ja.ja.*-of-2"))) == 2
    assert (out / "subwords/ch4_jass/en-ja/bpe.codes").exists()
    sub = (out / "sub/ch4_jass/train.en-ja.en").read_text().splitlines()
    assert len(sub) == 3 and sub[2] == ""
    # The dataset folder records what ran for every output, read from their metadata.
    recorded = yaml.safe_load((out / "config.yaml").read_text())["preprocess"]["outputs"]
    ja = recorded[str(out.relative_to(workdir) / "tok/train.en-ja.ja")]
    assert ja["tool"].startswith("ginza (ja-ginza ") and ja["lines"] == 3
    assert json.loads((out / "provenance.json").read_text())["step"] == "text record"
    rerun = snakemake(workdir, *args)
    assert rerun.returncode == 0
    assert "Nothing to be done" in rerun.stdout + rerun.stderr


def test_preprocess_reads_the_users_knp_and_enju_output(workdir):
    """`segment.source: knp` and `parse.source: enju`: the rules take the user's own output of
    each file from resources/parses/<dataset>/ (hand-written fixtures) instead of GiNZA and
    spaCy, and the recorded config says so."""
    corpus = workdir / "results/data/tiny_corpus"
    corpus.mkdir(parents=True)
    (corpus / "train.en-ja.ja").write_text("私は学校へ行きます。\n\n全件表示\n", encoding="utf-8")
    (corpus / "train.en-ja.en").write_text(
        "The committee approved the new budget yesterday.\n\nShow all\n", encoding="utf-8"
    )
    shutil.copytree(REPO / "tests/fixtures/parses", workdir / "resources/parses")
    path = workdir / "params.yaml"
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    params["preprocess"].update(
        splits=["train"],
        shards=2,
        segment={"languages": ["ja"], "source": "knp", "knp_rules": True},
        parse={"pairs": ["en-ja"], "source": "enju"},
        head_final={"drop_articles": True, "pseudo_particles": True},
    )
    target = preprocess_tiny_corpus(params, ["en-ja"], {})
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    result = snakemake(workdir, "--cores", "2", target, "--allowed-rules", *RULES)
    assert result.returncode == 0, result.stderr[-3000:]
    out = workdir / "results/preprocess/tiny_corpus"
    assert (out / "tok/train.en-ja.ja").read_text().splitlines() == [
        "私 は 学校 へ 行き ます 。",
        "",
        "全 件 表示",
    ]
    assert (out / "bunsetsu/train.en-ja.ja").read_text().splitlines() == ["0:2 2:4 4:7", "", "0:3"]
    assert (out / "hf/train.en-ja.en").read_text().splitlines() == [
        "committee va0 yesterday new budget va2 approved .",
        "",
        "all va2 Show",
    ]
    recorded = yaml.safe_load((out / "config.yaml").read_text())["preprocess"]["outputs"]
    ja = recorded[str(out.relative_to(workdir) / "tok/train.en-ja.ja")]
    assert ja["tool"].startswith("KNP (read from its output resources/parses/tiny_corpus/")
    hf = recorded[str(out.relative_to(workdir) / "hf/train.en-ja.en")]
    assert hf["parser"].startswith("Enju (read from its XML output resources/parses/")
    assert (hf["drop_articles"], hf["pseudo_particles"]) == (True, True)


def test_each_shard_job_reads_its_own_file_with_its_own_steps_and_shard(workdir):
    """The shard rules look a file's corpus file and steps up once for all its shard jobs
    (`mlrep.text.lookups`): each job still gets those of its own dataset, pair, split and
    language, and its own shard."""
    path = workdir / "params.yaml"
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    params["preprocess"]["shards"] = 2
    params["preprocess"]["datasets"]["thesis"]["corpora"]["en-ro"] = {
        "valid": "sacrebleu_wmt16_dev/newsdev2016.en-ro",
        "test": "sacrebleu_wmt16/newstest2016.en-ro",
    }
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    sources = {
        ("thesis", "valid.en-ro.ro"): "sacrebleu_wmt16_dev/newsdev2016.en-ro.ro",
        ("thesis", "valid.en-ro.en"): "sacrebleu_wmt16_dev/newsdev2016.en-ro.en",
        ("iwslt", "valid.en-ro.ro"): "tiny_corpus/valid.en-ro.ro",
    }
    targets = [f"results/preprocess/{dataset}/tok/{name}" for dataset, name in sources]
    result = snakemake(workdir, "-n", "-p", *targets)
    assert result.returncode == 0, result.stderr[-3000:]
    planned = set()
    for job in planned_jobs(result.stdout)["tokenize_shard"]:
        w = job.values("wildcards")
        key = (w["dataset"], f"{w['split']}.{w['pair']}.{w['lang']}")
        assert f"--input results/data/{sources[key]} " in job.text
        assert f"--shard {w['shard']} --shards 2 " in job.text
        assert ("normalise_romanian" in job.text) == (key == ("thesis", "valid.en-ro.ro"))
        planned.add((*key, w["shard"]))
    assert planned == {(*key, shard) for key in sources for shard in "01"}
