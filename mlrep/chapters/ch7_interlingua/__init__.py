"""Chapter 7 (variable-length interlingua): what belongs to this chapter only: its system
names (`systems`), its grid of runs (`grid`) and its metric names (`metrics`). Datasets,
training, decoding and scoring are the generic NMT machinery of `mlrep.nmt`; the chapter's
rules derive from Chapter 8's (`workflow/rules/ch7_interlingua.smk`)."""
