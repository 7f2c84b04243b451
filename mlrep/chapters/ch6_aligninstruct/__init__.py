"""Chapter 6 (AlignInstruct): what belongs to this chapter only: its grid of runs (`runs`),
how per-direction scores become its tables' columns (`scores`) and its metric names
(`metrics`). Instructions, LoRA training and generation are the generic `mlrep.llm`."""
