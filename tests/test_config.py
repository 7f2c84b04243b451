import copy

import pytest

from mlrep import config as cfg
from mlrep import config_checks
from tests.conftest import REPO

PARAMS = cfg.load_yaml(REPO / "params.yaml")


def _load(params):
    return config_checks.load_checked(params, REPO / "workflow/schemas/params.schema.yaml")


def _with(path: str, value):
    params = copy.deepcopy(PARAMS)
    node = params
    *parents, last = path.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return params


def test_shipped_params_are_valid_and_resolve_per_scale():
    tiny = _load(PARAMS)
    full = _load(_with("scale", "full"))
    assert tiny["scale"] == "tiny" and full["scale"] == "full"
    assert tiny["resources"]["default"]["mem_mb"] < full["resources"]["default"]["mem_mb"]
    assert "scales" not in tiny["resources"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("scale", "huge", "scale: 'huge' is not allowed; allowed values: tiny, full"),
        (
            "chapters",
            ["ch2_ems", "ch9_magic"],
            "chapters[1]: 'ch9_magic' is not allowed; allowed values: ch2_ems, ch3_lealla",
        ),
        (
            "data.tiny_corpus.max_chars",
            "many",
            "data.tiny_corpus.max_chars: 'many' has the wrong type; expected integer",
        ),
        (
            "data.tiny_corpus.min_segments",
            -5,
            "data.tiny_corpus.min_segments: -5 is out of range; must be >= 1",
        ),
        (
            "data.tiny_corpus.test_fraction",
            1.5,
            "data.tiny_corpus.test_fraction: 1.5 is out of range; must be < 1",
        ),
        (
            "data.tiny_corpus.packages",
            ["django", "flask"],
            "data.tiny_corpus.packages[1]: 'flask' is not allowed; allowed values: django, sphinx",
        ),
        (
            "data.tiny_corpus.max_char",
            10,
            "data.tiny_corpus: unknown key(s) max_char; allowed keys: languages, max_chars",
        ),
        (
            "data.download.mirrors",
            {"laser_tatoeba_v1": "ftp://example.org/"},
            "data.download.mirrors.laser_tatoeba_v1: 'ftp://example.org/' does not match",
        ),
        (
            "ch8_layernorm.seeds",
            [1, -1],
            "ch8_layernorm.seeds[1]: -1 is out of range; must be >= 1",
        ),
    ],
)
def test_bad_values_name_the_key_and_what_is_allowed(path, value, message):
    with pytest.raises(cfg.ConfigError) as info:
        _load(_with(path, value))
    assert message in str(info.value)


def test_an_error_in_another_scales_block_is_caught_too():
    params = _with("data.tiny_corpus.scales", {"full": {"max_chars": 0}})
    with pytest.raises(cfg.ConfigError, match=r"(?s)\(scale full\).*max_chars: 0 is out of range"):
        _load(params)


def test_unknown_scale_in_a_scales_block():
    params = _with("resources.scales", {"huge": {}})
    with pytest.raises(
        cfg.ConfigError, match=r"resources.scales.huge: unknown scale; allowed values: tiny, full"
    ):
        _load(params)


def test_scales_blocks_merge_deeply_at_any_depth():
    params = {
        "scale": "full",
        "a": {"x": 1, "y": {"p": 1, "q": 2}, "scales": {"full": {"y": {"q": 3}}}},
        "b": [{"k": 1, "scales": {"full": {"k": 2}}}],
    }
    resolved = cfg.resolve(params, "full", ["tiny", "full"])
    assert resolved == {"scale": "full", "a": {"x": 1, "y": {"p": 1, "q": 3}}, "b": [{"k": 2}]}
    assert cfg.resolve(params, "tiny", ["tiny", "full"])["a"]["y"]["q"] == 2


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("scale: tiny\ndata: [unclosed\n")
    with pytest.raises(cfg.ConfigError, match=r"params.yaml:\d+: not valid YAML"):
        cfg.load_yaml(bad)


def test_config_overrides_parsed_by_snakemake_get_the_schema_types():
    """`--config` nested values arrive as strings; the documented fill-every-cell command works."""
    from snakemake.cli import parse_config
    from snakemake.utils import update_config

    override = parse_config(
        [
            "ch8_layernorm={seeds: [1, 10, 20], run_datasets: [opus],"
            " decode: {beam: 2, max_len_a: 1.5}, train: {fp16: true},"
            " scales: {full: {seeds: [7]}}}"
        ]
    )
    assert override["ch8_layernorm"]["seeds"] == ["1", "10", "20"]
    params = copy.deepcopy(PARAMS)
    update_config(params, override)
    tiny = _load(params)["ch8_layernorm"]
    assert tiny["seeds"] == [1, 10, 20] and tiny["run_datasets"] == ["opus"]
    assert tiny["decode"]["beam"] == 2 and tiny["decode"]["max_len_a"] == 1.5
    assert tiny["train"]["fp16"] is True
    params["scale"] = "full"
    assert _load(params)["ch8_layernorm"]["seeds"] == [7]


