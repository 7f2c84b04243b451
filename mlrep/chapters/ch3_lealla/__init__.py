"""Chapter 3 (LEALLA): what belongs to this chapter only: its runs and their settings
(`runs`: the teacher, the dimension-reduction ladder, the architecture search of Tables
3.1/A.3, LEALLA-small/base/large and their loss ablations) and its metric names (`metrics`).
The student encoder, the distillation objectives and dimension reduction are `mlrep.embed`'s."""
