"""Render a filled table as Markdown, LaTeX (booktabs), CSV (long format) and HTML.

Every value cell reads ``measured / published``: the measured value at the report's scale
(mean over seeds, in the magnitude its printed cell uses: a count beside ``471M`` in
millions; ``not run`` where no result exists at this scale; the reason a run gives for a
metric it cannot measure yet, such as ``awaiting human scores``; ``cited`` in a row quoted from
prior work, whose source the notes name), then the printed value; a text cell (a case
table's sentence and translations, metrics.json ``texts``) reads ``measured text / published
text``, never bold or marked.
Bold marks the best value (or the best N, ``bold_top``) per column on each side; ``†`` marks a
measured BLEU cell significantly better than the definition's baseline row (paired bootstrap);
``⚠`` marks a printed aggregate that disagrees with its own cells (see the notes). The notes
name the scorer signature (sacreBLEU's) behind the measured cells, one sentence per distinct
signature.
"""

from __future__ import annotations

import csv
import html
import io
import re

from mlrep.report.fill import CITED, PUBLISHED_ONLY, Cell, FilledTable
from mlrep.report.reference import decimals, multiplier

DAGGER, WARNING = "†", "⚠"
_TEX_ESCAPE = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "→": r"$\rightarrow$",
    "←": r"$\leftarrow$",
    "↔": r"$\leftrightarrow$",
    "Δ": r"$\Delta$",
    "†": r"$^\dagger$",
    "±": r"$\pm$",
    "⚠": r"\textsuperscript{!}",
    "✓": r"$\checkmark$",
    "✗": r"$\times$",
    "−": r"$-$",
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "γ": r"$\gamma$",
    "¬": r"$\neg$",
    "…": r"\ldots{}",
    "“": "``",
    "”": "''",
    "–": "--",
    "—": "---",
}
# Runs of CJK text (kana, ideographs, Hangul, CJK and full-width punctuation) go through the
# CJK package: pdflatex's utf8 input knows none of them.
_CJK_RUN = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
# What every .tex table needs; the report writes it as tables/preamble.tex.
LATEX_PREAMBLE = r"""% The packages these tables need (pdflatex); \input this file in a preamble.
% CJK cells use the CJK package's fonts: min (Japanese), gbsn (Chinese), mj (Korean);
% on Debian: texlive-latex-recommended latex-cjk-japanese-wadalab latex-cjk-chinese-arphic-gbsn00lp
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage{booktabs}
\usepackage{amssymb}
\usepackage{graphicx}
\usepackage{CJKutf8}
"""


def measured_text(cell: Cell, alpha: float) -> str:
    """The measured side of a cell as text, without markup."""
    if cell.text is not None:
        return cell.text
    if cell.measured is None:
        return cell.status
    sign = "+" if cell.delta else ""  # a difference reads like the printed Δ: +0.4, -1.0
    if _whole_count(cell):  # a count printed "5,762,977" reads 1,300, not 1300.0
        return f"{cell.measured:{sign},.0f}"
    suffix, factor = multiplier(cell.published)  # a count printed 471M reads 468.9M
    text = f"{cell.measured / factor:{sign}.{max(decimals(cell.published), 1)}f}{suffix}"
    if cell.p_value is not None and cell.p_value < alpha:
        text += DAGGER
    return text


def _whole_count(cell: Cell) -> bool:
    """Whether a measured whole number stands against a count printed in full with thousands
    separators ("2,000", "5,762,977"): it is shown the same way."""
    printed = cell.published.strip()
    return (
        cell.measured is not None
        and float(cell.measured).is_integer()
        and bool(re.fullmatch(r"\d{1,3}(,\d{3})+", printed))
    )


def published_text(cell: Cell) -> str:
    return (cell.published.strip() or "–") + (WARNING if cell.flag else "")


def caption(filled: FilledTable) -> str:
    source = filled.published.source
    if filled.definition.descriptive:
        return f"{filled.definition.title} ({source.citation}). Published values."
    data = f" Measured on a {'; a '.join(filled.stand_ins)}." if filled.stand_ins else ""
    return (
        f"{filled.definition.title} ({source.citation}). Each cell: measured at scale "
        f"{filled.scale} / published.{data}"
    )


def _row_label(filled: FilledTable, index: int) -> str:
    return " ".join(filled.labels(index)).strip()


