"""fairseq ``--user-dir`` entry: registers the mlrep plugins (fairseq imports this folder).

Registration happens on import, once per process. Each plugin module is imported whole, so a
job's code version (`mlrep.closure`) covers every model and criterion the plugin registers.
"""

import mlrep.nmt.contrastive
import mlrep.nmt.interlingua
import mlrep.nmt.mbart
import mlrep.nmt.mbart_pretrain
import mlrep.nmt.model  # noqa: F401
