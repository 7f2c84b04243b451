"""Open reports/index.html in headless Chromium: every table and figure there, nothing broken,
no request leaves the machine. The screenshot is kept in tests/artifacts/report-index.png."""

import json
import re

import pytest

from mlrep.report.figures import definitions as figure_definitions
from mlrep.report.reference import load_sources
from tests.browser import CHROMIUM, RequestTrap, chromium, dump_dom_offline
from tests.conftest import REPO
from tests.report_helpers import REFERENCE, build_report, ch8_results

ARTIFACTS = REPO / "tests" / "artifacts"
# Runs after load; reports what the page holds and whether each image decoded.
PROBE = """<script>
window.addEventListener('load', () => {
  const images = [...document.images];
  const out = {
    tables: [...document.querySelectorAll('table.thesis')].map(t => t.id),
    figures: [...document.querySelectorAll('figure')].map(f => f.id),
    broken: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    images: images.length,
    claims: document.querySelectorAll('#claims tbody tr').length,
  };
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian `chromium` is not installed (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    ch8_results(root / "results")
    return build_report(root / "results", root / "reports", bootstrap_samples=100)


def test_index_renders_every_table_and_figure_without_network(report, tmp_path):
    trap = RequestTrap()
    try:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / ".gitignore").write_text("*\n")  # test output, never committed
        shot = chromium(
            report / "index.html",
            tmp_path / "profile-shot",
            trap,
            "--window-size=1400,2000",
            f"--screenshot={ARTIFACTS / 'report-index.png'}",
        )
        assert shot.returncode == 0, shot.stderr[-2000:]
        assert (ARTIFACTS / "report-index.png").read_bytes().startswith(b"\x89PNG")
    finally:
        trap.close()
    # the page itself allows no script (its CSP); a probing copy beside it reports the DOM
    probe_page = report / "probe.html"
    text = (report / "index.html").read_text()
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    probe_page.write_text(text.replace("</body>", PROBE + "</body>"))
    dom, foreign = dump_dom_offline(probe_page, tmp_path)
    found = json.loads(
        re.search(r'<pre id="probe">(.*?)</pre>', dom)
        .group(1)
        .replace("&quot;", '"')
        .replace("&amp;", "&")
    )
    assert sorted(found["tables"]) == sorted(load_sources(REFERENCE))
    assert sorted(found["figures"]) == sorted(figure_definitions())
    assert found["images"] == len(figure_definitions()) and found["broken"] == []
    assert found["claims"] >= 27
    assert foreign == set()


def test_the_request_trap_sees_a_page_that_loads_from_the_network(tmp_path):
    # control for the test above: an external image must show up as a foreign host
    page = tmp_path / "external.html"
    page.write_text('<!DOCTYPE html><img src="http://report-check.invalid/x.png" alt="x">')
    trap = RequestTrap()
    try:
        chromium(page, tmp_path / "profile", trap, "--virtual-time-budget=5000", "--dump-dom")
    finally:
        trap.close()
    assert "report-check.invalid" in trap.hosts()
