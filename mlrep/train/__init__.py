"""Training infrastructure shared by every chapter: checkpoints, resume, preemption."""
