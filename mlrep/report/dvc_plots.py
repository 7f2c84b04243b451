"""An HTML template that makes ``dvc plots show`` work offline.

DVC's default page loads vega, vega-lite and vega-embed from a CDN, so on a compute node or a
laptop without network its plots are blank. vl-convert ships the same libraries bundled in its
wheel; this template inlines that bundle and leaves out DVC's ``{scripts}`` placeholder (where the
CDN tags would go), so the page DVC writes carries everything it needs.

The template is built from the installed package at set-up (``requirements/install.sh``), never
committed: it is 900 kB of third-party code without its licence notices. So the committed
``.dvc/config`` does not name it (in a clone where it has not been written, DVC would fail on
every ``dvc plots show``); `install` names it in the checkout's own ``.dvc/config.local``, and a
checkout without one renders DVC's default page, which loads vega from the CDN.

vl-convert and DVC are imported where they are used: `mlrep.cli` imports this module, and a
compute image that has neither (a GPU node running training verbs) must still import the CLI.
"""

from __future__ import annotations

from pathlib import Path

from mlrep.errors import MlrepError
from mlrep.io import atomic_write_text

TEMPLATE = "plots-offline.html"  # in the project's .dvc folder, beside config.local

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
    import vl_convert

    bundle = vl_convert.javascript_bundle(_EXPORTS)
    if "</script" in bundle.lower():
        raise RuntimeError("the vl-convert bundle contains '</script' and cannot be inlined")
    return _PAGE.format(bundle=bundle, refresh_tag="{refresh_tag}")


def install(project: Path) -> Path:
    """Write the template into `project`'s .dvc folder and name it in ``.dvc/config.local``
    (``plots.html_template``), so that this checkout's ``dvc plots show`` pages work offline."""
    dvc_dir = project / ".dvc"
    if not dvc_dir.is_dir():
        raise MlrepError(f"{project} is not a DVC project (no .dvc folder): pass --project ROOT")
    from dvc.config import Config

    path = dvc_dir / TEMPLATE
    atomic_write_text(path, offline_template())
    with Config(dvc_dir=dvc_dir).edit("local") as config:
        config["plots"]["html_template"] = TEMPLATE  # DVC resolves it against .dvc
    return path
