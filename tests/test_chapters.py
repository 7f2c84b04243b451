"""The chapter registry is the one list of chapters: every other list is derived from it or
agrees with it, and built chapters follow the layout of docs/layout.md."""

from __future__ import annotations

import re

import pytest
import yaml

from mlrep import chapters
from mlrep.report import page
from tests import tiny_runs
from tests.conftest import REPO, snakemake


@pytest.fixture(scope="module")
def rules() -> list[str]:
    listed = snakemake(REPO, "--list-rules", "--quiet")
    assert listed.returncode == 0, listed.stderr
    # "name (first docstring line)"; a docstring's further lines follow unmarked
    return re.findall(r"^(\w+)(?: \(|$)", listed.stdout, re.MULTILINE)


def test_ids_and_prefixes_are_unique_and_named_alike():
    ids = chapters.ids()
    prefixes = [c.prefix for c in chapters.REGISTRY]
    assert len(set(ids)) == len(ids) and len(set(prefixes)) == len(prefixes)
    for chapter in chapters.REGISTRY:
        assert chapter.id == chapter.prefix or chapter.id.startswith(chapter.prefix + "_")


def test_params_sections_schema_and_report_follow_the_registry():
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    schema = yaml.safe_load((REPO / "workflow/schemas/params.schema.yaml").read_text())
    ids = chapters.ids()
    sections = [key for key in params if key in ids or re.match(r"^ch\d", key)]
    assert sections == ids, "params.yaml chapter sections, in the registry's order"
    assert schema["properties"]["chapters"]["items"]["enum"] == ids
    assert [k for k in schema["required"] if k in ids or re.match(r"^ch\d", k)] == ids
    assert params["chapters"] == ids, "`all` builds every chapter by default"
    assert list(page.CHAPTERS) == ids


def test_every_built_chapter_has_its_files(rules):
    for chapter in chapters.built():
        home = REPO / chapter.home.replace(".", "/")
        assert (home / "__init__.py").is_file() and (home / "metrics.py").is_file(), home
        assert (REPO / chapter.rules).is_file(), chapter.rules
        assert (REPO / chapter.tables).is_file(), chapter.tables
        assert (REPO / chapter.docs).is_file(), chapter.docs
        assert chapter.id in rules, f"no target rule {chapter.id}"
    for chapter in chapters.placeholders():
        if chapter.landing:  # rules in, target not yet: its own targets are tested
            assert (REPO / chapter.rules).is_file() and (REPO / chapter.docs).is_file()
            assert chapter.id not in rules, f"{chapter.id} has its target: mark it built"
        else:
            assert not (REPO / chapter.rules).exists(), f"{chapter.id} has rules: mark it built"
        assert (REPO / chapter.tables).is_file(), "placeholders keep their published tables"


def test_rule_names_begin_with_their_chapter_prefix(rules):
    """A chapter's rules carry its prefix; a generic area's rules carry none."""
    owner: dict[str, str] = {}
    generated: dict[str, str] = {}  # the name prefix of rules defined in a loop -> file
    for path in [REPO / "Snakefile", *sorted((REPO / "workflow/rules").glob("*.smk"))]:
        text = path.read_text()
        # a rule of its own, or one derived from another's (`use rule a as b with:`)
        pattern = r"^\s*(?:rule (\w+):|use rule \w+ as (\w+)\b)"
        for found in re.findall(pattern, text, re.MULTILINE):
            name = found[0] or found[1]
            owner[name] = path.stem
        # a rule named in a loop (`rule:` with `name: f"<prefix>{…}"`)
        for prefix in re.findall(r'^\s*name:\s*f"(\w+)\{', text, re.MULTILINE):
            generated[prefix] = path.stem
    for name in rules:
        for prefix, stem in generated.items():
            if name.startswith(prefix):
                owner[name] = stem
    # (a rule file may define a rule only under some settings: gather_text with shards > 1)
    assert set(rules) <= set(owner), "every rule the workflow lists comes from a rule file"
    prefixes = {c.prefix: c.id for c in chapters.REGISTRY}
    for name, stem in owner.items():
        prefix = name.split("_")[0]
        if stem in prefixes.values():
            assert name == stem or prefixes.get(prefix) == stem, (name, stem)
        else:
            assert prefix not in prefixes and name not in prefixes.values(), (name, stem)


def test_dvc_has_one_stage_per_built_chapter():
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    ids = set(chapters.ids())
    assert [s for s in stages if s in ids] == [c.id for c in chapters.built()]
    for chapter in chapters.built():
        stage = stages[chapter.id]
        assert f"results/metrics/{chapter.id}.json" in stage["cmd"]
        assert chapter.id in stage["params"]
        assert f"mlrep/chapters/{chapter.id}" in stage["deps"]
        assert chapter.rules in stage["deps"]
        assert [next(iter(m)) for m in stage["metrics"]] == [f"results/metrics/{chapter.id}.json"]
    assert set(stages["report"]["deps"]) >= {f"results/{c.id}" for c in chapters.built()}


def test_the_test_suite_trains_each_built_chapter_once_in_its_shared_tiny_project():
    """A chapter's tests read its run in tests/tiny_runs.py, so a new chapter adds its trim
    there instead of training again in each test that needs a built run."""
    assert list(tiny_runs.CHAPTER_TRIMS) == [c.id for c in chapters.built()]
    for chapter, trim in tiny_runs.CHAPTER_TRIMS.items():
        sections = {key.split(".")[0] for key in trim}
        assert sections <= {chapter, "preprocess", "align", "data"}, (chapter, sections)


def test_unknown_chapter_is_a_clear_error():
    with pytest.raises(chapters.UnknownChapterError, match="onealigner"):
        chapters.get("oneligner")


def test_a_chapter_is_included_after_the_chapter_whose_rules_it_reuses(monkeypatch):
    order = [c.id for c in chapters.include_order()]
    assert sorted(order) == sorted(c.id for c in chapters.REGISTRY if c.built or c.landing)
    for chapter in chapters.built():
        if chapter.reuses:
            assert order.index(chapter.reuses) < order.index(chapter.id), order
    # Chapter 7 derives its rules from Chapter 8's, which the registry lists later
    assert order.index("ch8_layernorm") < order.index("ch7_interlingua")
    a = chapters.Chapter("a", "a", "A", True, reuses="b")
    b = chapters.Chapter("b", "b", "B", True, reuses="a")
    monkeypatch.setattr(chapters, "REGISTRY", (a, b))
    with pytest.raises(chapters.MlrepError, match="cycle"):
        chapters.include_order()
    monkeypatch.setattr(chapters, "REGISTRY", (a, chapters.Chapter("b", "b", "B", False)))
    with pytest.raises(chapters.MlrepError, match="not built"):
        chapters.include_order()