def signature_notes(filled: FilledTable) -> list[str]:
    """One sentence per distinct scorer signature of the measured cells (`FilledTable.
    signatures`), saying where its cells lie: its columns where no other signature scored a
    cell of them, else its rows where none scored a cell of those, else each cell."""
    found = filled.signatures()
    out = []
    for signature, cells in found.items():
        others = [cell for other, more in found.items() if other != signature for cell in more]
        columns = sorted({c for _, c in cells})
        rows = sorted({r for r, _ in cells})
        if not any(c in columns for _, c in others):
            where = "columns " + ", ".join(filled.value_columns[c] for c in columns)
        elif not any(r in rows for r, _ in others):
            where = "rows " + "; ".join(_row_label(filled, r) for r in rows)
        else:
            where = "cells " + "; ".join(
                f"{_row_label(filled, r)} / {filled.value_columns[c]}" for r, c in cells
            )
        out.append(f"Scoring signature: {signature} — {where}.")
    return out


def notes(filled: FilledTable) -> list[str]:
    """Flags, caveats, how the measured side was scored and the seeds behind it, as plain
    sentences."""
    out = [f"{WARNING} {flag}" for flag in filled.flags]
    out += [f"Caveat: {c}" for c in filled.published.source.caveats]
    out += signature_notes(filled)
    seeds = sorted({c.text_seed for row in filled.cells for c in row if c.text is not None})
    if seeds:
        out.append(f"Text cells: the measured text at seed {', '.join(map(str, seeds))}.")
    definition = filled.definition
    cited = [
        f"{_row_label(filled, i)} ({definition.cited(key)})"
        for i, key in enumerate(filled.row_keys)
        if definition.cited(key)
    ]
    if cited and not definition.descriptive:
        out.append(
            "Cited rows, quoted from prior work and never run or ranked here: "
            + "; ".join(cited)
            + "."
        )
    if definition.bold_top > 1 and not definition.descriptive:
        out.append(f"Bold: the top {definition.bold_top} per column on each side.")
    if definition.deltas and not definition.descriptive:
        out.append("Δ columns: the difference of our measured values, never the printed Δ.")
    if filled.definition.descriptive:
        out.append("Descriptive table (data or settings): published values only.")
    elif not filled.runs_used:
        out.append(f"No result of this table has been run at scale {filled.scale} yet.")
    return out


def _alpha(filled: FilledTable) -> float:
    return float(filled.definition.significance.get("alpha", 0.05))


def _rows(filled: FilledTable, bold: tuple[str, str]) -> list[list[str]]:
    """Label cells and ``measured / published`` value cells with bold markers `bold`."""
    alpha, out = _alpha(filled), []
    for index, cells in enumerate(filled.cells):
        row = list(filled.labels(index))
        for cell in cells:
            pub = published_text(cell)
            pub = f"{bold[0]}{pub}{bold[1]}" if cell.bold_published else pub
            if filled.definition.descriptive:
                row.append(pub)
                continue
            meas = measured_text(cell, alpha)
            meas = f"{bold[0]}{meas}{bold[1]}" if cell.bold_measured else meas
            row.append(f"{meas} / {pub}")
        out.append(row)
    return out


def markdown(filled: FilledTable) -> str:
    header = filled.published.header

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    parts = [f"**{caption(filled)}**", "", line(header), line(["---"] * len(header))]
    parts += [line(row) for row in _rows(filled, ("**", "**"))]
    parts += ["", *[f"- {n}" for n in notes(filled)]]
    return "\n".join(parts).rstrip() + "\n"


def _cjk_font(text: str) -> str:
    """The CJK family of a cell: kana means Japanese, Hangul Korean, other ideographs Chinese."""
    if _KANA.search(text):
        return "min"
    return "mj" if _HANGUL.search(text) else "gbsn"


def _tex(text: str) -> str:
    font = _cjk_font(text)
    parts, end = [], 0
    for run in _CJK_RUN.finditer(text):
        parts.append("".join(_TEX_ESCAPE.get(ch, ch) for ch in text[end : run.start()]))
        parts.append(rf"\begin{{CJK}}{{UTF8}}{{{font}}}{run.group()}\end{{CJK}}")
        end = run.end()
    parts.append("".join(_TEX_ESCAPE.get(ch, ch) for ch in text[end:]))
    return "".join(parts)