def test_a_string_the_schema_cannot_read_as_its_type_is_still_reported():
    with pytest.raises(cfg.ConfigError, match=r"seeds\[0\]: 'one' has the wrong type"):
        _load(_with("ch8_layernorm.seeds", ["one"]))
    with pytest.raises(cfg.ConfigError, match=r"max_chars: 'true' has the wrong type"):
        _load(_with("data.tiny_corpus.max_chars", "true"))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            "ch8_layernorm.run_datasets",
            ["iwslt", "wmt"],
            "ch8_layernorm.run_datasets[1]: 'wmt' is not in ch8_layernorm.datasets; "
            "allowed values: opus, iwslt, europarl",
        ),
        (
            "ch8_layernorm.extra_runs",
            ["wmt/prenorm-t-enc-w/seed1"],
            "ch8_layernorm.extra_runs[0]: 'wmt' is not in ch8_layernorm.datasets",
        ),
        (
            "ch8_layernorm.datasets.iwslt.subwords",
            "iwlst",
            "ch8_layernorm.datasets.iwslt.subwords: 'iwlst' is not in "
            "preprocess.subwords.settings (did you mean 'iwslt'?)",
        ),
        (
            "ch7_interlingua.run_datasets",
            ["opus", "wmt"],
            "ch7_interlingua.run_datasets[1]: 'wmt' is not in ch7_interlingua.datasets",
        ),
        (
            "ch7_interlingua.datasets.opus.subwords",
            "opsu",
            "ch7_interlingua.datasets.opus.subwords: 'opsu' is not in "
            "preprocess.subwords.settings (did you mean 'opus'?)",
        ),
        (
            "preprocess.subwords.settings.iwslt.dataset",
            "wmt",
            "preprocess.subwords.settings.iwslt.dataset: 'wmt' is not in preprocess.datasets",
        ),
        (
            "align.dataset",
            "tiny_corpus",
            "align.dataset: 'tiny_corpus' is not in preprocess.datasets",
        ),
        (
            "align.od_corpora",
            {"en-ja": ["thesis", "od_europarl"]},
            "align.od_corpora.en-ja: 'od_europarl' is not in preprocess.datasets",
        ),
        (
            "ch2_ems.baseline_runs",
            ["labse", "bert"],
            "ch2_ems.baseline_runs[1]: 'bert' is not in ch2_ems.baselines; allowed values: laser,",
        ),
        (
            "ch2_ems.stand_ins",
            {"labs": "/tmp/stand-in"},
            "ch2_ems.stand_ins: 'labs' is not in ch2_ems.baselines (did you mean 'labse'?)",
        ),
        (
            "ch2_ems.sources",
            ["tiny_corpus", "opus_europarl_v7"],
            "ch2_ems.sources[1]: 'opus_europarl_v7' is no dataset (did you mean "
            "'opus_europarl_v8'?): not the embedded corpus (tiny_corpus), not a registry key "
            "with a reader, and no folder results/data/opus_europarl_v7 exists",
        ),
        (
            "ch2_ems.benchmarks.bucc.dataset",
            "bucc2018",
            "ch2_ems.benchmarks.bucc.dataset: 'bucc2018' is no dataset",
        ),
        (
            "preprocess.datasets.iwslt.corpus",
            "wit3_iwslt2017",
            "preprocess.datasets.iwslt.corpus: 'wit3_iwslt2017' is no dataset",
        ),
        (
            "preprocess.datasets.thesis.corpora",
            {"en-ja": {"train": "nict/train"}},
            "preprocess.datasets.thesis.corpora.en-ja.train: 'nict' is no dataset",
        ),
        (
            "data.download.mirrors",
            {"laser_tatoeba": "/srv/mirror"},
            "data.download.mirrors: 'laser_tatoeba' is not in the registry's downloaded datasets "
            "(did you mean 'laser_tatoeba_v1'?); `mlrep data list` shows the registry's keys",
        ),
        ("data.datasets", {"tatoeba_v9": {}}, "data.datasets: 'tatoeba_v9' is not in the dataset"),
        (
            "ch5_wordcl.mbart.release",
            "mbart_cc50",
            "ch5_wordcl.mbart.release: 'mbart_cc50' is not in the registry's downloaded datasets "
            "(did you mean 'mbart_cc25'?)",
        ),
        (
            "ch5_wordcl.monolingual.corpus",
            "tiny",
            "ch5_wordcl.monolingual.corpus: 'tiny' is no dataset",
        ),
    ],
)
def test_names_that_must_exist_elsewhere_are_checked(path, value, message):
    """Values the schema accepts that a rule file would fail on (KeyError, missing input)."""
    with pytest.raises(cfg.ConfigError) as info:
        _load(_with(path, value))
    assert "params.yaml (scale tiny) is invalid:" in str(info.value)
    assert message in str(info.value)


