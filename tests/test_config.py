import copy

import pytest

from mlrep import config as cfg
from tests.conftest import REPO

PARAMS = cfg.load_yaml(REPO / "params.yaml")


def _load(params):
    return cfg.load(params, REPO / "workflow/schemas/params.schema.yaml")


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
            "ch8_layernorm.seeds[1]: -1 is out of range; must be >= 0",
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
