"""Instruction tuning of causal language models (Chapter 6): stand-in bases, LoRA training, generation, instructions."""