def test_a_reference_in_another_scales_block_is_checked_too():
    params = _with("ch8_layernorm.scales.full.run_datasets", ["opus", "wmt"])
    with pytest.raises(cfg.ConfigError, match=r"\(scale full\)[^$]*run_datasets\[1\]: 'wmt'"):
        _load(params)


def test_a_dataset_folder_placed_by_hand_is_a_dataset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # results/ is relative to the working directory, as in rules
    params = _with("ch2_ems.sources", ["mine"])
    with pytest.raises(cfg.ConfigError, match="no folder results/data/mine exists"):
        _load(params)
    (tmp_path / "results" / "data" / "mine").mkdir(parents=True)
    assert _load(params)["ch2_ems"]["sources"] == ["mine"]


def _layers(*overrides):
    """params.yaml, then each override as Snakemake merges them, and the merged config."""
    from snakemake.utils import update_config

    sources = [cfg.Source("params.yaml", PARAMS)]
    merged = copy.deepcopy(PARAMS)
    for label, values in overrides:
        sources.append(cfg.Source(label, values))
        update_config(merged, copy.deepcopy(values))
    return merged, sources


def test_each_problem_is_blamed_on_the_layer_that_set_the_bad_value():
    merged, sources = _layers(
        ("--configfile extra.yaml", {"ch8_layernorm": {"pivot": "bogus", "seeds": [1, -1]}}),
        ("--config report=...", {"report": {"bootstrap_samples": 5}}),
        ("--config ch8_layernorm=...", {"ch8_layernorm": {"seeds": [2]}}),  # fixes seeds
    )
    with pytest.raises(cfg.ConfigError) as info:
        config_checks.load_checked(merged, sources=sources)
    message = str(info.value)
    assert message.splitlines() == [
        "--configfile extra.yaml (scale tiny) is invalid:",
        "  - ch8_layernorm.pivot: 'bogus' does not match "
        "'^$|^(prenorm|postnorm)(-simple)?-(s-enc-t-dec|t-enc)-(w|w-o)$'",
        "--config report=... (scale tiny) is invalid:",
        "  - report.bootstrap_samples: 5 is out of range; must be >= 100",
    ]


def test_a_broken_reference_is_blamed_on_its_layer_and_params_yaml_on_its_own():
    bad_params = _with("ch2_ems.baseline_runs", ["bert"])
    merged, sources = _layers(("--config ch8_layernorm=...", {"ch8_layernorm": {"pivot": ""}}))
    merged["ch2_ems"]["baseline_runs"] = ["bert"]
    sources[0] = cfg.Source("params.yaml", bad_params)
    with pytest.raises(cfg.ConfigError, match=r"^params.yaml \(scale tiny\) is invalid:\n.*bert"):
        config_checks.load_checked(merged, sources=sources)
    merged, sources = _layers(
        (
            "--config ch8_layernorm=...",
            {"ch8_layernorm": {"extra_runs": ["x/prenorm-t-enc-w/seed1"]}},
        )
    )
    with pytest.raises(cfg.ConfigError, match=r"^--config ch8_layernorm=\.\.\. \(scale tiny\)"):
        config_checks.load_checked(merged, sources=sources)


def test_layers_that_do_not_make_up_the_config_are_not_used_to_blame():
    merged, sources = _layers(("--config report=...", {"report": {"bootstrap_samples": 5}}))
    with pytest.raises(cfg.ConfigError, match=r"^the config \(scale tiny\) is invalid"):
        config_checks.load_checked(
            merged, label="the config", sources=sources[1:]
        )  # params.yaml left out


def test_config_check_blames_a_bad_scale_flag_not_the_file(capsys):
    from mlrep.cli import main

    assert main(["config", "check", "--params", str(REPO / "params.yaml"), "--scale", "huge"]) == 2
    assert (
        "error: --scale huge (scale tiny) is invalid:\n  - scale: 'huge'" in capsys.readouterr().err
    )
