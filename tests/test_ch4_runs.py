"""Chapter 4's run inventory against the thesis: Table 4.2's 37 pre-trainings, the fine-tuning
grid read back onto the published tables' cells, and the params.yaml plan of each scale."""

from __future__ import annotations

import copy
import re
from collections import Counter

import pytest

from mlrep import config as cfg
from mlrep.chapters.ch4_jass import runs, settings
from mlrep.cliutil import option_names
from mlrep.nmt.settings import TRAIN_VERB_SET, BeamSettings, TrainSettings
from mlrep.report.reference import load_all, number
from mlrep.text.pretrain_tasks import COMPOSITES, TASKS, expand_tasks
from tests.conftest import REPO

PARAMS = cfg.load_yaml(REPO / "params.yaml")
REFERENCE = load_all(REPO / "reports" / "reference")
# the tables of fine-tuned systems; Table 4.7's "*" row scores the references, not a system
TABLES = [f"thesis-table-4.{n}" for n in (3, 4, 5, 6, 7, 8, 9, 14)] + [
    f"thesis-table-B.{n}" for n in (2, 3, 4)
]
NOT_RUNS = {("thesis-table-4.7", "*")}


def section(scale: str) -> dict:
    return cfg.load({**PARAMS, "scale": scale})["ch4_jass"]


FULL, TINY = section("full"), section("tiny")


def published(table_id: str) -> dict[tuple[str, str, str], str]:
    """(label column, row label, column) -> printed value of every system cell of a table."""
    table = REFERENCE[table_id]
    by = "#" if "#" in table.header and table_id != "thesis-table-4.6" else "Model"
    first = table.header.index("Model") + 1
    return {
        (by, row[table.header.index(by)], column): value
        for row in table.rows
        if (table_id, row[table.header.index(by)]) not in NOT_RUNS
        for column, value in zip(table.header[first:], row[first:], strict=True)
    }


def test_full_plans_table_4_2s_37_pretrainings():
    planned = runs.planned_pretrainings(FULL)
    assert planned == list(runs.pretrainings()), "full runs the whole inventory"
    assert len(planned) == len(set(planned)) == 37
    pairs = Counter(runs.pretraining(r).pair for r in planned)
    assert pairs == {"jaen": 22, "jazh": 10, "enko": 5}
    # every numbered model of Table 4.2 (11 is PMASS.P and PMASS.S) is pre-trained on ja-en
    numbers = {runs.pretraining(r).model.number for r in planned if r.startswith("jaen-")}
    table = {row[1] for row in REFERENCE["thesis-table-4.2"].rows} | {"3 (R)", "11*"}
    assert numbers - {""} == table


def test_full_plans_every_published_cell_once_and_400_or_more_finetunes():
    inventory = list(runs.finetunes())
    # full runs the whole inventory, #0* (Table B.1's optimised Transformer) included
    planned = runs.planned_finetunes(FULL)
    assert planned == inventory
    assert len(planned) == len(set(planned)) >= 400
    filled: dict[tuple[str, str, str, str], str] = {}
    for run in inventory:
        for cell in runs.cells(run):
            key = (cell.table, cell.by, cell.row, cell.column)
            assert key not in filled, f"{key} filled by {filled.get(key)} and {run}"
            filled[key] = run
    for table_id in TABLES:
        cells = published(table_id)
        mine = {k[1:]: run for k, run in filled.items() if k[0] == table_id}
        assert set(mine) <= set(cells), (table_id, set(mine) - set(cells))
        for key, value in cells.items():
            # a printed number is a run's cell; "-" is a model its pair does not train
            assert (key in mine) == (number(value) is not None), (table_id, key, value)
    # the BLEU tables' own cells, counted on the CSVs: one run each, B.2-B.4 only BART + X new
    own = sum(
        number(v) is not None
        for t in [*TABLES[:3], "thesis-table-4.6", "thesis-table-4.14"]
        for v in published(t).values()
    )
    bart_rows = sum(k[1].startswith("BART +") for t in TABLES[-3:] for k in published(t))
    assert len(inventory) == own + bart_rows == 478


