"""The OneAligner paper (Niu et al. 2022): what belongs to this paper only: its runs (`runs`),
metric names (`metrics`) and Figure 2's per-language points (`languages`, ``mlrep onealigner
…``). The scorer, the loss, fine-tuning, evaluation and the New-Tatoeba set are
`mlrep.embed`'s (`bertscore`, `align_data`, `align_train`, `align_eval`, `new_tatoeba`)."""
