"""mlrep: a Snakemake + DVC workflow reproducing Mao (2024), "Breaking Language Barriers"."""

__version__ = "0.1.0"