def test_bart_tables_repeat_the_runs_of_tables_4_3_to_4_5():
    for bart, main, rows in [
        ("B.2", "4.3", {"MASS": "1", "ENSS": "13", "BART (text infilling)": "1*"}),
        ("B.3", "4.4", {"MASS": "1", "JASS": "4", "BART (text infilling)": "1*"}),
        ("B.4", "4.5", {"MASS": "1", "JASS": "4", "BART (text infilling)": "1*"}),
    ]:
        by_cell = {
            (c.table, c.row, c.column): run
            for run in runs.planned_finetunes(FULL)
            for c in runs.cells(run)
        }
        for label, number_ in rows.items():
            for column in REFERENCE[f"thesis-table-{bart}"].header[1:]:
                repeat = by_cell[(f"thesis-table-{bart}", label, column)]
                assert repeat == by_cell[(f"thesis-table-{main}", number_, column)]
        new = {run for (t, row, _), run in by_cell.items() if t.endswith(bart) and "+" in row}
        assert len(new) == 8 and not any(
            c.table == f"thesis-table-{main}" for run in new for c in runs.cells(run)
        )


def test_every_pretraining_is_fine_tuned_and_every_finetune_starts_from_a_planned_one():
    for scale in (FULL, TINY):
        planned = runs.planned_pretrainings(scale)
        finetunes = runs.planned_finetunes(scale)
        for pretrained in planned:
            found = runs.finetunes_of(scale, pretrained)
            assert found and {runs.finetune(r).start for r in found} == {pretrained}
        starts = {runs.finetune(r).start for r in finetunes}
        assert starts == set(planned) | set(scale["baselines"])
        for run in finetunes:
            pretrained = runs.finetune(run).pretrained
            if pretrained:
                pair = runs.pretraining(pretrained).pair
                assert runs.CORPORA[runs.finetune(run).corpus].pair == pair


def test_sides_get_tasks_as_the_thesis_pairs_them():
    assert COMPOSITES == {"jass": ("bmass", "brss.f"), "enss": ("mass", "hfss")}
    for run in runs.planned_pretrainings(FULL):
        pretrained = runs.pretraining(run)
        for lang in pretrained.languages:
            tasks = runs.side_tasks(run, lang)
            assert expand_tasks(tasks) and set(tasks) <= {*TASKS, *COMPOSITES}
            if lang in ("zh", "ko"):
                assert tasks == ["mass"], run
        number_ = pretrained.model.number.rstrip("*").split(" ")[0]
        # Japanese objectives (#2-#10) leave the other side to MASS, English ones (#11-#16) too
        owner = {**dict.fromkeys(range(2, 11), "ja"), **dict.fromkeys(range(11, 17), "en")}
        if number_:
            for lang in pretrained.languages:
                if lang != owner.get(int(number_), lang):
                    assert runs.side_tasks(run, lang) == ["mass"], run
    assert expand_tasks(runs.side_tasks("jaen-jass", "ja")) == ["bmass", "brss.f"]
    assert expand_tasks(runs.side_tasks("jaen-enss", "en")) == ["mass", "hfss"]
    assert expand_tasks(runs.side_tasks("jaen-mass-jass", "ja")) == ["mass", "bmass", "brss.f"]
    assert runs.side_tasks("jaen-jass-enss", "en") == ["enss"]
    assert runs.side_tasks("jazh-jass", "ja") == ["jass"]
    assert runs.side_tasks("enko-pmass-hfss", "en") == ["pmass.p", "hfss"]
    assert runs.side_tasks("jaen-mass-deshuffle", "ja") == ["mass", "deshuffle"]
    with pytest.raises(runs.Ch4RunError, match="jaen-jass has no 'ko' side"):
        runs.side_tasks("jaen-jass", "ko")


def test_no_two_pretrainings_of_a_pair_train_the_same_tasks():
    seen: dict[tuple, str] = {}
    for run, pretrained in runs.pretrainings().items():
        key = (
            pretrained.pair,
            *(frozenset(expand_tasks(pretrained.tasks(lang))) for lang in pretrained.languages),
        )
        assert key not in seen, (run, seen.get(key))
        seen[key] = run


