"""Tables, figures, the claims ledger and the HTML report: measured next to published.

Chapters write ``metrics.json`` files (contract in `mlrep.report.metrics`); this package reads
whatever exists, fills the thesis tables defined in ``tables/*.yaml``, evaluates the claims in
``claims.yaml``, draws the figures of ``figures.yaml`` and writes ``reports/``.
"""
