"""Build ``reports/``: every table in four formats, every figure, the ledger and the page.

Reads whatever results exist at the scale asked for; nothing here depends on a chapter having
run, so the report can be rebuilt at any point of the workflow.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mlrep.config import section_hash
from mlrep.io import atomic_write_text
from mlrep.paths import ReportLayout
from mlrep.provenance import git_state
from mlrep.report import claims, figures, fill, page, reference, render, tables
from mlrep.report import provenance as report_provenance
from mlrep.report.metrics import collect

TABLE_FORMATS = {"md": render.markdown, "tex": render.latex, "csv": render.csv_text}


def build(
    results_dir: Path,
    reference_dir: Path,
    out_dir: Path,
    scale: str,
    config: dict[str, Any],
) -> dict[str, Any]:
    """Write the whole report; return a summary (counts of tables, figures, verdicts).

    `config` is the ``report`` section (``bootstrap_samples``, ``bootstrap_seed``); its hash
    is part of every table's provenance.
    """
    bootstrap = fill.bootstrap_of(config)
    layout = ReportLayout(out_dir)
    results = collect(results_dir, scale)
    published = reference.load_all(reference_dir)
    definitions = tables.load(published)
    filled = {
        tid: fill.fill(d, published[tid], results, bootstrap) for tid, d in definitions.items()
    }
    build_info = {
        "config_hash": section_hash({"scale": scale, "report": config}),
        "commit": git_state(Path(__file__).resolve().parent)["commit"],
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "result_files": len(results.files()),
        "other_scales": results.other_scales,
    }

    atomic_write_text(layout.tables / "preamble.tex", render.LATEX_PREAMBLE)
    entries = []
    for tid, table in filled.items():
        runs = report_provenance.runs(table.runs_used, results, results_dir)
        table.stand_ins = report_provenance.stand_ins(runs)
        files = {}
        for fmt, renderer in TABLE_FORMATS.items():
            atomic_write_text(layout.tables / f"{tid}.{fmt}", renderer(table))
            files[fmt] = f"tables/{tid}.{fmt}"
        standalone = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{tid}</title>'
            f"<style>{page.CSS}</style></head><body>{render.html_table(table)}</body></html>\n"
        )
        atomic_write_text(layout.tables / f"{tid}.html", standalone)
        files["html"] = f"tables/{tid}.html"
        entries.append(
            page.TableEntry(
                tid,
                table.definition.chapter,
                render.html_table(table),
                files,
                runs,
            )
        )

    figure_entries = []
    for fid, defined in figures.definitions().items():
        spec = figures.resolve(fid, defined, filled, results)  # its caption says what it drew
        written, drawn = figures.draw(fid, spec, filled, results, layout)
        figure_entries.append(
            page.FigureEntry(
                fid,
                spec["chapter"],
                spec["title"],
                spec.get("numbers", ""),
                written[0],
                {p.suffix[1:]: f"figures/{p.name}" for p in written},
                drawn,
            )
        )

    verdicts = claims.ledger(claims.load(), filled, bootstrap, results)
    atomic_write_text(layout.claims_markdown, claims.markdown(verdicts, scale))
    atomic_write_text(
        layout.claims,
        json.dumps([v.as_dict() for v in verdicts], indent=1, ensure_ascii=False) + "\n",
    )
    atomic_write_text(
        layout.index, page.render(entries, figure_entries, verdicts, scale, build_info)
    )
    outcomes: dict[str, int] = {}
    for verdict in verdicts:
        outcomes[verdict.outcome] = outcomes.get(verdict.outcome, 0) + 1
    return {
        "tables": len(entries),
        "figures": len(figure_entries),
        "claims": outcomes,
        "flags": sum(len(t.flags) for t in filled.values()),
        **build_info,
    }