def test_run_ids_are_safe_in_paths_and_name_their_settings():
    ids = [*runs.pretrainings(), *runs.finetunes()]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", r) for r in ids)
    run = runs.finetune("aspec_je.ja-en.3k.jaen-jass")
    assert (run.corpus, run.src, run.tgt, run.size, run.pretrained) == (
        "aspec_je",
        "ja",
        "en",
        "3k",
        "jaen-jass",
    )
    assert runs.finetune("news_ek.ko-en.94k.optimized").pretrained == ""
    cell = runs.cells("news_ek.ko-en.94k.optimized")
    assert [(c.table, c.row, c.column) for c in cell] == [
        ("thesis-table-4.6", "optimized Transformer", "Ko-En 94k")
    ]
    with pytest.raises(runs.Ch4RunError, match="no Chapter 4 fine-tune"):
        runs.finetune("aspec_je.ja-en.3k.jazh-jass")


def test_sizes_nest_and_full_samples_the_published_sizes():
    for scale in (FULL, TINY):
        for corpus, sizes in scale["sizes"].items():
            order = [s for s in runs.CORPORA[corpus].sizes if s in sizes]
            lines = [sizes[s] or float("inf") for s in order]
            assert lines == sorted(lines) and len(set(lines)) == len(lines), (corpus, sizes)
            assert list(sizes) == order, "listed smallest first"
    for corpus, sizes in FULL["sizes"].items():
        assert list(sizes) == list(runs.CORPORA[corpus].sizes)
        for label, lines in sizes.items():
            assert lines in (0, number(label.upper())), (corpus, label)
    assert runs.sample_size(FULL, "aspec_je.en-ja.1m.jaen-mass") == 1_000_000
    assert runs.sample_size(FULL, "wiki_jc.zh-ja.258k.jazh-jass") == 0


def test_tiny_is_a_subset_of_full_as_issue_19_trims_it():
    tiny_pre, tiny_ft = runs.planned_pretrainings(TINY), runs.planned_finetunes(TINY)
    assert set(tiny_pre) < set(runs.planned_pretrainings(FULL))
    assert set(tiny_ft) < set(runs.planned_finetunes(FULL))
    jaen = {runs.pretraining(r).model.name for r in tiny_pre if r.startswith("jaen-")}
    assert jaen == {"mass", "bmass", "brss", "jass", "hfss", "enss"}
    assert {runs.pretraining(r).pair for r in tiny_pre} == set(runs.PAIRS)
    corpora = {runs.finetune(r).corpus for r in tiny_ft}
    assert {runs.CORPORA[c].pair for c in corpora} == set(runs.PAIRS)
    for corpus in corpora:  # two nested sizes, both directions
        mine = {(runs.finetune(r).direction, runs.finetune(r).size) for r in tiny_ft}
        mine = {(d, s) for d, s in mine if d in runs.CORPORA[corpus].directions}
        sizes = {s for _, s in mine}
        assert len(sizes) == 2 and mine == {
            (d, s) for d in runs.CORPORA[corpus].directions for s in sizes
        }


def test_params_carry_the_thesis_settings_at_full():
    for block in ("pretrain", "finetune"):
        for scale in (FULL, TINY):
            assert set(scale[block]) <= set(option_names(TrainSettings, skip=TRAIN_VERB_SET))
        assert FULL[block]["arch"] == "mlrep_transformer_big"
        assert (FULL[block]["dropout"], FULL[block]["lr"], FULL[block]["fp16"]) == (0.3, 1e-4, True)
        assert FULL[block]["max_tokens"] == 4096
    assert (FULL["pretrain"]["gpus"], FULL["finetune"]["gpus"]) == (4, 1)
    assert set(FULL["decode"]) == set(option_names(BeamSettings)) and FULL["decode"]["beam"] == 5
    # Table B.1: the optimised #0* per size, its "Default" column the Transformer-big runs
    b1 = REFERENCE["thesis-table-B.1"]
    fields = {
        "BPE operations": "merges",
        "Encoder/decoder layers": "layers",
        "Attention heads": "heads",
        "Embedding dimension": "embed_dim",
        "Feed forward dimension": "ffn_dim",
        "Dropout": "dropout",
        "Label smoothing": "label_smoothing",
        "Batch size": "max_tokens",
    }
    assert set(fields.values()) == set(option_names(settings.Optimized))
    sizes = b1.header[2:]
    assert sorted(FULL["optimized"]) == sorted(sizes)
    for row in b1.rows:
        field = fields[row[0]]
        for size, value in zip(sizes, row[2:], strict=True):
            assert getattr(settings.optimized(FULL, size), field) == number(value), (size, field)
        if field in ("dropout", "label_smoothing", "max_tokens"):
            assert FULL["finetune"][field] == number(row[1])


