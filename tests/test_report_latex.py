"""The LaTeX tables compile: every table of a built report, \\input into one pdflatex document."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mlrep.report.render import _tex
from tests.report_helpers import build_report, ch8_results

PDFLATEX = shutil.which("pdflatex")


def test_cjk_runs_are_wrapped_with_the_font_of_their_script():
    assert _tex("水の性質 (α)") == r"\begin{CJK}{UTF8}{min}水の性質\end{CJK} ($\alpha$)"
    assert _tex("作样 − 1") == r"\begin{CJK}{UTF8}{gbsn}作样\end{CJK} $-$ 1"
    assert _tex("50% & more") == r"50\% \& more"


@pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex is not installed (Debian: texlive-latex-recommended latex-cjk-japanese-"
    "wadalab latex-cjk-chinese-arphic-gbsn00lp; .ci/run installs them)",
)
def test_every_table_compiles_with_the_preamble_the_report_writes(tmp_path):
    ch8_results(tmp_path / "results")
    reports = build_report(tmp_path / "results", tmp_path / "reports", bootstrap_samples=20)
    tables = reports / "tables"
    names = sorted(p.stem for p in tables.glob("*.tex") if p.stem != "preamble")
    assert len(names) > 100
    body = "\n".join(rf"\typeout{{TABLE {n}}}\input{{{n}}}\clearpage" for n in names)
    (tables / "all.tex").write_text(
        "\\documentclass{article}\n\\input{preamble}\n\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )
    result = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "all.tex"],
        cwd=tables,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=300,
        check=False,
    )
    last = re.findall(r"TABLE (\S+)", result.stdout)
    errors = [line for line in result.stdout.splitlines() if line.startswith("!")]
    assert result.returncode == 0, f"{last[-1] if last else '?'}: {errors[:3]}"
    assert last == names
    assert (tables / "all.pdf").read_bytes().startswith(b"%PDF")
