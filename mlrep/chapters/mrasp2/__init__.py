"""mRASP2 (Pan et al. 2021): what belongs to this paper only: its systems and what each turns
on (`systems`), and where its jobs read and write (`plan`). Dictionary induction, Aligned
Augmentation, the monolingual mix, training with the contrastive criterion, decoding and
scoring are the generic machinery of `mlrep.text`, `mlrep.nmt` and `mlrep.evaluate`."""