def test_optimized_baseline_has_settings_at_every_planned_size():
    for scale in (FULL, TINY):
        for run in runs.planned_finetunes(scale):
            if runs.finetune(run).start == "optimized":
                settings.optimized(scale, runs.finetune(run).size)
    with pytest.raises(settings.Ch4SettingsError, match="optimized has no size '1m'"):
        settings.optimized(FULL, "1m")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("pretrained", {"jazh": ["pmass-p"]}, r"ch4_jass.pretrained.jazh: no 'pmass-p' here"),
        ("pretrained", {"koen": ["mass"]}, r"ch4_jass.pretrained: no 'koen' here; choose"),
        ("baselines", ["none"], r"ch4_jass.baselines: no 'none' here; choose from vanilla"),
        ("directions", ["ko-ja"], r"ch4_jass.directions: no 'ko-ja'"),
        ("sizes", {"news_ek": {"3k": 30}}, r"ch4_jass.sizes.news_ek: no '3k' here; .* 20k, 94k"),
        ("sizes", {"aspec": {"3k": 30}}, r"ch4_jass.sizes: no 'aspec' here"),
    ],
)
def test_a_plan_naming_what_does_not_exist_is_a_clear_error(key, value, message):
    bad = {**copy.deepcopy(TINY), key: value}
    with pytest.raises(runs.Ch4RunError, match=message):
        runs.planned_finetunes(bad)


def test_a_plan_missing_a_key_names_it():
    bad = {k: v for k, v in TINY.items() if k != "directions"}
    with pytest.raises(settings.Ch4SettingsError, match=r"missing \['directions'\]"):
        runs.planned_pretrainings(bad)


def test_a_plan_runs_exactly_what_it_lists():
    trimmed = {
        **copy.deepcopy(TINY),
        "pretrained": {"jaen": ["jass"], "jazh": ["mass"]},
        "baselines": ["vanilla"],
        "directions": ["ja-en", "zh-ja"],
    }
    assert runs.planned_pretrainings(trimmed) == ["jaen-jass", "jazh-mass"]
    assert runs.planned_finetunes(trimmed) == [
        "aspec_je.ja-en.3k.vanilla",
        "aspec_je.ja-en.10k.vanilla",
        "aspec_je.ja-en.3k.jaen-jass",
        "aspec_je.ja-en.10k.jaen-jass",
        "aspec_jc.zh-ja.3k.vanilla",
        "aspec_jc.zh-ja.10k.vanilla",
        "aspec_jc.zh-ja.3k.jazh-mass",
        "aspec_jc.zh-ja.10k.jazh-mass",
    ]
    assert runs.finetunes_of(trimmed, "jazh-mass") == [
        "aspec_jc.zh-ja.3k.jazh-mass",
        "aspec_jc.zh-ja.10k.jazh-mass",
    ]
    for scale in (TINY, FULL):
        listed = {(p, n) for p, names in scale["pretrained"].items() for n in names}
        planned = [runs.pretraining(r) for r in runs.planned_pretrainings(scale)]
        assert {(r.pair, r.model.name) for r in planned} == listed


def test_pretrainings_fill_the_accuracy_tables_where_they_train_the_task():
    filled = {
        (c.table, c.row, c.column): run
        for run in runs.planned_pretrainings(FULL)
        for c in runs.pretraining_cells(run)
    }
    for table_id in ("thesis-table-4.12", "thesis-table-4.13"):
        for (_, row, column), value in published(table_id).items():
            assert ((table_id, row, column) in filled) == (number(value) is not None), (
                table_id,
                row,
                column,
            )
    assert filled[("thesis-table-4.12", "4", "BRSS")] == "jaen-jass"
    assert filled[("thesis-table-4.13", "2", "Overall")] == "jaen-pmass-p"
    assert runs.pretraining_cells("jazh-jass") == ()