def latex(filled: FilledTable) -> str:
    """A booktabs table, ready to ``\\input`` after the packages of `LATEX_PREAMBLE`.

    ``⚠`` (a printed aggregate that disagrees with its cells) becomes a superscript ``!``.
    """
    header = filled.published.header
    labels = filled.definition.labels
    texts = [
        any(row[i].text is not None for row in filled.cells) for i in range(len(header) - labels)
    ]
    spec = "l" * labels + "".join("l" if text else "r" for text in texts)
    body = [" & ".join(_tex(h) for h in header) + r" \\", r"\midrule"]
    for row in _rows(filled, ("\x00", "\x01")):
        cells = [_tex(c).replace("\x00", r"\textbf{").replace("\x01", "}") for c in row]
        body.append(" & ".join(cells) + r" \\")
    tabular = "\n".join(
        [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", *body, r"\bottomrule", r"\end{tabular}"]
    )
    if len(header) > 10:
        tabular = "\\resizebox{\\textwidth}{!}{%\n" + tabular + "}"
    footnote = " ".join(_tex(n) for n in notes(filled))
    return (
        "\\begin{table}[t]\n\\centering\n\\small\n"
        + tabular
        + f"\n\\caption{{{_tex(caption(filled))} {footnote}}}\n"
        + f"\\label{{tab:{filled.definition.table_id}}}\n\\end{{table}}\n"
    )


CSV_FIELDS = (
    "table",
    "row",
    "column",
    "published",
    "published_value",
    "published_flag",
    "measured",
    "status",
    "seeds",
    "scale",
)


def csv_text(filled: FilledTable) -> str:
    """Long format: one line per value cell, both sides, the seeds and the status."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for key, cells in zip(filled.row_keys, filled.cells, strict=True):
        for column, cell in zip(filled.value_columns, cells, strict=True):
            status = PUBLISHED_ONLY if filled.definition.descriptive else cell.status
            status += f": {cell.cited}" if cell.cited and status == CITED else ""
            writer.writerow(
                [
                    filled.definition.table_id,
                    key,
                    column,
                    cell.published,
                    "" if cell.published_value is None else cell.published_value,
                    cell.flag or "",
                    cell.text if cell.text is not None else _number(cell),
                    status,
                    _seeds(cell),
                    filled.scale,
                ]
            )
    return buffer.getvalue()


def _seeds(cell: Cell) -> str:
    if cell.text is not None:
        return str(cell.text_seed)
    return " ".join(str(s) for s in cell.seeds) if cell.measured is not None else ""


def _number(cell: Cell) -> str:
    return "" if cell.measured is None else f"{cell.measured:.6g}"


def html_table(filled: FilledTable) -> str:
    """An HTML ``<table>`` (no page around it), classes for the report's stylesheet."""
    alpha = _alpha(filled)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in filled.published.header)
    rows = []
    for index, cells in enumerate(filled.cells):
        tds = [f'<th scope="row">{html.escape(v)}</th>' for v in filled.labels(index)]
        for cell in cells:
            pub = html.escape(published_text(cell))
            pub_class = "pub best" if cell.bold_published else "pub"
            title = f' title="{html.escape(cell.flag)}"' if cell.flag else ""
            pub_html = f'<span class="{pub_class}"{title}>{pub}</span>'
            if filled.definition.descriptive:
                tds.append(f"<td>{pub_html}</td>")
                continue
            meas = html.escape(measured_text(cell, alpha))
            meas_class = "meas best" if cell.bold_measured else "meas"
            if cell.cited:
                meas_class += " cited"
            elif cell.text is not None:
                meas_class += " text"
            elif cell.measured is None:
                meas_class += " notrun"
            source = f' title="{html.escape(cell.cited)}"' if cell.cited else ""
            tds.append(
                f'<td><span class="{meas_class}"{source}>{meas}</span>'
                f'<span class="sep"> / </span>{pub_html}</td>'
            )
        rows.append("<tr>" + "".join(tds) + "</tr>")
    note_items = "".join(f"<li>{html.escape(n)}</li>" for n in notes(filled))
    return (
        f'<table class="thesis" id="{html.escape(filled.definition.table_id)}">'
        f"<caption>{html.escape(caption(filled))}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (f'<ul class="notes">{note_items}</ul>' if note_items else "")
    )
