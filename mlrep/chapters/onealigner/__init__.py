"""The OneAligner paper (Niu et al. 2022): what belongs to this paper only; so far its metric
names (`metrics`). The scorer, the loss, fine-tuning and evaluation are `mlrep.embed`'s
(`bertscore`, `align_data`, `align_train`, `align_eval`)."""
