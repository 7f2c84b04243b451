"""fairseq ``--user-dir`` entry: registers the mlrep plugins (fairseq imports this folder)."""

import mlrep.nmt.model  # noqa: F401  (registration happens on import, once per process)
