"""Word alignment: fast_align-style and eflomal backends, symmetrization, AER, subword mapping."""
