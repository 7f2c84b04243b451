"""``reports/index.html``: one offline page with every table, figure and the claims ledger.

Self-contained on purpose: styles inline, figures embedded as data URIs, no script, no font or
stylesheet from the network, so the page opens the same on a cluster login node, in CI
artifacts and years later.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlrep.chapters import REGISTRY
from mlrep.report.claims import (
    Verdict,
    floor_text,
    measured_text,
    published_text,
    scale_note,
)
from mlrep.report.provenance import datasets, stand_in

CHAPTERS = {chapter.id: chapter.title for chapter in REGISTRY}
CSS = """
body{font-family:sans-serif;margin:1.5em;color:#111;max-width:100%}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #888;margin-top:2em}
h3{font-size:1.05em;margin-top:1.5em}
table{border-collapse:collapse;font-size:.8em;margin:.5em 0}
th,td{border:1px solid #bbb;padding:2px 5px;text-align:right;white-space:nowrap}
thead th,tbody th{text-align:left;background:#f0f0f0}
caption{text-align:left;font-weight:bold;padding:4px 0}
.meas{color:#000}.notrun{color:#777;font-style:italic}.cited{color:#555;font-style:italic}.pub{color:#444}
.best{font-weight:bold}.sep{color:#999}
.scroll{overflow-x:auto}ul.notes{font-size:.8em;color:#333}
details{font-size:.8em;margin:.3em 0 1em}figure{margin:1em 0}
figure img{max-width:100%;border:1px solid #ddd}
.holds{background:#d9f2d9}.fails{background:#f7d4d4}.inconclusive{background:#fff3c4}
.notrunyet{color:#777}
"""


@dataclass
class TableEntry:
    table_id: str
    chapter: str
    html_table: str
    files: dict[str, str]  # format -> relative path
    provenance: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class FigureEntry:
    figure_id: str
    chapter: str
    title: str
    numbers: str
    png: Path
    files: dict[str, str]
    drawn: bool


def _image(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _checksums(data: dict[str, dict[str, Any]]) -> str:
    """``folder (record file) sha256`` per dataset, for a cell or the summary line; a stand-in
    says what it stands in for."""
    return "; ".join(
        f"{html.escape(name)} ({html.escape(str(d.get('file')))} "
        f"{html.escape(str(d.get('sha256')))}"
        + (f", <b>{html.escape(label)}</b>" if (label := stand_in(d)) else "")
        + ")"
        for name, d in data.items()
    )


def _provenance(entry: TableEntry, scale: str, build: dict[str, Any]) -> str:
    data = datasets(entry.provenance)
    head = (
        f"scale {html.escape(scale)}; report config hash {html.escape(build['config_hash'])}; "
        f"code commit {html.escape(str(build['commit']))}; built {html.escape(build['when'])}; "
        f"data checksums: {_checksums(data) if data else 'none recorded'}"
    )
    if not entry.provenance:
        body = f"<p>No result at scale {html.escape(scale)}: every measured cell is 'not run'.</p>"
    else:
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(p[k]))}</td>"
                for k in ("run", "seed", "config_hash", "commit", "finished_utc", "sha256")
            )
            + f"<td>{_checksums(p.get('data') or {}) or '–'}"
            + (" (traced from its command at report time)" if p.get("data_traced") else "")
            + "</td></tr>"
            for p in entry.provenance
        )
        body = (
            "<table><thead><tr><th>run</th><th>seed</th><th>config hash</th><th>commit</th>"
            "<th>finished</th><th>metrics sha256</th><th>data checksums (sha256 of each "
            f"dataset's record file)</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    links = " · ".join(
        f'<a href="{html.escape(path)}">{fmt}</a>' for fmt, path in entry.files.items()
    )
    return f"<details><summary>Provenance — {head} — {links}</summary>{body}</details>"


def _ledger(verdicts: list[Verdict]) -> str:
    rows = []
    for v in verdicts:
        css = {"holds": "holds", "fails": "fails", "inconclusive": "inconclusive"}.get(
            v.outcome, "notrunyet"
        )
        p = "–" if v.p_value is None else f"{v.p_value:.3g}"
        rows.append(
            f'<tr class="{css}"><td>{html.escape(v.claim["id"])}</td>'
            f"<td style='text-align:left;white-space:normal'>{html.escape(v.claim['claim'])}</td>"
            f"<td>{html.escape(v.citation)}</td>"
            f"<td>{html.escape(published_text(v))}</td>"
            f"<td>{html.escape(measured_text(v))}</td>"
            f"<td>{html.escape(floor_text(v))}</td>"
            f"<td>{html.escape(v.outcome)}</td><td>{html.escape(v.statistic or '–')}</td>"
            f"<td>{p}</td></tr>"
        )
    return (
        '<div class="scroll"><table id="claims"><thead><tr><th>id</th><th>claim</th>'
        "<th>source</th><th>published a / b</th><th>measured a / b</th><th>floor a / b (p)</th>"
        "<th>outcome</th><th>statistic</th><th>p</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def render(
    tables: list[TableEntry],
    figures: list[FigureEntry],
    verdicts: list[Verdict],
    scale: str,
    build: dict[str, Any],
) -> str:
    """The whole page as one string."""
    chapters = [c for c in CHAPTERS if any(t.chapter == c for t in tables)]
    nav = " · ".join(f'<a href="#{c}">{html.escape(c)}</a>' for c in chapters)
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.outcome] = counts.get(v.outcome, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">",
        "<title>mlrep report: Breaking Language Barriers, measured vs published</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Breaking Language Barriers (Mao, 2024) and four papers: measured vs published</h1>",
        f"<p>Scale <b>{html.escape(scale)}</b>. Each table cell reads <i>measured / published</i>; "
        "<i>not run</i> means no result exists at this scale; <i>published only</i>, a column "
        "no run measures (a setting); <i>cited</i>, a row quoted from prior work, never run or "
        "ranked here (its source in the table's notes and the cell's tooltip). "
        "Bold: best per column (each side; "
        "the top N where a table's notes say so). "
        "† significantly better than the table's baseline (paired bootstrap). ⚠ a printed "
        "aggregate that disagrees with its own cells (recomputed, see the notes). "
        f"{len(tables)} tables, {len(figures)} figures, {len(verdicts)} claims ({summary}).</p>",
        f"<p>Built {html.escape(build['when'])} from code commit "
        f"{html.escape(str(build['commit']))}; report config hash "
        f"{html.escape(build['config_hash'])}; "
        f"{build['result_files']} metrics files at this scale, {build['other_scales']} of other "
        "scales ignored.</p>",
        f'<nav>{nav} · <a href="#claims-ledger">claims ledger</a></nav>',
    ]
    for chapter in chapters:
        parts.append(f'<h2 id="{chapter}">{html.escape(CHAPTERS[chapter])}</h2>')
        for fig in (f for f in figures if f.chapter == chapter):
            links = " · ".join(
                f'<a href="{html.escape(p)}">{fmt}</a>' for fmt, p in fig.files.items()
            )
            state = "" if fig.drawn else f" Not run at scale {html.escape(scale)}."
            parts.append(
                f'<figure id="{fig.figure_id}"><img alt="{html.escape(fig.title)}" '
                f'src="{_image(fig.png)}"><figcaption>{html.escape(fig.title)}. Numbers: '
                f"{html.escape(fig.numbers)}.{state} {links}</figcaption></figure>"
            )
        for entry in (t for t in tables if t.chapter == chapter):
            parts.append(f'<h3 id="h-{entry.table_id}">{html.escape(entry.table_id)}</h3>')
            parts.append(f'<div class="scroll">{entry.html_table}</div>')
            parts.append(_provenance(entry, scale, build))
    note = scale_note(scale)
    parts += [
        '<h2 id="claims-ledger">Claims ledger</h2>',
        f"<p>{html.escape(note)}</p>" if note else "",
        _ledger(verdicts),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
