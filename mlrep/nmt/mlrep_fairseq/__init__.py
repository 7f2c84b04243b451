"""fairseq ``--user-dir`` entry: registers the mlrep plugins (fairseq imports this folder)."""

# registration happens on import, once per process; the interlingua imports the Transformer
import mlrep.nmt.interlingua  # noqa: F401
