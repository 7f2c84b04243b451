"""Corpora: the embedded tiny corpus, the dataset registry, downloads and readers."""
