"""Chapter 8 (LayerNorm and zero-shot NMT): what belongs to this chapter only: its system
names (`systems`) and its grid of runs (`grid`). Datasets, training, decoding and scoring are
the generic NMT machinery of `mlrep.nmt`."""
