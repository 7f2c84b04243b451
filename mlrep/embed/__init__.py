"""Sentence-embedding models (EMS and its variants) trained for cross-lingual retrieval."""
