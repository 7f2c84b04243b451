"""An HTML template that makes ``dvc plots show`` work offline.

DVC's default page loads vega, vega-lite and vega-embed from a CDN, so on a compute node or a
laptop without network its plots are blank. vl-convert ships the same libraries bundled in its
wheel; this template inlines that bundle and leaves out DVC's ``{scripts}`` placeholder (where the
CDN tags would go), so the page DVC writes carries everything it needs. The template is built
from the installed package at set-up, never committed: it is third-party code.
"""

from __future__ import annotations

from pathlib import Path

import vl_convert

from mlrep.io import atomic_write_text

# The three globals DVC's plot divs call (`vegaEmbed('#id', spec)`) or may use.
_EXPORTS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"

_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
{refresh_tag}
<title>mlrep: DVC plots</title>
<script>
{bundle}
</script>
<style>body {{ font-family: sans-serif; }} table {{ border-spacing: 15px; }}</style>
</head>
<body>
{{plot_divs}}
</body>
</html>
"""


def offline_template() -> str:
    """The template text: DVC fills ``{plot_divs}`` (and ``{refresh_tag}``) and nothing else."""
    bundle = vl_convert.javascript_bundle(_EXPORTS)
    if "</script" in bundle.lower():
        raise RuntimeError("the vl-convert bundle contains '</script' and cannot be inlined")
    return _PAGE.format(bundle=bundle, refresh_tag="{refresh_tag}")


def write_template(path: Path) -> Path:
    """Write the template atomically (DVC reads it from `.dvc/config` ``plots.html_template``)."""
    atomic_write_text(path, offline_template())
    return path
