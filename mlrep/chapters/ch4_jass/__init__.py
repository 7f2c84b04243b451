"""Chapter 4 and Appendix B (JASS / ENSS): what belongs to this chapter only: its pre-trained
models and fine-tuning grid (`runs`) and the settings groups the NMT layer does not spell
(`settings`). The pre-training tasks are `mlrep.text`'s; training, decoding and scoring are the
generic NMT machinery of `mlrep.nmt`."""
